"""The gateway's search: its own tools ranked, and the caller's query sent to every search-first child.

:class:`FederatedSearch` is FastMCP's ``RegexSearchTransform`` with two additions:

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
from typing import Annotated, Any

from fastmcp.server.context import Context
from fastmcp.server.transforms import GetToolNext
from fastmcp.server.transforms.search import RegexSearchTransform
from fastmcp.tools.base import Tool
from fastmcp.utilities.versions import VersionSpec

__all__ = ["FederatedSearch", "merge_ranked"]

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


class FederatedSearch(RegexSearchTransform):
    """See the module docstring. ``find`` and ``resolve`` are the gateway's; ``None`` before it sets them."""

    def __init__(self, *, find: Find | None = None, resolve: Resolve | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.find = find
        self.resolve = resolve
        self._search_tool: Tool | None = None
        self._call_tool: Tool | None = None

    def _make_search_tool(self) -> Tool:
        # Built once (FastMCP builds it per request; the function reads the transform when called).
        if self._search_tool is not None:
            return self._search_tool
        transform = self

        async def search_tools(
            pattern: Annotated[
                str,
                "Case-insensitive regex pattern for tool names, descriptions, and parameters, "
                "up to 1000 characters; lookarounds and backreferences are not supported",
            ],
            ctx: Context = None,  # type: ignore[assignment]
        ) -> str | list[dict[str, Any]]:
            """Search for tools matching a regex pattern.

            Returns matching tool definitions in the same format as list_tools.
            Invalid, unsupported, or overlong patterns return an empty list.
            """
            children: list[list[str]] = []
            if transform.find is not None and len(pattern) <= transform._max_pattern_length:
                children = await transform.find(pattern)
            visible = await transform._get_visible_tools(ctx)
            by_name = {tool.name: tool for tool in visible}
            own = [tool.name for tool in await transform._search(visible, pattern)]
            answers = [[name for name in names if name in by_name] for names in children]
            merged = merge_ranked([own, *answers], limit=transform._max_results)
            rendered: str | list[dict[str, Any]] = await transform._render_results(
                [by_name[name] for name in merged]
            )
            return rendered

        self._search_tool = Tool.from_function(fn=search_tools, name=self._search_tool_name)
        return self._search_tool

    def _make_call_tool(self) -> Tool:
        if self._call_tool is not None:
            return self._call_tool
        proxy = super()._make_call_tool()
        transform = self
        relay = proxy.fn  # type: ignore[attr-defined]

        async def call_tool(
            name: Annotated[str, "The name of the tool to call"],
            arguments: Annotated[dict[str, Any] | None, "Arguments to pass to the tool"] = None,
            ctx: Context = None,  # type: ignore[assignment]
        ) -> Any:
            """Call a tool by name with the given arguments.

            Use this to execute tools discovered via search_tools.
            """
            if transform.resolve is not None:
                await transform.resolve(name)
            return await relay(name=name, arguments=arguments, ctx=ctx)

        self._call_tool = Tool.from_function(fn=call_tool, name=self._call_tool_name)
        return self._call_tool

    async def get_tool(
        self, name: str, call_next: GetToolNext, *, version: VersionSpec | None = None
    ) -> Tool | None:
        tool = await super().get_tool(name, call_next, version=version)
        if tool is not None or self.resolve is None:
            return tool
        await self.resolve(name)
        return await call_next(name, version=version)
