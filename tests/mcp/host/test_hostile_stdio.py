"""Over stdio, a server line longer than ``max_message_bytes`` is refused while reading (the SDK's
reader would buffer it whole), and the private accessors this needs are where compat expects them."""

from __future__ import annotations

import inspect
import sys
import time

import fastmcp
import mcp.client.stdio as sdk_stdio
import pytest
from fastmcp.client.transports.stdio import StdioTransport
from mcp.client.session import ClientSession

from agent_connector_sdk.core.host import HostBounds
from agent_connector_sdk.core.host.bounds import BoundExceeded
from agent_connector_sdk.mcp import compat
from agent_connector_sdk.mcp.host import HostOptions, HostSession
from tests.support.cli import ROOT


def _session(mode: str, bounds: HostBounds) -> HostSession:
    transport = StdioTransport(
        sys.executable, ["-m", "tests.support.hostile_server", mode], cwd=ROOT, keep_alive=False
    )
    return HostSession(fastmcp.Client(transport, timeout=300), HostOptions(bounds=bounds))


async def test_a_line_over_the_cap_is_refused_while_reading() -> None:
    session = _session("big_schema-3000000", HostBounds(max_message_bytes=1_000_000))
    await session.connect()
    started = time.monotonic()
    try:
        with pytest.raises(BoundExceeded) as refused:
            await session.discover_tools()
    finally:
        await session.close()
    assert refused.value.bound == "max_message_bytes" and session.stdio_cap.tripped
    assert time.monotonic() - started < 60  # a hang guard far below the request timeout (300 s)


async def test_lines_under_the_cap_are_read_as_before() -> None:
    session = _session("big_schema-300000", HostBounds(max_message_bytes=1_000_000))
    await session.connect()
    try:
        report = await session.discover_tools()
    finally:
        await session.close()
    assert list(report.admitted) == ["clean", "big", "clean_too"] and not session.stdio_cap.tripped


def test_the_private_accessors_exist_in_the_tested_sdk() -> None:
    # compat.stdio_line_cap wraps this factory; compat.send_unvalidated_request uses these members.
    assert inspect.iscoroutinefunction(
        getattr(
            sdk_stdio._create_platform_compatible_process,
            "__wrapped__",
            sdk_stdio._create_platform_compatible_process,
        )
    )
    source = inspect.getsource(ClientSession)
    for member in ("self._stamp", "self._dispatcher", "self._session_read_timeout_seconds"):
        assert member in source
    compat.install_stdio_line_cap()
    compat.install_stdio_line_cap()  # idempotent: wrapped once
    assert getattr(sdk_stdio._create_platform_compatible_process, "__agent_connector_line_cap__", False)


@pytest.mark.parametrize("mode", ["surrogate", "deep_schema-150", "nonfinite"])
async def test_one_unrepresentable_descriptor_costs_only_itself_over_stdio(mode: str) -> None:
    session = _session(mode, HostBounds())
    await session.connect()
    started = time.monotonic()
    try:
        report = await session.discover_tools()
    finally:
        await session.close()
    assert list(report.admitted) == ["clean", "clean_too"]
    assert [r["category"] for r in report.rejected] in (["malformed"], ["invalid_schema"])
    assert time.monotonic() - started < 60  # a hang guard far below the request timeout (300 s)


async def test_a_message_nested_past_every_parser_is_named_at_once_not_after_the_timeout() -> None:
    session = _session("deep_schema-10000", HostBounds())
    await session.connect()
    started = time.monotonic()
    try:
        with pytest.raises(BoundExceeded) as refused:
            await session.discover_tools()
        took = time.monotonic() - started
    finally:
        await session.close()
    assert refused.value.bound == "max_schema_depth" and session.stdio_cap.too_deep
    assert took < 60, took  # a hang guard: the client's timeout is 300 s


async def test_json_values_per_message_are_capped_over_stdio_too() -> None:
    session = _session("tool_flood-1000", HostBounds(max_message_values=1_000))
    await session.connect()
    started = time.monotonic()
    try:
        with pytest.raises(BoundExceeded) as refused:
            await session.discover_tools()
    finally:
        await session.close()
    took = time.monotonic() - started
    assert refused.value.bound == "max_message_values" and session.stdio_cap.values_tripped
    assert took < 60, took  # refused as it is read, not when the client's 300 s timeout ends it
    session = _session("tool_flood-100", HostBounds(max_message_values=1_000))
    await session.connect()
    try:
        report = await session.discover_tools()
    finally:
        await session.close()
    assert len(report.admitted) == 100 and not session.stdio_cap.values_tripped
