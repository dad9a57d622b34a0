"""The host's operations as CLIENT spans with their verdicts, and one trace from a caller through the
gateway to a child — over real Streamable HTTP, with the OpenTelemetry SDK's in-memory exporter."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import fastmcp
import pytest
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

from agent_connector_sdk.core.contracts import CATEGORY, GATE, VERDICT
from agent_connector_sdk.core.contracts.errors import ArgumentError
from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig
from agent_connector_sdk.mcp.host import ContractClient
from agent_connector_sdk.mcp.server import gated_http_app
from tests.support.gateway import parse_message
from tests.support.http_server import serve_asgi
from tests.support.otel import Recording, recording_telemetry
from tests.support.raw_http import raw_post

SECRET = "zz-argument-value-never-in-telemetry"
CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"


def _server() -> FastMCP[Any]:
    server: FastMCP[Any] = FastMCP("traced")

    @server.tool(annotations={"readOnlyHint": True})
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool(annotations={"readOnlyHint": True})
    def fail(text: str) -> str:
        """Always fails."""
        raise ToolError("it failed")

    @server.tool(
        annotations={"readOnlyHint": True},
        output_schema={"type": "object", "properties": {"n": {"type": "integer", "minimum": "zero"}}},
    )
    def broken_schema() -> dict[str, int]:
        """An output schema that is no valid JSON Schema: the host rejects the tool at Admit."""
        return {"n": 1}

    return server


@pytest.fixture(scope="module")
def gated_url() -> Iterator[str]:
    with serve_asgi(gated_http_app(_server(), stateless_http=True)) as url:
        yield url


@pytest.fixture
def recorded() -> Iterator[Recording]:
    with recording_telemetry() as recording:
        yield recording


def _named(recording: Recording, name: str, kind: SpanKind) -> list[ReadableSpan]:
    return [span for span in recording.spans() if span.name == name and span.kind == kind]


async def test_discover_call_and_refusals_are_client_spans_with_verdicts(
    gated_url: str, recorded: Recording
) -> None:
    async with ContractClient(fastmcp.Client(gated_url)) as host:
        report = await host.discover_tools()
        assert "echo" in report.admitted and report.rejected
        await host.call("echo", {"text": SECRET})
        failed = await host.call("fail", {"text": SECRET})
        assert failed.is_error
        with pytest.raises(ArgumentError):
            await host.call("echo", {"text": 7})

    (listing,) = _named(recorded, "tools/list", SpanKind.CLIENT)
    attributes = dict(listing.attributes or {})
    assert attributes["mcp.method.name"] == "tools/list"
    assert (attributes[GATE], attributes["agent_connector.rejected"]) == ("admit", len(report.rejected))
    assert attributes["agent_connector.admitted"] == len(report.admitted)
    rejections = [dict(e.attributes or {}) for e in listing.events]
    assert [(e["gen_ai.tool.name"], e[CATEGORY]) for e in rejections] == [
        (r["tool"], r["category"]) for r in report.rejected
    ]
    assert [r["tool"] for r in report.rejected] == ["broken_schema"]

    calls = _named(recorded, "tools/call echo", SpanKind.CLIENT)
    assert len(calls) == 2
    ok, refused = sorted(calls, key=lambda span: span.start_time or 0)
    assert dict(ok.attributes or {})[GATE] == "consume" and "error.type" not in dict(ok.attributes or {})
    refusal = dict(refused.attributes or {})
    assert (refusal[GATE], refusal[VERDICT], refusal["error.type"]) == (
        "invoke",
        "refused",
        "invalid_arguments",
    )
    (tool_error,) = _named(recorded, "tools/call fail", SpanKind.CLIENT)
    assert dict(tool_error.attributes or {})["error.type"] == "tool_error"

    # The server's span continues the host's trace (the SDK carries the context in _meta).
    (served,) = _named(recorded, "tools/call fail", SpanKind.SERVER)
    assert served.context.trace_id == tool_error.context.trace_id
    assert dict(served.attributes or {})["error.type"] == "tool_error"
    everything = json.dumps([dict(s.attributes or {}) for s in recorded.spans()])
    assert SECRET not in everything
    points = recorded.histogram_points("mcp.client.operation.duration")
    assert {"tool_error", "invalid_arguments"} <= {p.get("error.type") for p in points}


def test_one_trace_from_the_caller_through_the_gateway_to_the_child(
    gated_url: str, recorded: Recording
) -> None:
    gateway = Gateway(GatewayConfig(children=(ChildSpec("kid", url=gated_url),)))
    with serve_asgi(gateway.http_app()) as url:
        recorded.exporter.clear()
        meta = {"traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01", "baggage": "user=alice"}
        response = raw_post(url, "tools/call", {"name": "kid_echo", "arguments": {"text": SECRET}}, meta=meta)
        assert "result" in parse_message(response), response.text

    spans = recorded.spans()
    assert {format(span.context.trace_id, "032x") for span in spans} == {CALLER_TRACE}
    (front,) = [s for s in spans if s.kind == SpanKind.SERVER and s.name == "tools/call kid_echo"]
    assert front.parent is not None and format(front.parent.span_id, "016x") == CALLER_SPAN
    (hop,) = _named(recorded, "tools/call echo", SpanKind.CLIENT)
    assert hop.parent is not None and hop.parent.span_id == front.context.span_id
    (child,) = _named(recorded, "tools/call echo", SpanKind.SERVER)
    ancestors = {span.context.span_id: span for span in spans}
    parent = child.parent
    chain = []
    while parent is not None and parent.span_id in ancestors:
        chain.append(ancestors[parent.span_id].name)
        parent = ancestors[parent.span_id].parent
    assert "tools/call echo" in chain and "tools/call kid_echo" in chain  # child ← hop ← gateway
    assert SECRET not in json.dumps([dict(s.attributes or {}) for s in spans])
