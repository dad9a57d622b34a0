"""Completion debounce, sans-I/O: when to send a completion request while the user is still typing.

The completion utility asks clients to debounce: a request per keystroke wastes the server's rate
limit and shows suggestions for text the user already changed. :class:`DebounceWindow` is the timing
rule alone — trailing edge with a maximum wait — as a small state machine over times the caller passes
in (no clock, no tasks), so it is exact to test. The asyncio driver that sleeps, sends and cancels is
:class:`agent_connector_sdk.mcp.host._debounce.CompletionDebouncer`.

Rule: each :meth:`~DebounceWindow.push` starts or extends a *burst*. The burst fires ``delay`` seconds
after its last push (trailing edge), but never later than ``max_wait`` seconds after its first push, so
a user who never pauses still sees suggestions. Firing hands out the **latest** value only; the earlier
values of the burst are superseded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["DebounceWindow"]

V = TypeVar("V")


@dataclass
class _Burst(Generic[V]):
    started: float
    last: float
    value: V


class DebounceWindow(Generic[V]):
    """Trailing-edge debounce with a maximum wait, driven by explicit timestamps (seconds, monotonic)."""

    def __init__(self, *, delay: float, max_wait: float) -> None:
        if not (delay >= 0 and max_wait >= delay):
            raise ValueError("need 0 <= delay <= max_wait")
        self.delay = delay
        self.max_wait = max_wait
        self._burst: _Burst[V] | None = None

    @property
    def pending(self) -> bool:
        return self._burst is not None

    def push(self, value: V, now: float) -> float:
        """Record the newest value at time ``now``; returns the burst's deadline."""
        if self._burst is None:
            self._burst = _Burst(started=now, last=now, value=value)
        else:
            self._burst.last = now
            self._burst.value = value
        deadline = self.deadline()
        assert deadline is not None
        return deadline

    def deadline(self) -> float | None:
        """When the pending burst fires, or ``None`` when nothing is pending."""
        burst = self._burst
        if burst is None:
            return None
        return min(burst.last + self.delay, burst.started + self.max_wait)

    def fire(self, now: float) -> tuple[bool, V | None]:
        """``(True, latest value)``, closing the burst, once the deadline passed; else ``(False, None)``."""
        deadline = self.deadline()
        if deadline is None or now < deadline or self._burst is None:
            return False, None
        value = self._burst.value
        self._burst = None
        return True, value

    def cancel(self) -> None:
        """Drop the pending burst without firing it."""
        self._burst = None
