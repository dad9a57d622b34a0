"""Consumer over real Streamable HTTP: bearer-token scopes, x-mcp-header mirroring, stale refusal."""

from __future__ import annotations

# Write confirmation (on by default) is opted out in this module: these tests exercise other gates;
# tests/mcp/host/test_write_confirmation.py covers confirmation itself.
import contextlib
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from fastmcp import Client
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.server.dependencies import get_http_request
from fastmcp.tools.base import ToolResult
from fastmcp.utilities.authorization import require_scopes

from agent_connector_sdk.core.contracts.errors import HeaderValueError
from agent_connector_sdk.core.host import TransportFailure
from agent_connector_sdk.mcp.host import HostOptions
from agent_connector_sdk.mcp.host.disclosure_consumer import (
    CallerScope,
    DisclosureReadFailed,
    DiscoveryFailed,
    SchemaDisclosureConsumer,
    SelectedTool,
)
from agent_connector_sdk.mcp.schema_disclosure_provider import SchemaDisclosureRegistry
from tests.support.audit import recorded
from tests.support.disclosure_servers import StaticTool, big_input_schema, build_server, static_tool
from tests.support.http_server import serve_asgi

TOKENS = {
    "admin-token": {"client_id": "admin", "scopes": ["read", "admin"]},
    "reader-token": {"client_id": "reader", "scopes": ["read"]},
}


class HeaderEcho(StaticTool):
    """Returns the Mcp-Param-* headers its tools/call POST carried (names lower-cased by Starlette)."""

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        headers = get_http_request().headers
        seen = {k: v for k, v in headers.items() if k.lower().startswith("mcp-param-")}
        return ToolResult(structured_content={"ok": True, "headers": seen})


def header_tool() -> HeaderEcho:
    schema = big_input_schema(150)
    schema["properties"]["region"] = {"type": "string", "x-mcp-header": "Region"}
    schema["properties"]["priority"] = {"type": "integer", "x-mcp-header": "Priority"}
    return HeaderEcho(
        name="admin_echo",
        description="Echoes its parameter headers.",
        parameters=schema,
        output_schema={
            "type": "object",
            "properties": {"ok": {"type": "boolean"}, "headers": {"type": "object"}},
            "required": ["ok", "headers"],
        },
        auth=require_scopes("admin"),
    )


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, SchemaDisclosureRegistry]]:
    tools = [header_tool(), static_tool("public_events", big_input_schema(100))]
    server, _, registry = build_server(tools, auth=StaticTokenVerifier(tokens=TOKENS))
    with serve_asgi(server.http_app(stateless_http=True)) as url:
        yield url, registry


async def test_authorized_caller_discloses_and_calls_with_mirrored_headers(served: tuple[str, Any]) -> None:
    url, _ = served
    client: Client[Any] = Client(url, auth="admin-token")
    consumer = SchemaDisclosureConsumer(
        client,
        scope=CallerScope("admin", url),
        max_in_flight=4,
        options=HostOptions(require_confirmation=False),
    )
    async with client:
        disclosed = await consumer.disclose(await consumer.select("admin_echo", "admin_echo"))
        result = await consumer.call(disclosed, {"field_000": "x", "region": "eu west ü", "priority": 3})
    headers = result.structured_content["headers"]
    # Non-ASCII travels base64-wrapped; the integer in decimal; one header per annotation.
    assert headers == {"mcp-param-region": "=?base64?ZXUgd2VzdCDDvA==?=", "mcp-param-priority": "3"}
    (built,) = [
        e
        for e in recorded(consumer.audit)
        if e.get("event") == "parameter_headers_built" and e["tool"] == "admin_echo"
    ]
    assert sorted(built["headers"]) == ["Mcp-Param-Priority", "Mcp-Param-Region"]  # names only, no values
    assert "eu west" not in repr(recorded(consumer.audit).events())


async def test_reader_cannot_discover_or_disclose_the_admin_tool(served: tuple[str, Any]) -> None:
    url, _ = served
    admin_client: Client[Any] = Client(url, auth="admin-token")
    admin = SchemaDisclosureConsumer(
        admin_client, scope=CallerScope("admin", url), options=HostOptions(require_confirmation=False)
    )
    async with admin_client:
        admin_selection = await admin.select("admin_echo", "admin_echo")
    reader_client: Client[Any] = Client(url, auth="reader-token")
    reader_scope = CallerScope("reader", url)
    reader = SchemaDisclosureConsumer(
        reader_client, scope=reader_scope, options=HostOptions(require_confirmation=False)
    )
    async with reader_client:
        with pytest.raises(DiscoveryFailed) as hidden:
            await reader.select("admin_echo", "admin_echo")
        assert hidden.value.category == "no_match"
        # Even with the admin's navigation entry re-bound to the reader's own scope, the provider refuses.
        copied = SelectedTool(admin_selection.navigation, reader_scope, reader.generation)
        with pytest.raises(DisclosureReadFailed) as refused:
            await reader.disclose(copied)
        assert refused.value.category == "not_found"
        own = await reader.disclose(await reader.select("public_events", "public_events"))
        assert (await reader.call(own, {"field_000": "y"})).structured_content == {"ok": True}


async def test_a_lost_connection_is_a_typed_transport_refusal() -> None:
    server, _, _ = build_server([static_tool("public_events", big_input_schema(100))])
    serving = serve_asgi(server.http_app(stateless_http=True))
    url = serving.__enter__()
    client: Client[Any] = Client(url)
    consumer = SchemaDisclosureConsumer(
        client, scope=CallerScope("anyone", url), options=HostOptions(require_confirmation=False)
    )
    # Closing a fastmcp.Client re-raises its transport's background connection failure; that is the
    # client's own behaviour, not what is under test here (the refusal raised inside is).
    with contextlib.suppress(httpx2.ConnectError):
        async with client:
            selection = await consumer.select("public_events", "public_events")
            serving.__exit__(None, None, None)  # the server goes away between selection and reads
            with pytest.raises(TransportFailure) as lost:
                await consumer.disclose(selection)
    assert lost.value.category == "transport_failure"  # the same family as on every other path


async def test_a_consumer_built_after_connecting_refuses_instead_of_dropping_headers(
    served: tuple[str, Any],
) -> None:
    # The HTTP client was built on connect, before the consumer could hook it: a call that needs
    # Mcp-Param-* headers is refused before sending rather than sent without them (this server, a
    # search transform without our gates, would not have noticed).
    url, _ = served
    client: Client[Any] = Client(url, auth="admin-token")
    async with client:
        consumer = SchemaDisclosureConsumer(
            client, scope=CallerScope("admin", url), options=HostOptions(require_confirmation=False)
        )
        disclosed = await consumer.disclose(await consumer.select("admin_echo", "admin_echo"))
        with pytest.raises(HeaderValueError) as refused:
            await consumer.call(disclosed, {"field_000": "x", "region": "secret-region"})
        # Without annotated arguments there is nothing to deliver, and the call goes through.
        result = await consumer.call(disclosed, {"field_000": "x"})
    assert refused.value.category == "undeliverable"
    assert "secret-region" not in str(refused.value)
    assert result.structured_content["headers"] == {}


async def test_a_byte_cap_hit_inside_a_fragment_read_is_that_bound_named(served: tuple[str, Any]) -> None:
    from agent_connector_sdk.core.host import HostBounds
    from agent_connector_sdk.core.host.bounds import BoundExceeded

    url, _ = served
    client: Client[Any] = Client(url, auth="reader-token")
    consumer = SchemaDisclosureConsumer(
        client,
        scope=CallerScope("reader", url),
        options=HostOptions(require_confirmation=False, bounds=HostBounds(max_message_bytes=8_000)),
    )
    async with client:
        selection = await consumer.select("public_events", "public_events")  # the search fits
        with pytest.raises(BoundExceeded) as refused:
            await consumer.disclose(selection)  # a fragment does not: read failure no more
    assert refused.value.bound == "max_message_bytes"
