"""Header parity over real HTTP: raw Streamable HTTP POSTs (httpx2, the client `mcp` itself uses) so every
header byte is under the test's control, against a FastMCP server behind the gated entry."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from typing import Annotated, Any

import httpx2
import pytest
from fastmcp import FastMCP
from pydantic import Field
from starlette.middleware import Middleware

from agent_connector_sdk.mcp.server import GatedEntry, HeaderParityGate, ServerGates, gated_http_app
from agent_connector_sdk.mcp.server._resolution import install_resolution
from tests.support.http_server import serve_asgi
from tests.support.parity import (
    PROTOCOL_VERSION,
    Gated,
    make_authed_server,
    make_server,
    pinned_zone_call,
    raw_call,
    refusal_of,
    result_of,
    versioned_server,
    wire_descriptor,
)

# Every parity test runs against both assemblies of the one entry: the entry alone, put by hand into
# `server.http_app(middleware=[...])` (`ServerGates.asgi_middleware`), and the assembled `gated_http_app`
# (with its front before authentication; default SSE response mode: a refusal must still be HTTP 400).
ENTRY_POINTS = ["asgi_middleware", "gated_http_app"]


def _entry_app(server: FastMCP[Any], entry: str, audit: list[dict[str, Any]] | None = None, **kw: Any) -> Any:
    if entry == "asgi_middleware":
        gates = ServerGates(audit=audit.append if audit is not None else None)
        return server.http_app(stateless_http=True, middleware=[gates.asgi_middleware(server)], **kw)
    return gated_http_app(
        server, stateless_http=True, audit=audit.append if audit is not None else None, **kw
    )


def _entry(server: FastMCP[Any]) -> Middleware:
    return ServerGates().asgi_middleware(server)


@pytest.fixture(scope="module", params=ENTRY_POINTS)
def gated(request: pytest.FixtureRequest) -> Iterator[Gated]:
    server = make_server()
    audit: list[dict[str, Any]] = []
    app = _entry_app(server, request.param, audit)
    descriptor = asyncio.run(wire_descriptor(server, "route"))
    with serve_asgi(app) as url, httpx2.Client(timeout=30) as client:
        yield Gated(url, client, audit, descriptor)


# ------------------------------------------------------------------------------------ accepted values


@pytest.mark.parametrize(
    "region",
    [
        "eu-west-1",  # visible ASCII: plain
        "Zürich-λ-東京",  # Unicode
        "line\nbreak",
        "crlf\r\nInjected: yes",
        "tab\there",
        "  surrounding spaces  ",
        "",
        "=?base64?SGVsbG8=?=",  # literal text that looks like the sentinel
        "inner space",
    ],
)
def test_values_round_trip_exactly_over_http(gated: Gated, region: str) -> None:
    assert result_of(gated.call_encoded({"region": region})) == [region, 0, False]


@pytest.mark.parametrize("count", [9007199254740991, -9007199254740991, 0, 42])
def test_safe_integer_bounds_accepted(gated: Gated, count: int) -> None:
    assert result_of(gated.call_encoded({"region": "eu", "count": count})) == ["eu", count, False]


def test_integral_float_body_matches_decimal_header(gated: Gated) -> None:
    response = gated.call(
        {"region": "eu", "count": 7.0}, [("Mcp-Param-Region", "eu"), ("Mcp-Param-Count", "7")]
    )
    assert result_of(response) == ["eu", 7, False]


@pytest.mark.parametrize("count", [9007199254740992, -9007199254740992])
def test_one_past_each_safe_integer_bound_refused(gated: Gated, count: int) -> None:
    headers = [("Mcp-Param-Region", "eu"), ("Mcp-Param-Count", str(count))]
    data = refusal_of(gated.call({"region": "eu", "count": count}, headers))
    assert data == {"tool": "route", "header": "Mcp-Param-Count", "category": "malformed"}


def test_boolean_header(gated: Gated) -> None:
    assert result_of(gated.call_encoded({"region": "eu", "dry_run": True})) == ["eu", 0, True]
    data = refusal_of(
        gated.call(
            {"region": "eu", "dry_run": True}, [("Mcp-Param-Region", "eu"), ("Mcp-Param-Dry-Run", "True")]
        )
    )
    assert data["category"] == "malformed"


def test_spec_plain_inner_space_from_other_clients_accepted(gated: Gated) -> None:
    # We always base64 spaces, but spec-conformant peers send inner spaces plain; the gate accepts them.
    assert result_of(gated.call({"region": "a b"}, [("Mcp-Param-Region", "a b")])) == ["a b", 0, False]


def test_spec_empty_plain_value_accepted(gated: Gated) -> None:
    assert result_of(gated.call({"region": ""}, [("Mcp-Param-Region", "")])) == ["", 0, False]


# --------------------------------------------------------------------------------- header names


def test_case_insensitive_name_accepted_when_value_matches(gated: Gated) -> None:
    assert result_of(gated.call({"region": "eu"}, [("mcp-param-REGION", "eu")])) == ["eu", 0, False]


def test_case_insensitive_name_refused_when_value_differs(gated: Gated) -> None:
    data = refusal_of(gated.call({"region": "eu"}, [("MCP-PARAM-REGION", "us")]))
    assert data == {"tool": "route", "header": "Mcp-Param-Region", "category": "mismatched"}


# ----------------------------------------------------------------------------------- refusals


def test_missing_header_refused(gated: Gated) -> None:
    response = gated.call({"region": "eu"})
    data = refusal_of(response)
    assert data == {"tool": "route", "header": "Mcp-Param-Region", "category": "missing"}
    # No search transform on this server: the only way on is to send the header.
    message = response.json()["error"]["message"]
    assert "send it with the argument's value" in message and "call_tool" not in message


def test_duplicated_header_refused_even_when_both_copies_match(gated: Gated) -> None:
    headers = [("Mcp-Param-Region", "eu"), ("mcp-param-region", "eu")]
    assert refusal_of(gated.call({"region": "eu"}, headers))["category"] == "duplicated"


def test_mismatched_header_refused(gated: Gated) -> None:
    assert refusal_of(gated.call({"region": "eu"}, [("Mcp-Param-Region", "us")]))["category"] == "mismatched"


def test_integer_compared_numerically_and_mismatch_refused(gated: Gated) -> None:
    headers = [("Mcp-Param-Region", "eu"), ("Mcp-Param-Count", "8")]
    assert refusal_of(gated.call({"region": "eu", "count": 7}, headers))["category"] == "mismatched"


@pytest.mark.parametrize(
    "raw",
    [
        b"=?base64?SGVsbG8?=",  # bad padding
        b"=?base64?SGVs*G8=?=",  # non-alphabet
        b"=?base64?SGVsbG9=?=",  # non-canonical trailing bits
        b"=?base64?/w==?=",  # invalid UTF-8
        "Zürich".encode(),  # raw non-ASCII bytes
        b"=?base64?\xc3\xa9?=",  # non-ASCII inside the sentinel (the SDK's decoder raises ValueError here)
    ],
)
def test_malformed_header_refused(gated: Gated, raw: bytes) -> None:
    data = refusal_of(gated.call({"region": "Hello"}, [(b"Mcp-Param-Region", raw)]))
    assert data == {"tool": "route", "header": "Mcp-Param-Region", "category": "malformed"}


def test_header_without_argument_refused_as_unexpected(gated: Gated) -> None:
    headers = [("Mcp-Param-Region", "eu"), ("Mcp-Param-Count", "3")]
    assert refusal_of(gated.call({"region": "eu"}, headers))["category"] == "unexpected"


def test_unrecognized_param_header_ignored(gated: Gated) -> None:
    headers = [("Mcp-Param-Region", "eu"), ("Mcp-Param-Other", "anything")]
    assert result_of(gated.call({"region": "eu"}, headers)) == ["eu", 0, False]


def test_string_id_echoed(gated: Gated) -> None:
    response = gated.client.post(
        gated.url,
        content=json.dumps(
            {
                "jsonrpc": "2.0",
                "id": "req-7",
                "method": "tools/call",
                "params": {
                    "name": "route",
                    "arguments": {"region": "eu"},
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
                        "io.modelcontextprotocol/clientCapabilities": {},
                    },
                },
            }
        ),
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": PROTOCOL_VERSION,
            "mcp-method": "tools/call",
            "mcp-name": "route",
        },
    )
    assert response.status_code == 400
    assert response.json()["id"] == "req-7"
    assert response.json()["error"]["code"] == -32020


# ------------------------------------------------------------------------ things the gate leaves alone


def test_notification_gets_no_jsonrpc_response_body(gated: Gated) -> None:
    response = gated.call({"region": "eu"}, [("Mcp-Param-Region", "us")], request_id=None)
    assert response.status_code == 202
    assert response.content == b""


def test_unknown_tool_answered_by_the_server(gated: Gated) -> None:
    response = gated.call({"region": "eu"}, [("Mcp-Param-Region", "us")], name="no_such_tool")
    payload = response.json()
    assert payload["id"] == 1
    error_code = payload.get("error", {}).get("code")
    is_error_result = payload.get("result", {}).get("isError") is True
    assert error_code != -32020
    assert error_code is not None or is_error_result


@pytest.mark.parametrize("body", [b"[]", b'[{"jsonrpc": "2.0"}]', b"{not json", b'"just a string"', b"{}"])
def test_garbage_and_batches_get_the_servers_normal_errors(gated: Gated, body: bytes) -> None:
    response = gated.call({}, body=body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] in (-32700, -32600)


def test_tool_without_annotations_unaffected(gated: Gated) -> None:
    response = gated.call({"text": "hi"}, [("Mcp-Param-Text", "ignored")], name="plain")
    assert response.status_code == 200
    assert response.json()["result"]["content"][0]["text"] == "hi"


def test_oversized_body_refused_not_passed_unchecked() -> None:
    server = make_server()
    resolution = install_resolution(server, HeaderParityGate())
    app = GatedEntry(server.http_app(stateless_http=True), server, resolution=resolution, max_body_bytes=1024)
    with serve_asgi(app) as url, httpx2.Client(timeout=30) as client:
        response = raw_call(client, url, "route", {"region": "x" * 2048}, [("Mcp-Param-Region", "x" * 2048)])
        assert response.status_code == 413
        # A body under the bound still works through the outer-wrapped form of the gate.
        assert result_of(raw_call(client, url, "route", {"region": "eu"}, [("Mcp-Param-Region", "eu")])) == [
            "eu",
            0,
            False,
        ]


# ------------------------------------------------------------------------------- search transform


def test_plain_fastmcp_with_search_transform_accepts_mismatch_for_hidden_tool() -> None:
    """Baseline measured on FastMCP 4.2.3: without our gate, a hidden tool takes a mismatched header (200)."""
    server = make_server(search=True)
    with serve_asgi(server.http_app(stateless_http=True)) as url, httpx2.Client(timeout=30) as client:
        response = raw_call(client, url, "route", {"region": "eu"}, [("Mcp-Param-Region", "us")])
        assert response.status_code == 200
        assert response.json()["result"]["isError"] is False
        proxied = raw_call(
            client,
            url,
            "call_tool",
            {"name": "route", "arguments": {"region": "eu"}},
            [("Mcp-Param-Region", "us")],
        )
        assert proxied.status_code == 200


@pytest.fixture(scope="module", params=ENTRY_POINTS)
def gated_search(request: pytest.FixtureRequest) -> Iterator[tuple[str, httpx2.Client]]:
    app = _entry_app(make_server(search=True), request.param, json_response=True)
    with serve_asgi(app) as url, httpx2.Client(timeout=30) as client:
        yield url, client


def test_hidden_tool_direct_call_mismatch_refused(gated_search: tuple[str, httpx2.Client]) -> None:
    url, client = gated_search
    data = refusal_of(raw_call(client, url, "route", {"region": "eu"}, [("Mcp-Param-Region", "us")]))
    assert data == {"tool": "route", "header": "Mcp-Param-Region", "category": "mismatched"}


def test_hidden_tool_through_call_tool_proxy_mismatch_refused(
    gated_search: tuple[str, httpx2.Client],
) -> None:
    url, client = gated_search
    arguments = {"name": "route", "arguments": {"region": "eu"}}
    data = refusal_of(raw_call(client, url, "call_tool", arguments, [("Mcp-Param-Region", "us")]))
    assert data == {"tool": "route", "header": "Mcp-Param-Region", "category": "mismatched"}


def test_hidden_tool_through_call_tool_proxy_needs_no_headers(
    gated_search: tuple[str, httpx2.Client],
) -> None:
    """The spec's rule: a client sends the headers of the tool it names, and `call_tool` annotates
    nothing, so a plain client's proxied call carries none and must work."""
    url, client = gated_search
    arguments = {"name": "route", "arguments": {"region": "eu", "count": 3, "dry_run": True}}
    assert result_of(raw_call(client, url, "call_tool", arguments)) == ["eu", 3, True]
    # Some sent, some not: the sent one is checked (and agrees), the unsent ones are not required.
    assert result_of(raw_call(client, url, "call_tool", arguments, [("Mcp-Param-Count", "3")])) == [
        "eu",
        3,
        True,
    ]


@pytest.mark.parametrize(
    ("headers", "category"),
    [
        ([("Mcp-Param-Count", "4")], "mismatched"),  # one sent header lies, the others are unsent
        ([("Mcp-Param-Region", "eu"), ("Mcp-Param-Region", "eu")], "duplicated"),
        ([("Mcp-Param-Dry-Run", "yes")], "malformed"),
        ([("Mcp-Param-Region", "=?base64?!!?=")], "malformed"),
    ],
)
def test_hidden_tool_through_call_tool_proxy_sent_headers_still_checked(
    gated_search: tuple[str, httpx2.Client], headers: list[tuple[str, str]], category: str
) -> None:
    url, client = gated_search
    arguments = {"name": "route", "arguments": {"region": "eu", "count": 3, "dry_run": True}}
    assert refusal_of(raw_call(client, url, "call_tool", arguments, headers))["category"] == category


def test_hidden_tool_through_call_tool_proxy_header_without_argument_refused(
    gated_search: tuple[str, httpx2.Client],
) -> None:
    url, client = gated_search
    arguments = {"name": "route", "arguments": {"region": "eu"}}
    data = refusal_of(raw_call(client, url, "call_tool", arguments, [("Mcp-Param-Count", "3")]))
    assert data == {"tool": "route", "header": "Mcp-Param-Count", "category": "unexpected"}


def test_hidden_tool_direct_call_without_header_says_how_to_proceed(
    gated_search: tuple[str, httpx2.Client],
) -> None:
    """A direct call keeps the spec's rule (the tool's own schema annotates `region`); the refusal names
    both ways on: send the header, or go through the search proxy."""
    url, client = gated_search
    response = raw_call(client, url, "route", {"region": "eu"})
    assert refusal_of(response) == {"tool": "route", "header": "Mcp-Param-Region", "category": "missing"}
    message = response.json()["error"]["message"]
    assert "send it with the argument's value" in message
    assert "'call_tool'" in message


def test_hidden_tool_through_call_tool_proxy_matching_headers_succeed(
    gated_search: tuple[str, httpx2.Client],
) -> None:
    url, client = gated_search
    arguments = {"name": "route", "arguments": {"region": "Zürich", "count": 3}}
    headers = [("Mcp-Param-Region", "=?base64?WsO8cmljaA==?="), ("Mcp-Param-Count", "3")]
    response = raw_call(client, url, "call_tool", arguments, headers)
    assert response.status_code == 200, response.text
    assert json.loads(response.json()["result"]["content"][0]["text"]) == ["Zürich", 3, False]


def test_search_tool_itself_unaffected(gated_search: tuple[str, httpx2.Client]) -> None:
    url, client = gated_search
    response = raw_call(client, url, "search_tools", {"pattern": "route"})
    assert response.status_code == 200, response.text
    assert "error" not in response.json()


# ----------------------------------------------------------------------------------------- audit


def test_audit_holds_names_not_values(gated: Gated) -> None:
    secret = "private-λ\n"
    gated.audit.clear()
    assert result_of(gated.call_encoded({"region": secret})) == [secret, 0, False]
    refusal_of(gated.call({"region": secret}, [("Mcp-Param-Region", "private-other")]))
    assert [event["event"] for event in gated.audit] == [
        "parameter_headers_accepted",
        "parameter_headers_refused",
    ]
    assert gated.audit[0]["headers"] == ["Mcp-Param-Region"]
    assert gated.audit[0]["base64_encoded"] == ["Mcp-Param-Region"]
    assert gated.audit[1]["header"] == "Mcp-Param-Region"
    assert gated.audit[1]["category"] == "mismatched"
    dumped = json.dumps(gated.audit, ensure_ascii=False)
    assert "private" not in dumped
    assert "λ" not in dumped


def test_default_audit_logger_holds_names_not_values(caplog: pytest.LogCaptureFixture) -> None:
    server = make_server()
    app = server.http_app(stateless_http=True, middleware=[_entry(server)])
    with (
        caplog.at_level(logging.DEBUG, logger="agent_connector_sdk.mcp.server.parity"),
        serve_asgi(app) as url,
        httpx2.Client(timeout=30) as client,
    ):
        response = raw_call(
            client, url, "route", {"region": "private-λ\n"}, [("Mcp-Param-Region", "private-x")]
        )
        assert response.status_code == 400
    records = [r.getMessage() for r in caplog.records if r.name == "agent_connector_sdk.mcp.server.parity"]
    assert any("Mcp-Param-Region" in message and "mismatched" in message for message in records)
    assert not any("private" in message or "λ" in message for message in records)
    assert "private" not in response.text


# ------------------------------------------------------------------------------------------ auth


def test_gate_inside_auth_checks_component_authorized_hidden_tool() -> None:
    """Installed through ``http_app(middleware=...)`` the gate runs after authentication, so its lookup sees
    the caller's token exactly as the real call does and the hidden, scope-protected tool is checked."""
    server = make_authed_server()
    app = server.http_app(stateless_http=True, middleware=[_entry(server)])
    with serve_asgi(app) as url, httpx2.Client(timeout=30) as client:
        admin = [("authorization", "Bearer admin-token")]
        ok = raw_call(client, url, "deploy", {"region": "eu"}, [*admin, ("Mcp-Param-Region", "eu")])
        assert ok.status_code == 200, ok.text
        assert ok.json()["result"]["content"][0]["text"] == "eu"
        data = refusal_of(
            raw_call(client, url, "deploy", {"region": "eu"}, [*admin, ("Mcp-Param-Region", "us")])
        )
        assert data["category"] == "mismatched"
        # A caller who may not see the tool gets the server's own answer, not a header verdict about it.
        guest = raw_call(
            client,
            url,
            "deploy",
            {"region": "eu"},
            [("authorization", "Bearer guest-token"), ("Mcp-Param-Region", "us")],
        )
        assert guest.json().get("error", {}).get("code") != -32020
        assert "eu" not in guest.text


def test_gate_outside_auth_fails_closed_and_unauthenticated_gets_401() -> None:
    # Measured: wrapped outside authentication, the lookup cannot see scope-protected hidden tools and a
    # mismatched header reached `deploy` with HTTP 200. The gate now refuses to run there at all.
    server = make_authed_server()
    resolution = install_resolution(server, HeaderParityGate())
    outside = GatedEntry(server.http_app(stateless_http=True), server, resolution=resolution)
    with serve_asgi(outside) as url, httpx2.Client(timeout=30) as client:
        headers = [("authorization", "Bearer admin-token"), ("Mcp-Param-Region", "us")]
        response = raw_call(client, url, "deploy", {"region": "eu"}, headers)
        assert response.status_code == 500
        assert "eu" not in response.text
    inside = server.http_app(stateless_http=True, middleware=[_entry(server)])
    with serve_asgi(inside) as url, httpx2.Client(timeout=30) as client:
        response = raw_call(client, url, "deploy", {"region": "eu"}, [("Mcp-Param-Region", "us")])
        assert response.status_code == 401


# ------------------------------------------------------------------------------ versions and legacy


def test_version_pinned_call_checked_against_that_version() -> None:
    server = versioned_server()
    app = server.http_app(stateless_http=True, middleware=[_entry(server)])
    with serve_asgi(app) as url, httpx2.Client(timeout=30) as client:
        latest = raw_call(client, url, "zone", {"region": "eu"})
        assert latest.status_code == 200
        assert latest.json()["result"]["content"][0]["text"] == "v2:eu"
        assert (
            refusal_of(raw_call(client, url, "zone", None, body=pinned_zone_call("1")))["category"]
            == "missing"
        )


def test_legacy_protocol_call_checked_only_when_it_carries_param_headers(gated: Gated) -> None:
    legacy = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "route", "arguments": {"region": "eu"}},
        }
    )
    base = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    # Mcp-Param headers do not exist before 2026-07-28, so their absence is not a refusal there ...
    assert gated.client.post(gated.url, content=legacy, headers=base).status_code == 200
    # ... but one that is present must still agree with the body: an intermediary may route on it.
    mismatched = gated.client.post(gated.url, content=legacy, headers={**base, "Mcp-Param-Region": "us"})
    assert mismatched.status_code == 400
    assert mismatched.json()["error"]["code"] == -32020


def test_tool_with_invalid_annotation_fails_closed_on_the_server() -> None:
    server: FastMCP[Any] = FastMCP("invalid")

    @server.tool
    def inject(
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region\r\nInjected"})],
    ) -> str:
        return region

    app = server.http_app(stateless_http=True, middleware=[_entry(server)])
    with serve_asgi(app) as url, httpx2.Client(timeout=30) as client:
        data = refusal_of(raw_call(client, url, "inject", {"region": "eu"}))
        assert data == {"tool": "inject", "header": None, "category": "invalid_header_annotation"}
