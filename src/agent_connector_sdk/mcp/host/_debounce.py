"""Debounced completion requests for a host UI: coalesce keystrokes, cancel what they supersede.

Usage (``complete`` is any coroutine function that sends one ``completion/complete``, e.g. a bound
``ContractClient.complete``)::

    debouncer = CompletionDebouncer(lambda value: host.complete(ref, "env", value), delay=0.15, max_wait=0.6)
    result = await debouncer.submit("pro")     # per keystroke; None when a newer keystroke superseded it

Timing is :class:`agent_connector_sdk.core.contracts._debounce.DebounceWindow` (trailing edge, maximum
wait). A keystroke that arrives while a request for an older value is in flight cancels that request:
its answer would describe text the user already changed. ``clock`` and ``sleep`` are injectable so
tests run on a fake clock; nothing here reads the wall clock directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar, cast

from agent_connector_sdk.core.contracts import DebounceWindow

__all__ = ["CompletionDebouncer"]

V = TypeVar("V")
R = TypeVar("R")

DEFAULT_DELAY = 0.15
DEFAULT_MAX_WAIT = 0.6


class CompletionDebouncer(Generic[V, R]):
    """Send at most one completion request per burst of keystrokes, for the latest value only."""

    def __init__(
        self,
        send: Callable[[V], Awaitable[R]],
        *,
        delay: float = DEFAULT_DELAY,
        max_wait: float = DEFAULT_MAX_WAIT,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._send = send
        self._window: DebounceWindow[V] = DebounceWindow(delay=delay, max_wait=max_wait)
        self._clock = clock
        self._sleep = sleep
        self._waiting: asyncio.Future[R | None] | None = None  # the caller of the pending value
        self._timer: asyncio.Task[None] | None = None
        self._in_flight: asyncio.Task[None] | None = None
        self._in_flight_waiter: asyncio.Future[R | None] | None = None
        self.sent = 0
        """How many requests were actually sent (for tests and UI counters)."""
        self.cancelled = 0
        """How many sent requests a newer keystroke cancelled."""

    async def submit(self, value: V) -> R | None:
        """One keystroke. Resolves to the result for ``value``, or ``None`` once a newer value supersedes it.

        An exception raised by ``send`` for this value propagates to this caller.
        """
        loop = asyncio.get_running_loop()
        self._supersede()
        self._window.push(value, self._clock())
        waiter: asyncio.Future[R | None] = loop.create_future()
        self._waiting = waiter
        if self._timer is None or self._timer.done():
            self._timer = loop.create_task(self._run_timer())
        return await waiter

    def _supersede(self) -> None:
        if self._waiting is not None and not self._waiting.done():
            self._waiting.set_result(None)
        self._waiting = None
        if self._in_flight is not None and not self._in_flight.done():
            self._in_flight.cancel()
            self.cancelled += 1
        # A task cancelled before it first ran never reaches its own handler: resolve its caller here.
        if self._in_flight_waiter is not None and not self._in_flight_waiter.done():
            self._in_flight_waiter.set_result(None)
        self._in_flight = None
        self._in_flight_waiter = None

    async def _run_timer(self) -> None:
        while True:
            deadline = self._window.deadline()
            if deadline is None:
                return
            remaining = deadline - self._clock()
            if remaining > 0:
                await self._sleep(remaining)
                continue  # a push may have moved the deadline while we slept
            fired, value = self._window.fire(self._clock())
            if fired:
                waiter, self._waiting = self._waiting, None
                if waiter is not None and not waiter.done():
                    self.sent += 1
                    self._in_flight_waiter = waiter
                    self._in_flight = asyncio.get_running_loop().create_task(
                        self._deliver(cast(V, value), waiter)
                    )

    async def _deliver(self, value: V, waiter: asyncio.Future[R | None]) -> None:
        try:
            result = await self._send(value)
        except asyncio.CancelledError:
            if not waiter.done():
                waiter.set_result(None)
            raise
        except Exception as error:  # the submitter of this value gets the failure
            if not waiter.done():
                waiter.set_exception(error)
            return
        if not waiter.done():
            waiter.set_result(result)

    async def aclose(self) -> None:
        """Cancel the pending burst and any request in flight; pending submitters get ``None``."""
        self._window.cancel()
        self._supersede()
        for task in (self._timer,):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
