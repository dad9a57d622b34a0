"""Floods, streams and wrong ids against the host library, over real stdio processes and real
Streamable HTTP (:mod:`tests.support.hostile_server`): a notification flood is bounded per connection
(counted, dropped, one summary line) and the answer behind it still validates; byte and value caps
hold per message (an SSE event is one message) with ``max_stream_bytes`` for a whole stream; an answer
whose id this host never sent is a protocol error at once.

Nothing here measures speed: every request has a generous timeout (a hang guard), and the assertions
are about what arrived, what was relayed and what was said (``bench/`` has the numbers).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import fastmcp
import pytest
from fastmcp.client.transports.stdio import StdioTransport

from agent_connector_sdk.core.host import (
    HostBounds,
    HostOptions,
    MalformedResponse,
    NotificationBudget,
    TransportFailure,
    notification_kind,
)
from agent_connector_sdk.core.host.bounds import BoundExceeded
from agent_connector_sdk.mcp.host._wire import EventValueCounter, ValueCounter
from agent_connector_sdk.mcp.host.contract_client import ContractClient
from agent_connector_sdk.review.unreachable import explain_unreachable
from tests.support.cli import ROOT
from tests.support.hostile_server import hostile_app
from tests.support.http_server import serve_asgi

HANG_GUARD_S = 240.0
"""Each request's timeout: far above what any case here takes on a quiet machine (a few seconds)."""
TRANSPORTS = ("stdio", "http")


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serve_asgi(hostile_app(), path="") as url:
        yield url


class Relayed:
    """The client's log handler: counts what the host let through."""

    def __init__(self) -> None:
        self.count = 0

    async def __call__(self, message: Any) -> None:
        self.count += 1


@asynccontextmanager
async def _host(
    base: str,
    transport: str,
    mode: str,
    bounds: HostBounds | None = None,
    relayed: Relayed | None = None,
    timeout: float = HANG_GUARD_S,
) -> AsyncIterator[ContractClient]:
    if transport == "http":
        target: Any = f"{base}/{mode}/mcp"
    else:
        target = StdioTransport(
            sys.executable, ["-m", "tests.support.hostile_server", mode], cwd=ROOT, keep_alive=False
        )
    client = fastmcp.Client(
        target, timeout=timeout, init_timeout=HANG_GUARD_S, log_handler=relayed or Relayed()
    )
    options = HostOptions(bounds=bounds or HostBounds(), require_confirmation=False)
    async with ContractClient(client, options) as host:
        yield host


def _summaries(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "agent_connector_sdk.host"]


# -- the flood: bounded, counted, one line, and the answer behind it validates --------------------------
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_log_flood_is_counted_dropped_and_said_once_and_the_answer_validates(
    base: str, transport: str, caplog: pytest.LogCaptureFixture
) -> None:
    relayed = Relayed()
    caplog.set_level(logging.WARNING, logger="agent_connector_sdk.host")
    async with _host(base, transport, "log_flood-20000", relayed=relayed) as host:
        await host.discover_tools()
        result = await host.call("clean", {"q": "x"})
        tally = host.session.notifications.tally
    assert not result.is_error
    assert tally.received == {"log": 20_000}
    # Relayed: the burst and what the rate refilled, never the flood (and exactly what was not dropped).
    defaults = HostBounds()
    assert relayed.count == 20_000 - tally.dropped["log"]
    assert defaults.notification_burst <= relayed.count < 20_000 // 4
    lines = _summaries(caplog)
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        f"tools/call: the server sent 20,000 log notifications; {tally.dropped['log']:,}"
    )
    assert "20/s (burst 100)" in lines[0]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_volume_bound_holds_whatever_the_rate(base: str, transport: str) -> None:
    # A rate no flood stays under, and a volume of 7: exactly 7 reach the handler.
    relayed = Relayed()
    bounds = HostBounds(notification_rate=1e9, notification_burst=1_000_000, max_notifications=7)
    async with _host(base, transport, "log_flood-2000", bounds, relayed) as host:
        await host.discover_tools()
        result = await host.call("clean", {"q": "x"})
        tally = host.session.notifications.tally
    assert not result.is_error and relayed.count == 7
    assert tally.received == {"log": 2_000} and tally.dropped == {"log": 1_993}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_dropped_list_changed_still_marks_the_catalog_stale(base: str, transport: str) -> None:
    bounds = HostBounds(max_notifications=1)
    async with _host(base, transport, "changed_flood-3000", bounds) as host:
        await host.discover_tools()
        await host.call("clean", {"q": "x"})
        tally = host.session.notifications.tally
        assert host.session.tools_changed  # the next call re-lists first
    assert tally.received == {"list_changed": 3_000} and tally.dropped == {"list_changed": 2_999}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_resource_updates_are_bounded_too(base: str, transport: str) -> None:
    async with _host(base, transport, "updated_flood-5000") as host:
        await host.discover_tools()
        result = await host.call("clean", {"q": "x"})
        tally = host.session.notifications.tally
    assert not result.is_error and tally.received == {"resource_updated": 5_000}
    assert tally.dropped["resource_updated"] >= 5_000 - HostBounds().max_notifications // 2


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_timeout_amid_a_flood_names_the_flood(base: str, transport: str) -> None:
    # 2,000,000 notifications take far longer than 5 s on any machine: the request times out amid them,
    # and the failure says what the server sent instead of its answer (not "raise --timeout?").
    async with _host(base, transport, "log_flood-2000000", timeout=5) as host:
        await host.discover_tools()
        with pytest.raises(TransportFailure) as failed:
            await host.call("clean", {"q": "x"})
    assert failed.value.code == -32001 and failed.value.flood is not None
    assert failed.value.flood.startswith("the server sent ") and " log notifications; " in failed.value.flood
    assert failed.value.message.endswith(f"({failed.value.flood})")
    sentence = explain_unreachable(failed.value, target="the server", timeout=5)
    assert sentence == f"timed out after 5 s waiting for the server: {failed.value.flood}"


# -- caps per message, a bound per stream ----------------------------------------------------------------
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_100000_progress_events_then_a_valid_result_validates(base: str, transport: str) -> None:
    async with _host(base, transport, "progress_flood-100000") as host:
        await host.discover_tools()
        result = await host.call("clean", {"q": "x"})
        tally = host.session.notifications.tally
    assert not result.is_error and tally.received == {"progress": 100_000}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_more_progress_than_max_message_bytes_in_all_is_not_a_message_bound(
    base: str, transport: str
) -> None:
    # 6 MB of 1 KB progress events under a 1 MB message cap: each message is small, so nothing trips.
    bounds = HostBounds(max_message_bytes=1 << 20, max_message_values=1_000)
    async with _host(base, transport, "progress_bytes-6", bounds) as host:
        await host.discover_tools()
        result = await host.call("clean", {"q": "x"})
    assert not result.is_error


async def test_the_default_message_cap_holds_per_event_for_40_mb_of_progress(base: str) -> None:
    # The case at the default caps: 40 MB of progress on one stream is over max_message_bytes
    # (32 MiB) in all, never in one message.
    async with _host(base, "http", "progress_bytes-40") as host:
        await host.discover_tools()
        result = await host.call("clean", {"q": "x"})
    assert not result.is_error


async def test_a_stream_over_max_stream_bytes_is_refused_naming_that_bound(base: str) -> None:
    bounds = HostBounds(max_stream_bytes=2 << 20)
    async with _host(base, "http", "progress_bytes-6", bounds) as host:
        await host.discover_tools()
        with pytest.raises(BoundExceeded) as refused:
            await host.call("clean", {"q": "x"})
    assert refused.value.bound == "max_stream_bytes"
    assert "max_stream_bytes (2,097,152)" in refused.value.message


async def test_the_value_cap_holds_per_event_not_per_stream(base: str) -> None:
    # 300 events of a few values each under a cap of 100 per message: the stream holds ~3,000.
    bounds = HostBounds(max_message_values=100)
    async with _host(base, "http", "progress_flood-300", bounds) as host:
        await host.discover_tools()
        assert not (await host.call("clean", {"q": "x"})).is_error
    # One event over the cap is still over it, wherever the chunks split.
    stream = b"".join(
        b"event: message\r\ndata: " + (b"[" + b",".join([b"1"] * size) + b"]") + b"\r\n\r\n"
        for size in (10, 150, 10)
    )
    counter = EventValueCounter(100)
    assert max(counter.feed(stream[i : i + 7]) for i in range(0, len(stream), 7)) > 100


# -- a wrong id is a protocol error at once --------------------------------------------------------------
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_an_answer_with_an_unknown_id_is_a_protocol_error_not_a_timeout(
    base: str, transport: str
) -> None:
    async with _host(base, transport, "wrong_id") as host:
        await host.discover_tools()
        with pytest.raises(MalformedResponse) as refused:
            await host.call("clean", {"q": "x"})
    message = refused.value.message
    assert "protocol error" in message and "JSON-RPC id 4242" in message
    assert "matches no request this host sent" in message and "timed out" not in message


# -- the pure parts -------------------------------------------------------------------------------------
def test_the_budget_is_a_token_bucket_with_a_volume_cap() -> None:
    budget = NotificationBudget(
        HostBounds(notification_rate=10, notification_burst=3, max_notifications=5), 0.0
    )
    assert [budget.admit("log", 0.0) for _ in range(4)] == [True, True, True, False]
    assert budget.admit("progress", 0.1)  # 0.1 s at 10/s refilled one token
    assert not budget.admit("progress", 0.1)
    assert budget.admit("log", 10.0)  # refilled, and the fifth relayed
    assert not budget.admit("log", 100.0)  # the volume is spent whatever the rate
    assert budget.tally.received == {"log": 6, "progress": 2}
    assert budget.tally.dropped == {"log": 2, "progress": 1}
    assert budget.tally.summary() == (
        "the server sent 6 log notifications; 2 dropped; 2 progress notifications; 1 dropped"
    )


def test_kinds_and_a_quiet_summary() -> None:
    assert notification_kind("notifications/message") == "log"
    assert notification_kind("notifications/prompts/list_changed") == "list_changed"
    assert notification_kind("notifications/resources/updated") == "resource_updated"
    assert notification_kind("notifications/whatever") == "other"
    budget = NotificationBudget(HostBounds(), 0.0)
    budget.admit("log", 0.0)
    assert budget.tally.summary() is None


@pytest.mark.parametrize("step", [1, 2, 3, 5, 64, 10_000])
@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_values_are_counted_per_event_wherever_the_chunks_split(step: int, eol: bytes) -> None:
    events = [b'{"a": [1, 2, 3], "b": {"c": "x,y{[\\""}}', b"[1,2]", b'{"d": [[], {}]}']
    stream = b"".join(b"event: message" + eol + b"data: " + event + eol + eol for event in events)
    expected = []
    for event in events:
        counter = ValueCounter()
        counter.feed(event)
        expected.append(counter.count)
    events_counter = EventValueCounter(1)  # a cap of 1: every event is counted byte by byte
    most = max(events_counter.feed(stream[i : i + step]) for i in range(0, len(stream), step))
    assert most == max(expected) == 6


def test_the_private_members_the_hooks_use_exist_in_the_tested_sdk() -> None:
    # compat.session_hooks wraps these (mcp 2.3): the session's receive-order intercept and the
    # dispatcher's resolver, its pending table and its id counter.
    import anyio
    from mcp.client.session import ClientSession
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

    assert callable(ClientSession._intercept_notification)
    assert callable(JSONRPCDispatcher._resolve_pending)
    send, receive = anyio.create_memory_object_stream[Any](1)
    with send, receive:
        dispatcher: Any = JSONRPCDispatcher(receive, send)
        assert isinstance(dispatcher._pending, dict) and dispatcher._next_id == 0
