"""The gateway's search: its own tools ranked, and the caller's query sent to every search-first child.

:func:`federated_search` is FastMCP's ``RegexSearchTransform`` with two additions:

* its ``search_tools`` first sends the caller's pattern to each search-first child's own search,
  concurrently (``find``: each child verifies and admits what it answers, bounded in count and time,
  and publishes it as ``NAME_tool`` like a listed tool), then ranks the gateway's published tools
  itself, keeps of each child's answer only the tools this caller may see (the same component
  authorization as every other tool: what the caller's scopes do not cover is never shown or
  counted), and merges the ranked lists (:func:`merge_ranked`, the one seam where the order is
  decided);
* a call (direct, or through ``call_tool``) naming a ``NAME_tool`` the gateway has not seen yet is
  resolved first (``resolve``: one anchored exact search at that child, verified and admitted before
  anything runs); after that the call takes the ordinary path, authorization included.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from agent_connector_sdk.mcp.compat import FanOutRegexSearch

__all__ = ["federated_search", "merge_ranked"]

Find = Callable[[str], Awaitable[list[list[str]]]]
"""``find(pattern)``: each search-first child's answer, as gateway names in the child's rank order."""
Resolve = Callable[[str], Awaitable[None]]
"""``resolve(name)``: make a hidden tool named ``name`` known (published) if a child has it."""


def merge_ranked(ranked: Sequence[Sequence[str]], *, limit: int) -> list[str]:
    """One list from several ranked lists: interleaved by rank (every list's first, then every list's
    second, ...), each name once, at most ``limit``. The first list is the gateway's own ranking, so
    it wins ties. The one place the merged order is decided."""
    merged: dict[str, None] = {}
    depth = max((len(names) for names in ranked), default=0)
    for rank in range(depth):
        for names in ranked:
            if rank < len(names):
                merged.setdefault(names[rank], None)
                if len(merged) >= limit:
                    return list(merged)
    return list(merged)


def federated_search(*, find: Find, resolve: Resolve, **kwargs: Any) -> FanOutRegexSearch:
    """The gateway's search transform (module docstring): FastMCP's regex search, fanned out through
    ``find``, unseen names resolved through ``resolve``, lists merged by :func:`merge_ranked`."""
    return FanOutRegexSearch(merge=merge_ranked, find=find, resolve=resolve, **kwargs)
