"""Every access to private FastMCP / ``mcp`` internals, in one place, for the tested versions only.

FastMCP 4.2 and ``mcp`` 2.3 offer no public hook for a few things the gates need (listed below, each
with why). Those accesses live here and nowhere else, so an upgrade has one file to re-check:
``TESTED_VERSIONS`` names the minor versions this module was checked against,
:func:`untested_versions` reports any installed version outside them, and the test suite fails loudly on
one (``tests/compat/test_compat.py``), next to a test per accessor that fails when its target moves.
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

Host side (for the client adapters; routed here so both sides share one list):

* ``McpHttpClientFactory`` / ``create_mcp_http_client`` from ``mcp.shared._httpx_utils``;
* :func:`make_verify_factory` — ``StreamableHttpTransport._make_verify_factory()``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final, Literal

from fastmcp import FastMCP
from fastmcp.server.dependencies import fastmcp_request_ctx
from fastmcp.tools import Tool
from fastmcp.utilities.versions import VersionSpec

# Private module of the mcp SDK (the HTTP client factory its transports use): re-exported for the
# host-side adapters, so they import it from here.
from mcp.shared._httpx_utils import McpHttpClientFactory, create_mcp_http_client

__all__ = [
    "TESTED_VERSIONS",
    "GetTool",
    "ListMethod",
    "McpHttpClientFactory",
    "create_mcp_http_client",
    "disable_sdk_parameter_header_check",
    "fastmcp_list_handler",
    "installed_tool_resolution",
    "list_page_size",
    "low_level_server",
    "make_verify_factory",
    "replace_tool_resolution",
    "search_proxy_tool_name",
    "untested_versions",
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


def make_verify_factory(transport: Any) -> Any:
    """``StreamableHttpTransport._make_verify_factory()`` of a ``fastmcp`` client transport."""
    return transport._make_verify_factory()
