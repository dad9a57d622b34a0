"""Regression tests for the hostile-input probe of the server side, each over real HTTP with raw requests
(httpx2 against uvicorn on 127.0.0.1), so no client normalizes what the server receives."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from fastmcp.server.transforms.search import RegexSearchTransform

from agent_connector_sdk.audit import BoundedAuditSink
from agent_connector_sdk.connectors import build_openapi_server, build_tool_disclosures, load_github_extract
from agent_connector_sdk.core.contracts import RateLimiter
from agent_connector_sdk.core.schema_disclosure import SourceDigest
from agent_connector_sdk.demo.contract_lab import contract_lab_app, contract_lab_server
from agent_connector_sdk.mcp.schema_disclosure_provider import (
    describe_schema_tools,
    register_schema_resources,
)
from agent_connector_sdk.mcp.server import (
    ERROR_TEXT_LIMIT,
    AuthorizedCompletions,
    ServerGates,
    gated_http_app,
)
from agent_connector_sdk.serving.openapi_app import build_openapi_app
from tests.support.http_server import serve_asgi
from tests.support.raw_http import RecordingUpstream, capture_logs, raw_post

SENTINEL_NON_ASCII = b"=?base64?\xe9\xe9?="


@pytest.fixture(scope="module")
def lab_url() -> Iterator[str]:
    with serve_asgi(contract_lab_app(stateless_http=True, json_response=True)) as url:
        yield url


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[RecordingUpstream, str]]:
    fake = RecordingUpstream()
    with serve_asgi(fake.app, path="") as base_url:
        yield fake, base_url


@pytest.fixture
def fresh_upstream(upstream: tuple[RecordingUpstream, str]) -> tuple[RecordingUpstream, str]:
    fake, base = upstream
    fake.requests.clear()
    fake.mode = "ok"
    return fake, base


@pytest.fixture(scope="module")
def serve_url(upstream: tuple[RecordingUpstream, str]) -> Iterator[str]:
    """`agent-connector serve`'s own app (the GitHub extract behind search), calling the local upstream."""
    _, base = upstream
    app, _ = build_openapi_app(load_github_extract(), upstream=base)
    with serve_asgi(app) as url:
        yield url


def via_proxy(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": "call_tool", "arguments": {"name": tool, "arguments": arguments}}


def result_of(response: httpx2.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body = response.json()
    assert "error" not in body, body
    return dict(body["result"])


# ---------------------------------------------------------------------- 1. undecodable Mcp-Name
@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"name": "list_regions", "arguments": {}}),
        ("resources/read", {"uri": "deployments://staging/status"}),
        ("prompts/get", {"name": "deploy_plan", "arguments": {"environment": "staging", "service": "a"}}),
    ],
)
def test_non_ascii_inside_a_base64_mcp_name_is_a_400_not_a_500(
    lab_url: str, method: str, params: dict[str, Any]
) -> None:
    with capture_logs() as logs:
        response = raw_post(lab_url, method, params, name_header=SENTINEL_NON_ASCII, request_id=7)
    assert response.status_code == 400
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {
            "code": -32020,
            "message": "Mcp-Name header is not a decodable header value",
            "data": {"tool": None, "header": "Mcp-Name", "category": "malformed"},
        },
    }
    assert logs.tracebacks() == []


def test_non_ascii_inside_a_base64_mcp_param_is_still_a_header_mismatch(lab_url: str) -> None:
    response = raw_post(
        lab_url,
        "tools/call",
        {"name": "route_shipment", "arguments": {"region": "eu"}},
        headers=[("mcp-param-region", SENTINEL_NON_ASCII)],
    )
    assert response.status_code == 400
    assert response.json()["error"]["data"] == {
        "tool": "route_shipment",
        "header": "Mcp-Param-Region",
        "category": "malformed",
    }


# ---------------------------------------------------------------------------- 2. log forging
def test_completion_logs_escape_the_argument_name_and_forwarded_address(lab_url: str) -> None:
    with capture_logs() as logs:
        response = raw_post(
            lab_url,
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "deploy_plan"},
                "argument": {"name": "environment\nFORGED completion answered: caller=admin", "value": "st"},
            },
            headers=[("x-forwarded-for", "203.0.113.9")],
        )
    assert response.status_code == 200
    lines = logs.text().splitlines()
    completion_lines = [line for line in lines if "completion" in line]
    assert completion_lines, lines
    assert not any(line.startswith("FORGED") for line in lines)
    assert all("\\nFORGED" in line for line in completion_lines)  # escaped, on the one line
    assert "203.0.113.9" not in logs.text()  # an unverified forwarded address is not an identity


# ----------------------------------------------------------------------- 3. DNS rebinding
@pytest.mark.parametrize(
    ("header", "value", "status"),
    [("host", "evil.example", 421), ("origin", "http://evil.example", 403)],
)
def test_lab_refuses_a_foreign_host_or_origin_on_a_loopback_bind(
    lab_url: str, header: str, value: str, status: int
) -> None:
    response = raw_post(
        lab_url, "tools/call", {"name": "list_regions", "arguments": {}}, headers=[(header, value)]
    )
    assert response.status_code == status


@pytest.mark.parametrize(
    ("header", "value", "status"),
    [("host", "evil.example", 421), ("origin", "http://evil.example", 403)],
)
def test_serve_refuses_a_foreign_host_or_origin_and_never_calls_upstream(
    serve_url: str, fresh_upstream: tuple[RecordingUpstream, str], header: str, value: str, status: int
) -> None:
    fake, _ = fresh_upstream
    arguments = {"owner": "o", "repo": "r", "issue_number": 1}
    response = raw_post(
        serve_url,
        "tools/call",
        via_proxy("issues_list_events_for_timeline", arguments),
        headers=[(header, value)],
    )
    assert response.status_code == status
    assert fake.requests == []


def test_loopback_names_pass_and_allowed_hosts_extend_the_list() -> None:
    app = gated_http_app(
        contract_lab_server(),
        stateless_http=True,
        json_response=True,
        allowed_hosts=["mcp.internal.example"],
        allowed_origins=["https://console.internal.example"],
    )
    with serve_asgi(app) as url:
        port = url.split(":")[2].split("/")[0]
        call = {"name": "list_regions", "arguments": {}}
        assert raw_post(url, "tools/call", call, headers=[("host", f"localhost:{port}")]).status_code == 200
        assert (
            raw_post(url, "tools/call", call, headers=[("host", "mcp.internal.example")]).status_code == 200
        )
        allowed_origin = [("origin", "https://console.internal.example")]
        assert raw_post(url, "tools/call", call, headers=allowed_origin).status_code == 200
        assert raw_post(url, "tools/call", call, headers=[("host", "evil.example")]).status_code == 421


# ---------------------------------------------------------------------- 4. header forwarding
def test_serve_forwards_upstream_only_declared_and_allow_listed_headers(
    serve_url: str, fresh_upstream: tuple[RecordingUpstream, str]
) -> None:
    fake, _ = fresh_upstream
    arguments = {"owner": "o", "repo": "r", "issue_number": 42}
    caller_headers: list[tuple[str, str | bytes]] = [
        ("x-api-key", "caller-secret"),
        ("mcp-param-owner", "o"),
        ("x-custom", "custom-value"),
        ("x-forwarded-for", "198.51.100.7"),
        ("cookie", "session=1"),
        ("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
    ]
    response = raw_post(
        serve_url,
        "tools/call",
        via_proxy("issues_list_events_for_timeline", arguments),
        headers=caller_headers,
    )
    assert result_of(response)["isError"] is False
    (request,) = fake.requests
    received = {name.lower() for name in request["headers"]}
    assert received <= {"host", "accept", "accept-encoding", "connection", "user-agent", "traceparent"}
    assert "traceparent" in received
    for value in ("caller-secret", "custom-value", "198.51.100.7", "session=1"):
        assert value not in json.dumps(request["headers"])


def test_declared_header_parameters_still_reach_the_upstream(
    fresh_upstream: tuple[RecordingUpstream, str],
) -> None:
    fake, base = fresh_upstream
    document = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/items/{item}": {
                "get": {
                    "operationId": "get_item",
                    "parameters": [
                        {"name": "item", "in": "path", "required": True, "schema": {"type": "string"}},
                        {"name": "X-Tenant", "in": "header", "required": True, "schema": {"type": "string"}},
                    ],
                    "responses": {
                        "200": {"description": "ok", "content": {"application/json": {"schema": {}}}}
                    },
                }
            }
        },
    }
    # The upstream client lives on the served app's event loop (uvicorn's thread) and ends with it.
    built = build_openapi_server(document, base_url=base)
    with serve_asgi(gated_http_app(built.server, stateless_http=True, json_response=True)) as url:
        response = raw_post(
            url,
            "tools/call",
            {"name": "get_item", "arguments": {"item": "a", "X-Tenant": "acme"}},
            headers=[("x-other", "nope")],
        )
    assert result_of(response)["isError"] is False
    (request,) = fake.requests
    assert request["headers"].get("x-tenant") == "acme"
    assert "x-other" not in request["headers"]


# ------------------------------------------------------------------ 5. rate-limit identity
def test_a_caller_cannot_mint_rate_limit_identities_with_x_forwarded_for() -> None:
    app = contract_lab_app(stateless_http=True, json_response=True, rate_limiter=RateLimiter(30, 60.0))
    completion = {
        "ref": {"type": "ref/prompt", "name": "deploy_plan"},
        "argument": {"name": "environment", "value": ""},
    }
    with serve_asgi(app) as url:  # uvicorn's defaults: it rewrites the peer from X-Forwarded-For on loopback
        codes = [
            raw_post(
                url, "completion/complete", completion, headers=[("x-forwarded-for", f"10.0.0.{i}")]
            ).json()
            for i in range(40)
        ]
    admitted = [body for body in codes if "result" in body]
    refused = [body for body in codes if "error" in body]
    assert len(admitted) == 30
    assert {body["error"]["code"] for body in refused} == {-32010}


def test_x_forwarded_for_is_the_identity_only_behind_a_configured_proxy() -> None:
    server = contract_lab_server()
    completions = AuthorizedCompletions(rate_limiter=RateLimiter(2, 60.0), trusted_proxies={"127.0.0.1"})
    completions.prompt("deploy_plan", "environment", ["staging"])
    app = ServerGates(completions=completions).http_app(server, stateless_http=True, json_response=True)
    completion = {
        "ref": {"type": "ref/prompt", "name": "deploy_plan"},
        "argument": {"name": "environment", "value": ""},
    }

    def ask(client: str) -> bool:
        body = raw_post(url, "completion/complete", completion, headers=[("x-forwarded-for", client)]).json()
        return "result" in body

    with serve_asgi(app, proxy_headers=False) as url:  # the app, not uvicorn, decides whom to trust
        first = [ask("192.0.2.1") for _ in range(3)]
        second = [ask("192.0.2.2") for _ in range(3)]
    assert first == [True, True, False]
    assert second == [True, True, False]  # a different client behind the trusted proxy: its own window


# ----------------------------------------------------------------- 6. server-side arguments
def test_an_openapi_tool_with_invalid_arguments_is_not_run(
    serve_url: str, fresh_upstream: tuple[RecordingUpstream, str]
) -> None:
    fake, _ = fresh_upstream
    arguments = {"owner": "o", "repo": "r", "issue_number": "notanint-secret-value"}
    result = result_of(raw_post(serve_url, "tools/call", via_proxy("issues_lock", arguments)))
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "/issue_number" in text and "'type'" in text
    assert "notanint-secret-value" not in json.dumps(result)
    assert fake.requests == []


def test_a_raw_tool_gets_no_nan_where_its_schema_says_string(lab_url: str) -> None:
    body = (
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"flaky_search",'
        b'"arguments":{"query":NaN},"_meta":'
        + json.dumps(
            {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        ).encode()
        + b"}}"
    )
    response = raw_post(lab_url, "tools/call", {"name": "flaky_search"}, content=body)
    if response.status_code == 200 and "result" in response.json():
        result = response.json()["result"]
        assert result["isError"] is True
        assert "fails schema keyword 'type'" in result["content"][0]["text"]
        assert "search backend unavailable" not in json.dumps(result)  # the tool did not run
    else:  # the JSON parser refused NaN outright: also never reaches the tool
        assert response.status_code in (200, 400)
        assert response.json()["error"]["code"] in (-32700, -32600, -32602)


# --------------------------------------------------------------------- 7. error results
def test_an_error_result_leads_with_the_error_not_the_placeholder(lab_url: str) -> None:
    result = result_of(raw_post(lab_url, "tools/call", {"name": "flaky_search", "arguments": {"query": "q"}}))
    assert result["isError"] is True
    assert result["content"][0] == {"type": "text", "text": "search backend unavailable"}
    assert result["structuredContent"] == []
    assert {"type": "text", "text": "[]"} in result["content"][1:]  # the serialization still travels


def test_a_missing_required_argument_says_which(lab_url: str) -> None:
    result = result_of(
        raw_post(
            lab_url,
            "tools/call",
            {"name": "route_shipment", "arguments": {"priority": 1}},
            headers=[("mcp-param-priority", "1")],
        )
    )
    assert result["isError"] is True
    assert result["content"][0]["text"] == (
        "invalid arguments for tool 'route_shipment': required argument '/region' is missing"
    )
    # The placeholder that conforms to Route's output schema follows the message.
    assert result["structuredContent"] == {"region": "", "priority": 0, "express": False, "carrier": ""}


# ------------------------------------------------------------------------ 8. smaller ones
def test_upstream_error_bodies_stay_out_of_the_callers_result(
    serve_url: str, fresh_upstream: tuple[RecordingUpstream, str]
) -> None:
    fake, _ = fresh_upstream
    fake.mode = "error"
    arguments = {"owner": "o", "repo": "r", "issue_number": 1}
    result = result_of(
        raw_post(serve_url, "tools/call", via_proxy("issues_list_events_for_timeline", arguments))
    )
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "HTTP 500" in text and "EEEE" not in text  # the status, never the body (issue 25)
    assert len(text) <= ERROR_TEXT_LIMIT


def test_unknown_names_through_call_tool_log_no_traceback_and_no_raw_name(serve_url: str) -> None:
    with capture_logs() as logs:
        for index in range(20):
            result = result_of(raw_post(serve_url, "tools/call", via_proxy(f"nope{index}\nFORGED", {})))
            assert result["isError"] is True
    assert logs.tracebacks() == []
    assert not any(line.startswith("FORGED") for line in logs.text().splitlines())
    assert sum(len(record.getMessage()) for record in logs.records) < 20 * 200  # no per-request dump


def _send_partial_body(url: str, extra_headers: str) -> None:
    host, port = url.split("//")[1].split("/")[0].split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(
            (
                f"POST /mcp HTTP/1.1\r\nhost: {host}:{port}\r\ncontent-type: application/json\r\n"
                f"accept: application/json, text/event-stream\r\n{extra_headers}content-length: 5000\r\n\r\n"
                '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {'
            ).encode()
        )
        time.sleep(0.2)


@pytest.mark.parametrize(
    "extra_headers",
    ["mcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: x\r\n", ""],
    ids=["2026-07-28 transport", "handshake-era transport"],
)
def test_a_client_disconnect_mid_body_logs_no_application_error(lab_url: str, extra_headers: str) -> None:
    with capture_logs(level=20) as logs:
        _send_partial_body(lab_url, extra_headers)
        time.sleep(0.5)
        assert raw_post(lab_url, "tools/call", {"name": "list_regions", "arguments": {}}).status_code == 200
    assert "Exception in ASGI application" not in logs.text()
    assert logs.tracebacks() == []


@pytest.mark.parametrize("modern", [True, False], ids=["2026-07-28 route", "handshake-era route"])
@pytest.mark.parametrize("declared_length", [True, False], ids=["content-length", "chunked"])
def test_an_oversize_body_is_a_json_rpc_413_on_both_routes(
    lab_url: str, modern: bool, declared_length: bool
) -> None:
    headers = [("content-type", "application/json"), ("accept", "application/json, text/event-stream")]
    if modern:
        headers += [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "x")]
    payload = b'{"x": "' + b"a" * (4 * 1024 * 1024 + 10) + b'"}'

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(payload), 256 * 1024):
            yield payload[start : start + 256 * 1024]

    with httpx2.Client(timeout=30) as http:
        response = http.post(lab_url, content=payload if declared_length else chunks(), headers=headers)
    assert response.status_code == 413
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Request body too large"},
    }


# ------------------------------------------------------ the one checker: one audit event per request
def test_a_handshake_era_call_with_param_headers_yields_one_audit_event() -> None:
    audit = BoundedAuditSink(maxlen=16)
    server = contract_lab_server()
    app = ServerGates(audit=audit).http_app(server, stateless_http=True, json_response=True)
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "route_shipment", "arguments": {"region": "eu-west"}},
    }
    headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-06-18"),
        ("mcp-param-region", "eu-west"),
    ]
    with serve_asgi(app) as url, httpx2.Client() as http:
        http.post(url, content=json.dumps(message).encode(), headers=headers)
        modern = raw_post(
            url,
            "tools/call",
            {"name": "route_shipment", "arguments": {"region": "eu-west"}},
            headers=[("mcp-param-region", "eu-west")],
        )
    assert modern.status_code == 200
    events = audit.events()
    assert [(e["event"], e["tool"]) for e in events] == [
        ("parameter_headers_accepted", "route_shipment"),
        ("parameter_headers_accepted", "route_shipment"),
    ]


def test_a_call_through_the_search_proxy_yields_one_event_naming_the_proxy() -> None:
    audit = BoundedAuditSink()
    server = contract_lab_server()
    server.add_transform(RegexSearchTransform())
    app = ServerGates(audit=audit).http_app(server, stateless_http=True, json_response=True)
    with serve_asgi(app) as url:
        response = raw_post(
            url,
            "tools/call",
            via_proxy("route_shipment", {"region": "eu-west"}),
            headers=[("mcp-param-region", "eu-west")],
        )
    assert result_of(response)["isError"] is False
    (event,) = audit.events()
    assert event["tool"] == "route_shipment" and event["via"] == "call_tool"


def test_gates_install_once_however_often_they_are_asked() -> None:
    server = contract_lab_server()
    gates = ServerGates()
    gates.install(server)
    middleware, transforms, resolution = (
        len(server.middleware),
        len(server.transforms),
        vars(server)["get_tool"],
    )
    ServerGates().install(server)
    gated_http_app(server, stateless_http=True)
    assert (len(server.middleware), len(server.transforms)) == (middleware, transforms)
    assert vars(server)["get_tool"] is resolution


async def test_disclosed_openapi_server_behind_search_is_assembled_from_public_pieces() -> None:
    """The composition `serve` uses, spelled out: tools, disclosures, search, gates — each visible."""
    source = load_github_extract()
    built = build_openapi_server(source.document, base_url="http://127.0.0.1:9")
    disclosures = await build_tool_disclosures(built, SourceDigest.of(source.raw))
    search = RegexSearchTransform(search_result_serializer=describe_schema_tools)
    built.server.add_transform(search)
    register_schema_resources(built.server, search, disclosures)
    gates = ServerGates()
    assert gates.install(built.server) is built.server
    assert any(type(m).__name__ == "OutputSelfCheck" for m in built.server.middleware)
    await built.aclose()
