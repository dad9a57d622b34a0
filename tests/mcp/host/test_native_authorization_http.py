"""Native authorization stays the caller's: a reconstructed schema, or an admitted listing, grants
nothing. A caller who loses a scope after discovering is refused at call time — a typed error on every
host path, never a stale success — and the host created no session or token of its own (it only
ever used the caller's ``fastmcp.Client``)."""

from __future__ import annotations

# Write confirmation (on by default) is opted out in this module: these tests exercise other gates;
# tests/mcp/host/test_write_confirmation.py covers confirmation itself.
import copy
from typing import Any

import fastmcp
import pytest
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.utilities.authorization import require_scopes

from agent_connector_sdk.core.contracts.errors import ContractViolation
from agent_connector_sdk.mcp.host import HostOptions
from agent_connector_sdk.mcp.host.contract_client import ContractClient
from agent_connector_sdk.mcp.host.disclosure_consumer import (
    CallerScope,
    SchemaDisclosureConsumer,
    StaleSelection,
)
from tests.support.disclosure_servers import build_server, static_tool
from tests.support.host_servers import CallCounter
from tests.support.http_server import serve_asgi

TOKENS = {"alice-token": {"client_id": "alice", "scopes": ["read", "admin"]}}
SCHEMA = {"type": "object", "properties": {"account": {"type": "string"}}, "required": ["account"]}


def _served(*, search: bool) -> tuple[Any, dict[str, dict[str, Any]], CallCounter]:
    tokens = copy.deepcopy(TOKENS)  # the verifier reads this dict per request: revoking is real
    verifier = StaticTokenVerifier(tokens=tokens)
    tool = static_tool("close_account", SCHEMA, auth=require_scopes("admin"))
    if search:
        server, _, _ = build_server([tool], auth=verifier)
    else:
        server = fastmcp.FastMCP("accounts", auth=verifier)
        server.add_tool(tool)
    counter = CallCounter()
    server.add_middleware(counter)
    return server.http_app(stateless_http=True), tokens, counter


async def test_contract_client_surfaces_a_revoked_scope_as_a_typed_refusal() -> None:
    app, tokens, counter = _served(search=False)
    with serve_asgi(app) as url:
        strict = HostOptions(profile="strict", require_confirmation=False)
        async with (
            ContractClient(
                fastmcp.Client(url, auth="alice-token"), HostOptions(require_confirmation=False)
            ) as host,
            ContractClient(fastmcp.Client(url, auth="alice-token"), strict) as strict_host,
        ):
            assert "close_account" in (await host.discover_tools()).admitted
            assert "close_account" in (await strict_host.discover_tools()).admitted
            tokens["alice-token"]["scopes"] = ["read"]  # the caller loses `admin`
            answer = await host.call("close_account", {"account": "a-1"})
            with pytest.raises(ContractViolation) as refused:
                await strict_host.call("close_account", {"account": "a-1"})
    # FastMCP answers a tool the caller may no longer see with an ``isError`` "Unknown tool" result
    # without structuredContent: by default a tool error with a finding (the server's words kept), typed,
    # never a success; the strict profile refuses it at the Consume gate.
    assert answer.is_error and answer.text
    assert [f.category for f in answer.findings] == ["missing_structured_content"]
    assert refused.value.category == "missing_structured_content"
    assert "a-1" not in str(refused.value)
    assert counter.calls == ["close_account", "close_account"]  # the server was asked; nothing else


async def test_consumer_surfaces_a_revoked_scope_before_the_call() -> None:
    app, tokens, counter = _served(search=True)
    with serve_asgi(app) as url:
        client: fastmcp.Client[Any] = fastmcp.Client(url, auth="alice-token")
        consumer = SchemaDisclosureConsumer(
            client, scope=CallerScope("alice", url), options=HostOptions(require_confirmation=False)
        )
        async with client:
            tool = await consumer.disclose(await consumer.select("close_account", "close_account"))
            tokens["alice-token"]["scopes"] = ["read"]
            with pytest.raises(StaleSelection) as refused:
                await consumer.call(tool, {"account": "a-1"})
    # The provider re-authorizes the pre-call manifest read for the caller, so the call is refused
    # before it is sent; the verified schemas granted nothing.
    assert refused.value.category == "stale"
    assert counter.calls == ["search_tools"]
