"""Every request that reaches a gated app is in exactly one SERVER span, with the gate's verdict on it.

Over real Streamable HTTP against the contract lab, with the OpenTelemetry SDK's in-memory exporter:
FastMCP's own span carries the gates' decisions where FastMCP handles the request; the entry's span
covers what is refused before FastMCP sees it (a missing MCP-Protocol-Version, a body too large, a caller
without credentials). No argument or header value appears in any attribute or event.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

from agent_connector_sdk.core.contracts import CATEGORY, GATE, GATE_EVENT, VERDICT
from agent_connector_sdk.demo.lab_service import OPERATOR_TOKEN, lab_service_app
from tests.support.http_server import serve_asgi
from tests.support.otel import Recording, recording_telemetry
from tests.support.raw_http import META, raw_post

AUTH = [("authorization", f"Bearer {OPERATOR_TOKEN}")]
REGION = "zz-secret-region-value"  # must never appear in telemetry
CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


@pytest.fixture(scope="module")
def lab_url() -> Iterator[str]:
    with serve_asgi(lab_service_app()) as url:
        yield url


@pytest.fixture
def recorded() -> Iterator[Recording]:
    with recording_telemetry() as recording:
        yield recording


def _server_spans(recording: Recording) -> list[ReadableSpan]:
    """The finished SERVER spans, waiting briefly for a first one: the entry ends its span after the
    answer is sent, so the client can be first to look."""
    deadline = time.monotonic() + 5
    while True:
        spans = [span for span in recording.spans() if span.kind == SpanKind.SERVER]
        if spans or time.monotonic() > deadline:
            time.sleep(0.05)  # a second span, were there one, would end by now
            return [span for span in recording.spans() if span.kind == SpanKind.SERVER]
        time.sleep(0.02)


def _only_server_span(recording: Recording) -> ReadableSpan:
    spans = _server_spans(recording)
    assert len(spans) == 1, [(s.name, dict(s.attributes or {})) for s in spans]
    return spans[0]


def _no_values(recording: Recording, *values: str) -> None:
    everything = json.dumps(
        [
            [dict(span.attributes or {}), [dict(event.attributes or {}) for event in span.events]]
            for span in recording.spans()
        ]
    )
    for value in values:
        assert value not in everything


def _search_call(region_header: str | None) -> dict[str, Any]:
    headers = list(AUTH)
    if region_header is not None:
        headers.append(("Mcp-Param-Region", region_header))
    return {"headers": headers}


def test_a_passing_call_is_one_span_named_by_the_conventions(lab_url: str, recorded: Recording) -> None:
    params = {"name": "search_evidence", "arguments": {"query": "audit", "region": REGION}}
    response = raw_post(lab_url, "tools/call", params, **_search_call(REGION))
    assert response.status_code == 200, response.text
    span = _only_server_span(recorded)
    attributes = dict(span.attributes or {})
    assert span.name == "tools/call search_evidence"
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["gen_ai.tool.name"] == "search_evidence"
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["mcp.protocol.version"] == "2026-07-28"
    assert "error.type" not in attributes and attributes.get(VERDICT) != "refused"
    _no_values(recorded, REGION)
    (point,) = [p for p in recorded.histogram_points("mcp.server.operation.duration") if p["count"]]
    assert point["mcp.method.name"] == "tools/call" and "error.type" not in point


def test_a_lying_header_is_refused_by_parity_on_fastmcps_span(lab_url: str, recorded: Recording) -> None:
    params = {"name": "search_evidence", "arguments": {"query": "audit", "region": REGION}}
    response = raw_post(lab_url, "tools/call", params, **_search_call("zz-other-header-value"))
    assert response.status_code == 400 and response.json()["error"]["code"] == -32020
    span = _only_server_span(recorded)
    attributes = dict(span.attributes or {})
    assert span.name == "tools/call search_evidence"
    assert (attributes[GATE], attributes[VERDICT], attributes[CATEGORY]) == (
        "parity",
        "refused",
        "mismatched",
    )
    assert attributes["error.type"] == "-32020"
    decisions = [dict(e.attributes or {}) for e in span.events if e.name == GATE_EVENT]
    assert decisions == [{GATE: "parity", VERDICT: "refused", CATEGORY: "mismatched"}]
    _no_values(recorded, REGION, "zz-other-header-value")
    points = [p for p in recorded.histogram_points("mcp.server.operation.duration") if p["count"]]
    assert [(p.get(GATE), p.get(VERDICT), p.get("error.type")) for p in points] == [
        ("parity", "refused", "-32020")
    ]


def test_invalid_arguments_are_the_argument_gates_refusal(lab_url: str, recorded: Recording) -> None:
    params = {"name": "search_evidence", "arguments": {"query": 7}}
    response = raw_post(lab_url, "tools/call", params, headers=AUTH)
    assert response.status_code == 200
    span = _only_server_span(recorded)
    attributes = dict(span.attributes or {})
    assert (attributes[GATE], attributes[VERDICT], attributes[CATEGORY]) == (
        "arguments",
        "refused",
        "invalid_arguments",
    )


def test_a_body_without_its_protocol_version_header_gets_the_entrys_span(
    lab_url: str, recorded: Recording
) -> None:
    body = {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": META}}
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-method": "tools/list",
        "authorization": f"Bearer {OPERATOR_TOKEN}",
        "traceparent": f"00-{CALLER_TRACE}-00f067aa0ba902b7-01",
    }
    response = httpx2.post(lab_url, content=json.dumps(body), headers=headers, timeout=30)
    assert response.status_code == 400
    span = _only_server_span(recorded)
    attributes = dict(span.attributes or {})
    assert span.name == "tools/list"
    assert attributes["mcp.method.name"] == "tools/list"
    assert attributes["jsonrpc.request.id"] == "5"
    assert (attributes[GATE], attributes[VERDICT], attributes["error.type"]) == (
        "parity",
        "refused",
        "-32020",
    )
    assert attributes["http.response.status_code"] == 400
    assert format(span.context.trace_id, "032x") == CALLER_TRACE  # the caller's trace continues
    assert span.parent is not None and format(span.parent.span_id, "016x") == "00f067aa0ba902b7"


def test_a_caller_without_credentials_and_a_body_too_large_each_get_one_span(
    lab_url: str, recorded: Recording
) -> None:
    params = {"name": "search_evidence", "arguments": {"query": "audit"}}
    assert raw_post(lab_url, "tools/call", params).status_code == 401
    (unauthenticated,) = _server_spans(recorded)
    attributes = dict(unauthenticated.attributes or {})
    assert (attributes[GATE], attributes[CATEGORY], attributes["error.type"]) == (
        "auth",
        "unauthenticated",
        "401",
    )
    assert unauthenticated.name == "tools/call search_evidence"
    recorded.exporter.clear()
    huge = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"' + b"x" * 5_000_000 + b'"}}'
    response = raw_post(lab_url, "tools/list", {}, headers=AUTH, content=huge)
    assert response.status_code == 413
    (too_large,) = _server_spans(recorded)
    attributes = dict(too_large.attributes or {})
    assert (attributes[GATE], attributes[VERDICT], attributes[CATEGORY]) == (
        "entry",
        "refused",
        "body_too_large",
    )


def test_a_hostile_method_header_is_not_copied_into_the_span(lab_url: str, recorded: Recording) -> None:
    params = {"name": "search_evidence", "arguments": {"query": "audit"}}
    response = raw_post(lab_url, "tools/call", params, headers=[("mcp-method", "tools/call\x1b[2J<evil>")])
    assert response.status_code in (400, 401)
    for span in _server_spans(recorded):
        assert "evil" not in span.name and "evil" not in json.dumps(dict(span.attributes or {}))


def _bare_post(url: str, body: dict[str, Any], *extra: tuple[str, str]) -> httpx2.Response:
    """A POST without any routing header (``Mcp-Method``, ``Mcp-Name``): only its body names the call."""
    headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("authorization", f"Bearer {OPERATOR_TOKEN}"),
        *extra,
    ]
    return httpx2.post(url, content=json.dumps(body), headers=headers, timeout=30)


def test_a_call_the_entry_refuses_is_named_by_its_body_when_no_header_names_it(
    lab_url: str, recorded: Recording
) -> None:
    # A 2026-07-28 body routed around its MCP-Protocol-Version header: the entry refuses it before
    # FastMCP sees it, so the span is the entry's, named by the refusal translator from the body.
    params = {"name": "search_evidence", "arguments": {"query": "audit"}, "_meta": META}
    response = _bare_post(lab_url, {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params})
    assert response.status_code == 400 and response.json()["error"]["code"] == -32020
    span = _only_server_span(recorded)
    attributes = dict(span.attributes or {})
    assert span.name == "tools/call search_evidence"  # was "mcp"
    assert attributes["gen_ai.tool.name"] == "search_evidence"
    assert attributes["mcp.method.name"] == "tools/call"
    assert (attributes[GATE], attributes[VERDICT], attributes["error.type"]) == (
        "parity",
        "refused",
        "-32020",
    )
    recorded.exporter.clear()
    # A handshake-era call whose Mcp-Param header lies: the parity refusal at the entry, same name.
    handshake = {"name": "search_evidence", "arguments": {"query": "audit", "region": REGION}}
    body = {"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": handshake}
    response = _bare_post(
        lab_url, body, ("mcp-protocol-version", "2025-11-25"), ("mcp-param-region", "zz-other-header-value")
    )
    assert response.status_code == 400 and response.json()["error"]["code"] == -32020
    span = _only_server_span(recorded)
    assert span.name == "tools/call search_evidence"
    assert dict(span.attributes or {})[CATEGORY] == "mismatched"
    _no_values(recorded, REGION, "zz-other-header-value")


def test_a_body_name_of_another_shape_never_names_the_span(lab_url: str, recorded: Recording) -> None:
    params = {"name": "evil name\x1b[2J", "arguments": {}, "_meta": META}
    response = _bare_post(lab_url, {"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": params})
    assert response.status_code == 400
    span = _only_server_span(recorded)
    assert span.name == "tools/call"
    assert "evil" not in json.dumps(dict(span.attributes or {}))
