"""Test servers for the disclosure provider: tools with explicit schemas, a search transform, disclosures.

Tools are built from explicit JSON Schemas (not from Python signatures) so a test controls exactly how
large a schema is and what the wire shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastmcp import FastMCP
from fastmcp.server.transforms.search import RegexSearchTransform
from fastmcp.tools.base import Tool, ToolResult
from fastmcp.utilities.authorization import AuthCheck
from pydantic import Field

from agent_connector_sdk.core.schema_disclosure import SchemaDisclosure, build_schema_disclosure
from agent_connector_sdk.mcp.schema_disclosure_provider import (
    SchemaDisclosureRegistry,
    describe_schema_tools,
    register_schema_resources,
)

SOURCE = b"test source document"


class StaticTool(Tool):
    """A tool with a fixed schema that echoes a fixed structured result."""

    result: dict[str, Any] = Field(default_factory=dict)

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(structured_content=self.result)


def big_input_schema(properties: int = 300, *, note: str = "") -> dict[str, Any]:
    """An object schema several fragments long (~60 bytes per property), with non-ASCII text."""
    return {
        "type": "object",
        "properties": {
            f"field_{i:03d}": {"type": "string", "description": f"Field {i} — ünïcødé 🚀 {note}"}
            for i in range(properties)
        },
        "required": ["field_000"],
    }


OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}


def static_tool(
    name: str,
    input_schema: dict[str, Any],
    *,
    output_schema: dict[str, Any] | None = OUTPUT_SCHEMA,
    description: str = "A static test tool.",
    auth: AuthCheck | list[AuthCheck] | None = None,
) -> StaticTool:
    return StaticTool(
        name=name,
        description=description,
        parameters=input_schema,
        output_schema=output_schema,
        auth=auth,
        result={"ok": True},
    )


def disclose(tool: Tool) -> SchemaDisclosure:
    return build_schema_disclosure(
        operation=f"op-{tool.name}",
        alias=tool.name,
        source=SOURCE,
        input_schema=tool.parameters,
        output_schema=tool.output_schema,
    )


def searchable_server(
    tools: Sequence[Tool], *, auth: Any = None, max_results: int = 5
) -> tuple[FastMCP[Any], RegexSearchTransform]:
    """Server with ``tools`` hidden behind a regex search transform (no disclosure registered yet)."""
    server: FastMCP[Any] = FastMCP("disclosure-test", auth=auth)
    for tool in tools:
        server.add_tool(tool)
    search = RegexSearchTransform(search_result_serializer=describe_schema_tools, max_results=max_results)
    server.add_transform(search)
    return server, search


def build_server(
    tools: Sequence[Tool], *, auth: Any = None, max_results: int = 5
) -> tuple[FastMCP[Any], RegexSearchTransform, SchemaDisclosureRegistry]:
    """Server with ``tools`` hidden behind a regex search transform and every tool disclosed."""
    server, search = searchable_server(tools, auth=auth, max_results=max_results)
    registry = register_schema_resources(server, search, {tool.name: disclose(tool) for tool in tools})
    return server, search, registry
