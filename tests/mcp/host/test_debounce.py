"""Completion debounce: the pure window and the asyncio driver, on a fake clock."""

from __future__ import annotations

import asyncio
import heapq
import itertools

import pytest

from agent_connector_sdk.core.contracts import DebounceWindow
from agent_connector_sdk.mcp.host import CompletionDebouncer


def test_window_fires_trailing_edge_with_latest_value() -> None:
    window: DebounceWindow[str] = DebounceWindow(delay=0.2, max_wait=1.0)
    assert window.push("p", 0.0) == pytest.approx(0.2)
    assert window.push("pr", 0.1) == pytest.approx(0.3)
    assert window.fire(0.29) == (False, None)
    assert window.fire(0.31) == (True, "pr")
    assert not window.pending
    assert window.fire(5.0) == (False, None)


def test_window_max_wait_caps_a_burst_that_never_pauses() -> None:
    window: DebounceWindow[int] = DebounceWindow(delay=0.2, max_wait=0.5)
    for step in range(5):
        deadline = window.push(step, step * 0.15)  # pushes at 0, .15, .30, .45, .60 — never a 0.2 pause
        if step == 3:
            assert deadline == pytest.approx(0.5)
            assert window.fire(0.5) == (True, 3)
    # the push at 0.60 started a new burst
    assert window.deadline() == pytest.approx(0.8)


def test_window_rejects_inverted_bounds() -> None:
    with pytest.raises(ValueError):
        DebounceWindow(delay=1.0, max_wait=0.5)


class FakeClock:
    """A monotonic clock that only moves when the test advances it; ``sleep`` waits on it."""

    def __init__(self) -> None:
        self.now = 0.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.now + seconds, next(self._order), future))
        await future

    async def advance(self, seconds: float) -> None:
        target = self.now + seconds
        await _settle()
        while self._sleepers and self._sleepers[0][0] <= target:
            wake, _, future = heapq.heappop(self._sleepers)
            self.now = max(self.now, wake)
            if not future.done():
                future.set_result(None)
            await _settle()
        self.now = target
        await _settle()


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_keystrokes_coalesce_into_one_request_for_the_latest_value() -> None:
    clock = FakeClock()
    sent: list[str] = []

    async def send(value: str) -> str:
        sent.append(value)
        return f"suggestions for {value}"

    debouncer: CompletionDebouncer[str, str] = CompletionDebouncer(
        send, delay=0.2, max_wait=1.0, clock=clock, sleep=clock.sleep
    )
    first = asyncio.ensure_future(debouncer.submit("p"))
    await clock.advance(0.1)
    second = asyncio.ensure_future(debouncer.submit("pr"))
    await clock.advance(0.1)
    third = asyncio.ensure_future(debouncer.submit("pro"))
    await clock.advance(0.19)
    assert sent == []  # still inside the quiet period after the last keystroke
    await clock.advance(0.02)
    assert await first is None
    assert await second is None
    assert await third == "suggestions for pro"
    assert sent == ["pro"]
    assert debouncer.sent == 1


async def test_max_wait_sends_while_typing_continues() -> None:
    clock = FakeClock()
    sent: list[int] = []

    async def send(value: int) -> int:
        sent.append(value)
        return value

    debouncer: CompletionDebouncer[int, int] = CompletionDebouncer(
        send, delay=0.2, max_wait=0.5, clock=clock, sleep=clock.sleep
    )
    pending = []
    for step in range(4):  # keystrokes every 0.15 s: the trailing edge never comes
        pending.append(asyncio.ensure_future(debouncer.submit(step)))
        await clock.advance(0.15)
    await clock.advance(0.0)
    assert sent == [3]  # fired at 0.5 s, the max wait, with the value typed by then
    assert await pending[3] == 3
    await debouncer.aclose()


async def test_a_newer_keystroke_cancels_the_request_in_flight() -> None:
    clock = FakeClock()
    release = asyncio.Event()
    started: list[str] = []
    cancelled: list[str] = []

    async def send(value: str) -> str:
        started.append(value)
        try:
            await release.wait()
        except asyncio.CancelledError:
            cancelled.append(value)
            raise
        return value

    debouncer: CompletionDebouncer[str, str] = CompletionDebouncer(
        send, delay=0.1, max_wait=0.5, clock=clock, sleep=clock.sleep
    )
    old = asyncio.ensure_future(debouncer.submit("pro"))
    await clock.advance(0.11)
    assert started == ["pro"]  # sent, waiting for the server
    new = asyncio.ensure_future(debouncer.submit("prod"))
    await _settle()
    assert cancelled == ["pro"]
    assert await old is None
    release.set()
    await clock.advance(0.11)
    assert await new == "prod"
    assert debouncer.cancelled == 1 and debouncer.sent == 2


async def test_send_failure_reaches_the_submitter_of_that_value() -> None:
    clock = FakeClock()

    async def send(value: str) -> str:
        raise RuntimeError("rate limited")

    debouncer: CompletionDebouncer[str, str] = CompletionDebouncer(
        send, delay=0.1, max_wait=0.5, clock=clock, sleep=clock.sleep
    )
    pending = asyncio.ensure_future(debouncer.submit("x"))
    await clock.advance(0.2)
    with pytest.raises(RuntimeError, match="rate limited"):
        await pending


async def test_aclose_resolves_pending_submitters_and_sends_nothing() -> None:
    clock = FakeClock()
    sent: list[str] = []

    async def send(value: str) -> str:
        sent.append(value)
        return value

    debouncer: CompletionDebouncer[str, str] = CompletionDebouncer(
        send, delay=0.1, max_wait=0.5, clock=clock, sleep=clock.sleep
    )
    pending = asyncio.ensure_future(debouncer.submit("x"))
    await _settle()
    await debouncer.aclose()
    assert await pending is None
    await clock.advance(1.0)
    assert sent == []


async def test_typing_into_the_labs_prompt_sends_one_authorized_completion() -> None:
    # The lab's deploy_plan prompt: a user types "s", "st", "sta" quickly; the debouncer sends one
    # completion/complete (for "sta") through the host core over real HTTP. An anonymous caller lacks
    # deploy:production, so a later "pro" burst never suggests "production".
    from fastmcp import Client

    from agent_connector_sdk.demo.contract_lab import contract_lab_app
    from agent_connector_sdk.mcp.host.contract_client import CompletionResult, ContractClient
    from tests.support.http_server import serve_asgi

    clock = FakeClock()
    with serve_asgi(contract_lab_app()) as url:
        async with ContractClient(Client(url)) as host:
            sent: list[str] = []

            async def complete(value: str) -> CompletionResult:
                sent.append(value)
                return await host.complete(
                    {"type": "ref/prompt", "name": "deploy_plan"}, "environment", value
                )

            debouncer: CompletionDebouncer[str, CompletionResult] = CompletionDebouncer(
                complete, delay=0.15, max_wait=0.6, clock=clock, sleep=clock.sleep
            )
            typed = [asyncio.ensure_future(debouncer.submit(prefix)) for prefix in ("s", "st", "sta")]
            await clock.advance(0.2)
            results = [await pending for pending in typed]
            hidden = asyncio.ensure_future(debouncer.submit("pro"))
            await clock.advance(0.2)
            production = await hidden
    assert sent == ["sta", "pro"]
    assert results[:2] == [None, None]
    final = results[2]
    assert final is not None and final.values == ["staging"]
    assert production is not None and production.values == []
