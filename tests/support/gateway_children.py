"""Child servers for the gateway tests: a well-behaved FastMCP server, a misbehaving low-level one, and
a stdio one (run as ``python -m tests.support.gateway_children stdio``), plus an ASGI recorder of the raw
headers a child received."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from typing import Annotated, Any

import mcp_types as types
from fastmcp import Context, FastMCP
from fastmcp.tools import FunctionTool
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError
from pydantic import Field


def weather_server(name: str = "weather") -> FastMCP[Any]:
    """Well behaved: a read-only tool without required arguments, a tool with a header annotation, a
    slow tool."""
    server: FastMCP[Any] = FastMCP(name)

    @server.tool(annotations={"readOnlyHint": True, "destructiveHint": False})
    def forecast(city: str = "Paris") -> dict[str, Any]:
        """Tomorrow's forecast for a city."""
        return {"city": city, "celsius": 21}

    @server.tool
    def route(
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})], priority: int = 0
    ) -> dict[str, Any]:
        """Route a request to a region."""
        return {"region": region, "priority": priority}

    @server.tool
    async def slow(seconds: float = 5.0) -> str:
        """Sleeps."""
        await asyncio.sleep(seconds)
        return "done"

    @server.tool
    async def grow(ctx: Context) -> str:
        """Adds a tool and says so (notifications/tools/list_changed on this request's stream)."""

        def extra() -> str:
            """Added at run time."""
            return "extra"

        server.add_tool(FunctionTool.from_function(extra))
        await ctx.send_notification(types.ToolListChangedNotification())
        return "grown"

    return server


class Misbehaving:
    """A low-level ``mcp`` server that breaks its contracts on purpose.

    * ``tools/list`` comes in two pages chained by the cursor ``""`` (valid: never "end");
    * ``listing`` promises an object and returns an array;
    * ``leaky`` annotates a sensitive argument (``Api-Key``) as a header: the gateway must reject it;
    * ``morph`` changes its input schema when ``version`` is bumped;
    * ``ok`` behaves.
    """

    def __init__(self) -> None:
        self.version = 1
        self.calls: list[str] = []
        self.cursors: list[str | None] = []

    def descriptors(self) -> list[types.Tool]:
        morph_schema: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "string"}}}
        if self.version > 1:
            morph_schema = {
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
                "required": ["b"],
            }
        return [
            types.Tool(
                name="listing",
                input_schema={"type": "object"},
                output_schema={"type": "object", "properties": {"items": {"type": "array"}}},
            ),
            types.Tool(
                name="leaky",
                input_schema={
                    "type": "object",
                    "properties": {"api_key": {"type": "string", "x-mcp-header": "Api-Key"}},
                },
            ),
            types.Tool(name="morph", input_schema=morph_schema),
            types.Tool(name="ok", input_schema={"type": "object"}),
        ]

    def server(self) -> Server[Any]:
        async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
            cursor = params.cursor if params is not None else None
            self.cursors.append(cursor)
            tools = self.descriptors()
            if cursor is None:
                return types.ListToolsResult(tools=tools[:2], next_cursor="")
            if cursor == "":
                return types.ListToolsResult(tools=tools[2:])
            raise MCPError(code=types.INVALID_PARAMS, message="Invalid cursor")

        async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
            self.calls.append(params.name)
            if params.name == "listing":
                payload: Any = [1, 2, 3]
                text = types.TextContent(type="text", text=json.dumps(payload))
                return types.CallToolResult(content=[text], structured_content=payload)
            text = types.TextContent(type="text", text=f"{params.name} v{self.version}")
            return types.CallToolResult(content=[text])

        return Server("misbehaving", on_list_tools=list_tools, on_call_tool=call_tool)


class CatalogChild:
    """A low-level ``mcp`` server listing exactly ``tools`` (wire descriptors, replaceable between
    listings): how a server's catalog changes under an approved lock."""

    def __init__(self, tools: list[dict[str, Any]]) -> None:
        self.tools = tools

    def server(self) -> Server[Any]:
        async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
            return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in self.tools])

        async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
            return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])

        return Server("catalog", on_list_tools=list_tools, on_call_tool=call_tool)


def recording(app: Any, log: list[dict[str, str]]) -> Any:
    """ASGI wrapper: every HTTP request's headers (lowercased names) appended to ``log``."""

    async def recorder(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            log.append({bytes(k).decode("latin-1"): bytes(v).decode("latin-1") for k, v in scope["headers"]})
        await app(scope, receive, send)

    return recorder


def wrap_lifespan(app: Any, wrapper: Callable[[Any], Any]) -> Any:
    return wrapper(app)


if __name__ == "__main__" and sys.argv[1:] == ["stdio"]:
    weather_server("files").run(transport="stdio", show_banner=False)
