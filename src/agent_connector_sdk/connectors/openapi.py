"""OpenAPI document -> FastMCP server, and each of its tools -> a schema disclosure.

This adapter is deliberately thin: FastMCP's own OpenAPI support (``FastMCP.from_openapi`` /
``OpenAPIProvider``) turns every operation into a tool, names it, builds its input schema (parameters
plus request body) and its output schema (the 2xx JSON response; non-object responses are wrapped by
FastMCP under ``result`` with ``x-fastmcp-wrap-result``). Nothing here converts OpenAPI to JSON Schema.

What this module adds:

* the mapping from each registered tool name (the *alias*) back to the operation it came from,
  recorded through FastMCP's public ``mcp_component_fn`` hook, so the alias is by construction the
  name FastMCP registered (slugged, truncated to 56 characters, de-duplicated with ``_2``...);
* the tools' schemas read from a real ``tools/list`` over an in-memory MCP session, i.e. exactly the
  form the wire shows (after FastMCP's listing middleware), which is what disclosures must hash;
* :func:`build_tool_disclosures`, ``alias -> SchemaDisclosure`` for every operation tool.

Operation IDs containing ``/`` (GitHub's ``issues/list-events-for-timeline``) are given the name
``issues_list_events_for_timeline``: FastMCP's slugging would otherwise delete the slash and glue the
words together (``issueslist_events_for_timeline``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import fastmcp
import httpx2
from fastmcp.server.providers.openapi import OpenAPITool
from fastmcp.utilities.components import FastMCPComponent
from fastmcp.utilities.openapi import HTTPRoute

from agent_connector_sdk.mcp.schema_disclosure import (
    SchemaDisclosure,
    SourceDigest,
    build_schema_disclosure,
)
from agent_connector_sdk.mcp.schema_disclosure_cache import DisclosureOrigin

__all__ = [
    "OpenAPIOperationTool",
    "OpenAPIServer",
    "OpenAPIToolsMissing",
    "build_openapi_server",
    "build_tool_disclosures",
    "list_operation_tools",
    "openapi_operation_tools",
    "tool_disclosure_origins",
]


class OpenAPIToolsMissing(LookupError):
    """Operation tools of the server are absent from its ``tools/list``.

    Typically a search transform (which replaces the listing with synthetic search tools) was added
    before the tools were listed: list and disclose first, then add the transform.
    """

    category: ClassVar[str] = "tools_missing"


@dataclass(frozen=True)
class OpenAPIServer:
    """A FastMCP server built from an OpenAPI document, plus where each of its tools came from.

    ``operations`` maps each registered tool name (alias) to its operation: the ``operationId``, or
    ``"METHOD /path"`` for an operation without one. ``routes`` maps the alias to ``(METHOD, path)``.
    ``http_client`` is the client the tools call the upstream API with; :meth:`aclose` closes it if
    :func:`build_openapi_server` created it.
    """

    server: fastmcp.FastMCP
    operations: Mapping[str, str]
    routes: Mapping[str, tuple[str, str]]
    http_client: httpx2.AsyncClient
    owns_http_client: bool

    async def aclose(self) -> None:
        """Close the upstream HTTP client if this object created it (a caller's client stays open)."""
        if self.owns_http_client:
            await self.http_client.aclose()


@dataclass(frozen=True)
class OpenAPIOperationTool:
    """One operation as the MCP wire shows it: its identity and its tool's exact schemas."""

    operation: str
    alias: str
    method: str
    path: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None


def _operation_of(route: HTTPRoute) -> str:
    return route.operation_id or f"{route.method.upper()} {route.path}"


def _readable_names(document: Mapping[str, Any]) -> dict[str, str]:
    """``operationId -> name`` for IDs with ``/``, which FastMCP's slugging would delete outright."""
    names: dict[str, str] = {}
    paths = document.get("paths")
    if not isinstance(paths, Mapping):
        return names
    for item in paths.values():
        if not isinstance(item, Mapping):
            continue
        for operation in item.values():
            operation_id = operation.get("operationId") if isinstance(operation, Mapping) else None
            if isinstance(operation_id, str) and "/" in operation_id:
                names[operation_id] = operation_id.replace("/", "_")
    return names


def _first_server_url(document: Mapping[str, Any]) -> str:
    servers = document.get("servers")
    first = servers[0] if isinstance(servers, list) and servers else None
    url = first.get("url") if isinstance(first, dict) else None
    if not isinstance(url, str) or not url or "{" in url:
        raise ValueError("the document has no concrete servers[0].url; pass base_url or client")
    return url


def build_openapi_server(
    document: dict[str, Any],
    *,
    base_url: str | None = None,
    client: httpx2.AsyncClient | None = None,
    name: str = "OpenAPI",
    timeout: float = 30.0,
) -> OpenAPIServer:
    """Build a FastMCP server exposing every operation of ``document`` as a tool.

    Upstream requests go through ``client`` if given (the caller owns and closes it); otherwise a
    client is created for ``base_url``, or for the document's first ``servers`` URL, and closed by
    :meth:`OpenAPIServer.aclose`. ``document`` is not modified.

    The client is always passed to FastMCP explicitly: a client FastMCP creates itself is closed when
    the server's first lifespan ends, so a second session (e.g. a second in-memory ``Client``) fails
    with "Cannot reopen a client instance" (FastMCP 4.2.3).
    """
    if client is not None and base_url is not None:
        raise ValueError("pass either client or base_url, not both")
    owns_client = client is None
    if client is None:
        client = httpx2.AsyncClient(
            base_url=base_url if base_url is not None else _first_server_url(document), timeout=timeout
        )
    operations: dict[str, str] = {}
    routes: dict[str, tuple[str, str]] = {}

    def record(route: HTTPRoute, component: FastMCPComponent) -> None:
        # Called by FastMCP after it has fixed the component's final (unique) name.
        if isinstance(component, OpenAPITool):
            operations[component.name] = _operation_of(route)
            routes[component.name] = (route.method.upper(), route.path)

    server = fastmcp.FastMCP.from_openapi(
        document,
        client=client,
        name=name,
        mcp_component_fn=record,
        mcp_names=_readable_names(document),
    )
    return OpenAPIServer(
        server=server, operations=operations, routes=routes, http_client=client, owns_http_client=owns_client
    )


async def list_operation_tools(openapi_server: OpenAPIServer) -> list[OpenAPIOperationTool]:
    """The server's operation tools with the schemas a client receives from ``tools/list``.

    Lists over an in-memory MCP session (the real protocol path, middleware included). Raises
    :class:`OpenAPIToolsMissing` if an operation tool is not listed (e.g. hidden by a search transform).
    """
    async with fastmcp.Client(openapi_server.server) as session:
        listed = await session.list_tools()
    tools: list[OpenAPIOperationTool] = []
    seen: set[str] = set()
    for tool in listed:
        operation = openapi_server.operations.get(tool.name)
        if operation is None:
            continue
        method, path = openapi_server.routes[tool.name]
        seen.add(tool.name)
        tools.append(
            OpenAPIOperationTool(
                operation=operation,
                alias=tool.name,
                method=method,
                path=path,
                input_schema=tool.input_schema,
                output_schema=tool.output_schema,
            )
        )
    missing = sorted(set(openapi_server.operations) - seen)
    if missing:
        raise OpenAPIToolsMissing(
            f"{len(missing)} operation tools not in tools/list (first: {missing[0]}); "
            "list them before adding a search transform"
        )
    return tools


async def openapi_operation_tools(document: dict[str, Any]) -> list[OpenAPIOperationTool]:
    """Every operation of ``document`` as its FastMCP tool shows it on the wire (no upstream calls)."""
    # A loopback base URL: the server is only listed, never asked to call the API.
    openapi_server = build_openapi_server(document, base_url="http://127.0.0.1")
    try:
        return await list_operation_tools(openapi_server)
    finally:
        await openapi_server.aclose()


async def build_tool_disclosures(
    openapi_server: OpenAPIServer, source: bytes | SourceDigest
) -> dict[str, SchemaDisclosure]:
    """``alias -> SchemaDisclosure`` for every operation tool of ``openapi_server``.

    ``source`` is the OpenAPI document's exact bytes, or their :class:`SourceDigest` (hash a large
    document once and reuse it). Call this before adding a search transform to the server. A tool
    whose schemas break a disclosure bound raises ``SchemaDisclosureError`` (never a partial result).
    """
    digest = source if isinstance(source, SourceDigest) else SourceDigest.of(source)
    return {
        tool.alias: build_schema_disclosure(
            operation=tool.operation,
            alias=tool.alias,
            source=digest,
            input_schema=tool.input_schema,
            output_schema=tool.output_schema,
        )
        for tool in await list_operation_tools(openapi_server)
    }


def tool_disclosure_origins(
    openapi_server: OpenAPIServer, source: bytes | SourceDigest
) -> dict[str, DisclosureOrigin]:
    """``alias -> DisclosureOrigin`` for every operation tool: what a registry needs to build each
    tool's disclosure on its first read, from the schemas the read sees.

    Nothing is listed or hashed here beyond ``source`` (start-up cost and memory do not grow with the
    tools' schemas); ``register_schema_resources`` accepts the result in place of built disclosures.
    Byte for byte, a lazily built disclosure equals what :func:`build_tool_disclosures` returns.
    """
    digest = source if isinstance(source, SourceDigest) else SourceDigest.of(source)
    operations = openapi_server.operations
    return {alias: DisclosureOrigin(operation, digest.sha256) for alias, operation in operations.items()}
