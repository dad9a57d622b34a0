"""The lab's own tools (in memory): five content block types, the practice tool's contract."""

from __future__ import annotations

from typing import Any

import fastmcp

from agent_connector_sdk.core.contracts import admit_tools, validate_arguments, validate_content_block
from agent_connector_sdk.core.contracts.errors import ArgumentError
from agent_connector_sdk.demo.contract_lab import EVIDENCE, contract_lab_server


async def _descriptors() -> dict[str, dict[str, Any]]:
    async with fastmcp.Client(contract_lab_server()) as client:
        return {
            t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True)
            for t in await client.list_tools()
        }


async def test_content_gallery_returns_each_of_the_five_block_types() -> None:
    async with fastmcp.Client(contract_lab_server()) as client:
        result = await client.call_tool("content_gallery", {})
    blocks = [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content]
    assert [block["type"] for block in blocks] == ["text", "image", "audio", "resource_link", "resource"]
    for block in blocks:
        validate_content_block(block)


async def test_search_evidence_descriptor_is_admitted_and_strict() -> None:
    tool = (await _descriptors())["search_evidence"]
    assert "search_evidence" in admit_tools([tool]).admitted
    assert tool["outputSchema"]["type"] == "array"
    validate_arguments(tool, {"query": "audit", "limit": 20, "region": "Zürich west"})
    for bad in (
        {"query": "audit", "limit": 21},
        {"query": "audit", "extra": True},
        {"limit": 1},
        {"query": ""},
    ):
        try:
            validate_arguments(tool, bad)
        except ArgumentError as refusal:
            assert refusal.category == "invalid_arguments"
        else:
            raise AssertionError(f"accepted {sorted(bad)}")


async def test_search_evidence_without_a_token_never_returns_restricted_items() -> None:
    async with fastmcp.Client(contract_lab_server()) as client:
        result = await client.call_tool("search_evidence", {"query": "confidential contract payroll audit"})
    found = (
        {item["uri"] for item in result.structured_content["result"]}
        if isinstance(result.structured_content, dict)
        else {item["uri"] for item in result.structured_content}
    )
    restricted = {item.uri for item in EVIDENCE if item.restricted}
    assert found and not found & restricted
    links = [block for block in result.content if block.type == "resource_link"]
    assert {str(link.uri) for link in links} == found
