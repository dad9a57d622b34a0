"""The gateway's search: its own tools ranked, and the caller's query sent to every search-first child.

:class:`FederatedSearch` is the ranked search (:class:`RankedSearchTransform`: FastMCP's
``RegexSearchTransform`` ranked by :mod:`agent_connector_sdk.core.search`, one text copy, read-only,
abstaining with a one-line note) with two additions:

* its search first sends the caller's pattern to each search-first child's own search, concurrently
  (``find``: each child verifies and admits what it answers, bounded in count and time, and publishes
  it as ``NAME_tool`` like a listed tool — through the same hold and scope rules), then ranks the
  caller's visible tools itself, keeps of each child's answer only the tools this caller may see (the
  same component authorization as every other tool: what the caller's scopes do not cover is never
  shown or counted), and fuses the ranked lists by reciprocal rank (``core.search.merge_by_rank``, the
  one place the merged order is decided); nothing found anywhere is the abstention note;
* a call (direct, or through ``call_tool``) naming a ``NAME_tool`` the gateway has not seen yet is
  resolved first (``resolve``: one anchored exact search at that child, verified and admitted before
  anything runs); after that the call takes the ordinary path, authorization and binding included.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from fastmcp.tools.base import Tool

from agent_connector_sdk.core.search import merge_by_rank
from agent_connector_sdk.mcp.compat import ResolvingSearchHooks
from agent_connector_sdk.mcp.schema_disclosure_provider import RankedSearchTransform

__all__ = ["MAX_PATTERN_LENGTH", "FederatedSearch"]

Find = Callable[[str], Awaitable[list[list[str]]]]
"""``find(pattern)``: each search-first child's answer, as gateway names in the child's rank order."""
Resolve = Callable[[str], Awaitable[None]]
"""``resolve(name)``: make a hidden tool named ``name`` known (published) if a child has it."""

MAX_PATTERN_LENGTH: Final = 1000
"""Longest pattern sent on to the children (the search tool's documented bound)."""


class FederatedSearch(RankedSearchTransform, ResolvingSearchHooks):
    """The gateway's search transform (module docstring). ``find`` and ``resolve`` are the gateway's
    fan-out and by-name resolution; the other arguments are :class:`RankedSearchTransform`'s."""

    def __init__(self, *, find: Find | None = None, resolve: Resolve | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.find = find
        self.resolve = resolve

    async def search_for(self, pattern: str, ctx: Any) -> Sequence[Tool]:
        children: list[list[str]] = []
        if self.find is not None and pattern.strip() and len(pattern) <= MAX_PATTERN_LENGTH:
            children = await self.find(pattern)  # first: what the children answer is published now
        visible = await self.visible_tools(ctx)
        by_name = {tool.name: tool for tool in visible}
        own = [tool.name for tool in self.rank(visible, pattern)]
        answers = [[name for name in names if name in by_name] for names in children]
        merged = merge_by_rank([own, *answers], limit=self.max_results)
        return [by_name[name] for name in merged]

    async def resolve_unseen(self, name: str) -> None:
        if self.resolve is not None:
            await self.resolve(name)
