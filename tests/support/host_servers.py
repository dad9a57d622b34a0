"""Servers the host core is tested against that are not our gated FastMCP lab.

* :func:`handshake_era_app` — the official ``mcp`` SDK's low-level ``Server``, answering
  ``server/discover`` with "method not found" as every server written before 2026-07-28 does, so a
  client can only negotiate an older revision through the ``initialize`` handshake;
* :func:`lab_behind_search` — the contract lab's tools hidden behind a search transform with schema
  disclosures, the way the disclosure consumer meets them;
* :class:`CallCounter` — a middleware that records which tool calls reached a server.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from fastmcp import FastMCP
from fastmcp.server.middleware import Middleware
from fastmcp.server.transforms.search import RegexSearchTransform
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

from agent_connector_sdk.core.schema_disclosure import build_schema_disclosure
from agent_connector_sdk.demo.contract_lab import contract_lab_server
from agent_connector_sdk.mcp.schema_disclosure_provider import (
    describe_schema_tools,
    register_schema_resources,
)

ROUTE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "priority": {"type": "integer"},
    },
    "required": ["region"],
}
ROUTE_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"region": {"type": "string"}, "priority": {"type": "integer"}},
    "required": ["region"],
}
TOKEN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"api_token": {"type": "string", "x-mcp-header": "Api-Token"}},
}


class CallCounter(Middleware):
    """Records the name of every ``tools/call`` that reaches the tools (what the host let through)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def on_call_tool(self, context: Any, call_next: Any) -> Any:
        self.calls.append(context.message.name)
        return await call_next(context)


def handshake_era_server() -> Server[Any]:
    """An ``mcp`` low-level server that predates ``server/discover`` (2025-11-25 and older only)."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name="route", input_schema=ROUTE_SCHEMA, output_schema=ROUTE_OUTPUT),
                types.Tool(name="fetch_report", input_schema=TOKEN_SCHEMA),
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        if params.name != "route":
            raise MCPError(code=types.INVALID_PARAMS, message="unknown tool")
        payload = {"region": arguments["region"], "priority": arguments.get("priority", 0)}
        text = types.TextContent(type="text", text=json.dumps(payload))
        return types.CallToolResult(content=[text], structured_content=payload)

    async def no_discover(ctx: Any, params: Any) -> Any:
        raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found")

    server: Server[Any] = Server("handshake-era", on_list_tools=list_tools, on_call_tool=call_tool)
    server.add_request_handler("server/discover", types.RequestParams, no_discover)
    return server


async def lab_behind_search() -> FastMCP[Any]:
    """The contract lab's tools behind a regex search transform, every tool disclosed."""
    server = contract_lab_server()
    disclosures = {
        tool.name: build_schema_disclosure(
            operation=f"lab/{tool.name}",
            alias=tool.name,
            source=b"contract lab",
            input_schema=tool.parameters,
            output_schema=tool.output_schema,
        )
        for tool in await server.list_tools()
    }
    search = RegexSearchTransform(search_result_serializer=describe_schema_tools)
    server.add_transform(search)
    register_schema_resources(server, search, disclosures)
    return server
