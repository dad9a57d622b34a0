"""The state backends on their own: the in-process default and Redis (a real ``redis-server``), held to the
same contract — atomic shared windows, generations that only grow (also across a Redis data loss),
consistent tool switching, typed fail-closed errors, a bounded audit sink."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator, Iterator
from typing import Any, cast

import fastmcp
import pytest
import redis as redis_sync

from agent_connector_sdk.core.contracts import RateLimiter
from agent_connector_sdk.demo.contract_lab import contract_lab_server
from agent_connector_sdk.state import (
    CatalogSignals,
    MemoryStateBackend,
    RedisStateBackend,
    StateBackend,
    StateConfigError,
    StateNotInitialized,
    StateUnavailable,
    describe_state_url,
    open_state_backend,
)
from agent_connector_sdk.state import _memory as memory_module
from agent_connector_sdk.state import _redis_backend as redis_module
from agent_connector_sdk.state._catalog_switch import SharedToolSwitch
from tests.support.services import RedisServer, StreamEntries, redis_server

GUARD_S = 10.0
"""Redis's operation timeout where a test is not about timeouts: a hang guard (the 0.5 s default is for a
store that answers in microseconds; 40 concurrent requests on a busy machine took longer)."""


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


@pytest.fixture(params=["memory", "redis"])
async def backend(request: pytest.FixtureRequest, redis: RedisServer) -> AsyncIterator[StateBackend]:
    state: StateBackend = (
        MemoryStateBackend()
        if request.param == "memory"
        else RedisStateBackend.from_url(redis.url, prefix="t", timeout_seconds=GUARD_S)
    )
    for namespace in ("lab", "other"):  # what an operator's `agent-connector state init` does once per store
        await state.catalog.initialize(namespace, frozenset())
    yield state
    await state.aclose()


# ------------------------------------------------------------------------------------- rate limits
async def test_window_admits_exactly_the_limit_then_tells_how_long_to_wait(backend: StateBackend) -> None:
    limiter = backend.rate_limiter("completion", max_requests=3, window_seconds=0.5)
    verdicts = [await limiter.acquire("alice") for _ in range(5)]
    assert verdicts[:3] == [None, None, None]
    assert all(isinstance(v, int) and 0 < v <= 500 for v in verdicts[3:])
    assert await limiter.acquire("bob") is None  # windows are per caller
    wait = await limiter.acquire("alice")
    assert wait is not None
    await asyncio.sleep(wait / 1000 + 0.05)
    assert await limiter.acquire("alice") is None  # refused attempts were not recorded


async def test_in_process_backend_is_the_completion_default_rate_limiter() -> None:
    """Same rule, same answers as ``contracts._completion.RateLimiter`` on one fake clock."""
    now = [100.0]
    backend = MemoryStateBackend(clock=lambda: now[0])
    shared = backend.rate_limiter("completion", max_requests=2, window_seconds=10.0)
    plain = RateLimiter(2, 10.0, clock=lambda: now[0])
    for step in (0.0, 1.0, 1.0, 5.0, 4.0, 0.5):
        now[0] += step
        assert await shared.acquire("k") == plain.acquire("k")


async def test_concurrent_requests_on_two_replicas_charge_one_window_atomically(redis: RedisServer) -> None:
    replicas = [
        RedisStateBackend.from_url(redis.url, prefix="atomic", timeout_seconds=GUARD_S) for _ in range(2)
    ]
    limiters = [r.rate_limiter("completion", max_requests=7, window_seconds=30.0) for r in replicas]
    verdicts = await asyncio.gather(*(limiters[i % 2].acquire("carol") for i in range(40)))
    assert sum(v is None for v in verdicts) == 7
    for replica in replicas:
        await replica.aclose()


async def test_a_limiter_name_cannot_be_reused_with_other_limits(backend: StateBackend) -> None:
    backend.rate_limiter("completion", max_requests=3, window_seconds=1.0)
    with pytest.raises(StateConfigError):
        backend.rate_limiter("completion", max_requests=4, window_seconds=1.0)


# ------------------------------------------------------------------------------- catalog signals
async def test_generations_only_grow_and_switching_bumps_them(backend: StateBackend) -> None:
    catalog = backend.catalog
    start = await catalog.current("lab")
    assert await catalog.current("lab") == start  # reading does not move it
    bumped = await catalog.bump("lab")
    assert bumped > start and await catalog.current("lab") == bumped
    off = await catalog.set_tool_enabled("lab", "list_regions", False)
    assert off > bumped
    assert await catalog.disabled_tools("lab") == (off, frozenset({"list_regions"}))
    assert await catalog.disabled_tools("other") == (await catalog.current("other"), frozenset())
    on = await catalog.set_tool_enabled("lab", "list_regions", True)
    assert on > off and await catalog.disabled_tools("lab") == (on, frozenset())


async def test_redis_generation_grows_even_after_redis_loses_its_data(redis: RedisServer) -> None:
    backend = RedisStateBackend.from_url(redis.url, prefix="reset", timeout_seconds=GUARD_S)
    issued = [await backend.catalog.bump("lab") for _ in range(3)]
    redis_sync.Redis.from_url(redis.url).flushall()  # what a restart without persistence does
    assert await backend.catalog.current("lab") > max(issued)
    await backend.aclose()


async def test_the_switched_off_set_is_bounded(
    backend: StateBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in (memory_module, redis_module):
        monkeypatch.setattr(module, "MAX_DISABLED_TOOLS", 2)
    await backend.catalog.set_tool_enabled("lab", "a", False)
    await backend.catalog.set_tool_enabled("lab", "b", False)
    with pytest.raises(StateConfigError) as full:
        await backend.catalog.set_tool_enabled("lab", "c", False)
    assert full.value.category == "too_many_disabled"
    await backend.catalog.set_tool_enabled("lab", "a", False)  # already off: not a new entry
    assert (await backend.catalog.disabled_tools("lab"))[1] == {"a", "b"}


async def test_a_store_that_lost_its_data_is_never_read_as_nothing_switched_off(redis: RedisServer) -> None:
    backend = RedisStateBackend.from_url(redis.url, prefix="lost", timeout_seconds=GUARD_S)
    with pytest.raises(StateNotInitialized):  # never initialised: not "nothing is off"
        await backend.catalog.disabled_tools("lab")
    first = await backend.catalog.initialize("lab", frozenset({"a"}))
    assert await backend.catalog.disabled_tools("lab") == (first, frozenset({"a"}))
    with pytest.raises(StateConfigError) as again:  # a second init by mistake must not switch "a" back on
        await backend.catalog.initialize("lab", frozenset())
    assert again.value.category == "already_initialized"
    off = await backend.catalog.set_tool_enabled("lab", "b", False)

    redis.stop()
    redis.start()  # no persistence: the store is empty now
    catalog = backend.catalog
    for attempt in (catalog.disabled_tools("lab"), catalog.set_tool_enabled("lab", "c", False)):
        with pytest.raises(StateNotInitialized) as refused:
            await attempt
        assert refused.value.category == "state_not_initialized" and refused.value.gate is None
    assert redis_sync.Redis.from_url(redis.url).keys("lost:off:*") == []  # the refused switch wrote nothing
    again_first = await backend.catalog.initialize("lab", frozenset({"a", "b"}))
    assert again_first > off  # generations keep growing across the loss
    assert await backend.catalog.disabled_tools("lab") == (again_first, frozenset({"a", "b"}))
    replaced = await backend.catalog.initialize("lab", frozenset({"b"}), replace=True)
    assert await backend.catalog.disabled_tools("lab") == (replaced, frozenset({"b"}))
    await backend.aclose()


async def test_a_hung_redis_costs_one_short_timeout_per_retry_window(redis: RedisServer) -> None:
    """SIGSTOP freezes the real redis-server: connections are accepted by the kernel, nothing answers."""
    import os
    import signal
    import time

    # A 1 s timeout and a 1.5 s window (not the 0.5 s defaults): "at once", "one timeout" and "two
    # timeouts" stay far apart whatever the machine's load.
    timeout, window = 1.0, 1.5
    backend = RedisStateBackend.from_url(
        redis.url, prefix="hung", timeout_seconds=timeout, outage_retry_seconds=window
    )
    limiter = backend.rate_limiter("completion", max_requests=100, window_seconds=60.0)
    assert await limiter.acquire("alice") is None
    assert redis.process is not None
    os.kill(redis.process.pid, signal.SIGSTOP)
    try:
        timings = []
        for _ in range(20):
            started = time.perf_counter()
            with pytest.raises(StateUnavailable):
                await limiter.acquire("alice")
            timings.append(time.perf_counter() - started)
        # The first request waits for the operation timeout once (not retried: a retry is a second
        # timeout); the breaker then answers every other request in the retry window without the
        # network (well under half a timeout; quiet, microseconds).
        assert 0.9 * timeout <= timings[0] < 1.9 * timeout, timings
        assert max(timings[1:]) < timeout / 2, timings
        started = time.perf_counter()
        assert await backend.ping() is False
        assert time.perf_counter() - started < timeout / 2
        await asyncio.sleep(window + 0.1)  # the window passed: one more probe pays the timeout once
        started = time.perf_counter()
        with pytest.raises(StateUnavailable):
            await limiter.acquire("alice")
        assert 0.9 * timeout <= time.perf_counter() - started < 1.9 * timeout
    finally:
        os.kill(redis.process.pid, signal.SIGCONT)
    await asyncio.sleep(window + 0.1)
    assert await limiter.acquire("alice") is None  # back: answers again after the window
    await backend.aclose()


@pytest.mark.parametrize("bad", ["", "a b", "x" * 129, "ns:colon", "ümlaut"])
async def test_names_that_would_break_out_of_their_key_are_refused(backend: StateBackend, bad: str) -> None:
    with pytest.raises(StateConfigError) as refused:
        await backend.catalog.current(bad)
    assert refused.value.category == "invalid_namespace"
    with pytest.raises(StateConfigError) as tool:
        await backend.catalog.set_tool_enabled("lab", bad, False)
    assert tool.value.category == "invalid_tool_name"


# ---------------------------------------------------------------------------------------- outage
async def test_a_lost_redis_is_a_typed_refusal_never_an_unlimited_admission(redis: RedisServer) -> None:
    backend = RedisStateBackend.from_url(redis.url, prefix="outage")
    limiter = backend.rate_limiter("completion", max_requests=100, window_seconds=10.0)
    assert await limiter.acquire("dave") is None
    redis.stop()
    for attempt in (limiter.acquire("dave"), backend.catalog.current("lab"), backend.catalog.bump("lab")):
        with pytest.raises(StateUnavailable) as lost:
            await attempt
        assert lost.value.category == "state_unavailable"
        assert "dave" not in str(lost.value)
    with pytest.raises(StateUnavailable):
        await backend.catalog.set_tool_enabled("lab", "list_regions", False)
    assert await backend.ping() is False
    redis.start()
    await asyncio.sleep(backend.breaker.retry_seconds)  # the breaker's window after the last failure
    assert await limiter.acquire("dave") is None  # the pool reconnects on its own
    await backend.aclose()


async def test_audit_sink_is_bounded_while_redis_is_away_and_drains_when_back(redis: RedisServer) -> None:
    backend = RedisStateBackend.from_url(redis.url, prefix="audit", timeout_seconds=GUARD_S)
    sink = backend.audit
    sink.buffer_size = 5
    sink({"event": "first", "tool": "t"})
    assert await sink.flush() is True
    redis.stop()
    for index in range(12):
        sink({"event": "while_away", "index": index})  # never raises, never blocks
    await asyncio.sleep(0.05)
    assert len(sink) == 5 and sink.dropped == 7
    redis.start()
    assert await sink.flush() is True
    entries = cast(StreamEntries, redis_sync.Redis.from_url(redis.url).xrange("audit:audit"))
    # Redis came back empty (no persistence): exactly the 5 newest buffered events arrived, in order.
    assert [e[b"event"] for _, e in entries] == [
        f'{{"event": "while_away", "index": {i}}}'.encode() for i in range(7, 12)
    ]
    await backend.aclose()


async def test_audit_stream_is_capped(redis: RedisServer) -> None:
    backend = RedisStateBackend.from_url(
        redis.url, prefix="capped", audit_maxlen=100, timeout_seconds=GUARD_S
    )
    for index in range(2_000):
        backend.audit({"event": "e", "index": index})
    assert await backend.audit.flush() is True
    length = redis_sync.Redis.from_url(redis.url).xlen("capped:audit")
    assert 100 <= length < 400  # MAXLEN ~ trims whole macro nodes, so "about" 100
    await backend.aclose()


# ------------------------------------------------------------------------------------ tool switch
async def _visible(server: fastmcp.FastMCP[Any]) -> set[str]:
    async with fastmcp.Client(server) as client:
        return {tool.name for tool in await client.list_tools()}


async def test_switch_hides_every_tool_until_its_first_read_then_applies_the_shared_set() -> None:
    backend = MemoryStateBackend()
    server = contract_lab_server()
    switch = SharedToolSwitch(backend.catalog, "lab")
    server.add_transform(switch)
    assert await _visible(server) == set()  # nothing read yet: fail closed
    await switch.refresh()
    everything = await _visible(server)
    assert "list_regions" in everything
    await backend.catalog.set_tool_enabled("lab", "list_regions", False)
    assert await _visible(server) == everything  # not re-read yet
    await switch.refresh()
    assert await _visible(server) == everything - {"list_regions"}


class _FlakySignals:
    """Catalog signals that answer from a backend until told to fail (an outage)."""

    def __init__(self, inner: CatalogSignals) -> None:
        self.inner = inner
        self.down = False

    async def current(self, namespace: str) -> int:
        if self.down:
            raise StateUnavailable("catalog generation read")
        return int(await self.inner.current(namespace))

    async def bump(self, namespace: str) -> int:
        return int(await self.inner.bump(namespace))

    async def disabled_tools(self, namespace: str) -> tuple[int, frozenset[str]]:
        if self.down:
            raise StateUnavailable("catalog read")
        return await self.inner.disabled_tools(namespace)

    async def set_tool_enabled(self, namespace: str, name: str, enabled: bool) -> int:
        return int(await self.inner.set_tool_enabled(namespace, name, enabled))

    async def initialize(self, namespace: str, disabled: frozenset[str], *, replace: bool = False) -> int:
        return await self.inner.initialize(namespace, disabled, replace=replace)


async def test_switch_keeps_the_last_set_during_an_outage_and_ignores_late_older_reads() -> None:
    backend = MemoryStateBackend()
    signals = _FlakySignals(backend.catalog)
    switch = SharedToolSwitch(signals, "lab", retry_seconds=0.0)
    await backend.catalog.set_tool_enabled("lab", "a", False)
    first = await switch.refresh()
    assert switch.disabled() == {"a"} and switch.synchronized
    signals.down = True
    assert await switch.refresh() == first
    assert switch.disabled() == {"a"} and not switch.synchronized
    signals.down = False
    await backend.catalog.set_tool_enabled("lab", "b", False)
    newest = await switch.refresh()
    assert switch.disabled() == {"a", "b"} and switch.synchronized and newest is not None
    switch._apply(newest - 1, frozenset())  # an older read finishing late changes nothing
    assert switch.disabled() == {"a", "b"} and switch.generation == newest


# ---------------------------------------------------------------------------------- configuration
def test_state_urls() -> None:
    assert isinstance(open_state_backend(None), MemoryStateBackend)
    assert isinstance(open_state_backend("memory://"), MemoryStateBackend)
    assert isinstance(open_state_backend("redis://127.0.0.1:6379/0"), RedisStateBackend)
    for bad in ("http://127.0.0.1/", "127.0.0.1:6379", "memcached://x"):
        with pytest.raises(StateConfigError) as refused:
            open_state_backend(bad)
        assert refused.value.category == "invalid_state_url"
    described = describe_state_url("redis://user:s3cret@cache.internal:6380/2?x=1")
    assert described == "redis://cache.internal:6380" and "s3cret" not in described


# --------------------------------------------------------------------------------- operator command
async def test_operator_command_switches_tools_for_every_replica(
    redis: RedisServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent_connector_sdk.cli import main

    def state(*argv: str) -> tuple[int, str]:
        out = io.StringIO()
        return main(["state", *argv, "--namespace", "lab"], out), out.getvalue()

    url = redis.url.replace("redis://", "redis://:unused-password@")
    # The command runs its own event loop, so it is run in a thread here (this test is async).
    assert (await asyncio.to_thread(state, "status", "--state", url))[0] == 2
    assert "state_not_initialized" in capsys.readouterr().err  # nobody initialised the namespace yet
    code, text = await asyncio.to_thread(state, "init", "fetch_report", "--state", url)
    assert code == 0 and "lab initialised; switched off: fetch_report" in text
    assert (await asyncio.to_thread(state, "init", "--state", url))[0] == 2  # never re-run by mistake
    assert "already_initialized" in capsys.readouterr().err
    code, text = await asyncio.to_thread(state, "disable", "list_regions", "--state", url)
    assert code == 0 and "list_regions disabled" in text
    replica = RedisStateBackend.from_url(redis.url, prefix="agent-connector", timeout_seconds=GUARD_S)
    assert (await replica.catalog.disabled_tools("lab"))[1] == {"fetch_report", "list_regions"}
    code, text = await asyncio.to_thread(state, "status", "--state", url)
    assert code == 0 and text.startswith("generation ")
    assert "switched off: fetch_report, list_regions" in text
    code, text = await asyncio.to_thread(state, "enable", "list_regions", "--state", url)
    assert code == 0 and "list_regions enabled" in text
    code, text = await asyncio.to_thread(state, "init", "--replace", "--state", url)
    assert code == 0 and "switched off: (none)" in text
    assert (await replica.catalog.disabled_tools("lab"))[1] == frozenset()
    await replica.aclose()
    redis.stop()
    assert (await asyncio.to_thread(state, "status", "--state", url))[0] == 2
    error = capsys.readouterr().err
    assert "state_unavailable" in error and "unused-password" not in error and error.count("\n") == 1


def test_operator_command_refuses_bad_input_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_connector_sdk.cli import main

    monkeypatch.delenv("AGENT_CONNECTOR_STATE", raising=False)
    unreachable = "redis://:hunter2@127.0.0.1:1/0"
    cases = [
        # The embedded store: switching there changes nothing; said as such, with how to give one.
        (["status"], "there is no shared store to read or switch: give one with --state redis://"),
        (["status", "--state", "memory://"], "there is no shared store"),
        (["disable", "bad\nname", "--state", unreachable], "invalid_tool_name"),
        (["status", "--state", unreachable, "--namespace", "a/b"], "invalid_namespace"),
        (["status", "--state", "http://example.invalid"], "invalid_state_url"),
        (["disable"], "TOOL"),  # cyclopts: the missing argument
        (["init", "ok", "bad name", "--state", unreachable], "invalid_tool_name"),
    ]
    for argv, expected in cases:
        assert main(["state", *argv], io.StringIO()) == 2, argv
        error = capsys.readouterr().err
        assert expected in error and error.count("\n") == 1, (argv, error)
        assert "invalid_state_url: no shared" not in error
        assert "hunter2" not in error and "bad\nname" not in error


# ------------------------------------------------------------------------- completion handler (edit)
class _LostLimiter:
    """An async limiter whose store is gone."""

    max_requests = 5
    window_seconds = 60.0

    async def acquire(self, key: str) -> int | None:
        raise StateUnavailable("rate limit check")


@pytest.mark.parametrize("limiter", ["sync", "async", "lost"])
async def test_completion_handler_takes_sync_and_async_limiters_and_fails_closed(limiter: str) -> None:
    from agent_connector_sdk.core.host import JsonRpcError
    from agent_connector_sdk.demo.contract_lab import contract_lab_completions
    from agent_connector_sdk.mcp.host.contract_client import ContractClient
    from agent_connector_sdk.mcp.server import gated_http_app

    chosen: Any = {
        "sync": RateLimiter(2, 60.0),
        "async": MemoryStateBackend().rate_limiter("completion", max_requests=2, window_seconds=60.0),
        "lost": _LostLimiter(),
    }[limiter]
    server = contract_lab_server()
    gated_http_app(server, completions=contract_lab_completions(rate_limiter=chosen))
    ref = {"type": "ref/prompt", "name": "deploy_plan"}
    async with ContractClient(fastmcp.Client(server)) as client:
        if limiter == "lost":
            with pytest.raises(JsonRpcError) as refused:
                await client.complete(ref, "environment", "st")
            assert refused.value.code == -32010
            assert refused.value.data == {"category": "state_unavailable", "retryAfterMs": 1000}
            return
        for _ in range(2):
            assert (await client.complete(ref, "environment", "st")).values == ["staging"]
        with pytest.raises(JsonRpcError) as limited:
            await client.complete(ref, "environment", "st")
        assert limited.value.code == -32010 and limited.value.retry_after_ms is not None
