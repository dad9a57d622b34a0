"""ContractClient: the host core around a real fastmcp.Client.

Logic runs in memory (``fastmcp.Client(server)``); everything about ``Mcp-Param-*`` headers runs over
real HTTP with a recorder that captures the raw request headers the server received, and scripted
cursor chains run against the ``mcp`` SDK's low-level server over HTTP (its public ``on_list_tools``
handler: no private server internals are replaced).
"""

from __future__ import annotations

# Write confirmation (on by default) is opted out in this module: these tests exercise other gates;
# tests/mcp/host/test_write_confirmation.py covers confirmation itself.
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import fastmcp
import mcp_types
import pytest
from fastmcp import FastMCP
from fastmcp.server.middleware import Middleware
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

from agent_connector_sdk.core.contracts.errors import (
    AdmissionError,
    ArgumentError,
    ContractError,
    ContractViolation,
    HeaderValueError,
    PaginationError,
)
from agent_connector_sdk.core.host import (
    InvalidCompletionRequest,
    JsonRpcError,
    ProtocolError,
    ToolExecutionError,
    ToolResult,
    TransportFailure,
)
from agent_connector_sdk.demo.contract_lab import REGIONS, contract_lab_app, contract_lab_server
from agent_connector_sdk.mcp.host import HostBounds, HostOptions
from agent_connector_sdk.mcp.host.contract_client import ContractClient
from agent_connector_sdk.mcp.server import ServerGates
from tests.support.audit import recorded
from tests.support.http_server import serve_asgi


# ------------------------------------------------------------------------------------------ helpers
@contextlib.contextmanager
def _scripted_listing(chain: dict[str | None, str | None]) -> Iterator[tuple[str, list[str | None]]]:
    """A real server (the ``mcp`` SDK's low-level ``Server``, over HTTP) whose ``tools/list`` pages are
    chained by ``chain`` (cursor received → nextCursor), one tool per page; yields its URL and the log
    of cursors it received, so tests can count requests exactly. A cursor outside ``chain`` makes the
    handler fail (the server answers with a JSON-RPC error)."""
    received: list[str | None] = []

    async def list_tools(
        ctx: Any, params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        cursor = params.cursor if params is not None else None
        received.append(cursor)
        tool = mcp_types.Tool(name=f"tool_{len(received)}", input_schema={"type": "object"})
        return mcp_types.ListToolsResult(tools=[tool], next_cursor=chain[cursor])

    server: Server[Any] = Server("scripted-pages", on_list_tools=list_tools)
    with serve_asgi(server.streamable_http_app(stateless_http=True)) as url:
        yield url, received


def _recording(app: Any, log: list[list[tuple[str, str]]]) -> Any:
    """ASGI wrapper that records every HTTP request's raw header list (names lowercased by the server)."""

    async def recorder(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            log.append(
                [(bytes(k).decode("latin-1"), bytes(v).decode("latin-1")) for k, v in scope["headers"]]
            )
        await app(scope, receive, send)

    return recorder


def _tools_call_headers(log: list[list[tuple[str, str]]]) -> list[list[tuple[str, str]]]:
    return [headers for headers in log if ("mcp-method", "tools/call") in headers]


def _param_headers(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(name, value) for name, value in headers if name.startswith("mcp-param-")]


@asynccontextmanager
async def _discovered(target: FastMCP[Any] | str) -> AsyncIterator[ContractClient]:
    """A connected ContractClient on ``target`` (in-memory server or URL) that has run discovery."""
    async with ContractClient(
        fastmcp.Client(target), options=HostOptions(profile="strict", require_confirmation=False)
    ) as client:
        await client.discover_tools()
        yield client


@pytest.fixture
def lab() -> FastMCP[Any]:
    server = contract_lab_server(empty_cursor_pages=True)
    ServerGates().install(server)
    return server


# --------------------------------------------------------------------------------- discover + admit
async def test_empty_string_cursor_is_followed_and_order_is_stable(lab: FastMCP[Any]) -> None:
    orders = []
    for _ in range(2):
        async with ContractClient(
            fastmcp.Client(lab), options=HostOptions(profile="strict", require_confirmation=False)
        ) as client:
            report = await client.discover_tools()
            assert client.cursor_trace == [None, "", "page-3"]
            orders.append(list(report.admitted))
    assert (
        orders[0]
        == orders[1]
        == [
            "route_shipment",
            "list_regions",
            "inventory_snapshot",
            "flaky_search",
            "search_evidence",
            "content_gallery",
        ]
    )


async def test_sensitive_and_misplaced_annotations_are_rejected_while_the_rest_remain(
    lab: FastMCP[Any],
) -> None:
    async with _discovered(lab) as client:
        categories = {r["tool"]: r["category"] for r in client.rejections}
        assert categories == {"fetch_report": "sensitive_header", "nested_route": "invalid_header_annotation"}
        assert "route_shipment" in client.admitted
        with pytest.raises(AdmissionError) as refused:
            await client.call("fetch_report", {"report_id": "r1", "api_token": "s3cr3t"})
        assert refused.value.category == "not_admitted"
    async with ContractClient(
        fastmcp.Client(lab),
        options=HostOptions(require_confirmation=False),  # the default profile: the spec's placement
    ) as spec_client:
        await spec_client.discover_tools()
        assert "nested_route" in spec_client.admitted
        assert "fetch_report" not in spec_client.admitted  # sensitive: rejected in every profile
        (finding,) = spec_client.session.core.listed["nested_route"].findings
        assert (finding.rule, finding.category) == ("header-placement", "invalid_header_annotation")
        discover = next(e for e in recorded(spec_client.audit) if e.get("event") == "discover")
        assert {
            "tool": "nested_route",
            "rule": "header-placement",
            "category": "invalid_header_annotation",
        } in (discover["findings"])


async def test_calls_before_discovery_are_refused(lab: FastMCP[Any]) -> None:
    async with ContractClient(
        fastmcp.Client(lab), options=HostOptions(profile="strict", require_confirmation=False)
    ) as client:
        with pytest.raises(AdmissionError):
            await client.call("list_regions", {})


async def test_repeated_cursor_refused_after_exactly_the_requests_needed() -> None:
    with _scripted_listing({None: "a", "a": "a"}) as (url, received):
        async with ContractClient(
            fastmcp.Client(url), options=HostOptions(profile="strict", require_confirmation=False)
        ) as client:
            with pytest.raises(PaginationError) as refused:
                await client.discover_tools()
    assert refused.value.category == "repeated_cursor"
    assert received == [None, "a"]
    assert client.cursor_trace == [None, "a"]


async def test_cyclic_cursor_refused_before_another_request() -> None:
    with _scripted_listing({None: "a", "a": "b", "b": "a"}) as (url, received):
        async with ContractClient(
            fastmcp.Client(url), options=HostOptions(profile="strict", require_confirmation=False)
        ) as client:
            with pytest.raises(PaginationError) as refused:
                await client.discover_tools()
    assert refused.value.category == "repeated_cursor"
    assert received == [None, "a", "b"]


async def test_page_limit(lab: FastMCP[Any]) -> None:
    async with ContractClient(
        fastmcp.Client(lab), options=HostOptions(bounds=HostBounds(max_pages=2), require_confirmation=False)
    ) as client:
        with pytest.raises(PaginationError) as refused:
            await client.discover_tools()
    assert refused.value.category == "page_limit"
    assert client.cursor_trace == [None, ""]


async def test_server_refusing_a_cursor_is_a_protocol_error() -> None:
    with _scripted_listing({None: "gone"}) as (url, _):  # the server then fails on its own cursor
        async with ContractClient(
            fastmcp.Client(url), options=HostOptions(profile="strict", require_confirmation=False)
        ) as client:
            with pytest.raises(JsonRpcError):
                await client.discover_tools()


# ----------------------------------------------------------------------------------- invoke + consume
async def test_array_output_accepted_and_withheld_violation_is_a_protocol_error(lab: FastMCP[Any]) -> None:
    async with _discovered(lab) as client:
        regions = await client.call("list_regions", {})
        assert regions.structured_content == list(REGIONS)
        assert not regions.is_error
        with pytest.raises(JsonRpcError) as withheld:
            await client.call("inventory_snapshot", {})
    assert withheld.value.code == -32603
    assert withheld.value.data["category"] == "output_schema_violation"


async def test_ungated_server_violations_are_refused_at_the_consume_gate() -> None:
    server = contract_lab_server()  # no gates: the lab's lies reach the client
    async with _discovered(server) as client:
        with pytest.raises(ContractViolation) as wrong_shape:
            await client.call("inventory_snapshot", {})
        assert wrong_shape.value.category == "output_schema_violation"
        # FastMCP's own isError result omits structuredContent although the tool publishes a schema.
        with pytest.raises(ContractViolation) as omitted:
            await client.call("flaky_search", {"query": "boats"})
        assert omitted.value.category == "missing_structured_content"
    assert not isinstance(wrong_shape.value, JsonRpcError)
    assert omitted.value.server_text  # the server's own words travel with the refusal
    assert [e["outcome"] for e in recorded(client.audit) if e.get("event") == "call"] == [
        "output_schema_violation",
        "missing_structured_content",
    ]


async def test_default_profile_reports_project_rules_as_findings_and_keeps_the_result() -> None:
    server = contract_lab_server()  # no gates: FastMCP's isError result has no structuredContent
    async with ContractClient(
        fastmcp.Client(server), options=HostOptions(require_confirmation=False)
    ) as client:
        await client.discover_tools()
        failed = await client.call("flaky_search", {"query": "boats"})
        with pytest.raises(ContractViolation) as wrong_shape:  # a spec MUST: rejected in every profile
            await client.call("inventory_snapshot", {})
    assert failed.is_error
    assert [(f.rule, f.category) for f in failed.findings] == [
        ("error-structured-content", "missing_structured_content")
    ]
    assert failed.text  # the tool's error text is kept for the caller
    assert wrong_shape.value.category == "output_schema_violation"
    audit = recorded(client.audit)
    call = [e for e in audit if e.get("event") == "call" and e.get("tool") == "flaky_search"][-1]
    assert call["findings"] == [
        {"rule": "error-structured-content", "category": "missing_structured_content"}
    ]


async def test_tool_failure_is_a_tool_error_not_a_protocol_error(lab: FastMCP[Any]) -> None:
    async with _discovered(lab) as client:
        result = await client.call("flaky_search", {"query": "boats"})
        assert isinstance(result, ToolResult)
        assert result.is_error and result.structured_content == []
        with pytest.raises(ToolExecutionError) as raised:
            await client.call("flaky_search", {"query": "boats"}, raise_on_error=True)
    assert raised.value.result.is_error
    assert not isinstance(raised.value, ContractError | JsonRpcError)


async def test_arguments_are_validated_before_anything_is_sent(lab: FastMCP[Any]) -> None:
    async with _discovered(lab) as client:
        with pytest.raises(ArgumentError) as refused:
            await client.call("route_shipment", {"region": "eu-west", "priority": "high"})
        assert refused.value.path == "/priority"
        with pytest.raises(HeaderValueError):
            await client.call("route_shipment", {"region": "eu-west", "priority": 2**60})
    outcomes = [e["outcome"] for e in recorded(client.audit) if e.get("event") == "call"]
    assert outcomes == ["invalid_arguments", "out_of_range"]


async def test_audit_names_headers_never_values(lab: FastMCP[Any]) -> None:
    secret = "private-λ\n"
    async with _discovered(lab) as client:
        result = await client.call("route_shipment", {"region": secret, "priority": 7})
        assert result.structured_content["region"] == secret
    serialized = json.dumps(recorded(client.audit).events(), ensure_ascii=False)
    assert "private" not in serialized and "λ" not in serialized
    built = [e for e in recorded(client.audit) if e.get("event") == "parameter_headers_built"]
    assert built[-1]["headers"] == ["Mcp-Param-Region", "Mcp-Param-Priority"]
    assert built[-1]["base64_encoded"] == ["Mcp-Param-Region"]


async def test_completion_shape_over_the_cap(lab: FastMCP[Any]) -> None:
    from agent_connector_sdk.demo.contract_lab import contract_lab_completions

    contract_lab_completions().install(lab)
    async with ContractClient(
        fastmcp.Client(lab), options=HostOptions(profile="strict", require_confirmation=False)
    ) as client:
        many = await client.complete({"type": "ref/prompt", "name": "deploy_plan"}, "service", "serv")
        assert len(many.values) == 100 and many.total == 150 and many.has_more is True
        few = await client.complete({"type": "ref/prompt", "name": "deploy_plan"}, "service", "service-14")
        assert few.values == [f"service-14{i}" for i in range(10)] and few.has_more is False


# ------------------------------------------------------------------------------- headers, real HTTP
@pytest.fixture
def recorded_lab() -> Iterator[tuple[str, list[list[tuple[str, str]]]]]:
    log: list[list[tuple[str, str]]] = []
    app = _recording(contract_lab_app(stateless_http=True), log)
    with serve_asgi(app) as url:
        yield url, log


async def _route_shipment_once(
    recorded_lab: tuple[str, list[list[tuple[str, str]]]], arguments: dict[str, Any]
) -> tuple[ToolResult, list[tuple[str, str]]]:
    """Discover, call ``route_shipment`` once; the result and the Mcp-Param-* headers its POST carried."""
    url, log = recorded_lab
    async with _discovered(url) as client:
        result = await client.call("route_shipment", arguments)
    (headers,) = _tools_call_headers(log)
    return result, _param_headers(headers)


@pytest.mark.parametrize(
    ("region", "wire"),
    [
        ("eu-west", "eu-west"),
        ("eu west", "=?base64?ZXUgd2VzdA==?="),  # inner space: plain for the SDK, base64 for us
        ("Zürich", "=?base64?WsO8cmljaA==?="),
        (" eu", "=?base64?IGV1?="),
        ("", "=?base64??="),
        ("=?base64?SGVsbG8=?=", "=?base64?PT9iYXNlNjQ/U0dWc2JHOD0/PQ==?="),
    ],
)
async def test_each_param_header_is_sent_exactly_once_with_our_encoding(
    recorded_lab: tuple[str, list[list[tuple[str, str]]]], region: str, wire: str
) -> None:
    result, headers = await _route_shipment_once(
        recorded_lab, {"region": region, "priority": 3, "express": True}
    )
    assert result.structured_content["region"] == region
    assert sorted(headers) == [
        ("mcp-param-express", "true"),
        ("mcp-param-priority", "3"),
        ("mcp-param-region", wire),
    ]


async def test_sdk_mirroring_is_replaced_not_duplicated(
    recorded_lab: tuple[str, list[list[tuple[str, str]]]],
) -> None:
    url, log = recorded_lab
    async with _discovered(url) as client:
        # Listing through the SDK fills its own x-mcp-header map, so its stamp now emits
        # `Mcp-Param-Region: eu west` plain; our hook must replace it, not add a second header.
        await client.client.list_tools()
        await client.call("route_shipment", {"region": "eu west"})
        # A call made outside the contract client keeps the SDK's own (spec-conformant) header.
        await client.client.call_tool_mcp("route_shipment", {"region": "eu west"})
    ours, sdk_only = _tools_call_headers(log)
    assert _param_headers(ours) == [("mcp-param-region", "=?base64?ZXUgd2VzdA==?=")]
    assert [v for n, v in _param_headers(sdk_only) if n == "mcp-param-region"] == ["eu west"]


async def test_absent_argument_sends_no_header(recorded_lab: tuple[str, list[list[tuple[str, str]]]]) -> None:
    _, headers = await _route_shipment_once(recorded_lab, {"region": "eu-west"})
    assert headers == [("mcp-param-region", "eu-west")]


async def test_missing_header_is_a_protocol_error_from_the_execute_gate(
    recorded_lab: tuple[str, list[list[tuple[str, str]]]],
) -> None:
    url, _ = recorded_lab
    async with _discovered(url) as client:
        # Sabotage: the raw session sends the call without any Mcp-Param header (discovery went around
        # the SDK's header map, and this request bypasses our hook).
        with pytest.raises(MCPError) as refused:
            await client.client.session.send_request(
                mcp_types.CallToolRequest(
                    params=mcp_types.CallToolRequestParams(name="route_shipment", arguments={"region": "a"})
                ),
                mcp_types.CallToolResult,
            )
    assert refused.value.code == -32020


async def test_transport_failure_is_its_own_protocol_error_type() -> None:
    server_context = serve_asgi(contract_lab_app(stateless_http=True))
    url = server_context.__enter__()
    raised = []
    client = ContractClient(
        fastmcp.Client(url), options=HostOptions(profile="strict", require_confirmation=False)
    )
    with contextlib.suppress(TransportFailure):  # closing a session whose server vanished fails too
        async with client:
            await client.discover_tools()
            server_context.__exit__(None, None, None)  # the server goes away mid-session
            with pytest.raises(TransportFailure):
                await client.call("list_regions", {})
            raised.append(True)
    assert raised == [True]
    last = recorded(client.audit)[-1]
    assert last == {"event": "call", "tool": "list_regions", "outcome": "transport_failure"}


async def test_wrapping_a_connected_client_is_refused(lab: FastMCP[Any]) -> None:
    async with fastmcp.Client(lab) as connected:
        with pytest.raises(ValueError):
            ContractClient(connected, options=HostOptions(profile="strict", require_confirmation=False))


# ------------------------------------------------------------------------------ values never leak
class _EchoingRefusal(Middleware):
    """A peer whose JSON-RPC errors quote the request's argument values (in message and data)."""

    async def on_call_tool(self, context: Any, call_next: Any) -> Any:
        arguments = context.message.arguments
        region = arguments["region"]
        raise MCPError(code=arguments["code"], message=f"cannot route to {region}", data={"region": region})


def _server_echoing_values_in_errors() -> FastMCP[Any]:
    server: FastMCP[Any] = FastMCP("echoing-errors")

    @server.tool
    def refuse(region: str, code: int) -> str:
        return region

    server.add_middleware(_EchoingRefusal())
    return server


@pytest.mark.parametrize("code", [-32602, mcp_types.CONNECTION_CLOSED])
async def test_peer_error_text_stays_out_of_the_exception_message(code: int) -> None:
    async with _discovered(_server_echoing_values_in_errors()) as client:
        with pytest.raises(ProtocolError) as raised:
            await client.call("refuse", {"region": "secret-region", "code": code})
    assert "secret-region" not in str(raised.value)
    assert "secret-region" not in json.dumps(recorded(client.audit).events())
    if isinstance(raised.value, JsonRpcError):
        # The peer's text is still there for a host that decides to show it.
        assert raised.value.code == code and "secret-region" in raised.value.message
    else:
        assert isinstance(raised.value, TransportFailure) and raised.value.code == code


@pytest.mark.parametrize(
    ("ref", "argument", "value", "context"),
    [
        ({"type": "ref/prompt"}, "service", "secret-value", None),  # no name: was sent as "None"
        ({"type": "ref/resource", "uri": 7}, "service", "secret-value", None),
        ("ref/prompt", "service", "secret-value", None),  # not a mapping: was an AttributeError
        ({"type": "ref/prompt", "name": "deploy_plan"}, "service", 12345, None),  # was a pydantic error
        ({"type": "ref/prompt", "name": "deploy_plan"}, None, "secret-value", None),
        ({"type": "ref/prompt", "name": "deploy_plan"}, "service", "x", {"env": 12345}),
        ({"type": "ref/prompt", "name": "deploy_plan"}, "service", "x", ["secret-value"]),
    ],
)
async def test_an_unsendable_completion_request_is_a_typed_refusal(
    lab: FastMCP[Any], ref: Any, argument: Any, value: Any, context: Any
) -> None:
    async with ContractClient(
        fastmcp.Client(lab), options=HostOptions(profile="strict", require_confirmation=False)
    ) as client:
        with pytest.raises(InvalidCompletionRequest) as refused:
            await client.complete(ref, argument, value, context_arguments=context)
    assert refused.value.category == "invalid_request"
    assert isinstance(refused.value, ValueError)  # what a bad ref raised before
    assert "secret" not in str(refused.value) and "12345" not in str(refused.value)


@pytest.mark.parametrize("name", [["route_shipment"], {"secret": 1}, None])
async def test_a_tool_name_that_is_not_a_string_is_not_admitted(lab: FastMCP[Any], name: Any) -> None:
    async with _discovered(lab) as client:
        with pytest.raises(AdmissionError) as refused:
            await client.call(name, {})
    assert refused.value.category == "not_admitted"
    assert "secret" not in str(refused.value)
    assert recorded(client.audit)[-1] == {"event": "call", "tool": None, "outcome": "not_admitted"}


async def test_an_unreachable_server_is_a_transport_failure_not_a_bare_runtime_error() -> None:
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = ContractClient(
        fastmcp.Client(f"http://127.0.0.1:{port}/mcp"),
        options=HostOptions(profile="strict", require_confirmation=False),
    )
    with pytest.raises(TransportFailure) as failed:
        async with client:
            pass
    assert str(port) not in str(failed.value)  # the type of failure, not where
