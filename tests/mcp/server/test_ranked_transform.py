"""The ranked search transform in process: FastMCP's private hooks it rides on (checked here, as
tests/mcp/test_compat.py checks every accessor), its synthetic tools built once, and one index per
catalog content."""

from __future__ import annotations

import asyncio
from typing import Any

from fastmcp import Client, FastMCP
from fastmcp.server.transforms.search import RegexSearchTransform
from fastmcp.server.transforms.search.base import BaseSearchTransform

from agent_connector_sdk.mcp import compat
from agent_connector_sdk.mcp.schema_disclosure_provider import RankedSearchTransform, describe_schema_tools
from agent_connector_sdk.mcp.server import cache_tool_catalog


def test_the_private_hooks_it_rides_on_exist() -> None:
    """FastMCP 4.2 names its search extension points privately; a move must fail here, loudly."""
    for hook in ("_make_search_tool", "_search", "_get_visible_tools", "_render_results"):
        assert callable(getattr(RegexSearchTransform, hook)), hook
    transform = RankedSearchTransform(max_results=7, search_tool_name="find")
    assert isinstance(transform, RegexSearchTransform) and isinstance(transform, BaseSearchTransform)
    assert (transform.max_results, transform.search_tool_name) == (7, "find")
    assert compat.synthetic_tool_names(transform) == frozenset({"find", "call_tool"})


def _server() -> tuple[FastMCP[Any], RankedSearchTransform]:
    server: FastMCP[Any] = FastMCP("ranked")

    @server.tool
    def list_watchers_for_repo(owner: str, repo: str) -> list[str]:
        """Lists the people watching the specified repository."""
        return []

    @server.tool
    def delete_repo(owner: str, repo: str) -> None:
        """Deleting a repository requires admin access."""

    search = RankedSearchTransform(search_result_serializer=describe_schema_tools)
    server.add_transform(search)
    return server, search


def test_synthetic_tools_are_built_once_and_one_index_serves_a_catalog() -> None:
    server, search = _server()
    cache_tool_catalog(server, search)
    assert compat.memoize_synthetic_tools(search) is True
    assert search._make_search_tool() is search._make_search_tool()

    async def run() -> None:
        async with Client(server) as client:
            for _ in range(3):
                found = await client.call_tool("search_tools", {"pattern": "who is watching this repo"})
                assert found.data[0]["name"] == "list_watchers_for_repo"
            assert search.index_builds == 1
            server.add_tool(_extra_tool())
            found = await client.call_tool("search_tools", {"pattern": "archive a repository"})
            assert found.data[0]["name"] == "archive_repo"
            assert search.index_builds == 2  # a new catalog, a new index

    asyncio.run(run())


def test_without_the_catalog_cache_equal_catalogs_share_an_index() -> None:
    server, search = _server()

    async def run() -> None:
        async with Client(server) as client:
            for _ in range(3):
                await client.call_tool("search_tools", {"pattern": "delete a repository"})
        assert search.index_builds == 1  # keyed by the tools' search documents

    asyncio.run(run())


def _extra_tool() -> Any:
    from fastmcp.tools import FunctionTool

    def archive_repo(owner: str, repo: str) -> None:
        """Archive a repository: it becomes read-only."""

    return FunctionTool.from_function(archive_repo)
