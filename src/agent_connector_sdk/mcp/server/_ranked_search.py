"""The ranked search transform: FastMCP's ``RegexSearchTransform`` with results ranked by relevance.

``RankedSearchTransform`` is a ``RegexSearchTransform`` (through :class:`compat.SearchTransformHooks`)
whose search tool keeps FastMCP's ``pattern`` argument and its regex semantics — every tool a pattern
matches stays reachable — but returns matches ranked by relevance, reads natural language in the same
``pattern`` (a pattern without regex operators, or one that matches nothing, is read as a request; the
tool's input schema stays FastMCP's, one required ``pattern``, so whatever drives FastMCP's search, e.g.
the gateway's federation of a search-first child, drives this one), and abstains — no entries, a
one-line note — when nothing in the caller's catalog is relevant. The ranking is the pure
:mod:`agent_connector_sdk.core.search`; the serializer (``describe_schema_tools`` on our surfaces), the
``call_tool`` proxy and the catalog reads are FastMCP's own, unchanged.

Exact per caller: the index is built over the caller's visible tools only (FastMCP's catalog read:
middleware, visibility, session rules, component auth), so no hidden tool shapes a result, a score or a
count. Indexes are cached per catalog content, bounded: behind :func:`cache_tool_catalog` (tool objects
never edited in place) the key is the identity of the catalog's tool objects, a C-speed pass; otherwise
the tools' search documents themselves.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Final

from fastmcp.server.context import Context
from fastmcp.tools.base import Tool, ToolResult
from mcp_types import TextContent, ToolAnnotations

from agent_connector_sdk.core.schema_disclosure.cache import BoundedLRU
from agent_connector_sdk.core.search import SearchDocument, SearchIndex, document_from_tool, merge_by_rank
from agent_connector_sdk.mcp import compat

__all__ = [
    "DEFAULT_INDEX_ENTRIES",
    "NO_MATCH_NOTE",
    "SEARCH_TOOL_DESCRIPTION",
    "RankedSearchTransform",
    "one_copy_result",
    "search_document",
]

DEFAULT_INDEX_ENTRIES: Final = 16
"""Search indexes kept per transform (one per distinct caller catalog; ~2-3 KB per tool each)."""

NO_MATCH_NOTE: Final = (
    "No tool in this catalog matches the request; try other words (what the tool does, its objects) "
    "or a broader regex."
)
"""What the search tool answers when it abstains: one line, no entries."""

SEARCH_TOOL_DESCRIPTION: Final = (
    "Find tools in this server's catalog, best match first. `pattern` is either plain words saying what "
    "you want done (e.g. 'who is watching this repository') or a case-insensitive regex over tool "
    "names, descriptions and parameters (e.g. '^repos_|watchers'): every tool a regex matches can be "
    "found, ranked by relevance. Returns at most a few entries (run the tool found through "
    "`call_tool`); returns no entries and a one-line note when nothing in the catalog fits."
)

_PATTERN_HELP: Final = (
    "Plain words describing the task, or a case-insensitive regex over tool names, descriptions and "
    "parameters (up to 1000 characters; no lookarounds or backreferences)"
)


def search_document(tool: Tool) -> SearchDocument:
    """What the ranking reads of a FastMCP tool (as its ``tools/list`` descriptor shows it)."""
    title = tool.title or (tool.annotations.title if tool.annotations is not None else None)
    return document_from_tool(
        {"name": tool.name, "title": title, "description": tool.description, "inputSchema": tool.parameters}
    )


def one_copy_result(value: Any) -> ToolResult:
    """The search tool's result: ``{"result": value}`` as structured content and its JSON as the one
    text block. (FastMCP's own conversion writes the *unwrapped* value as text, so a strict output check
    adds the wrapped serialization as a second block: the same entries twice for the model to read.)"""
    payload = {"result": value}
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return ToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=payload,
        meta={"fastmcp": {"wrap_result": True}},
    )


class _Indexed:
    """An index and, per tool name, its first position in the catalog it was built from."""

    __slots__ = ("held", "index", "position")

    def __init__(self, index: SearchIndex, held: tuple[Tool, ...] = ()) -> None:
        self.index = index
        self.held = held  # for an entry keyed by tool ids: those tools, alive while it lives
        self.position: dict[str, int] = {}
        for position, name in enumerate(index.names):
            self.position.setdefault(name, position)


class RankedSearchTransform(compat.SearchTransformHooks):
    """A ``RegexSearchTransform`` whose search is ranked, reads natural language and abstains.

    Takes FastMCP's arguments (``max_results``, ``always_visible``, ``search_tool_name``,
    ``call_tool_name``, ``search_result_serializer``) and ``index_entries`` (indexes kept, bounded).
    """

    def __init__(
        self,
        *,
        max_results: int = 5,
        always_visible: list[str] | None = None,
        search_tool_name: str = "search_tools",
        call_tool_name: str = "call_tool",
        search_result_serializer: Any = None,
        index_entries: int = DEFAULT_INDEX_ENTRIES,
    ) -> None:
        super().__init__(
            max_results=max_results,
            always_visible=always_visible,
            search_tool_name=search_tool_name,
            call_tool_name=call_tool_name,
            search_result_serializer=search_result_serializer,
        )
        self._indexes: BoundedLRU[tuple[Any, ...], _Indexed] = BoundedLRU(index_entries)
        self.index_builds = 0

    def make_search_tool(self) -> Tool:
        transform = self

        async def search_tools(
            pattern: Annotated[str, _PATTERN_HELP],
            ctx: Context = None,  # type: ignore[assignment]
        ) -> str | list[dict[str, Any]]:
            found = await transform.search_for(pattern, ctx)
            rendered = await transform.render_results(found) if found else NO_MATCH_NOTE
            return one_copy_result(rendered)  # type: ignore[return-value]

        return Tool.from_function(
            fn=search_tools,
            name=self.search_tool_name,
            description=SEARCH_TOOL_DESCRIPTION,
            annotations=ToolAnnotations(readOnlyHint=True, idempotentHint=True, openWorldHint=False),
        )

    async def search_for(self, pattern: str, ctx: Any) -> Sequence[Tool]:
        """What the search tool returns for ``pattern`` (best first, ``[]`` to abstain): the caller's
        visible tools ranked. A subclass may add results from elsewhere (the gateway's federation)."""
        return self.rank(await self.visible_tools(ctx), pattern)

    async def search_catalog(self, tools: Sequence[Tool], query: str) -> Sequence[Tool]:
        return self.rank(tools, query)

    def rank(self, tools: Sequence[Tool], pattern: str, query: str | None = None) -> list[Tool]:
        """The tools of ``tools`` (the caller's catalog) a search for ``pattern`` returns, best first, at
        most ``max_results``; ``[]`` when the search abstains. ``query``, when given, is a second reading
        (e.g. a request beside a regex) fused with the first by rank (``core.search.merge_by_rank``)."""
        texts = [text for text in (pattern, query) if isinstance(text, str) and text.strip()]
        if not texts or not tools:
            return []
        catalog = tuple(tools)
        indexed = self.indexed(catalog)
        limit = self.max_results
        ranked = [[hit.name for hit in indexed.index.search(text, limit=limit)] for text in texts]
        # The tool objects of *this* catalog (an index is shared by equal catalogs, and positions align).
        return [catalog[indexed.position[name]] for name in merge_by_rank(ranked, limit=limit)]

    def indexed(self, tools: tuple[Tool, ...]) -> _Indexed:
        """The index of exactly ``tools`` (same documents, same order), cached per catalog content."""
        ids_key: tuple[Any, ...] | None = None
        if compat.installed_tool_catalog(self) is not None:
            # Behind the catalog cache the server declared its tools are never edited in place: the same
            # objects are the same content (held by the entry, so an id is not reused while it lives).
            ids_key = ("ids", tuple(map(id, tools)))
            known = self._indexes.get(ids_key)
            if known is not None:
                return known
        documents = tuple(search_document(tool) for tool in tools)
        content_key = ("documents", documents)
        entry = self._indexes.get(content_key)
        if entry is None:
            entry = _Indexed(SearchIndex.build(documents))
            self.index_builds += 1
            self._indexes.put(content_key, entry)
        if ids_key is not None:
            held = _Indexed.__new__(_Indexed)
            held.index, held.position, held.held = entry.index, entry.position, tools
            self._indexes.put(ids_key, held)
        return entry
