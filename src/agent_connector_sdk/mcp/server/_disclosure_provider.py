"""FastMCP adapter that serves schema disclosures behind a search transform (server layer).

Public path: :mod:`agent_connector_sdk.mcp.schema_disclosure_provider` re-exports exactly this module's
``__all__``; import from there. Intended use (the README shows the same)::

    search = RegexSearchTransform(search_result_serializer=describe_schema_tools)
    server.add_transform(search)
    register_schema_resources(server, search, disclosures)   # alias -> SchemaDisclosure | DisclosureOrigin

The option: ``RankedSearchTransform`` (same arguments; a ``RegexSearchTransform`` underneath) in place
of ``RegexSearchTransform`` ranks search results by relevance, reads natural language and abstains when
nothing fits (:mod:`agent_connector_sdk.mcp.server._ranked_search`).

* :func:`describe_schema_tools` is a FastMCP ``SearchResultSerializer``: each matched tool becomes a
  bounded ``schema-navigation`` entry (digests, fragment count, manifest URI, argument summary), never
  its schemas.
* :func:`register_schema_resources` registers the manifest and fragment resource templates of the
  wire contract. **Every read re-authorizes** the caller (middleware, visibility, session rules,
  versions and component auth) and checks the visible tool's current schemas; policy lives in
  :mod:`agent_connector_sdk.core.disclosure_navigation`, caches in
  :mod:`agent_connector_sdk.core.schema_disclosure._cache`.

Catalog scale. The reference for "visible to this caller" is a fresh ``catalog.get_tool_catalog(ctx)``
(:meth:`SchemaDisclosureRegistry.read_exact`), which costs O(catalog) per read. ``read`` instead
resolves the one tool by name: ``FastMCP.get_tool`` (what ``tools/call`` authorizes with) under the
catalog's bypass, the ``tools/list`` middleware run on that one tool, the catalog's model-visibility
rule. It does so wherever ``fast_path_blocker`` finds every server part known to make that equal
(FastMCP's own providers, enable/disable transforms, FastMCP's dereference middleware or middleware
declared per-tool). FastMCP 4.2 reports no catalog changes (no generation, no events), so nothing
caller-visible is cached: every read resolves afresh, at a cost independent of the catalog's size.
Only pure functions of schema *content* are memoized, keyed so they cannot outlive a change.
A hypothesis state machine checks both paths agree read for read.

Why a ``ResourceTemplate`` subclass rather than ``@server.resource``: FastMCP's template matching drops
a ``#fragment``, splits off the query string and percent-decodes the captured values before a function
template sees them, so a function handler could not tell ``…/manifest?x`` or ``…/fragments/%31`` from
the canonical URI. ``_read`` receives the URI exactly as the request carried it (``resources/read``
params are a plain ``str`` in the ``mcp`` SDK, not a normalized URL), which is what we compare.

Every refusal — unknown, disabled, unauthorized, stale, non-canonical or malformed — is the same
JSON-RPC error FastMCP itself returns for a URI no resource matches (``-32602``,
``Resource not found: '<uri>'``, ``data.uri``), so a guessed URI is no oracle. Only the refusal
category is logged. Nothing here creates credentials, HTTP clients or sessions.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal

import mcp_types
from fastmcp import FastMCP
from fastmcp.apps.config import is_model_visible
from fastmcp.resources.base import ResourceContent, ResourceResult
from fastmcp.resources.template import ResourceTemplate
from fastmcp.server.context import Context
from fastmcp.server.dependencies import get_context
from fastmcp.server.middleware.dereference import DereferenceRefsMiddleware
from fastmcp.server.middleware.middleware import Middleware, MiddlewareContext
from fastmcp.server.transforms.catalog import CatalogTransform
from fastmcp.server.transforms.visibility import Visibility
from fastmcp.tools.base import Tool
from fastmcp.utilities.versions import VersionSpec
from mcp.shared.exceptions import MCPError
from pydantic import PrivateAttr

from agent_connector_sdk.core.contracts import fingerprint
from agent_connector_sdk.core.contracts.errors import AdmissionError
from agent_connector_sdk.core.disclosure_navigation import (
    DisclosureReadRefused,
    VisibleToolSchemas,
    build_navigation_entry,
    parse_disclosure_uri,
    serve_disclosure_read,
)
from agent_connector_sdk.core.schema_disclosure import (
    FRAGMENT_URI_TEMPLATE,
    MANIFEST_URI_TEMPLATE,
    SchemaDisclosure,
    SchemaDisclosureError,
)
from agent_connector_sdk.core.schema_disclosure.cache import (
    DisclosureCache,
    DisclosureOrigin,
    FrozenSchemaMemo,
    FrozenSchemaView,
    SchemaIdentityMemo,
    SchemaProvenance,
)
from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.mcp import compat
from agent_connector_sdk.mcp.server._catalog import navigation_entry
from agent_connector_sdk.mcp.server._output_check import OutputSelfCheck
from agent_connector_sdk.mcp.server._ranked_search import RankedSearchTransform
from agent_connector_sdk.mcp.server._refusals import resource_not_found
from agent_connector_sdk.mcp.server._telemetry import SpanProbe

__all__ = [
    "DisclosureOrigin",
    "RankedSearchTransform",
    "SchemaDisclosureRegistry",
    "SchemaResourceRegistrationError",
    "describe_schema_tools",
    "disclosure_not_found",
    "register_schema_resources",
]

# Named as before the file moved: operators filter logs on this name.
logger = logging.getLogger("agent_connector_sdk.mcp.server.disclosure")

_MIME_TYPE: Final = "application/json"

# One memo for navigation entries and reads: a fingerprint's identity is a pure function of the schemas,
# so whichever computes it first saves the other the hashing (a search hands out entries that are read next).
_SHARED_IDENTITY_MEMO: Final = SchemaIdentityMemo()

RegistrationCategory = Literal["foreign_catalog", "invalid_disclosure", "alias_mismatch", "unknown_tool"]


class SchemaResourceRegistrationError(AgentConnectorError, ValueError):
    """``register_schema_resources`` (or a registry update) was given mismatched input.

    ``category``: ``foreign_catalog`` (the catalog is not a transform attached to this server),
    ``invalid_disclosure`` (a value is not a ``SchemaDisclosure``), ``alias_mismatch`` (a disclosure
    keyed under another alias than its manifest's), ``unknown_tool`` (no tool of that name on the
    server).
    """

    category: RegistrationCategory

    def __init__(self, category: RegistrationCategory, message: str) -> None:
        super().__init__(category, message, text=f"{category}: {message}")


def _title(tool: Tool) -> str | None:
    if tool.title:
        return tool.title
    if tool.annotations is not None and tool.annotations.title:
        return tool.annotations.title
    return None


def _wire_annotations(tool: Tool) -> dict[str, Any] | None:
    """The tool's ``annotations`` as ``tools/list`` spells them (camelCase), or ``None``."""
    if tool.annotations is None:
        return None
    return tool.annotations.model_dump(by_alias=True, exclude_none=True)


def describe_schema_tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """FastMCP ``SearchResultSerializer``: one ``schema-navigation`` entry per matched tool.

    The search transform hands over the caller's visible tools with the schemas as the wire shows them
    (after FastMCP's listing middleware, e.g. ``$ref`` inlining), and the entries' digests are computed
    from exactly those — the same objects every disclosure read re-hashes. Returns a list of dicts,
    which is what the search tool's output schema (``str | list[dict]``) admits. Tools that came out of
    a catalog cache (:func:`~agent_connector_sdk.mcp.server._catalog.cache_tool_catalog`: never edited in
    place) have their entry built once; any other tool's is built afresh.
    """
    return [navigation_entry(tool, _navigation_entry) for tool in tools]


def _navigation_entry(tool: Tool) -> dict[str, Any]:
    return build_navigation_entry(
        name=tool.name,
        title=_title(tool),
        description=tool.description,
        input_schema=tool.parameters,
        output_schema=tool.output_schema,
        memo=_SHARED_IDENTITY_MEMO,
        annotations=_wire_annotations(tool),
        contract_sha256=published_contract_sha256(tool),
    )


def published_contract_sha256(tool: Tool) -> str | None:
    """The contract fingerprint of ``tool`` as this server publishes it (its ``tools/list`` form): the
    lock's ``sha256`` over name, title, description, icons, schemas, annotations, execution, host-facing
    ``_meta`` and header map. ``None`` when the contract cannot be fingerprinted (nesting too deep, a
    number the encoding refuses). What a navigation entry states and a bound call is checked against."""
    try:
        descriptor = tool.to_mcp_tool().model_dump(by_alias=True, mode="json", exclude_none=True)
        return fingerprint(descriptor).sha256
    except (AdmissionError, SchemaDisclosureError, ValueError):
        return None


def disclosure_not_found(uri: str) -> MCPError:
    """The uniform refusal: byte for byte what FastMCP answers for a URI no resource matches
    (``-32602``, ``Resource not found: '<uri>'``, ``data.uri``)."""
    return resource_not_found(uri)


class _Fallback:
    """Marker: the name-resolved path cannot vouch for this read; take the exact path."""


_EXACT: Final = _Fallback()


# server -> the registry serving its disclosures, so what is built around a server later (e.g. `serve`
# logging the read path once the app is complete) can ask it. Weak: never keeps a server alive.
_REGISTRY_OF_SERVER: weakref.WeakKeyDictionary[FastMCP[Any], SchemaDisclosureRegistry] = (
    weakref.WeakKeyDictionary()
)


class SchemaDisclosureRegistry:
    """The disclosures one server serves, keyed by alias. Returned by :func:`register_schema_resources`.

    Per alias the registry knows a :class:`DisclosureOrigin` (operation and source digest) and, if one was
    registered explicitly, a pinned :class:`SchemaDisclosure`. Reads serve the disclosure of the visible
    tool's *current* schemas, built on first read into a bounded cache, so a schema change needs no
    ``replace``: the new identity reads at once, the old one is refused as stale. ``replace`` publishes a
    new origin or disclosure; ``remove`` withdraws an alias. Both apply the registration checks.

    How a read finds the caller's visible tool — see the module docs and the README: by name through
    FastMCP's own ``get_tool`` (enabled, session visibility, versions, component auth) plus the server's
    ``tools/list`` middleware run on that one tool, when every part of the server is known to make that
    equal to a fresh ``get_tool_catalog``; otherwise the full catalog (:meth:`read_exact`).
    """

    def __init__(
        self,
        server: FastMCP[Any],
        catalog: CatalogTransform,
        *,
        per_tool_middleware: Iterable[Middleware] = (),
        cache: DisclosureCache | None = None,
        memo: SchemaIdentityMemo | None = None,
        frozen_schemas: bool = False,
    ) -> None:
        self._server = server
        self._frozen = FrozenSchemaMemo() if frozen_schemas else None
        self._catalog = catalog
        self._origins: dict[str, DisclosureOrigin] = {}
        # alias -> the schemas its origin vouches for (origin-only aliases; pinned ones carry theirs)
        self._provenance: dict[str, SchemaProvenance] = {}
        self._cache = cache if cache is not None else DisclosureCache()
        self._memo = memo if memo is not None else _SHARED_IDENTITY_MEMO
        self._per_tool_middleware: list[Middleware] = []
        for middleware in per_tool_middleware:
            self.declare_per_tool_middleware(middleware)

    @property
    def catalog(self) -> CatalogTransform:
        return self._catalog

    @property
    def cache(self) -> DisclosureCache:
        return self._cache

    def aliases(self) -> frozenset[str]:
        return frozenset(self._origins)

    def get(self, alias: str) -> SchemaDisclosure | None:
        """The disclosure registered explicitly under ``alias`` (``None`` for an origin-only alias)."""
        return self._cache.pinned(alias)

    def origin(self, alias: str) -> DisclosureOrigin | None:
        return self._origins.get(alias)

    def replace(self, alias: str, disclosure: SchemaDisclosure | DisclosureOrigin) -> None:
        self._admit({alias: disclosure})

    def remove(self, alias: str) -> None:
        self._origins.pop(alias, None)
        self._provenance.pop(alias, None)
        self._cache.unpin(alias)

    def declare_per_tool_middleware(self, middleware: Middleware) -> None:
        """Declare that ``middleware``'s ``tools/list`` handling is *per tool*: for a given caller, its
        result for any list is, in order, the concatenation of its results for each one-tool list; it
        keeps or drops a tool, or rewrites its schemas, from the caller and that tool alone, and never
        adds, renames or re-versions one. Reads then run it on the one tool read instead of on the whole
        catalog. An undeclared middleware that touches ``tools/list`` keeps every read on the exact path.
        """
        if not isinstance(middleware, Middleware):
            raise TypeError("per-tool middleware must be a FastMCP Middleware instance")
        if not any(known is middleware for known in self._per_tool_middleware):
            self._per_tool_middleware.append(middleware)

    @staticmethod
    def of(server: FastMCP[Any]) -> SchemaDisclosureRegistry | None:
        """The registry :func:`register_schema_resources` last registered on ``server``, if any."""
        return _REGISTRY_OF_SERVER.get(server)

    def fast_path_blocker(self) -> str | None:
        """Why reads take the exact (whole-catalog) path, or ``None`` when they resolve by name."""
        if not compat.SCALE_READ_PATH_SUPPORTED:
            return "FastMCP version not verified for name-resolved reads"
        if compat.synthetic_tool_names(self._catalog) is None:
            return "the catalog is not a FastMCP search transform"
        for provider in self._server.providers:
            if not compat.is_name_consistent_provider(provider):
                return f"provider {type(provider).__name__} is not known to resolve names like it lists"
            if any(not _name_consistent_transform(t) for t in provider.transforms):
                return f"provider {type(provider).__name__} has a transform other than enable/disable"
        for transform in self._server.transforms:
            if transform is not self._catalog and not _name_consistent_transform(transform):
                return f"server transform {type(transform).__name__} is not enable/disable"
        for middleware in self._server.middleware:
            if _lists_pass_through(middleware):
                continue
            if type(middleware) is DereferenceRefsMiddleware:  # FastMCP's: maps each tool on its own
                continue
            if not any(known is middleware for known in self._per_tool_middleware):
                return f"middleware {type(middleware).__name__} touches tools/list, not declared per-tool"
        return None

    def _admit(self, disclosures: Mapping[str, SchemaDisclosure | DisclosureOrigin]) -> None:
        for alias, disclosure in disclosures.items():
            if isinstance(disclosure, DisclosureOrigin):
                continue
            if not isinstance(disclosure, SchemaDisclosure):
                raise SchemaResourceRegistrationError(
                    "invalid_disclosure", "values must be SchemaDisclosure or DisclosureOrigin"
                )
            if disclosure.manifest.alias != alias:
                raise SchemaResourceRegistrationError(
                    "alias_mismatch", f"disclosure for {disclosure.manifest.alias!r} is keyed under {alias!r}"
                )
        registered = _server_tools(self._server, disclosures.keys())
        missing = sorted(set(disclosures) - registered.keys())
        if missing:
            raise SchemaResourceRegistrationError(
                "unknown_tool", f"the server has no tool named {missing[0]!r}"
            )
        for alias, disclosure in disclosures.items():
            if isinstance(disclosure, SchemaDisclosure):
                self._origins[alias] = DisclosureOrigin.of(disclosure)
                self._provenance.pop(alias, None)
                self._cache.pin(alias, disclosure)
            else:
                if disclosure.source_schemas is not None:
                    vouched = [disclosure.source_schemas]
                else:  # the origin is registered for the tool (each of its versions) as it is now
                    vouched = [(tool.parameters, tool.output_schema) for tool in registered[alias]]
                self._origins[alias] = disclosure
                self._provenance[alias] = SchemaProvenance(vouched, frozen=self._frozen is not None)
                self._cache.unpin(alias)

    async def read(self, uri: str) -> str:
        """Authorize and serve one read for the current request's caller, or raise the uniform refusal."""
        return await self._serve(uri, exact=False)

    async def read_exact(self, uri: str) -> str:
        """:meth:`read` on the reference path: the caller's whole catalog through ``get_tool_catalog``."""
        return await self._serve(uri, exact=True)

    async def _serve(self, uri: str, *, exact: bool) -> str:
        try:
            address = parse_disclosure_uri(uri)
            tool = None if address is None else await self._visible_tool(address.alias, exact=exact)
            if tool is not None and not await self._vouched(tool):
                raise DisclosureReadRefused("unvouched")
            return serve_disclosure_read(
                uri,
                origin=self._origins.get(address.alias) if address is not None else None,
                visible_tool=tool,
                memo=self._memo,
                cache=self._cache,
            )
        except DisclosureReadRefused as refusal:
            logger.info("schema disclosure read refused: %s", refusal.category)
            raise disclosure_not_found(uri) from None

    async def _vouched(self, visible: VisibleToolSchemas) -> bool:
        """Whether the visible tool, as registered under an origin-only alias, still holds schemas its
        origin vouches for (each provider's tool of that name and version: O(1) in the catalog's size).
        A replaced schema did not come from the registered source: its disclosure would not be true."""
        provenance = self._provenance.get(visible.name)
        if provenance is None:
            return True  # a pinned disclosure checks its own schemas; an unknown alias is refused later
        holders = await _provider_tools(self._server, visible.name, visible.version)
        return bool(holders) and all(provenance.vouches_for(t.parameters, t.output_schema) for t in holders)

    async def _visible_tool(self, alias: str, *, exact: bool) -> VisibleToolSchemas | None:
        if not exact and self.fast_path_blocker() is None:
            found = await self._resolve_by_name(alias)
            if not isinstance(found, _Fallback):
                return found
        visible = await self._catalog.get_tool_catalog(get_context())
        for tool in visible:
            if tool.name == alias:
                return VisibleToolSchemas(
                    tool.name, tool.parameters, tool.output_schema, version=tool.version
                )
        return None

    async def _resolve_by_name(self, alias: str) -> VisibleToolSchemas | _Fallback | None:
        """The tool ``get_tool_catalog`` would return under ``alias``, at a cost independent of the
        catalog's size — or ``_EXACT`` where this path cannot vouch for the answer.

        Equal to the catalog because (FastMCP 4.2.3): ``FastMCP.get_tool(name)`` applies the same
        provider and server transforms (only enable/disable admitted), session visibility, enabled
        filter, component auth and highest-available-version rule as ``list_tools`` + dedupe (its
        docstring and code say so; it is what ``tools/call`` authorizes with); the listing middleware
        are run on that one tool (each admitted one is per-tool); the model-visibility filter is the
        catalog's own predicate.
        """
        synthetic = compat.synthetic_tool_names(self._catalog)
        if synthetic is None or alias in synthetic:
            return _EXACT  # the search transform answers these names itself in get_tool
        server = self._server
        with compat.catalog_bypassed(self._catalog):
            tool = await server.get_tool(alias)
        if tool is None:
            return None
        if self._frozen is not None and self._only_dereference_lists():
            return await self._frozen_view(alias, tool)
        async with Context(fastmcp=server) as ctx:
            context: MiddlewareContext[Any] = MiddlewareContext(
                message=mcp_types.ListToolsRequest(method="tools/list"),
                source="client",
                type="request",
                method="tools/list",
                fastmcp_context=ctx,
            )

            async def just_this_tool(context: MiddlewareContext[Any]) -> Sequence[Tool]:
                return [tool]

            listed = list(await compat.dispatch_list_tools_middleware(server, context, just_this_tool))
        if not listed:
            # Hidden by a middleware. Another candidate of that name (a lower version, or the same name
            # from another provider) might still be listed by the catalog: only vouch when none exists.
            if tool.version is not None:
                return _EXACT
            holders = 0
            for provider in server.providers:
                if await provider.get_tool(alias) is not None:
                    holders += 1
            return None if holders == 1 else _EXACT
        if len(listed) != 1 or listed[0].name != alias or listed[0].version != tool.version:
            return _EXACT  # not per-tool after all: never guess
        shown = listed[0]
        if not is_model_visible(shown):
            return None
        return VisibleToolSchemas(shown.name, shown.parameters, shown.output_schema, version=shown.version)

    def _only_dereference_lists(self) -> bool:
        """Whether FastMCP's ``DereferenceRefsMiddleware`` is the only middleware touching ``tools/list``."""
        return all(
            type(middleware) is DereferenceRefsMiddleware or _lists_pass_through(middleware)
            for middleware in self._server.middleware
        )

    async def _frozen_view(self, alias: str, tool: Tool) -> VisibleToolSchemas | None:
        """Frozen-schema servers, FastMCP's dereference middleware only: its output is a pure function of
        the schema objects (caller-independent), so it and the schemas' identity are memoized on those
        objects. Model visibility still comes from the freshly resolved tool, every read."""
        if not is_model_visible(tool):
            return None
        frozen = self._frozen
        assert frozen is not None
        view = frozen.get(tool.parameters, tool.output_schema)
        if view is None:
            shown = tool
            for middleware in self._server.middleware:
                if type(middleware) is DereferenceRefsMiddleware:
                    shown = await _dereference_one(middleware, shown)
            try:
                identity = self._memo.identify(shown.parameters, shown.output_schema)
            except SchemaDisclosureError:
                return VisibleToolSchemas(alias, shown.parameters, shown.output_schema, version=tool.version)
            view = FrozenSchemaView(
                tool.parameters, tool.output_schema, shown.parameters, shown.output_schema, identity
            )
            frozen.put(view)
        return VisibleToolSchemas(alias, view.wire_input, view.wire_output, view.identity, tool.version)


# Our own gates, as `ServerGates` installs them (no transform: the resolution hook shadows `get_tool`
# and returns what it resolves unchanged): `OutputSelfCheck` acts on `tools/call` only and passes every
# other message through the base hooks. Exact types: a subclass may override more.
# Middleware of ours that hands every tools/list on unchanged (the span probe only notes that a request
# reached FastMCP).
_PASS_THROUGH_MIDDLEWARE: Final[tuple[type, ...]] = (OutputSelfCheck, SpanProbe)
_VISIBILITY_HOOKS: Final = ("list_tools", "get_tool", "_mark_component")


def _name_consistent_transform(transform: object) -> bool:
    """Transforms that treat a tool alike whether it is listed or resolved by name: FastMCP's
    enable/disable (``Visibility``, also a subclass that only changes *which* tools match — e.g. the
    replicas' ``SharedToolSwitch`` — since both its list and get hooks mark through that one predicate)."""
    kind = type(transform)
    if not isinstance(transform, Visibility):
        return False
    return all(getattr(kind, hook) is getattr(Visibility, hook) for hook in _VISIBILITY_HOOKS)


def _lists_pass_through(middleware: Middleware) -> bool:
    """Middleware that leaves every ``tools/list`` exactly as it receives it."""
    if type(middleware) in _PASS_THROUGH_MIDDLEWARE:
        return True
    return not compat.middleware_touches_list_tools(middleware)


async def _dereference_one(middleware: DereferenceRefsMiddleware, tool: Tool) -> Tool:
    """FastMCP's dereference middleware applied to one tool, through its public ``on_list_tools`` hook."""
    context: MiddlewareContext[Any] = MiddlewareContext(
        message=mcp_types.ListToolsRequest(method="tools/list"),
        source="client",
        type="request",
        method="tools/list",
    )

    async def just_this_tool(context: MiddlewareContext[Any]) -> Sequence[Tool]:
        return [tool]

    (shown,) = await middleware.on_list_tools(context, just_this_tool)
    return shown


def _run_coroutine_blocking(coroutine: Any) -> Any:
    """Run a coroutine to completion from sync code, also when the caller is inside an event loop.

    Registration is synchronous (the intended one-liner has no ``await``) but FastMCP's provider lookups
    are coroutines; inside a running loop they run on a private loop in a helper thread.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    outcome: dict[str, Any] = {}

    def runner() -> None:
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as error:  # re-raised in the calling thread
            outcome["error"] = error

    thread = threading.Thread(target=runner, name="schema-disclosure-registration")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


async def _provider_tools(server: FastMCP[Any], name: str, version: str | None) -> list[Tool]:
    """Each provider's tool ``name`` at ``version`` (its highest for ``None``), as registered: before
    auth and visibility, since provenance is about the server's inventory, not about any caller."""
    spec = None if version is None else VersionSpec(eq=version)
    found = []
    for provider in server.providers:
        tool = await provider.get_tool(name, spec)
        if tool is not None:
            found.append(tool)
    return found


def _server_tools(server: FastMCP[Any], wanted: Any) -> dict[str, list[Tool]]:
    """``name -> every version of it`` across providers, for each of ``wanted`` some provider has.
    Versions need the providers' listings (FastMCP resolves one version per name): only taken when a
    name has versions, so a registration of unversioned tools stays one lookup per name."""
    names = list(wanted)

    async def lookup() -> dict[str, list[Tool]]:
        found: dict[str, list[Tool]] = {}
        versioned: set[str] = set()
        for name in names:
            tools = await _provider_tools(server, name, None)
            if tools:
                found[name] = tools
                if any(tool.version is not None for tool in tools):
                    versioned.add(name)
        if versioned:
            for provider in server.providers:
                for tool in await provider.list_tools():
                    if tool.name in versioned and not any(tool is known for known in found[tool.name]):
                        found[tool.name].append(tool)
        return found

    result: dict[str, list[Tool]] = _run_coroutine_blocking(lookup())
    return result


class _DisclosureTemplate(ResourceTemplate):
    """A resource template whose reads go through the registry with the raw, unnormalized URI."""

    _registry: SchemaDisclosureRegistry | None = PrivateAttr(default=None)

    def bind(self, registry: SchemaDisclosureRegistry) -> _DisclosureTemplate:
        self._registry = registry
        return self

    async def _read(self, uri: str, params: dict[str, Any]) -> ResourceResult:
        registry = self._registry
        if registry is None:  # never bound: fail closed with the uniform refusal
            raise disclosure_not_found(uri)
        body = await registry.read(uri)
        return ResourceResult(contents=[ResourceContent(body, mime_type=_MIME_TYPE)])


def _template(
    uri_template: str, name: str, description: str, registry: SchemaDisclosureRegistry
) -> ResourceTemplate:
    params = [part[1:-1] for part in uri_template.split("/") if part.startswith("{")]
    template = _DisclosureTemplate(
        uri_template=uri_template,
        name=name,
        description=description,
        mime_type=_MIME_TYPE,
        parameters={
            "type": "object",
            "properties": {param: {"type": "string"} for param in params},
            "required": params,
        },
        # Our own check is stricter than FastMCP's path-traversal screen, and that screen would refuse
        # the legal tool names "." and ".." with a different code path.
        security=None,
    )
    return template.bind(registry)


def register_schema_resources(
    server: FastMCP[Any],
    catalog: CatalogTransform,
    disclosures: Mapping[str, SchemaDisclosure | DisclosureOrigin],
    *,
    per_tool_middleware: Iterable[Middleware] = (),
    cache: DisclosureCache | None = None,
    frozen_schemas: bool = False,
) -> SchemaDisclosureRegistry:
    """Register the manifest and fragment resource templates for ``disclosures`` (alias → disclosure,
    or alias → :class:`DisclosureOrigin` to build each disclosure lazily on its first read).

    ``per_tool_middleware``: ``tools/list`` middleware the server declares per-tool (see
    :meth:`SchemaDisclosureRegistry.declare_per_tool_middleware`); ``cache`` bounds built disclosures.
    ``frozen_schemas=True`` declares that no registered tool's schema objects are ever edited in place (a
    schema change replaces the tool or assigns new dicts — true of every ``from_openapi`` server): reads
    then memoize the dereferenced schemas and their digests on those objects instead of re-walking and
    re-fingerprinting them (an O(schema) cost per read). Without it, in-place edits are caught exactly.

    ``catalog`` must be the search (catalog) transform attached to ``server``: reads resolve the caller's
    visible tools through ``catalog.get_tool_catalog(ctx)``. Refuses mismatched input with
    :class:`SchemaResourceRegistrationError` (a foreign catalog, a disclosure keyed under another alias,
    a disclosure for a tool the server does not have). Returns the live registry.
    """
    if not isinstance(catalog, CatalogTransform) or not any(t is catalog for t in server.transforms):
        raise SchemaResourceRegistrationError(
            "foreign_catalog", "catalog is not a transform attached to this server"
        )
    registry = SchemaDisclosureRegistry(
        server, catalog, per_tool_middleware=per_tool_middleware, cache=cache, frozen_schemas=frozen_schemas
    )
    registry._admit(disclosures)
    _REGISTRY_OF_SERVER[server] = registry
    server.add_template(
        _template(
            MANIFEST_URI_TEMPLATE,
            "schema-disclosure-manifest",
            "Manifest of a tool's disclosed schemas (identity, digests, fragment count).",
            registry,
        )
    )
    server.add_template(
        _template(
            FRAGMENT_URI_TEMPLATE,
            "schema-disclosure-fragment",
            "One bounded fragment of a tool's canonical schema document.",
            registry,
        )
    )
    return registry
