"""Per-session visibility (``ctx.disable_components``): the name-resolved read decides as the catalog."""

from __future__ import annotations

from typing import Any

from fastmcp import Client, Context
from mcp.shared.exceptions import MCPError

from tests.support.disclosure_servers import big_input_schema, build_server, static_tool


async def test_session_rules_apply_to_fast_and_exact_reads_alike() -> None:
    server, _, registry = build_server([static_tool("list_events", big_input_schema(40))])
    disclosure = registry.get("list_events")
    assert disclosure is not None
    uri = disclosure.manifest.manifest_uri

    async def outcome(read: Any) -> str:
        try:
            await read(uri)
            return "served"
        except MCPError:
            return "refused"

    @server.tool
    async def hide_events(ctx: Context) -> None:
        await ctx.disable_components(names={"list_events"}, components={"tool"})

    @server.tool
    async def compare_reads(ctx: Context) -> list[str]:
        return [await outcome(registry.read), await outcome(registry.read_exact)]

    async with Client(server) as hiding:
        assert (await hiding.call_tool("call_tool", {"name": "compare_reads"})).data == ["served", "served"]
        await hiding.call_tool("call_tool", {"name": "hide_events"})
        assert (await hiding.call_tool("call_tool", {"name": "compare_reads"})).data == ["refused", "refused"]
    assert registry.fast_path_blocker() is None
