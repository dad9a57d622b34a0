"""Guarantees that compose, over real Streamable HTTP: the gateway relays a valid child result as the
child produced it, never invents a value, re-issues trace context as its own (no other caller ``_meta``
reaches a child) and refuses a call bound to a disclosure that is no longer current."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any, cast

import mcp_types
import pytest
from fastmcp import FastMCP
from fastmcp.tools.base import ToolResult

from agent_connector_sdk.audit import BoundedAuditSink
from agent_connector_sdk.gateway import (
    CONTRACT_BINDING_META_KEY,
    SCHEMA_DIGEST_META_KEY,
    ChildSpec,
    Gateway,
    GatewayConfig,
)
from tests.support.composition_child import FILE_TEXT, files_server
from tests.support.gateway import call, parse_message, search
from tests.support.http_server import serve_asgi
from tests.support.raw_http import raw_post

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"


@pytest.fixture(scope="module")
def stack() -> Iterator[tuple[str, Gateway, FastMCP[Any]]]:
    child = files_server()
    audit = BoundedAuditSink()
    with serve_asgi(child.http_app(stateless_http=True)) as child_url:
        stdio = ChildSpec("sfiles", command=(sys.executable, "-m", "tests.support.composition_child"))
        # connect_timeout: a hang guard (a stdio child's start-up takes seconds on a busy machine).
        config = GatewayConfig(children=(ChildSpec("files", url=child_url), stdio), connect_timeout=60)
        gateway = Gateway(config, audit=audit)
        with serve_asgi(gateway.http_app()) as url:
            yield url, gateway, child


@pytest.mark.parametrize("child", ["files", "sfiles"])  # Streamable HTTP, stdio
def test_a_valid_child_result_arrives_with_the_childs_blocks_unchanged(
    stack: tuple[str, Gateway, Any], child: str
) -> None:
    url, gateway, _ = stack
    result = call(url, f"{child}_read", {})
    assert result["content"] == [{"type": "text", "text": FILE_TEXT}]
    assert result["structuredContent"] == {"content": FILE_TEXT}
    assert result.get("isError") is not True
    size = len(json.dumps(result).encode())
    assert size < 2.05 * len(json.dumps(FILE_TEXT))  # text + structuredContent, not a third JSON copy
    # Our stricter rule (a JSON text block beside structuredContent) is a finding in the audit instead.
    consumed = [
        e
        for e in cast(BoundedAuditSink, gateway.audit).events()
        if e.get("event") == "call" and e.get("tool") == "read"
    ]
    assert (
        consumed
        and {"rule": "text-serialization", "category": "missing_text_serialization"}
        in consumed[-1]["findings"]
    )


@pytest.mark.parametrize("child", ["files", "sfiles"])
def test_a_child_error_without_structured_content_is_relayed_without_an_invented_value(
    stack: tuple[str, Gateway, Any], child: str
) -> None:
    url, _, _ = stack
    result = call(url, f"{child}_broken", {})
    assert result["isError"] is True
    assert "structuredContent" not in result  # never {"n": 0}
    assert "the disk is on fire" in result["content"][0]["text"]


def test_invalid_arguments_at_the_gateway_are_an_error_result_without_an_invented_value(
    stack: tuple[str, Gateway, Any],
) -> None:
    url, _, _ = stack
    result = call(url, "files_broken", {"unexpected": 1})
    assert result["isError"] is True and "structuredContent" not in result


@pytest.mark.parametrize("child", ["files", "sfiles"])
def test_trace_context_is_reissued_as_the_gateways_own_and_nothing_else_of_the_callers_meta_travels(
    stack: tuple[str, Gateway, Any], child: str
) -> None:
    url = stack[0]
    caller_meta = {
        "traceparent": f"00-{TRACE}-{PARENT}-01",
        "tracestate": "rojo=00f067aa0ba902b7",
        "baggage": "user=alice",
        "progressToken": "p-1",
        "com.example/secret": "caller-secret",
    }
    tool = f"{child}_meta"
    for params in (
        {"name": tool, "arguments": {}},
        {"name": "call_tool", "arguments": {"name": tool, "arguments": {}}},
    ):
        seen = _received_meta(url, params, caller_meta)
        version, trace_id, span_id, flags = seen["traceparent"].split("-")
        assert (version, trace_id, flags) == ("00", TRACE, "01")
        assert span_id != PARENT and len(span_id) == 16
        assert seen["tracestate"] == "rojo=00f067aa0ba902b7"
        text = json.dumps(seen)
        assert "caller-secret" not in text and "baggage" not in seen and "alice" not in text
        assert "progressToken" not in seen

    # An invalid traceparent: no trace context at all reaches the child.
    bad = {"traceparent": f"00-{TRACE}-{PARENT}-01\r\nx: y", "tracestate": "rojo=1"}
    seen = _received_meta(url, {"name": tool, "arguments": {}}, bad)
    assert "traceparent" not in seen and "tracestate" not in seen


def _received_meta(url: str, params: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """The ``_meta`` the child saw, as its ``meta`` tool answered it through the gateway."""
    status, message = rpc_with_meta(url, params, meta)
    assert status == 200 and "result" in message, message
    received: dict[str, Any] = json.loads(message["result"]["content"][0]["text"])
    return received


def rpc_with_meta(url: str, params: dict[str, Any], meta: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """A ``tools/call`` whose ``_meta`` carries ``meta`` beside the protocol's own keys."""
    response = raw_post(url, "tools/call", params, meta=meta)
    return response.status_code, parse_message(response)


def test_a_call_bound_to_the_contract_it_read_runs_and_a_stale_binding_is_refused_over_the_wire(
    stack: tuple[str, Gateway, Any],
) -> None:
    url, _, child = stack
    (entry,) = [e for e in search(url, "files_meta") if e["name"] == "files_meta"]
    assert entry["contract_sha256"] != entry["schema_sha256"]
    for key in (CONTRACT_BINDING_META_KEY, SCHEMA_DIGEST_META_KEY):  # the old key binds the contract too
        bound = {key: entry["contract_sha256"]}
        status, message = rpc_with_meta(url, {"name": "files_meta", "arguments": {}}, bound)
        assert status == 200 and "result" in message and message["result"].get("isError") is not True

    before = len(child.seen_meta)
    for stale in (
        {CONTRACT_BINDING_META_KEY: "0" * 64},
        {SCHEMA_DIGEST_META_KEY: "0" * 64},
        # A schema digest binds the schemas only: refused, with the key to use instead.
        {SCHEMA_DIGEST_META_KEY: entry["schema_sha256"]},
    ):
        for params in (
            {"name": "files_meta", "arguments": {}},
            {"name": "call_tool", "arguments": {"name": "files_meta", "arguments": {}}},
        ):
            status, message = rpc_with_meta(url, params, stale)
            assert "result" not in message, message
            assert message["error"]["code"] == -32015
            assert message["error"]["data"]["category"] == "tool_changed"
            if stale.get(SCHEMA_DIGEST_META_KEY) == entry["schema_sha256"]:
                assert CONTRACT_BINDING_META_KEY in message["error"]["message"]
    assert len(child.seen_meta) == before  # nothing reached the child


def test_only_a_relay_tools_consumed_result_skips_the_second_validation(
    stack: tuple[str, Gateway, Any],
) -> None:
    from fastmcp.tools.base import Tool

    from agent_connector_sdk.gateway._app import _Consumed
    from agent_connector_sdk.mcp.server import consumed_by_relay

    _, gateway, _ = stack
    relay = gateway.tool("files_read")
    assert relay is not None
    consumed = _Consumed(content=[mcp_types.TextContent(type="text", text="x")])
    plain = ToolResult(content=[mcp_types.TextContent(type="text", text="x")])
    ordinary = Tool(name="t", parameters={"type": "object"})
    assert consumed_by_relay(relay, consumed)
    assert not consumed_by_relay(relay, plain)  # a relay's result it did not consume is checked
    assert not consumed_by_relay(ordinary, consumed)  # a non-relay tool is always checked


def test_a_refusal_through_the_call_tool_proxy_logs_no_error_line(stack: tuple[str, Gateway, Any]) -> None:
    """A refusal is an expected outcome: refused through the search transform's ``call_tool``, it
    used to be logged as "Error calling tool 'call_tool'" at ERROR with a traceback on the gateway's
    stderr. What FastMCP's handler would print is everything at INFO and above."""
    import logging

    url = stack[0]
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    keep = Keep(logging.DEBUG)
    watched = [logging.getLogger(), logging.getLogger("fastmcp")]  # fastmcp's does not propagate
    for logger in watched:
        logger.addHandler(keep)
    level = logging.getLogger("fastmcp").level
    logging.getLogger("fastmcp").setLevel(logging.DEBUG)
    try:
        params = {"name": "call_tool", "arguments": {"name": "files_meta", "arguments": {}}}
        _, message = rpc_with_meta(url, params, {SCHEMA_DIGEST_META_KEY: "0" * 64})
    finally:
        logging.getLogger("fastmcp").setLevel(level)
        for logger in watched:
            logger.removeHandler(keep)
    assert message["error"]["code"] == -32015 and message["error"]["data"]["category"] == "tool_changed"
    calling = [r for r in records if r.getMessage().startswith("Error calling tool")]
    assert calling, "the refusal is still logged, at DEBUG"  # the probe sees FastMCP's records
    assert all(r.levelno < logging.INFO and not r.exc_info for r in calling), [
        (r.levelname, r.getMessage()) for r in calling
    ]


def test_call_tool_naming_a_synthetic_tool_is_a_clear_refusal_without_an_error_line(
    stack: tuple[str, Gateway, Any],
) -> None:
    """FastMCP's proxy raises a ValueError for ``call_tool(name="search_tools")``, which its server
    logged at ERROR with a traceback on every call (a caller could flood alerting with it)."""
    import logging

    url = stack[0]
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    keep = Keep(logging.DEBUG)
    watched = [logging.getLogger(), logging.getLogger("fastmcp")]  # fastmcp's does not propagate
    for logger in watched:
        logger.addHandler(keep)
    level = logging.getLogger("fastmcp").level
    logging.getLogger("fastmcp").setLevel(logging.DEBUG)
    try:
        inner_arguments = {"search_tools": {"pattern": "."}, "call_tool": {"name": "files_meta"}}
        messages = [
            rpc_with_meta(url, {"name": "call_tool", "arguments": {"name": inner, "arguments": given}}, {})[1]
            for inner, given in inner_arguments.items()
        ]
    finally:
        logging.getLogger("fastmcp").setLevel(level)
        for logger in watched:
            logger.removeHandler(keep)
    for inner, message in zip(("search_tools", "call_tool"), messages, strict=True):
        assert "result" not in message, message
        assert message["error"]["code"] == -32602
        assert message["error"]["message"] == (
            f"'{inner}' is the server's own search tool: call it directly, not through 'call_tool'"
        )
    assert records, "the probe sees the server's records"
    loud = [(r.name, r.levelname, r.getMessage()) for r in records if r.levelno >= logging.WARNING]
    assert loud == [], loud
