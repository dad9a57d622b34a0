"""Header parity checked inside FastMCP's own tool resolution (``mcp/server/_resolution.py``), over real HTTP.

``gated_http_app`` does not resolve the tool a second time in ASGI for 2026-07-28 calls: the check runs
on the tool FastMCP itself resolved to run. (The raw-HTTP parity matrix runs against both entry points
in ``test_parity_http``.) Here: what is specific to the mechanism — the ASGI layer does no lookup for
those calls, one verdict per call, auth decides before any verdict, SSE answers still carry HTTP 400,
version fallback and the in-memory transport (no headers) are not refused.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import fastmcp
import httpx2
import pytest
from fastmcp.utilities.versions import VersionSpec

from agent_connector_sdk.mcp.server import gated_http_app
from tests.support.http_server import serve_asgi
from tests.support.parity import (
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


@pytest.fixture(scope="module")
def gated() -> Iterator[Gated]:
    server = make_server()
    audit: list[dict[str, Any]] = []
    # Default (SSE) response mode: the refusal must still be a plain HTTP 400.
    app = gated_http_app(server, stateless_http=True, audit=audit.append)
    descriptor = asyncio.run(wire_descriptor(server, "route"))
    with serve_asgi(app) as url, httpx2.Client(timeout=30) as client:
        yield Gated(url, client, audit, descriptor)


@pytest.fixture(scope="module")
def gated_search() -> Iterator[tuple[str, httpx2.Client]]:
    app = gated_http_app(make_server(search=True), stateless_http=True, json_response=True)
    with serve_asgi(app) as url, httpx2.Client(timeout=30) as client:
        yield url, client


def test_each_call_is_checked_by_exactly_one_entry_point(gated: Gated) -> None:
    """One verdict per call: 2026-07-28 calls are checked in tool resolution (the ASGI entry passes them
    on unbuffered), handshake-era calls at the ASGI entry (their transport would not answer HTTP 400),
    and neither is checked twice — one audit event each."""
    gated.audit.clear()
    assert refusal_of(gated.call({"region": "eu"}, [("Mcp-Param-Region", "us")]))["category"] == "mismatched"
    assert result_of(gated.call({"region": "eu"}, [("Mcp-Param-Region", "eu")])) == ["eu", 0, False]
    legacy = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "route", "arguments": {}}}
    )
    base = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    response = gated.client.post(gated.url, content=legacy, headers={**base, "Mcp-Param-Region": "us"})
    assert response.status_code == 400  # the ASGI entry answered: the legacy transport would say 200
    assert [event["event"] for event in gated.audit] == [
        "parameter_headers_refused",
        "parameter_headers_accepted",
        "parameter_headers_refused",
    ]


def test_one_audit_event_per_checked_call(gated: Gated) -> None:
    gated.audit.clear()
    result_of(gated.call_encoded({"region": "eu", "count": 2}))
    refusal_of(gated.call({"region": "eu"}, [("Mcp-Param-Region", "us")]))
    assert [(e["event"], e["tool"]) for e in gated.audit] == [
        ("parameter_headers_accepted", "route"),
        ("parameter_headers_refused", "route"),
    ]


def test_auth_decides_before_any_header_verdict() -> None:
    """The check runs on the tool as *this caller* resolves it: a scope-protected hidden tool is checked
    for the admin, and a guest who cannot see it gets the server's own answer, never a -32020 about it."""
    app = gated_http_app(make_authed_server(), stateless_http=True)
    with serve_asgi(app) as url, httpx2.Client(timeout=30) as client:
        admin = [("authorization", "Bearer admin-token")]
        ok = raw_call(client, url, "deploy", {"region": "eu"}, [*admin, ("Mcp-Param-Region", "eu")])
        assert ok.status_code == 200, ok.text
        assert ok.json()["result"]["content"][0]["text"] == "eu"
        refused = raw_call(client, url, "deploy", {"region": "eu"}, [*admin, ("Mcp-Param-Region", "us")])
        assert refusal_of(refused) == {
            "tool": "deploy",
            "header": "Mcp-Param-Region",
            "category": "mismatched",
        }
        proxied = raw_call(
            client,
            url,
            "call_tool",
            {"name": "deploy", "arguments": {"region": "eu"}},
            [*admin, ("Mcp-Param-Region", "us")],
        )
        assert refusal_of(proxied)["category"] == "mismatched"
        guest = raw_call(
            client,
            url,
            "deploy",
            {"region": "eu"},
            [("authorization", "Bearer guest-token"), ("Mcp-Param-Region", "us")],
        )
        assert guest.json().get("error", {}).get("code") != -32020
        assert "eu" not in guest.text
        anonymous = raw_call(client, url, "deploy", {"region": "eu"}, [("Mcp-Param-Region", "us")])
        assert anonymous.status_code == 401


def test_checked_against_the_version_that_runs() -> None:
    app = gated_http_app(versioned_server(), stateless_http=True)
    with serve_asgi(app) as url, httpx2.Client(timeout=30) as client:
        latest = raw_call(client, url, "zone", {"region": "eu"})
        assert latest.status_code == 200 and latest.json()["result"]["content"][0]["text"] == "v2:eu"
        assert (
            refusal_of(raw_call(client, url, "zone", None, body=pinned_zone_call("1")))["category"]
            == "missing"
        )
        pinned_ok = raw_call(
            client, url, "zone", None, [("Mcp-Param-Region", "eu")], body=pinned_zone_call("1")
        )
        assert pinned_ok.json()["result"]["content"][0]["text"] == "v1:eu"


def test_fallback_version_is_the_one_checked() -> None:
    """The highest version disabled: FastMCP falls back to version 1, and that is what the headers must
    match (a transform-level check would have judged the discarded version 2)."""
    server = versioned_server()
    server.disable(names={"zone"}, version=VersionSpec(eq="2"))
    app = gated_http_app(server, stateless_http=True)
    with serve_asgi(app) as url, httpx2.Client(timeout=30) as client:
        assert refusal_of(raw_call(client, url, "zone", {"region": "eu"}))["category"] == "missing"
        ok = raw_call(client, url, "zone", {"region": "eu"}, [("Mcp-Param-Region", "eu")])
        assert ok.json()["result"]["content"][0]["text"] == "v1:eu"


async def test_calls_without_http_carry_no_headers_and_are_not_refused() -> None:
    server = make_server()
    gated_http_app(server)
    async with fastmcp.Client(server) as client:
        result = await client.call_tool_mcp("route", {"region": "eu", "count": 3})
    assert not result.is_error
    assert json.loads(result.content[0].text) == ["eu", 3, False]


def test_installing_twice_wraps_resolution_once() -> None:
    server = make_server()
    gated_http_app(server)
    wrapped = server.get_tool
    gated_http_app(server)
    assert server.get_tool is wrapped
