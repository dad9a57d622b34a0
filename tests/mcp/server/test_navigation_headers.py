"""Navigation entries carry the tool's header map (``x-mcp-header`` argument → ``Mcp-Param-*`` name)."""

from __future__ import annotations

from typing import Any

import pytest
from fastmcp import Client
from pydantic import ValidationError

from agent_connector_sdk.core.disclosure_navigation import (
    MAX_NAVIGATION_HEADERS,
    SchemaNavigation,
    build_navigation_entry,
)
from agent_connector_sdk.mcp.host.disclosure_consumer import CallerScope, SchemaDisclosureConsumer
from tests.support.disclosure_servers import build_server, static_tool

ANNOTATED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "page": {"type": "integer"},
        "filter": {"type": "object", "properties": {"dry": {"type": "boolean", "x-mcp-header": "Dry-Run"}}},
    },
    "required": ["region"],
}


def entry_for(input_schema: Any) -> dict[str, Any]:
    return build_navigation_entry(
        name="t", title=None, description=None, input_schema=input_schema, output_schema=None
    )


def test_entry_lists_every_header_with_its_argument_path_and_type() -> None:
    entry = entry_for(ANNOTATED)
    assert entry["headers"] == [
        {"argument": ["region"], "header": "Mcp-Param-Region", "type": "string"},
        {"argument": ["filter", "dry"], "header": "Mcp-Param-Dry-Run", "type": "boolean"},
    ]
    parsed = SchemaNavigation.model_validate(entry)
    assert parsed.headers is not None and [h.header for h in parsed.headers] == [
        "Mcp-Param-Region",
        "Mcp-Param-Dry-Run",
    ]


def test_no_annotations_is_an_empty_map_and_invalid_ones_are_not_stated() -> None:
    assert entry_for({"type": "object", "properties": {"q": {"type": "string"}}})["headers"] == []
    number = {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}
    assert entry_for(number)["headers"] is None
    many = {
        "type": "object",
        "properties": {
            f"p{i}": {"type": "string", "x-mcp-header": f"H{i}"} for i in range(MAX_NAVIGATION_HEADERS + 1)
        },
    }
    assert entry_for(many)["headers"] is None


def test_model_stays_strict_and_accepts_entries_from_older_providers() -> None:
    entry = entry_for(ANNOTATED)
    older = {k: v for k, v in entry.items() if k != "headers"}
    assert SchemaNavigation.model_validate(older).headers is None
    for bad in (
        [{"argument": ["region"], "header": "Region", "type": "string"}],  # not an Mcp-Param- name
        [{"argument": [], "header": "Mcp-Param-R", "type": "string"}],
        [{"argument": ["r"], "header": "Mcp-Param-R", "type": "number"}],
        [{"argument": ["r"], "header": "Mcp-Param-R", "type": "string", "extra": 1}],
        "Mcp-Param-R",
    ):
        with pytest.raises(ValidationError):
            SchemaNavigation.model_validate({**entry, "headers": bad})
    with pytest.raises(ValidationError):
        SchemaNavigation.model_validate({**entry, "unknown": 1})


async def test_a_host_learns_the_headers_from_search_alone() -> None:
    server, _, _ = build_server([static_tool("regional", ANNOTATED)])
    client: Client[Any] = Client(server)
    consumer = SchemaDisclosureConsumer(client, scope=CallerScope("h", "memory"))
    async with client:
        (found,) = await consumer.discover("regional")
    assert found.headers is not None
    assert {h.header: h.argument for h in found.headers} == {
        "Mcp-Param-Region": ["region"],
        "Mcp-Param-Dry-Run": ["filter", "dry"],
    }
