"""An exact, bounded cache of the caller's visible tool catalog behind a FastMCP search transform.

FastMCP's search transforms read the caller's whole catalog on every ``search_tools`` call and every
``call_tool`` proxy call (``CatalogTransform.get_tool_catalog``: every provider listed, transforms,
session visibility, component auth, the ``tools/list`` middleware — ``DereferenceRefsMiddleware`` walks
every schema — then version dedupe and the model-visibility filter). At GitHub size (1,223 tools) that
is 0.1-1.4 s per call. :func:`cache_tool_catalog` keeps FastMCP's own transform (its search, ranking,
serializer and proxy are untouched) and memoizes what feeds it:

* **the catalog**, per *caller identity* and *catalog generation*. The generation is read on every call
  and is exact: the identity of every provider and of every raw tool object it holds, the state of every
  transform (``Visibility`` rules: flags and name/key/tag/version sets), the middleware objects and the
  session's visibility rules. The caller identity is what component auth can see: the transport's
  skip-auth flag and the token's *scopes* — enough because the cache only serves servers whose tools'
  ``auth`` checks are FastMCP's scope checks (``require_scopes``, ``restrict_tag``) or absent. Anything
  the cache cannot vouch for (another provider type, transform or ``tools/list`` middleware, another auth
  check, another server in the context) makes it call FastMCP's own ``get_tool_catalog`` instead:
  :meth:`ToolCatalogCache.blocker` says why. Computing the generation is a few C-speed passes over the
  raw tool list (~0.1 ms at GitHub size), never the listing itself;
* **the regex search text** of each cached tool (FastMCP's own ``_extract_searchable_text``: the tool's
  name, description and every parameter's name and description, joined by spaces — what a search pattern
  matches), so a search costs one regex test per tool; and the ``schema-navigation`` entry
  ``describe_schema_tools`` builds for it (hashing a schema is O(its size)).

The one declaration a server makes by calling :func:`cache_tool_catalog` — the same one
``register_schema_resources(frozen_schemas=True)`` makes about schemas, widened to whole tools: **its
tool objects are never edited in place**; a change replaces the tool (``remove_tool`` + ``add_tool``),
the transform, or assigns a new rule set. Every server ``agent-connector serve`` builds obeys it.
Differential tests check search results, proxy calls and catalogs against an uncached twin.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Final

from fastmcp import FastMCP
from fastmcp.server.context import Context
from fastmcp.server.middleware.dereference import DereferenceRefsMiddleware
from fastmcp.server.providers.base import Provider
from fastmcp.server.transforms.catalog import CatalogTransform
from fastmcp.server.transforms.visibility import Visibility, get_visibility_rules
from fastmcp.tools.base import Tool

from agent_connector_sdk.core.schema_disclosure.cache import BoundedLRU
from agent_connector_sdk.mcp import compat
from agent_connector_sdk.mcp.server._output_check import OutputSelfCheck
from agent_connector_sdk.mcp.server._telemetry import SpanProbe

__all__ = [
    "DEFAULT_CATALOG_ENTRIES",
    "DEFAULT_SEARCH_TEXT_ENTRIES",
    "ToolCatalogCache",
    "cache_tool_catalog",
    "navigation_entry",
]

DEFAULT_CATALOG_ENTRIES: Final = 32
"""Catalogs kept per server (one per caller scope set and generation; each holds references only)."""
DEFAULT_SEARCH_TEXT_ENTRIES: Final = 20_000
"""Cached tools whose search text and navigation entry are kept, process-wide (~1-2 KB each)."""

_AUTH_VERDICTS: Final = 16
_VISIBILITY_HOOKS: Final = ("list_tools", "get_tool", "_mark_component", "_matches")


class _CachedTools:
    """Per tool object a catalog cache handed out: FastMCP's search text for it and the navigation entry
    our serializer builds for it, each computed once. Only for those objects (held in the entry, so an
    ``id`` is never reused while its entry lives; never edited in place by the server's declaration):
    every other tool is computed afresh, exactly as without the cache."""

    def __init__(self, max_entries: int) -> None:
        # A plain dict, oldest admitted first out: a search looks up every tool of the catalog, so a
        # lookup must cost a dict probe (an LRU's reordering would double the search).
        self._entries: dict[int, tuple[Tool, list[Any]]] = {}
        self._max_entries = max_entries

    def __len__(self) -> int:
        return len(self._entries)

    def admit(self, tools: Sequence[Tool]) -> None:
        entries = self._entries
        for tool in tools:
            known = entries.get(id(tool))
            if known is None or known[0] is not tool:
                entries.pop(id(tool), None)
                entries[id(tool)] = (tool, [None, None])
        while len(entries) > self._max_entries:
            del entries[next(iter(entries))]

    def _slots(self, tool: Tool) -> list[Any] | None:
        entry = self._entries.get(id(tool))
        return None if entry is None or entry[0] is not tool else entry[1]

    def text(self, tool: Tool, compute: compat.SearchText) -> str:
        # Runs once per tool per search (1,223 times at GitHub size): _slots inlined.
        entry = self._entries.get(id(tool))
        if entry is None or entry[0] is not tool:
            return compute(tool)
        slots = entry[1]
        known: str | None = slots[0]
        if known is None:
            known = slots[0] = compute(tool)
        return known

    def navigation_entry(self, tool: Tool, compute: Callable[[Tool], dict[str, Any]]) -> dict[str, Any]:
        """``compute(tool)`` — a JSON-data dict — or an equal fresh copy of what it returned before."""
        slots = self._slots(tool)
        if slots is None:
            return compute(tool)
        known: str | None = slots[1]
        if known is None:
            entry = compute(tool)
            slots[1] = json.dumps(entry)
            return entry
        fresh: dict[str, Any] = json.loads(known)  # a private copy: callers may edit what they get
        return fresh


_CACHED_TOOLS: Final = _CachedTools(DEFAULT_SEARCH_TEXT_ENTRIES)


def navigation_entry(tool: Tool, compute: Callable[[Tool], dict[str, Any]]) -> dict[str, Any]:
    """``compute(tool)``, memoized when ``tool`` came out of a catalog cache (see :class:`_CachedTools`)."""
    return _CACHED_TOOLS.navigation_entry(tool, compute)


def _visibility_state(transform: Visibility) -> tuple[Any, ...]:
    """Everything ``Visibility._matches`` reads (sets copied: a rule set edited in place still shows)."""

    def frozen(values: Any) -> frozenset[Any] | None:
        return None if values is None else frozenset(values)

    return (
        compat.visibility_enabled(transform),
        frozen(transform.names),
        frozen(transform.keys),
        repr(transform.version),
        frozen(transform.tags),
        frozen(transform.components),
        transform.match_all,
        transform.catalog_state() if hasattr(transform, "catalog_state") else None,
    )


class _Entry:
    __slots__ = ("held", "tools")

    def __init__(self, held: tuple[Any, ...], tools: tuple[Tool, ...]) -> None:
        self.held = held  # every object whose id is in the key: alive while the entry lives
        self.tools = tools


class ToolCatalogCache:
    """The cached ``get_tool_catalog`` of one search transform (see the module docstring)."""

    def __init__(self, server: FastMCP[Any], catalog: CatalogTransform, *, max_entries: int) -> None:
        self._server = server
        self._catalog = catalog
        self._entries: BoundedLRU[tuple[Any, ...], _Entry] = BoundedLRU(max_entries)
        self._original: compat.GetToolCatalog | None = None
        # Per provider, the last tool list whose auth checks were judged, its ids and the verdict: an
        # identical list (same objects, never edited in place) is not re-judged tool by tool per call.
        self._auth_verdicts: dict[int, tuple[Provider, tuple[Tool, ...], tuple[int, ...], bool]] = {}
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def blocker(self) -> str | None:
        """Why catalogs are listed afresh on every call, or ``None`` when they are cached."""
        if not compat.SCALE_READ_PATH_SUPPORTED:
            return "FastMCP version not verified for the catalog cache"
        for provider in self._server.providers:
            if not compat.is_name_consistent_provider(provider):
                return f"provider {type(provider).__name__} is not a known FastMCP provider"
            for transform in provider.transforms:
                if not _known_transform(transform):
                    return f"provider transform {type(transform).__name__} is not known"
        for transform in self._server.transforms:
            if transform is not self._catalog and not _known_transform(transform):
                return f"server transform {type(transform).__name__} is not known"
        for middleware in self._server.middleware:
            if type(middleware) in (DereferenceRefsMiddleware, OutputSelfCheck, SpanProbe):  # lists unchanged
                continue
            if compat.middleware_touches_list_tools(middleware):
                return f"middleware {type(middleware).__name__} touches tools/list"
        return None

    async def get_tool_catalog(self, ctx: Context, *, run_middleware: bool = True) -> Sequence[Tool]:
        original = self._original
        assert original is not None
        if ctx.fastmcp is not self._server or self.blocker() is not None:
            return await original(ctx, run_middleware=run_middleware)
        held, key = await self._key(ctx, run_middleware)
        if key is None:
            return await original(ctx, run_middleware=run_middleware)
        entry = self._entries.get(key)
        if entry is not None:
            self.hits += 1
            return list(entry.tools)
        self.misses += 1
        tools = tuple(await original(ctx, run_middleware=run_middleware))
        self._entries.put(key, _Entry(held, tools))
        _CACHED_TOOLS.admit(tools)
        return list(tools)

    async def _key(
        self, ctx: Context, run_middleware: bool
    ) -> tuple[tuple[Any, ...], tuple[Any, ...] | None]:
        held: list[Any] = []
        parts: list[Any] = [run_middleware]
        scoped_auth = True
        for provider in self._server.providers:
            raw = tuple(await compat.raw_provider_tools(provider))
            ids = tuple(map(id, raw))
            held.append(provider)
            held.append(raw)
            parts.append((id(provider), ids, _transforms_state(provider.transforms, held)))
            if scoped_auth:
                scoped_auth = self._scoped_auth(provider, raw, ids)
        if not scoped_auth:
            return tuple(held), None  # an auth check that may read more of the caller than its scopes
        parts.append(_transforms_state(self._server.transforms, held))
        held.extend(self._server.middleware)
        parts.append(tuple(map(id, self._server.middleware)))
        rules = await get_visibility_rules(ctx)
        parts.append(json.dumps(rules, sort_keys=True, default=repr) if rules else "")
        skip_auth, token = compat.component_auth_context()
        if skip_auth:
            parts.append(("skip-auth",))
        elif token is None:
            parts.append(("anonymous",))
        else:
            parts.append(("scopes", frozenset(token.scopes)))
        return tuple(held), tuple(parts)

    def _scoped_auth(self, provider: Provider, raw: tuple[Tool, ...], ids: tuple[int, ...]) -> bool:
        """Whether every tool's ``auth`` is absent or a FastMCP scope check, memoized per provider for
        its last list (the memo holds provider and tools, so equal ids are the same objects)."""
        known = self._auth_verdicts.get(id(provider))
        if known is not None and known[0] is provider and known[2] == ids:
            return known[3]
        verdict = all(tool.auth is None or compat.is_scope_check(tool.auth) for tool in raw)
        if len(self._auth_verdicts) >= _AUTH_VERDICTS:
            self._auth_verdicts.clear()  # providers come and go: never more than a handful kept
        self._auth_verdicts[id(provider)] = (provider, raw, ids, verdict)
        return verdict


def _known_transform(transform: object) -> bool:
    """FastMCP's ``Visibility`` (a subclass may replace ``_matches`` only if its ``catalog_state()``
    returns everything that predicate reads besides the component). The gates install no transform."""
    if not isinstance(transform, Visibility):
        return False
    kind = type(transform)
    overridden = {hook for hook in _VISIBILITY_HOOKS if getattr(kind, hook) is not getattr(Visibility, hook)}
    if not overridden:
        return True
    return overridden == {"_matches"} and callable(getattr(transform, "catalog_state", None))


def _transforms_state(transforms: Sequence[Any], held: list[Any]) -> tuple[Any, ...]:
    held.extend(transforms)
    return tuple((id(t), _visibility_state(t) if isinstance(t, Visibility) else None) for t in transforms)


def cache_tool_catalog(
    server: FastMCP[Any], catalog: CatalogTransform, *, max_entries: int = DEFAULT_CATALOG_ENTRIES
) -> ToolCatalogCache:
    """Serve ``catalog.get_tool_catalog`` (what a FastMCP search transform's search and ``call_tool``
    proxy read, and the disclosure registry's exact path) from an exact, bounded cache; declares that
    ``server``'s tool objects are never edited in place (see the module docstring). Idempotent: a cache
    already installed on ``catalog`` is returned as is."""
    installed = compat.installed_tool_catalog(catalog)
    if isinstance(installed, ToolCatalogCache):
        return installed
    if not any(t is catalog for t in server.transforms):
        raise ValueError("catalog is not a transform attached to this server")
    cache = ToolCatalogCache(server, catalog, max_entries=max_entries)

    def make(original: compat.GetToolCatalog) -> compat.GetToolCatalog:
        cache._original = original
        return cache.get_tool_catalog

    compat.replace_tool_catalog(catalog, make)
    compat.memoize_search_text(_CACHED_TOOLS.text)
    # The same declaration covers the transform's own two tools: built once, not per request.
    compat.memoize_synthetic_tools(catalog)
    return cache
