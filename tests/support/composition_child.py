"""A child for the composition tests, over Streamable HTTP (in-process) or stdio (run as ``python -m
tests.support.composition_child``): results shaped like server-filesystem's, a failing tool, and a tool
that answers the ``_meta`` its request carried."""

from __future__ import annotations

import json
from typing import Any

import mcp_types
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.dependencies import fastmcp_request_ctx
from fastmcp.tools.base import ToolResult

FILE_TEXT = "line of a file\n" * 16_000  # 240 KB


def files_server() -> FastMCP[Any]:
    """Like server-filesystem: a read returns the text and ``structuredContent`` whose text block is
    *not* the JSON serialization; a tool that fails without structured content; a ``_meta`` recorder."""
    server: FastMCP[Any] = FastMCP("files")
    seen: list[dict[str, Any]] = []
    server.seen_meta = seen  # type: ignore[attr-defined]

    @server.tool(
        output_schema={
            "type": "object",
            "properties": {"content": {"type": "string"}},
            "required": ["content"],
        }
    )
    def read() -> ToolResult:
        """Read the file."""
        return ToolResult(
            content=[mcp_types.TextContent(type="text", text=FILE_TEXT)],
            structured_content={"content": FILE_TEXT},
        )

    @server.tool(
        output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    )
    def broken() -> dict[str, int]:
        """Always fails."""
        raise ToolError("the disk is on fire")

    @server.tool
    def meta() -> str:
        """Records the request's _meta and answers it (JSON text)."""
        request = fastmcp_request_ctx.get()
        received = dict(request.meta or {}) if request is not None else {}
        seen.append(received)
        return json.dumps(received)

    return server


if __name__ == "__main__":
    files_server().run(transport="stdio", show_banner=False)
