"""Reading schema disclosures as a client does (in memory or over HTTP): search, manifest and fragment
reads, and the one refusal every unknown or unreadable disclosure URI gets."""

from __future__ import annotations

from typing import Any

import pytest
from fastmcp import Client
from mcp.shared.exceptions import MCPError

from agent_connector_sdk.core.schema_disclosure import (
    SchemaFragment,
    SchemaManifest,
    parse_fragment,
    parse_manifest,
)


def error_of(excinfo: pytest.ExceptionInfo[MCPError]) -> dict[str, Any]:
    return excinfo.value.error.model_dump(mode="json", exclude_none=True)


def expected_refusal(uri: str) -> dict[str, Any]:
    return {"code": -32602, "message": f"Resource not found: {uri!r}", "data": {"uri": uri}}


async def search(client: Client[Any], pattern: str) -> list[dict[str, Any]]:
    result = await client.call_tool("search_tools", {"pattern": pattern})
    assert not result.is_error
    structured = result.structured_content
    assert isinstance(structured, dict)
    entries = structured["result"]
    assert isinstance(entries, list)
    return entries


async def read_text(client: Client[Any], uri: str) -> str:
    # The raw session: fastmcp.Client.read_resource normalizes the URI through AnyUrl first.
    result = await client.session.read_resource(uri)
    assert len(result.contents) == 1
    content = result.contents[0]
    assert content.mime_type == "application/json"
    assert content.uri == uri
    text = getattr(content, "text", None)
    assert isinstance(text, str)
    return text


async def read_all(client: Client[Any], manifest_uri: str) -> tuple[SchemaManifest, list[SchemaFragment]]:
    manifest = parse_manifest(await read_text(client, manifest_uri))
    fragments = [
        parse_fragment(await read_text(client, manifest.fragment_uri_template.replace("{index}", str(i))))
        for i in range(manifest.fragment_count)
    ]
    return manifest, fragments
