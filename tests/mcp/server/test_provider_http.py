"""Authorization over real Streamable HTTP (uvicorn on 127.0.0.1, stateless, bearer tokens).

Two callers with different scopes: ``admin`` (scopes read+admin) sees the admin-only tool, ``reader``
(scope read) does not. Component auth decides visibility; every disclosure read re-authorizes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.utilities.authorization import require_scopes
from mcp.shared.exceptions import MCPError

from agent_connector_sdk.core.schema_disclosure import SchemaDisclosure, reconstruct_schema
from agent_connector_sdk.mcp.schema_disclosure_provider import SchemaDisclosureRegistry
from tests.support.disclosure_reads import error_of, expected_refusal, read_all, search
from tests.support.disclosure_servers import big_input_schema, build_server, static_tool
from tests.support.disclosure_uris import BASE_REFERENCE_URI, guessed_uris
from tests.support.http_server import serve_asgi

TOKENS = {
    "admin-token": {"client_id": "admin", "scopes": ["read", "admin"]},
    "reader-token": {"client_id": "reader", "scopes": ["read"]},
}


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, SchemaDisclosureRegistry]]:
    tools = [
        static_tool("admin_events", big_input_schema(200), auth=require_scopes("admin")),
        static_tool("public_events", big_input_schema(120)),
    ]
    server, _, registry = build_server(tools, auth=StaticTokenVerifier(tokens=TOKENS))
    with serve_asgi(server.http_app(stateless_http=True)) as url:
        yield url, registry


def disclosure(registry: SchemaDisclosureRegistry, alias: str) -> SchemaDisclosure:
    found = registry.get(alias)
    assert found is not None
    return found


async def test_authorized_caller_discovers_and_reads_over_http(served: tuple[str, Any]) -> None:
    url, registry = served
    async with Client(url, auth="admin-token") as admin:
        (entry,) = await search(admin, "admin_events")
        manifest, fragments = await read_all(admin, entry["manifest_uri"])
    assert manifest == disclosure(registry, "admin_events").manifest
    assert reconstruct_schema(manifest, fragments)["inputSchema"] == big_input_schema(200)


async def test_unauthorized_caller_cannot_read_a_uri_copied_from_an_authorized_one(
    served: tuple[str, Any],
) -> None:
    url, registry = served
    async with Client(url, auth="admin-token") as admin:
        (entry,) = await search(admin, "admin_events")
        copied = [entry["manifest_uri"], disclosure(registry, "admin_events").manifest.fragment_uri_template]
        await read_all(admin, entry["manifest_uri"])
    copied[1] = copied[1].replace("{index}", "0")
    async with Client(url, auth="reader-token") as reader:
        assert await search(reader, "admin_events") == []
        assert [e["name"] for e in await search(reader, "_events")] == ["public_events"]
        with pytest.raises(MCPError) as reference:
            await reader.session.read_resource(BASE_REFERENCE_URI)
        assert error_of(reference) == expected_refusal(BASE_REFERENCE_URI)
        for uri in copied:
            with pytest.raises(MCPError) as refused:
                await reader.session.read_resource(uri)
            # Identical to a resource that does not exist: the refusal does not reveal the alias.
            assert error_of(refused) == expected_refusal(uri)
        # The reader's own tool reads fine over the same session.
        (own,) = await search(reader, "public_events")
        await read_all(reader, own["manifest_uri"])


async def test_guessed_uris_are_refused_identically_over_http(served: tuple[str, Any]) -> None:
    url, registry = served
    target = disclosure(registry, "admin_events")
    async with Client(url, auth="admin-token") as admin:
        await read_all(admin, target.manifest.manifest_uri)
        for name, uri in guessed_uris(target, "public_events").items():
            with pytest.raises(MCPError) as refused:
                await admin.session.read_resource(uri)
            assert error_of(refused) == expected_refusal(uri), name
