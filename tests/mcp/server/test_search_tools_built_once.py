"""The search transform's own tools are built once on a gated server: no per-request memory.

FastMCP 4.2 builds ``search_tools`` and ``call_tool`` afresh for every list, search and proxy call; each
new tool function gets a new ``TypeAdapter`` in FastMCP's type-adapter LRU (5,000 entries), which kept
~6 KB per request: ``bench/load.py``'s server grew ~7 MiB per identical round (issue 22). The gates
build them once (``ServerGates.install``), so repeated identical requests add no adapters.
"""

from __future__ import annotations

from typing import Any

from fastmcp import Client, FastMCP
from fastmcp.server.transforms.search import RegexSearchTransform
from fastmcp.utilities.types import get_cached_typeadapter

from agent_connector_sdk.mcp.schema_disclosure_provider import describe_schema_tools
from agent_connector_sdk.mcp.server import ServerGates

ROUNDS = 60


def _server() -> FastMCP[Any]:
    server: FastMCP[Any] = FastMCP("memo")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    server.add_transform(RegexSearchTransform(search_result_serializer=describe_schema_tools))
    return server


async def _adapters_built(server: FastMCP[Any]) -> int:
    """Type adapters FastMCP built during ROUNDS identical list + search + proxy rounds (after one)."""
    async with Client(server) as client:
        await client.list_tools()
        await client.call_tool("search_tools", {"pattern": "add"})
        await client.call_tool("call_tool", {"name": "add", "arguments": {"a": 1, "b": 2}})
        before = get_cached_typeadapter.cache_info().misses
        for _ in range(ROUNDS):
            await client.list_tools()
            found = await client.call_tool("search_tools", {"pattern": "add"})
            assert [entry["name"] for entry in (found.structured_content or {})["result"]] == ["add"]
            called = await client.call_tool("call_tool", {"name": "add", "arguments": {"a": 1, "b": 2}})
            assert called.structured_content == {"result": 3}
        return get_cached_typeadapter.cache_info().misses - before


async def test_a_gated_server_builds_no_adapter_per_request() -> None:
    gated = ServerGates().install(_server())
    assert await _adapters_built(gated) == 0


async def test_fastmcp_alone_builds_adapters_per_request() -> None:
    """The behaviour the gates fix (if FastMCP stops doing this, the memo may go)."""
    assert await _adapters_built(_server()) >= 2 * ROUNDS
