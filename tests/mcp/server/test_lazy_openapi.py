"""Lazy disclosures (what ``agent-connector serve`` registers) read byte for byte as the eager build."""

from __future__ import annotations

import json
from typing import Any

from fastmcp import Client
from fastmcp.server.transforms.search import RegexSearchTransform

from agent_connector_sdk.connectors import load_github_extract
from agent_connector_sdk.connectors.openapi import (
    build_openapi_server,
    build_tool_disclosures,
    tool_disclosure_origins,
)
from agent_connector_sdk.core.schema_disclosure import SourceDigest, canonical_json_bytes
from agent_connector_sdk.core.schema_disclosure.cache import DisclosureOrigin
from agent_connector_sdk.mcp.schema_disclosure_provider import (
    describe_schema_tools,
    register_schema_resources,
)


async def test_lazy_reads_equal_the_eager_disclosures() -> None:
    raw = load_github_extract().raw
    document: dict[str, Any] = json.loads(raw)
    source = SourceDigest.of(raw)
    eager_server = build_openapi_server(document, base_url="http://127.0.0.1:9")
    lazy = build_openapi_server(document, base_url="http://127.0.0.1:9")
    try:
        eager = await build_tool_disclosures(eager_server, source)
        origins = tool_disclosure_origins(lazy, source)
        assert set(origins) == set(eager)
        assert all(isinstance(o, DisclosureOrigin) for o in origins.values())
        search = RegexSearchTransform(search_result_serializer=describe_schema_tools)
        lazy.server.add_transform(search)
        registry = register_schema_resources(lazy.server, search, origins, frozen_schemas=True)
        assert registry.fast_path_blocker() is None
        assert len(registry.cache) == 0  # nothing built at registration
        async with Client(lazy.server) as client:
            for disclosure in eager.values():
                manifest = disclosure.manifest
                served = await client.read_resource(manifest.manifest_uri)
                assert served[0].text.encode() == canonical_json_bytes(manifest.model_dump(mode="json"))
                last = disclosure.fragments[-1]
                uri = manifest.fragment_uri_template.replace("{index}", str(last.index))
                served = await client.read_resource(uri)
                assert served[0].text.encode() == canonical_json_bytes(last.model_dump(mode="json"))
        assert 1 <= len(registry.cache) <= len(eager)
    finally:
        await eager_server.aclose()
        await lazy.aclose()
