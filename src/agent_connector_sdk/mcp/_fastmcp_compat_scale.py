"""The FastMCP internals the catalog-scale disclosure read path relies on, in one place.

Every private attribute is reached through one small function here, guarded by the FastMCP version this
was verified against (4.2.x). On any other version :data:`SUPPORTED` is false and the provider keeps the
exact, uncached read path (a full ``get_tool_catalog``), so an upgrade can cost speed, never correctness.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

import fastmcp
from fastmcp import FastMCP
from fastmcp.server.middleware.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.server.providers.base import Provider
from fastmcp.server.providers.local_provider import LocalProvider
from fastmcp.server.providers.openapi import OpenAPIProvider
from fastmcp.server.transforms.catalog import CatalogTransform
from fastmcp.server.transforms.search.base import BaseSearchTransform
from fastmcp.tools.base import Tool

__all__ = [
    "SUPPORTED",
    "catalog_bypassed",
    "dispatch_list_tools_middleware",
    "is_name_consistent_provider",
    "middleware_touches_list_tools",
    "synthetic_tool_names",
]

SUPPORTED: Final = fastmcp.__version__.startswith("4.2.")
"""The version the name-resolved read path was checked against (see the provider's module docs)."""


def _server_local_provider_type() -> type[Provider] | None:
    # FastMCP 4.2's server-owned local provider is a private LocalProvider subclass that only adds
    # wire-schema cache seeding on registration; its lookups are LocalProvider's.
    from fastmcp.server import server as server_module

    found = getattr(server_module, "_SchemaCacheLocalProvider", None)
    return found if isinstance(found, type) and issubclass(found, LocalProvider) else None


_NAME_CONSISTENT_PROVIDERS: Final[tuple[type[Provider], ...]] = tuple(
    kind for kind in (LocalProvider, OpenAPIProvider, _server_local_provider_type()) if kind is not None
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
    if type(catalog).get_tool is not BaseSearchTransform.get_tool:
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
