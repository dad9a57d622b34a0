"""Every access to private FastMCP / ``mcp`` internals, in one place, for the tested versions only.

FastMCP 4.2 and ``mcp`` 2.3 offer no public hook for a few things the gates need (listed below, each
with why). Those accesses live here and nowhere else, so an upgrade has one file to re-check:
``TESTED_VERSIONS`` names the minor versions this module was checked against,
:func:`untested_versions` reports any installed version outside them, and the test suite fails loudly on
one (``tests/mcp/test_compat.py``), next to a test per accessor that fails when its target moves.
``pyproject.toml`` pins the same minors as upper bounds.

Server side (``agent_connector_sdk.mcp.server``, ``demo``):

* :func:`low_level_server` — ``FastMCP._mcp_server``: the ``mcp`` low-level server, to re-register a
  list handler (no public hook sees list params: list middleware receives ``params=None``) and to turn
  off ``mcp``'s own ``Mcp-Param-*`` pre-check (:func:`disable_sdk_parameter_header_check`).
* :func:`fastmcp_list_handler` — ``FastMCP._on_list_{tools,prompts,resources,resource_templates}``: the
  bound handlers FastMCP registers, to recognise (and wrap) FastMCP's own listing.
* :func:`list_page_size` — ``FastMCP._list_page_size``: whether FastMCP issues cursors at all.
* :func:`wire_request` — ``fastmcp_request_ctx.get()._srctx``: the ``mcp`` request context of the
  current call (method and the raw params the server dispatches), read inside tool resolution.
* :func:`search_proxy_tool_name` — ``BaseSearchTransform._call_tool_name``: the name of a search
  transform's ``call_tool`` proxy (no public accessor).
* :func:`replace_tool_resolution` / :func:`installed_tool_resolution` — an instance attribute shadowing
  ``FastMCP.get_tool``: FastMCP has no hook between "resolved, filtered, authorized" and "run", and its
  ``call_tool`` resolves through ``self.get_tool``.

Disclosure read path (``mcp/server/_disclosure_provider.py``: resolving one tool by name instead of listing
the whole catalog; on another FastMCP version :data:`SCALE_READ_PATH_SUPPORTED` is false and reads keep
the exact full-catalog path, so an upgrade can cost speed, never correctness):

* :func:`is_name_consistent_provider` — FastMCP's private ``_SchemaCacheLocalProvider`` type;
* :func:`synthetic_tool_names` — ``BaseSearchTransform._search_tool_name`` / ``_call_tool_name``;
* :func:`dispatch_list_tools_middleware` — ``FastMCP._dispatch_component_middleware``;
* :func:`catalog_bypassed` — ``CatalogTransform._bypass``.

Catalog cache (``mcp/server/_catalog.py``; same version gate):

* :func:`replace_tool_catalog` / :func:`installed_tool_catalog` — an instance attribute shadowing
  ``CatalogTransform.get_tool_catalog`` (what a search transform's search and proxy read);
* :func:`raw_provider_tools` — ``Provider._list_tools()`` (a provider's own tools, before transforms);
* :func:`component_auth_context` — ``fastmcp.server.server._get_auth_context`` (what component auth sees);
* :func:`is_scope_check` — FastMCP's ``_RequireScopes`` / ``_RestrictTag`` check types;
* :func:`visibility_enabled` — ``Visibility._enabled``;
* :func:`memoize_search_text` — ``fastmcp.server.transforms.search.regex._extract_searchable_text``;
* :func:`memoize_synthetic_tools` — ``BaseSearchTransform._make_search_tool`` / ``._make_call_tool``
  (instance attributes shadowing them).

Ranked search (``mcp/server/_ranked_search.py``):

* :class:`SearchTransformHooks` — a ``RegexSearchTransform`` whose private extension points
  (``_make_search_tool``, ``_search``, ``_get_visible_tools``, ``_render_results``, ``_max_results``,
  ``_search_tool_name``; FastMCP documents subclassing through them but names them private) are reached
  through public-named methods, so the ranking transform touches no private name itself.

Host side (for the client adapters; routed here so both sides share one list):

* ``McpHttpClientFactory`` / ``create_mcp_http_client`` from ``mcp.shared._httpx_utils``;
* ``run_input_required_driver`` from ``mcp.client._input_required`` (SEP-2322 rounds);
* :func:`make_verify_factory` — ``StreamableHttpTransport._make_verify_factory()``, and
  :func:`transport_client_factory` built on it;
* :func:`filter_server_logs` — ``Client._session_kwargs["logging_callback"]``: the host sanitizes a
  server's log notifications before the client's log handler prints them.
* :func:`on_tool_list_changed` — ``Client._session_kwargs["message_handler"]``: the handler the session
  is built with. A ``fastmcp.Client`` takes its message handler only at construction; the host session
  wraps a client it is given, so it chains its ``notifications/tools/list_changed`` hook onto the
  caller's handler (which keeps running first, unchanged).
* :func:`stdio_line_cap` — ``mcp.client.stdio._create_platform_compatible_process``: the SDK's stdio
  reader joins stdout chunks until a newline with no bound, so one endless line from a server fills
  the host's memory. The process factory is wrapped once (:func:`install_stdio_line_cap`, idempotent,
  a pass-through unless a cap is active in the connecting task's context) so the server's stdout is
  read through a stream that refuses a line longer than the cap while reading. The wrapper is a real
  ``anyio.abc.Process`` (the SDK's teardown asserts it before killing the server's process group), and
  the factory remembers each live server for :func:`stop_stdio_servers` (Ctrl-C stops them at once).
* :func:`send_unvalidated_request` — ``ClientSession._stamp`` / ``._dispatcher`` /
  ``._session_read_timeout_seconds``: ``send_request`` validates a whole result against the negotiated
  revision's wire model before returning it, so one malformed tool descriptor (``{"$ref": "#"}`` as an
  ``inputSchema``) fails the whole ``tools/list`` page; the host reads such pages as raw dicts and
  judges each descriptor alone (:mod:`agent_connector_sdk.mcp.host._wire`).
* :func:`observe_stdio_processes` — the same wrapped process factory: within the block, each stdio
  server process started is handed to an observer (the gateway keeps its child's process to report
  its exit status; the transport does not expose it).
* :func:`session_hooks` — ``ClientSession.__aenter__``, ``._intercept_notification``,
  ``._dispatcher._resolve_pending`` / ``._pending`` / ``._next_id`` (``mcp`` 2.3): the dispatcher offers
  every inbound notification to the session's synchronous, receive-order intercept before it spawns a
  task for it; the host puts its per-connection notification bound there, so a dropped notification
  costs one O(1) decision and no task (the SDK's own intercept keeps running first). And the SDK drops
  a response whose id matches no pending request with a debug log, so the request it was meant to
  answer waits for its timeout; the host wraps the dispatcher's resolver so an id this connection never
  issued fails the waiting requests at once (:class:`UnknownResponseId`).
* :func:`sdk_local_failure` — not a private member but the SDK's fixed texts for the JSON-RPC errors
  it synthesizes on this side (an HTTP status, a parser refusal, a lost stream): the one place the host
  tells them apart from a server's own errors.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import weakref
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any, Final, Literal, cast

import anyio
import anyio.abc
import fastmcp
import mcp_types
from fastmcp import FastMCP
from fastmcp.server.context import Context
from fastmcp.server.dependencies import fastmcp_request_ctx
from fastmcp.server.middleware.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.server.providers.base import Provider
from fastmcp.server.providers.local_provider import LocalProvider
from fastmcp.server.providers.openapi import OpenAPIProvider
from fastmcp.server.transforms import GetToolNext
from fastmcp.server.transforms.catalog import CatalogTransform
from fastmcp.server.transforms.search import BM25SearchTransform, RegexSearchTransform
from fastmcp.server.transforms.search.base import BaseSearchTransform
from fastmcp.skills.provider import SkillCatalogProvider
from fastmcp.tools import Tool
from fastmcp.utilities.versions import VersionSpec

# The SDK's SEP-2322 multi-round-trip retry loop (fastmcp.Client drives its own calls with it too);
# `mcp` exports only its error type publicly, so the host core takes the loop from its module rather
# than re-implementing it.
from mcp.client._input_required import run_input_required_driver

# Private module of the mcp SDK (the HTTP client factory its transports use): re-exported for the
# host-side adapters, so they import it from here.
from mcp.shared._httpx_utils import McpHttpClientFactory, create_mcp_http_client

__all__ = [
    "SCALE_READ_PATH_SUPPORTED",
    "TESTED_VERSIONS",
    "CappedStdout",
    "GetTool",
    "GetToolCatalog",
    "ListMethod",
    "McpHttpClientFactory",
    "ResolvingSearchHooks",
    "SdkFailureKind",
    "SdkLocalFailure",
    "SearchText",
    "SearchTransformHooks",
    "add_tools_in_bulk",
    "catalog_bypassed",
    "component_auth_context",
    "create_mcp_http_client",
    "disable_sdk_parameter_header_check",
    "dispatch_list_tools_middleware",
    "fastmcp_list_handler",
    "filter_server_logs",
    "installed_tool_catalog",
    "installed_tool_resolution",
    "is_name_consistent_provider",
    "is_scope_check",
    "list_page_size",
    "low_level_server",
    "make_verify_factory",
    "memoize_search_text",
    "memoize_synthetic_tools",
    "middleware_touches_list_tools",
    "observe_stdio_processes",
    "on_tool_list_changed",
    "raw_provider_tools",
    "replace_tool_catalog",
    "replace_tool_resolution",
    "run_input_required_driver",
    "sdk_local_failure",
    "sdk_unreadable_line",
    "sdk_version_mismatch",
    "search_proxy_tool_name",
    "send_unvalidated_request",
    "stdio_line_cap",
    "synthetic_tool_names",
    "transport_client_factory",
    "untested_versions",
    "visibility_enabled",
    "wire_request",
]

TESTED_VERSIONS: Final[Mapping[str, tuple[int, int]]] = {"fastmcp": (4, 2), "mcp": (2, 3)}
"""Distribution -> the ``(major, minor)`` every accessor below was checked against."""

GetTool = Callable[[str, VersionSpec | None], Awaitable[Tool | None]]
ListMethod = Literal["tools/list", "prompts/list", "resources/list", "resources/templates/list"]

_LIST_HANDLERS: Final[Mapping[str, str]] = {
    "tools/list": "_on_list_tools",
    "prompts/list": "_on_list_prompts",
    "resources/list": "_on_list_resources",
    "resources/templates/list": "_on_list_resource_templates",
}


def untested_versions() -> list[str]:
    """``"fastmcp 4.3.0 (tested: 4.2)"``-style notes for every installed version outside the tested ones."""
    notes: list[str] = []
    for distribution, (major, minor) in TESTED_VERSIONS.items():
        try:
            installed = version(distribution)
        except PackageNotFoundError:
            notes.append(f"{distribution} not installed (tested: {major}.{minor})")
            continue
        parts = installed.split(".")
        if len(parts) < 2 or parts[:2] != [str(major), str(minor)]:
            notes.append(f"{distribution} {installed} (tested: {major}.{minor})")
    return notes


def low_level_server(server: FastMCP[Any]) -> Any:
    """The ``mcp`` low-level server FastMCP dispatches with (``FastMCP._mcp_server``)."""
    return server._mcp_server


def fastmcp_list_handler(server: FastMCP[Any], method: ListMethod) -> Any:
    """FastMCP's own bound handler for a list ``method`` (``FastMCP._on_list_*``)."""
    return getattr(server, _LIST_HANDLERS[method])


def list_page_size(server: FastMCP[Any]) -> int | None:
    """FastMCP's page size (``FastMCP._list_page_size``); ``None`` means it never issues cursors."""
    size = server._list_page_size
    return size if isinstance(size, int) else None


def wire_request() -> tuple[Any, str | None, Any] | None:
    """``(request_ctx, method, params)`` of the current ``mcp`` request, or ``None`` outside one.

    ``request_ctx`` is FastMCP's request context (``.request`` is the Starlette request over HTTP, else
    ``None``); ``method`` and ``params`` come from its private ``_srctx`` (the ``mcp`` request context:
    the raw params the server dispatches). ``method`` is ``None`` when that shape changed.
    """
    request_ctx = fastmcp_request_ctx.get()
    if request_ctx is None:
        return None
    sdk_ctx = getattr(request_ctx, "_srctx", None)
    method = getattr(sdk_ctx, "method", None)
    params = getattr(sdk_ctx, "params", None)
    return request_ctx, method if isinstance(method, str) else None, params


def search_proxy_tool_name(transform: object) -> str | None:
    """The ``call_tool`` proxy name of a FastMCP search transform (``_call_tool_name``), else ``None``."""
    name = getattr(transform, "_call_tool_name", None)
    return name if isinstance(name, str) else None


def installed_tool_resolution(server: FastMCP[Any]) -> object | None:
    """What :func:`replace_tool_resolution` installed on ``server`` (``None``: FastMCP's own)."""
    return vars(server).get("get_tool")


def replace_tool_resolution(server: FastMCP[Any], make: Callable[[GetTool], GetTool]) -> GetTool:
    """Shadow ``server.get_tool`` with ``make(original)`` and return the original bound method.

    FastMCP's ``call_tool`` resolves the tool it runs through ``self.get_tool`` after every transform,
    visibility rule and component-auth check; an instance attribute is the one place that sees that
    final answer. ``make`` must call the original for the resolution itself.
    """
    original: GetTool = server.get_tool
    setattr(server, "get_tool", make(original))  # noqa: B010 (mypy refuses assigning to a method)
    return original


def _unknown_input_schema(name: str) -> dict[str, Any] | None:
    return None  # "unknown": mcp skips its own check for the tool


def disable_sdk_parameter_header_check(server: FastMCP[Any]) -> None:
    """Turn off ``mcp``'s pre-dispatch ``Mcp-Param-*`` check (the low-level server's
    ``get_tool_input_schema`` hook, which FastMCP fills from ``tools/list``).

    It covers only listed tools and answers without ``data``; our gate checks every tool with a stricter
    codec (a superset), and running both would make the answer depend on which fired first.
    """
    low_level_server(server).get_tool_input_schema = _unknown_input_schema


def on_tool_list_changed(client: fastmcp.Client[Any], callback: Callable[[], None]) -> None:
    """Call ``callback()`` (synchronously, after the client's own handler) whenever the server sends
    ``notifications/tools/list_changed``. Install before the client connects (the session is built
    from these kwargs when it connects)."""
    import mcp_types

    kwargs: Any = client._session_kwargs
    inner = kwargs.get("message_handler")

    async def handler(message: Any) -> None:
        if inner is not None:
            await inner(message)
        if isinstance(message, mcp_types.ToolListChangedNotification):
            callback()

    kwargs["message_handler"] = handler


def filter_server_logs(client: fastmcp.Client[Any], transform: Callable[[Any], Any]) -> None:
    """Hand every ``notifications/message`` through ``transform`` before the client's log handler
    (``Client._session_kwargs["logging_callback"]``: fastmcp builds the session's logging callback from
    the handler given at construction). Install before the client connects; idempotent."""
    kwargs: Any = client._session_kwargs
    inner = kwargs.get("logging_callback")
    if inner is None or getattr(inner, "__agent_connector_filtered__", False):
        return

    async def callback(params: Any) -> None:
        await inner(transform(params))

    callback.__agent_connector_filtered__ = True  # type: ignore[attr-defined]
    kwargs["logging_callback"] = callback


def make_verify_factory(transport: Any) -> Any:
    """``StreamableHttpTransport._make_verify_factory()`` of a ``fastmcp`` client transport."""
    return transport._make_verify_factory()


def transport_client_factory(transport: Any) -> Callable[..., Any]:
    """What ``transport`` would build its ``httpx`` client with: its own ``httpx_client_factory``, else
    its verify factory, else the SDK's default (the latter two set ``follow_redirects`` themselves and
    do not take the keyword). The host's factory wrappers (header stamping, the response guard) build
    on it, so each mirrors the transport's own choice and either may wrap first."""
    original = transport.httpx_client_factory
    if original is not None:
        return cast(Callable[..., Any], original)
    base = make_verify_factory(transport) or create_mcp_http_client

    def build(**kwargs: Any) -> Any:
        kwargs.pop("follow_redirects", None)
        return base(**kwargs)

    return build


# ------------------------------------------------------------------------ disclosure read path

SCALE_READ_PATH_SUPPORTED: Final = fastmcp.__version__.startswith("4.2.")
"""The version the name-resolved read path was checked against (see the provider's module docs)."""


def _server_local_provider_type() -> type[Provider] | None:
    # FastMCP 4.2's server-owned local provider is a private LocalProvider subclass that only adds
    # wire-schema cache seeding on registration; its lookups are LocalProvider's.
    from fastmcp.server import server as server_module

    found = getattr(server_module, "_SchemaCacheLocalProvider", None)
    return found if isinstance(found, type) and issubclass(found, LocalProvider) else None


# SkillCatalogProvider (the Skills extension) serves resources only: it keeps the base Provider's
# `_list_tools` (empty) and `_get_tool` (filters that empty list), so both sides agree trivially.
_NAME_CONSISTENT_PROVIDERS: Final[tuple[type[Provider], ...]] = tuple(
    kind
    for kind in (LocalProvider, OpenAPIProvider, SkillCatalogProvider, _server_local_provider_type())
    if kind is not None
)


def is_name_consistent_provider(provider: Provider) -> bool:
    """Providers whose ``get_tool(name)`` returns the highest version of what ``list_tools`` lists under
    that name (checked in FastMCP 4.2.3 source: both read one dict). Exact types only: a subclass may
    override either side."""
    return type(provider) in _NAME_CONSISTENT_PROVIDERS


def synthetic_tool_names(catalog: CatalogTransform) -> frozenset[str] | None:
    """The names a search transform answers itself in ``get_tool`` (private attributes in FastMCP 4.2),
    or ``None`` when ``catalog`` is not a search transform whose ``get_tool`` is FastMCP's own."""
    if not isinstance(catalog, BaseSearchTransform):
        return None
    # ResolvingSearchHooks.get_tool answers FastMCP's way first (it only resolves what that misses).
    if type(catalog).get_tool not in (BaseSearchTransform.get_tool, ResolvingSearchHooks.get_tool):
        return None
    names = (getattr(catalog, "_search_tool_name", None), getattr(catalog, "_call_tool_name", None))
    if not all(isinstance(name, str) for name in names):
        return None
    return frozenset(name for name in names if isinstance(name, str))


_LIST_HOOKS: Final = ("__call__", "_dispatch_handler", "on_message", "on_request", "on_list_tools")


def middleware_touches_list_tools(middleware: Middleware) -> bool:
    """Whether a middleware can see or change a ``tools/list`` (it overrides a hook that runs for one).
    Anything that is not a FastMCP ``Middleware`` counts as touching it (fail closed)."""
    if not isinstance(middleware, Middleware):
        return True
    kind = type(middleware)
    return any(getattr(kind, hook) is not getattr(Middleware, hook) for hook in _LIST_HOOKS)


async def dispatch_list_tools_middleware(
    server: FastMCP[Any],
    context: MiddlewareContext[Any],
    call_next: CallNext[Any, Sequence[Tool]],
) -> Sequence[Tool]:
    """Run the server's middleware chain for a ``tools/list`` exactly as ``FastMCP.list_tools`` does
    (private ``_dispatch_component_middleware`` in FastMCP 4.2), around ``call_next``."""
    dispatch = server._dispatch_component_middleware
    result: Sequence[Tool] = await dispatch(context=context, call_next=call_next)
    return result


@contextmanager
def catalog_bypassed(catalog: CatalogTransform) -> Iterator[None]:
    """Set the catalog transform's re-entrancy bypass (private ``_bypass`` ContextVar in FastMCP 4.2), as
    ``get_tool_catalog`` does around its listing.

    Needed around ``FastMCP.get_tool``: when the highest version is disabled or unauthorized it falls
    back to ``list_tools`` of the providers *through the server transforms*, and a search transform not
    in bypass replaces that list with its synthetic tools, so the fallback would find nothing.
    """
    bypass = getattr(catalog, "_bypass", None)
    if not isinstance(bypass, ContextVar):
        raise RuntimeError("FastMCP CatalogTransform has no _bypass ContextVar")
    token = bypass.set(True)
    try:
        yield
    finally:
        bypass.reset(token)


# ------------------------------------------------------------------------ catalog cache

GetToolCatalog = Callable[..., Awaitable[Sequence[Tool]]]
"""``CatalogTransform.get_tool_catalog(ctx, *, run_middleware=True)``, bound."""
SearchText = Callable[[Tool], str]


def installed_tool_catalog(catalog: CatalogTransform) -> object | None:
    """The object whose method :func:`replace_tool_catalog` installed on ``catalog`` (``None``: FastMCP's)."""
    installed = vars(catalog).get("get_tool_catalog")
    return getattr(installed, "__self__", None) if installed is not None else None


def replace_tool_catalog(catalog: CatalogTransform, make: Callable[[GetToolCatalog], GetToolCatalog]) -> None:
    """Shadow ``catalog.get_tool_catalog`` with ``make(original)``: FastMCP's search transforms call it
    through ``self``/``transform`` (search, ``call_tool`` proxy), so an instance attribute sees every read."""
    original: GetToolCatalog = catalog.get_tool_catalog
    setattr(catalog, "get_tool_catalog", make(original))  # noqa: B010 (mypy refuses assigning to a method)


async def raw_provider_tools(provider: Provider) -> Sequence[Tool]:
    """A provider's own tools before its transforms (private ``Provider._list_tools`` in FastMCP 4.2; for
    the provider types :func:`is_name_consistent_provider` admits it returns the stored objects)."""
    tools: Sequence[Tool] = await provider._list_tools()
    return tools


def component_auth_context() -> tuple[bool, Any]:
    """``(skip_auth, access_token)`` exactly as FastMCP's component auth reads them for this request."""
    from fastmcp.server.server import _get_auth_context

    skip, token = _get_auth_context()
    return bool(skip), token


def is_scope_check(auth: Any) -> bool:
    """Whether a component ``auth`` (one check or a list) only reads the token's scopes and the
    component's tags: FastMCP's ``require_scopes`` / ``restrict_tag`` check types, exactly."""
    from fastmcp.utilities.authorization import _RequireScopes, _RestrictTag

    checks = auth if isinstance(auth, list | tuple) else [auth]
    return all(type(check) in (_RequireScopes, _RestrictTag) for check in checks)


def visibility_enabled(transform: Any) -> bool:
    """Whether a FastMCP ``Visibility`` enables (``True``) or disables what it matches (``_enabled``)."""
    return bool(transform._enabled)


def memoize_search_text(text: Callable[[Tool, SearchText], str]) -> None:
    """Route ``RegexSearchTransform``'s per-tool search text through ``text(tool, original)``
    (idempotent). ``text`` must return ``original(tool)`` or a value equal to it."""
    from fastmcp.server.transforms.search import regex

    current = getattr(regex, "_extract_searchable_text")  # noqa: B009 (private, not re-exported)
    if getattr(current, "__agent_connector_memo__", None) is text:
        return
    original: SearchText = getattr(current, "__wrapped__", current)

    def searchable_text(tool: Tool) -> str:
        return text(tool, original)

    searchable_text.__agent_connector_memo__ = text  # type: ignore[attr-defined]
    searchable_text.__wrapped__ = original  # type: ignore[attr-defined]
    setattr(regex, "_extract_searchable_text", searchable_text)  # noqa: B010 (private, not re-exported)


_SYNTHETIC_FACTORIES: Final = ("_make_search_tool", "_make_call_tool")
_FASTMCP_SEARCH_FACTORIES: Final = (
    RegexSearchTransform._make_search_tool,
    BM25SearchTransform._make_search_tool,
)


def memoize_synthetic_tools(transform: object) -> bool:
    """Build a FastMCP search transform's two synthetic tools (``search_tools``, ``call_tool``) once
    instead of on every ``tools/list``, ``get_tool`` and call (FastMCP 4.2 runs ``Tool.from_function`` —
    signature parsing and pydantic schema generation, ~1 ms — per request). Idempotent; ``False`` (and
    nothing changed) for a transform whose factories are not FastMCP's own.

    Exact: each factory's tool depends only on the transform's tool names (the functions read the
    transform's state when *called*), so the memo is keyed by those names; and FastMCP treats tools
    handed down its pipeline as shared (``Visibility`` copies a tool before marking it, as it does for
    the stored tools every provider returns)."""
    if not isinstance(transform, BaseSearchTransform):
        return False
    state = vars(transform)
    if all(getattr(state.get(name), "__agent_connector_memo__", False) for name in _SYNTHETIC_FACTORIES):
        return True
    kind = type(transform)
    ours = kind._make_search_tool is SearchTransformHooks._make_search_tool
    if (
        (kind._make_search_tool not in _FASTMCP_SEARCH_FACTORIES and not ours)
        or kind._make_call_tool not in _memoizable_call_factories()
        or any(name in state for name in _SYNTHETIC_FACTORIES)
    ):
        return False
    for name in _SYNTHETIC_FACTORIES:
        build: Callable[[], Tool] = getattr(transform, name)
        made: dict[tuple[str, str], Tool] = {}

        def memoized(build: Callable[[], Tool] = build, made: dict[tuple[str, str], Tool] = made) -> Tool:
            key = (transform._search_tool_name, transform._call_tool_name)
            tool = made.get(key)
            if tool is None:
                made.clear()  # one entry: the names changed
                tool = made[key] = build()
            return tool

        memoized.__agent_connector_memo__ = True  # type: ignore[attr-defined]
        setattr(transform, name, memoized)
    return True


def _memoizable_call_factories() -> tuple[Callable[..., Tool], ...]:
    """The ``call_tool`` factories :func:`memoize_synthetic_tools` may memoize (FastMCP's, and
    :class:`ResolvingSearchHooks`' whose function also reads the transform only when called)."""
    return (BaseSearchTransform._make_call_tool, ResolvingSearchHooks._make_call_tool)


class SearchTransformHooks(RegexSearchTransform):
    """FastMCP's ``RegexSearchTransform`` with its private extension points behind public-named methods.

    Subclasses override :meth:`make_search_tool` (the search tool, built from the transform's state
    when *called*, so :func:`memoize_synthetic_tools` may build it once per tool-name pair) and
    :meth:`search_catalog` (the tools a search returns, in order), and use :meth:`visible_tools`,
    :meth:`render_results`, :meth:`regex_matches`, :attr:`max_results` and :attr:`search_tool_name`.
    FastMCP 4.2: ``_make_search_tool`` and ``_search`` are the abstract hooks of ``BaseSearchTransform``.
    """

    def _make_search_tool(self) -> Tool:
        return self.make_search_tool()

    async def _search(self, tools: Sequence[Tool], query: str) -> Sequence[Tool]:
        return await self.search_catalog(tools, query)

    def make_search_tool(self) -> Tool:
        """The search tool (default: FastMCP's regex search tool)."""
        return RegexSearchTransform._make_search_tool(self)

    async def search_catalog(self, tools: Sequence[Tool], query: str) -> Sequence[Tool]:
        """The tools a search for ``query`` returns (default: FastMCP's regex search, catalog order)."""
        return await self.regex_matches(tools, query)

    async def regex_matches(self, tools: Sequence[Tool], pattern: str) -> Sequence[Tool]:
        """FastMCP's own regex search: the first ``max_results`` matches in catalog order."""
        return await RegexSearchTransform._search(self, tools, pattern)

    async def visible_tools(self, ctx: Any) -> Sequence[Tool]:
        """The caller's tools (middleware, visibility, session rules, component auth applied), pinned
        ones excluded: what FastMCP's own search searches."""
        tools: Sequence[Tool] = await self._get_visible_tools(ctx)
        return tools

    async def render_results(self, tools: Sequence[Tool]) -> Any:
        """The transform's ``search_result_serializer`` applied to ``tools``."""
        return await self._render_results(tools)

    @property
    def max_results(self) -> int:
        return int(self._max_results)

    @property
    def search_tool_name(self) -> str:
        return str(self._search_tool_name)


class ResolvingSearchHooks(SearchTransformHooks):
    """:class:`SearchTransformHooks` whose calls resolve a name the server does not hold yet: before
    ``get_tool`` (a direct call) or the ``call_tool`` proxy looks a name up, :meth:`resolve_unseen` may
    make it known (the gateway publishes a search-first child's hidden tool it found by name). Only
    FastMCP 4.2 (the proxy's function and ``get_tool``'s chain are its own); refused on others."""

    def __init__(self, **kwargs: Any) -> None:
        if not SCALE_READ_PATH_SUPPORTED:
            raise RuntimeError(f"ResolvingSearchHooks is verified on FastMCP 4.2, not {fastmcp.__version__}")
        super().__init__(**kwargs)

    async def resolve_unseen(self, name: str) -> None:
        """Make a tool named ``name`` known if it can be (default: nothing)."""

    def _make_call_tool(self) -> Tool:
        # The function reads the transform when called, so memoize_synthetic_tools may build it once.
        proxy = BaseSearchTransform._make_call_tool(self)
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
            await transform.resolve_unseen(name)
            return await relay(name=name, arguments=arguments, ctx=ctx)

        return Tool.from_function(fn=call_tool, name=self._call_tool_name)

    async def get_tool(
        self, name: str, call_next: GetToolNext, *, version: VersionSpec | None = None
    ) -> Tool | None:
        tool = await super().get_tool(name, call_next, version=version)
        if tool is not None:
            return tool
        await self.resolve_unseen(name)
        return await call_next(name, version=version)


async def send_unvalidated_request(session: Any, request: Any) -> Any:
    """``ClientSession.send_request`` without the result-model validation (``mcp`` 2.3): the request is
    stamped (``_meta``, routing headers) and timed exactly as the SDK does, and the raw JSON-RPC result
    (whatever JSON value the server sent) is returned for the caller to judge."""
    from mcp.shared.inbound import MCP_NAME_HEADER, encode_header_value

    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    opts: dict[str, Any] = {}
    session._stamp(data, opts)
    headers = opts.setdefault("headers", {})
    key = type(request).name_param
    if key is not None and MCP_NAME_HEADER not in headers:
        name = (data.get("params") or {}).get(key)
        if isinstance(name, str):
            headers[MCP_NAME_HEADER] = encode_header_value(name)
    timeout = session._session_read_timeout_seconds
    if timeout is not None:
        opts["timeout"] = timeout
    return await session._dispatcher.send_raw_request(data["method"], data.get("params"), opts)


# ------------------------------------------------------------------------------ session hooks
class UnknownResponseId:
    """The ``data`` of the error the host hands the waiting requests when the server answered an id
    this connection never issued: a local object no server can send, so the translator tells it from
    a server's own error object by its type. ``shown`` is the id as received (``repr``, capped; the
    server's: sanitize before printing)."""

    __slots__ = ("shown",)

    def __init__(self, shown: str) -> None:
        self.shown = shown


_SESSION_HOOKS: ContextVar[Any] = ContextVar("agent_connector_sdk_session_hooks", default=None)


def _issued(key: Any, next_id: Any) -> bool:
    """Whether ``key`` is an id the dispatcher minted (``1 .. _next_id``): a late answer to a request
    that timed out or was cancelled, which the SDK rightly drops."""
    if isinstance(key, bool) or not isinstance(key, int) or not isinstance(next_id, int):
        return False
    return 0 < key <= next_id


def _hook_session(session: Any, hooks: Any) -> None:
    from mcp.shared.dispatcher import coerce_request_id

    sdk_intercept = session._intercept_notification

    def intercept(method: str, params: Any) -> bool:
        # The SDK's (listen demux) first: it consumes only its own acknowledgements.
        if sdk_intercept(method, params):
            return True
        return not hooks.admit_notification(method)

    session._intercept_notification = intercept
    dispatcher: Any = getattr(session, "_dispatcher", None)
    resolve = getattr(dispatcher, "_resolve_pending", None)
    pending = getattr(dispatcher, "_pending", None)
    if resolve is None or not isinstance(pending, dict):
        return  # not the JSON-RPC dispatcher (in-memory): ids cannot go wrong there

    def resolve_pending(request_id: Any, outcome: Any) -> None:
        key = coerce_request_id(request_id) if request_id is not None else None
        if (key is not None and key in pending) or not pending or _issued(key, dispatcher._next_id):
            resolve(request_id, outcome)
            return
        shown = json.dumps(request_id, default=repr)[:80]
        hooks.unknown_response_id(shown)
        error = mcp_types.ErrorData(
            code=mcp_types.INVALID_REQUEST,
            message="the server answered a JSON-RPC id this host never sent",
            data=UnknownResponseId(shown),
        )
        for waiter in list(pending.values()):
            with suppress(anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                waiter.send.send_nowait(error)

    dispatcher._resolve_pending = resolve_pending


def install_session_hooks() -> None:
    """Wrap ``ClientSession.__aenter__`` once: a session entered while :func:`session_hooks` is active
    (in the connecting task's context) gets that host's hooks; any other is untouched."""
    from mcp.client.session import ClientSession

    original = ClientSession.__aenter__
    if getattr(original, "__agent_connector_hooks__", False):
        return

    async def enter(self: Any) -> Any:
        hooks = _SESSION_HOOKS.get()
        if hooks is not None:
            _hook_session(self, hooks)
        return await original(self)

    enter.__agent_connector_hooks__ = True  # type: ignore[attr-defined]
    ClientSession.__aenter__ = enter  # type: ignore[method-assign]


@contextmanager
def session_hooks(hooks: Any) -> Iterator[None]:
    """Within this block, a client session entered (by this task or tasks it creates) routes every
    inbound notification through ``hooks.admit_notification(method) -> bool`` (``False``: consumed,
    dropped) and calls ``hooks.unknown_response_id(shown)`` when an answer's id matches no request this
    connection issued (the waiting requests then fail with an error whose ``data`` is an
    :class:`UnknownResponseId`)."""
    install_session_hooks()
    token = _SESSION_HOOKS.set(hooks)
    try:
        yield
    finally:
        _SESSION_HOOKS.reset(token)


# ------------------------------------------------------------------------------ stdio line cap
class StdioLineTooLong(ConnectionError):
    """A stdio server wrote a line longer than the active cap (the SDK's reader treats a
    ``ConnectionError`` as a failed stream: the session ends, the pending request fails)."""


class StdioNotJson(ConnectionError):
    """A stdio server wrote a line on stdout that is not a JSON-RPC message (the spec: it MUST NOT).
    A ``ConnectionError`` for the same reason as :class:`StdioLineTooLong`: the session ends at once
    instead of the request waiting for its timeout, and the host names what was written."""


_STDIO_CAP: ContextVar[Any] = ContextVar("agent_connector_sdk_stdio_line_cap", default=None)
_STDIO_BATCH: Final = 4 << 20
_NON_JSON_SAMPLE: Final = 200  # bytes of a non-JSON line kept for the error (cut again when shown)


class CappedStdout:
    """The server's stdout, refusing a line longer than ``cap.limit`` bytes while reading."""

    def __init__(self, inner: Any, cap: Any) -> None:
        self._inner = inner
        self._cap = cap
        self._line = 0
        self._counter: Any = None
        self._values_refused = False
        self._line_open = True  # the current line's first non-blank byte is still to come

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if self._line > self._cap.limit:
            raise StdioLineTooLong("the server's line is over the cap")
        if self._values_refused:
            # Sticky, like the line cap: the refused message's request would otherwise wait for its
            # timeout, since its answer was dropped while the stream read on.
            raise StdioLineTooLong("the server's message holds more JSON values than the cap")
        if getattr(self._cap, "non_json", None) is not None:
            raise StdioNotJson("the server wrote a line on stdout that is not JSON-RPC")
        # Mid-line, gather up to _STDIO_BATCH bytes per call: the SDK's reader re-joins its buffer on
        # every chunk, so a long line read 64 KiB at a time costs quadratic copying before any cap.
        parts: list[bytes] = []
        size = 0
        while True:
            try:
                piece: bytes = await self._inner.receive(max_bytes)
            except anyio.EndOfStream:
                if not parts:
                    raise
                break
            parts.append(piece)
            size += len(piece)
            if b"\n" in piece or size >= _STDIO_BATCH or self._line + size > self._cap.limit:
                break
        data = b"".join(parts)
        newline = data.rfind(b"\n")
        self._line = len(data) - newline - 1 if newline >= 0 else self._line + len(data)
        if self._line > self._cap.limit:
            self._cap.tripped = True
            raise StdioLineTooLong("the server's line is over the cap")
        self._check_line_starts(data)
        self._count_values(data)
        return data

    def _check_line_starts(self, data: bytes) -> None:
        """Every line must start (after blanks) with ``{`` or ``[``: a line that starts otherwise is not
        JSON-RPC (a banner, a ``print``), and waiting on would only turn it into a timeout. Its start
        is kept on ``cap.non_json`` (raw: the host sanitizes it) when the cap has that field."""
        if not hasattr(self._cap, "non_json"):
            return
        segments = data.split(b"\n")
        for index, segment in enumerate(segments):
            if self._line_open:
                text = segment.lstrip(b" \t\r")
                if text:
                    self._line_open = False
                    if text[:1] not in (b"{", b"["):
                        self._cap.non_json = text[:_NON_JSON_SAMPLE].rstrip(b"\r").decode("utf-8", "replace")
                        raise StdioNotJson("the server wrote a line on stdout that is not JSON-RPC")
            if index < len(segments) - 1:
                self._line_open = True

    def _count_values(self, data: bytes) -> None:
        """JSON values per line (one line is one message) against ``cap.max_values``, counted by the
        cap's own counter over the raw bytes while reading, as over Streamable HTTP."""
        max_values = getattr(self._cap, "max_values", None)
        if max_values is None:
            return
        lines = data.split(b"\n")
        last = len(lines) - 1
        for index, segment in enumerate(lines):
            if self._counter is None and index < last and len(segment) <= max_values:
                # A whole line shorter than the cap cannot hold more values than it (each value costs
                # a byte): a flood of small messages is not counted byte by byte.
                continue
            if self._counter is None:
                self._counter = self._cap.new_counter()
            if self._counter.feed(segment) > max_values:
                self._cap.values_tripped = True
                self._values_refused = True
                raise StdioLineTooLong("the server's message holds more JSON values than the cap")
            if index < len(lines) - 1:
                self._counter = None  # a newline: the next message starts

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _CappedProcess(anyio.abc.Process):
    """The SDK's process with its stdout capped. A real :class:`anyio.abc.Process`: the SDK's teardown
    asserts that before it kills the server's process group (a duck-typed wrapper made that assert
    fail, so the server was never killed and the review hung on its open stdout)."""

    def __init__(self, process: anyio.abc.Process, cap: Any) -> None:
        # Not named ``_process``: the SDK closes the asyncio transport it finds at
        # ``process._process._transport``, which __getattr__ below answers with the wrapped one's.
        self._wrapped = process
        self._stdout = CappedStdout(process.stdout, cap)

    async def aclose(self) -> None:
        await self._wrapped.aclose()

    async def wait(self) -> int:
        return await self._wrapped.wait()

    def terminate(self) -> None:
        self._wrapped.terminate()

    def kill(self) -> None:
        self._wrapped.kill()

    def send_signal(self, signal: int) -> None:
        self._wrapped.send_signal(signal)  # type: ignore[arg-type]

    @property
    def pid(self) -> int:
        return self._wrapped.pid

    @property
    def returncode(self) -> int | None:
        return self._wrapped.returncode

    @property
    def stdin(self) -> Any:
        return self._wrapped.stdin

    @property
    def stdout(self) -> Any:
        return self._stdout

    @property
    def stderr(self) -> Any:
        return self._wrapped.stderr

    def __getattr__(self, name: str) -> Any:
        return getattr(self._wrapped, name)


def install_stdio_line_cap() -> None:
    """Wrap ``mcp.client.stdio``'s process factory once (see the module docstring)."""
    import mcp.client.stdio as sdk_stdio

    original = sdk_stdio._create_platform_compatible_process
    if getattr(original, "__agent_connector_line_cap__", False):
        return

    async def create(*args: Any, **kwargs: Any) -> Any:
        process = await original(*args, **kwargs)
        _LIVE_STDIO_SERVERS.add(process)
        observer = _STDIO_OBSERVER.get()
        if observer is not None:
            observer(process)
        cap = _STDIO_CAP.get()
        return process if cap is None else _CappedProcess(cast(anyio.abc.Process, process), cap)

    create.__agent_connector_line_cap__ = True  # type: ignore[attr-defined]
    sdk_stdio._create_platform_compatible_process = create


_LIVE_STDIO_SERVERS: Final[weakref.WeakSet[Any]] = weakref.WeakSet()
"""Every stdio server process this process started and still references (weak: gone when the SDK
drops it), for :func:`stop_stdio_servers`."""


def stop_stdio_servers() -> int:
    """Send SIGTERM to the process group of every stdio server this process started that is still
    running; return how many. Safe in a signal handler (no awaits, no locks).

    The SDK starts each server in its own session (so a terminal's Ctrl-C never reaches it) and, on
    the way out, closes its stdin and waits two seconds before it signals the group. An interrupted
    reviewer stops them at once instead; the SDK's teardown then finds them gone."""
    stopped = 0
    for process in list(_LIVE_STDIO_SERVERS):
        if process.returncode is not None or sys.platform == "win32":
            continue
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGTERM)  # the leader's pid is the group's (start_new_session)
            stopped += 1
    return stopped


@contextmanager
def stdio_line_cap(cap: Any) -> Iterator[None]:
    """Within this block, a stdio server started (by this task or tasks it creates) is read through a
    line cap: ``cap.limit`` bytes; ``cap.tripped`` is set when a line went over it."""
    install_stdio_line_cap()
    token = _STDIO_CAP.set(cap)
    try:
        yield
    finally:
        _STDIO_CAP.reset(token)


_STDIO_OBSERVER: ContextVar[Callable[[Any], None] | None] = ContextVar(
    "agent_connector_sdk_stdio_observer", default=None
)


@contextmanager
def observe_stdio_processes(observer: Callable[[Any], None]) -> Iterator[None]:
    """Within this block, ``observer(process)`` is called with every stdio server process started (by
    this task or tasks it creates): the gateway keeps its child's process to say how it ended
    (``returncode``), which the SDK's transport does not expose."""
    install_stdio_line_cap()
    token = _STDIO_OBSERVER.set(observer)
    try:
        yield
    finally:
        _STDIO_OBSERVER.reset(token)


def require_tool_scopes(server: FastMCP[Any], requirements: Mapping[str, tuple[str, ...]]) -> set[str]:
    """Put FastMCP's ``require_scopes(*scopes)`` on the OpenAPI tools named in ``requirements`` (before
    anything lists or caches them) and return the names no OpenAPI tool of ``server`` has.

    FastMCP offers no public way to set a generated tool's ``auth`` (``from_openapi`` builds the tools;
    ``mcp_component_fn`` is taken by the connector), so this writes the attribute on the objects
    ``OpenAPIProvider`` stores in its private ``_tools`` dict (checked in FastMCP 4.2.3: ``_get_tool`` and
    ``_list_tools`` return those very objects). Refused on other versions (``RuntimeError``)."""
    from fastmcp.server.auth import require_scopes

    if not fastmcp.__version__.startswith("4.2."):
        raise RuntimeError("per-tool scopes on OpenAPI tools are verified for FastMCP 4.2 only")
    stored: dict[str, Any] = {}
    for provider in server.providers:
        if type(provider) is OpenAPIProvider:
            stored.update(provider._tools)
    for name, scopes in requirements.items():
        tool = stored.get(name)
        if tool is not None and scopes:
            tool.auth = require_scopes(*scopes)
    return set(requirements) - set(stored)


# ------------------------------------------------------------------------------ the SDK's local errors
SdkFailureKind = Literal[
    "http_status", "parse", "too_deep", "content_type", "event_too_large", "closed", "timeout", "no_answer"
]


@dataclass(frozen=True, slots=True)
class SdkLocalFailure:
    """A JSON-RPC error the ``mcp`` SDK made up on this side (see :func:`sdk_local_failure`).

    ``detail`` is value-free: the parser's reason and position, the content type that came, the SSE
    event limit; never a quote of the body."""

    kind: SdkFailureKind
    detail: str | None = None


_TOO_DEEP: Final = "recursion limit exceeded"  # pydantic-core's JSON parser, nesting past its limit
_PARSE_PREFIXES: Final = ("Failed to parse JSON response: ", "Failed to parse SSE message: ")
_CLOSED_MESSAGES: Final = frozenset(
    {
        "Connection closed",
        "SSE stream ended without a response",
        "SSE stream ended and reconnection attempts were exhausted",
    }
)
_HTTP_STAND_INS: Final = frozenset({"Server returned an error response", "Not Found", "Session terminated"})
_PARSER_REASON: Final = re.compile(r"Invalid JSON: ([A-Za-z ,']{1,80}) at line (\d{1,9}) column (\d{1,12})")
_EVENT_LIMIT: Final = re.compile(r"Server-sent event exceeded the (\d{1,20}) byte limit")
_CONTENT_TYPE: Final = re.compile(r"Unexpected content type: ([A-Za-z0-9!#$&^_.+/-]{0,120})")


def sdk_local_failure(code: int, message: str) -> SdkLocalFailure | None:
    """What the ``mcp`` 2.3 SDK meant by an error it synthesized itself, or ``None`` for the peer's own.

    The SDK reports failures of its own side as JSON-RPC errors indistinguishable in type from a
    server's: an HTTP error status (``-32603`` "Server returned an error response"), a body its parser
    refuses (``-32700``, e.g. a 5,000-digit integer), a response that is not JSON (``-32600``), an SSE
    event over its limit or a lost stream (``-32000``), a timeout (``-32001``). They differ from a
    server's only by their fixed texts (in ``mcp/client/streamable_http.py``,
    ``mcp/shared/jsonrpc_dispatcher.py`` and ``mcp/client/session.py``), read here and nowhere else,
    so the host can keep a server's words as the server's (a server's own ``-32000 "backend on fire"``
    is its error, not a closed connection). A server sending one of these texts verbatim is read as
    the failure it names. ``tests/mcp/test_compat.py`` checks every text is still in the installed SDK.
    """
    if code == mcp_types.PARSE_ERROR and message.startswith(_PARSE_PREFIXES):
        if _TOO_DEEP in message:
            return SdkLocalFailure("too_deep")
        found = _PARSER_REASON.search(message)
        reason = f"{found.group(1)} at line {found.group(2)} column {found.group(3)}" if found else None
        return SdkLocalFailure("parse", reason)
    if code in (mcp_types.INTERNAL_ERROR, mcp_types.METHOD_NOT_FOUND, mcp_types.INVALID_REQUEST) and (
        message in _HTTP_STAND_INS
    ):
        return SdkLocalFailure("http_status")
    if code == mcp_types.INVALID_REQUEST and message.startswith("Unexpected content type: "):
        found = _CONTENT_TYPE.match(message)
        return SdkLocalFailure("content_type", found.group(1) if found else None)
    if code == mcp_types.INVALID_REQUEST and (
        message == "server answered a request with 202 Accepted" or message.startswith("Redirect to ")
    ):
        return SdkLocalFailure("no_answer")
    if code == mcp_types.CONNECTION_CLOSED:
        if message in _CLOSED_MESSAGES:
            return SdkLocalFailure("closed")
        if message.startswith("SSE stream failed: "):
            found = _EVENT_LIMIT.search(message)
            return SdkLocalFailure("event_too_large", found.group(1)) if found else SdkLocalFailure("closed")
    if (
        code == mcp_types.REQUEST_TIMEOUT
        and message.startswith("Request ")
        and message.endswith(" timed out")
    ):
        return SdkLocalFailure("timeout")
    return None


def sdk_unreadable_line(error: Exception) -> SdkLocalFailure:
    """What a line the SDK could not read meant: the exception its stdio reader hands the message
    handler in place of a message (``mcp`` 2.3 ``mcp.client.stdio._parse_line`` returns the parser's
    ``ValueError``). ``too_deep`` when it nests past the parser, else ``parse``; read here and nowhere
    else, so callers decide by the kind, never by the text."""
    if isinstance(error, ValueError) and _TOO_DEEP in str(error):
        return SdkLocalFailure("too_deep")
    return SdkLocalFailure("parse")


# mcp raises these as RuntimeError while connecting (mcp/client/session.py).
_UNSUPPORTED_VERSION: Final = re.compile(r"Unsupported protocol version from the server: (.{0,400})", re.S)
_NO_MUTUAL_VERSION: Final = re.compile(
    r"No mutually supported modern protocol version \(server: (.{0,400}?), client", re.S
)


def sdk_version_mismatch(text: str) -> str | None:
    """The versions a server offered, from the ``RuntimeError`` text the SDK raises when it shares
    no protocol revision with this client; ``None`` for any other text (raw: sanitize to show)."""
    found = _UNSUPPORTED_VERSION.match(text) or _NO_MUTUAL_VERSION.match(text)
    return found.group(1) if found is not None else None


# ------------------------------------------------------------------------------ the tolerant JSON reader
class _TolerantMessageReader:
    """The SDK's JSON-RPC message adapter, with a second reading of what its parser refuses.

    pydantic's JSON parser refuses two things RFC 8259 allows: a ``\\uD800``-style escape that
    decodes to a lone surrogate, and nesting past about 200 levels. Either made a whole message
    unreadable, so one bad tool descriptor lost every tool of the page (and over stdio the request
    waited for its timeout). On such a refusal the text is read again with Python's own parser
    (which takes both, and refuses ``NaN``/``Infinity`` literals here as JSON does), then validated
    as the SDK would; anything that still fails fails as before, with the SDK's own error. The host's
    Admit gate then rejects the offending descriptor alone (a lone surrogate, a schema past
    ``max_schema_depth``). Messages the SDK reads fine never take this path.
    """

    def __init__(self, adapter: Any) -> None:
        self._adapter = adapter

    def validate_json(self, data: Any, **kwargs: Any) -> Any:
        import json

        from pydantic import ValidationError

        try:
            return self._adapter.validate_json(data, **kwargs)
        except ValidationError as refusal:
            if not all(error.get("type") == "json_invalid" for error in refusal.errors()):
                raise
            try:
                parsed = json.loads(data, parse_constant=_refuse_constant)
            except (ValueError, RecursionError):
                raise refusal from None
            return self._adapter.validate_python(parsed, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._adapter, name)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def install_tolerant_json_reader() -> None:
    """Read the messages of the SDK's Streamable HTTP and stdio clients through
    :class:`_TolerantMessageReader` (``mcp`` 2.3: ``mcp.client.streamable_http.jsonrpc_message_adapter``
    and ``mcp.client.stdio._parse_line``); idempotent, process-wide, client side only."""
    import mcp.client.stdio as sdk_stdio
    import mcp.client.streamable_http as sdk_http

    adapter = getattr(sdk_http, "jsonrpc_message_adapter")  # noqa: B009 (not re-exported)
    if not isinstance(adapter, _TolerantMessageReader):
        setattr(sdk_http, "jsonrpc_message_adapter", _TolerantMessageReader(adapter))  # noqa: B010
    if not getattr(sdk_stdio._parse_line, "__agent_connector_tolerant__", False):
        from mcp.shared.message import SessionMessage

        reader = _TolerantMessageReader(mcp_types.jsonrpc_message_adapter)
        sdk_parse_line = sdk_stdio._parse_line

        def parse_line(line: str) -> Any:
            try:
                return SessionMessage(reader.validate_json(line, by_name=False))
            except ValueError as refusal:
                cap = _STDIO_CAP.get()
                ident = _top_level_id(line) if _TOO_DEEP in str(refusal) else None
                if cap is not None and ident is not None:
                    # A response nested past every parser: its request fails now, named by the
                    # cap (max_schema_depth), instead of waiting for its timeout.
                    cap.too_deep = True
                    error = mcp_types.ErrorData(
                        code=mcp_types.PARSE_ERROR,
                        message="Failed to parse JSON response: recursion limit exceeded",
                    )
                    return SessionMessage(mcp_types.JSONRPCError(jsonrpc="2.0", id=ident, error=error))
                return sdk_parse_line(line)  # refused either way: the SDK reports it as it does

        parse_line.__agent_connector_tolerant__ = True  # type: ignore[attr-defined]
        sdk_stdio._parse_line = parse_line


_TOKENS: Final = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]')


def _top_level_id(line: str) -> int | str | None:
    """The ``id`` member of the top-level object of a JSON-RPC line no parser reads whole (nested too
    deep), found by one linear scan of its tokens (strings skipped whole); ``None`` if there is none."""
    import json

    depth = 0
    for token in _TOKENS.finditer(line):
        text = token.group()
        if text in ("{", "["):
            depth += 1
        elif text in ("}", "]"):
            depth -= 1
        elif depth == 1 and text == '"id"':
            rest = line[token.end() :].lstrip()
            if not rest.startswith(":"):
                continue
            try:
                value, _ = json.JSONDecoder().raw_decode(rest[1:].lstrip())
            except ValueError:
                return None
            if isinstance(value, int | str) and not isinstance(value, bool):
                return value
            return None
    return None


def add_tools_in_bulk(server: Any, tools: Sequence[Tool]) -> None:
    """Add many uniquely named, unversioned tools to ``server``'s local provider at once. FastMCP 4.2's
    ``add_tool`` scans every stored component per call (its version-mixing check and schema seeding),
    so adding N tools one by one costs O(N²): minutes at 12,000. Unversioned tools with new names
    cannot mix versions, so storing them directly is what ``add_tool`` would end with (the schema
    seed it skips is a cache whose miss is read from the tool). Other FastMCP versions: ``add_tool``."""
    provider = getattr(server, "local_provider", None)
    components = getattr(provider, "_components", None)
    if not SCALE_READ_PATH_SUPPORTED or not isinstance(components, dict):
        for tool in tools:
            server.add_tool(tool)
        return
    for tool in tools:
        if tool.version is not None or tool.key in components:
            server.add_tool(tool)  # the checked path for anything add_tool would judge
        else:
            components[tool.key] = tool
