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
* :func:`build_tool_disclosures`, ``alias -> SchemaDisclosure`` for every operation tool;
* tool annotations from the HTTP method (:func:`http_method_annotations`): hosts must confirm a tool
  that may write, so a GET must say it is read-only and a DELETE that it is destructive.
* an **upstream header policy** (:class:`UpstreamHeaderPolicy`, a request hook on the upstream client):
  FastMCP's OpenAPI tools copy the MCP caller's HTTP headers onto every upstream request (all but a few
  it strips). The policy sends upstream only what is addressed to that API: the headers the matched
  operation declares (``in: header`` parameters, filled from the call's arguments), the upstream
  client's own configured headers (e.g. the operator's ``Authorization``), what HTTP framing needs
  (``host``, ``content-type``, ``content-length``, ``transfer-encoding``), and the documented
  :data:`FORWARDED_CALLER_HEADERS` allow-list (tracing and language). Everything else the caller sent —
  ``Mcp-Param-*`` and every ``Mcp-*`` header, API keys, cookies, ``X-Forwarded-*``, ``Origin``, custom
  headers — never leaves. ``Mcp-Param-*`` headers are dropped even if an operation declared one.

Arguments are validated against each tool's published ``inputSchema`` on the server by the Execute gate
(``agent_connector_sdk.mcp.server``), so an ``"issue_number": "notanint"`` never becomes a URL.

Operation IDs containing ``/`` (GitHub's ``issues/list-events-for-timeline``) are given the name
``issues_list_events_for_timeline``: FastMCP's slugging would otherwise delete the slash and glue the
words together (``issueslist_events_for_timeline``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

import fastmcp
import httpx2
from fastmcp.server.providers.openapi import OpenAPITool
from fastmcp.utilities.components import FastMCPComponent
from fastmcp.utilities.openapi import HTTPRoute
from mcp_types import ToolAnnotations

from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.mcp.schema_disclosure import (
    SchemaDisclosure,
    SourceDigest,
    build_schema_disclosure,
)
from agent_connector_sdk.mcp.schema_disclosure.cache import DisclosureOrigin

__all__ = [
    "FORWARDED_CALLER_HEADERS",
    "OpenAPIOperationTool",
    "OpenAPIServer",
    "OpenAPIToolsMissing",
    "UpstreamHeaderPolicy",
    "build_openapi_server",
    "build_tool_disclosures",
    "http_method_annotations",
    "list_operation_tools",
    "openapi_operation_tools",
    "tool_disclosure_origins",
]


class OpenAPIToolsMissing(AgentConnectorError, LookupError):
    """Operation tools of the server are absent from its ``tools/list`` (category ``tools_missing``).

    Typically a search transform (which replaces the listing with synthetic search tools) was added
    before the tools were listed: list and disclose first, then add the transform.
    """

    category: Literal["tools_missing"]

    def __init__(self, message: str) -> None:
        super().__init__("tools_missing", message)


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


FORWARDED_CALLER_HEADERS: Final = frozenset({"traceparent", "tracestate", "accept-language"})
"""Caller headers the upstream may still receive: W3C trace context and the caller's language."""

_FRAMING_HEADERS: Final = frozenset({"host", "content-type", "content-length", "transfer-encoding"})
_NEVER_FORWARDED_PREFIX: Final = "mcp-param-"


class UpstreamHeaderPolicy:
    """Request hook of the upstream client: strip every header not addressed to the API (module doc).

    One policy per client (:meth:`for_client` installs it once and returns it); :meth:`add_operation`
    declares an operation's header parameters. A request matching several path templates (``/a/{x}``
    and ``/a/list``) keeps the union of their declared headers — still only declared ones.
    """

    def __init__(self, client: httpx2.AsyncClient) -> None:
        self._client = client
        # Keyed by (METHOD, path template): rebuilding a server on the same client replaces, never grows.
        self._operations: dict[tuple[str, str], tuple[re.Pattern[str], frozenset[str]]] = {}

    @classmethod
    def for_client(cls, client: httpx2.AsyncClient) -> UpstreamHeaderPolicy:
        """The client's policy, installed as its last request hook if it has none yet."""
        hooks = client.event_hooks
        for hook in hooks.get("request", []):
            if isinstance(hook, cls):
                return hook
        policy = cls(client)
        client.event_hooks = {**hooks, "request": [*hooks.get("request", []), policy]}
        return policy

    def add_operation(self, method: str, path: str, header_names: Iterable[str]) -> None:
        pattern = "".join(
            "[^/]+" if part.startswith("{") else re.escape(part) for part in re.split(r"(\{[^}/]*\})", path)
        )
        self._operations[(method.upper(), path)] = (
            re.compile(f".*{pattern}/?"),
            frozenset(n.lower() for n in header_names),
        )

    def __len__(self) -> int:
        """Operations known (one per method and path template)."""
        return len(self._operations)

    def declared_headers(self, method: str, path: str) -> frozenset[str]:
        """Header names the operations matching ``method path`` declare (lowercase)."""
        declared: set[str] = set()
        for (operation_method, _), (pattern, names) in self._operations.items():
            if operation_method == method.upper() and pattern.fullmatch(path):
                declared |= names
        return frozenset(declared)

    async def __call__(self, request: httpx2.Request) -> None:
        declared = self.declared_headers(request.method, request.url.path)
        configured = {name.lower() for name in self._client.headers}
        kept = declared | configured | _FRAMING_HEADERS | FORWARDED_CALLER_HEADERS
        for name in {name.lower() for name in request.headers}:
            if name not in kept or name.startswith(_NEVER_FORWARDED_PREFIX):
                del request.headers[name]


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


_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def http_method_annotations(method: str) -> ToolAnnotations:
    """MCP tool annotations an HTTP method's semantics justify (RFC 9110 §9.2).

    GET, HEAD and OPTIONS are *safe* (read-only, so no write confirmation); DELETE is destructive and
    idempotent; PUT is idempotent (it may still replace data, so ``destructiveHint`` keeps its
    spec default, true); POST and PATCH promise nothing beyond "not read-only". Every operation
    reaches an external API, so ``openWorldHint`` is true. These are hints derived from the method,
    not from the upstream's real behaviour: a host treats them as the spec says (untrusted unless the
    server is trusted), and an unknown method gets the "may write" reading.
    """
    verb = method.upper()
    if verb in _SAFE_METHODS:
        return ToolAnnotations(
            readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=True
        )
    if verb == "DELETE":
        return ToolAnnotations(
            readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=True
        )
    if verb == "PUT":
        return ToolAnnotations(readOnlyHint=False, idempotentHint=True, openWorldHint=True)
    return ToolAnnotations(readOnlyHint=False, openWorldHint=True)


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
    version: str | None = None,
    timeout: float = 30.0,
) -> OpenAPIServer:
    """Build a FastMCP server exposing every operation of ``document`` as a tool.

    Upstream requests go through ``client`` if given (the caller owns and closes it); otherwise a
    client is created for ``base_url``, or for the document's first ``servers`` URL, and closed by
    :meth:`OpenAPIServer.aclose`. ``document`` is not modified. ``name`` and ``version`` become the
    server's ``serverInfo`` (e.g. the document's ``info.title`` and ``info.version``). Either way the
    client gets the :class:`UpstreamHeaderPolicy` request hook (once per client), so upstream requests
    carry only the headers addressed to the API.

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
    header_policy = UpstreamHeaderPolicy.for_client(client)

    def record(route: HTTPRoute, component: FastMCPComponent) -> None:
        # Called by FastMCP after it has fixed the component's final (unique) name.
        if isinstance(component, OpenAPITool):
            component.annotations = http_method_annotations(route.method)
            operations[component.name] = _operation_of(route)
            routes[component.name] = (route.method.upper(), route.path)
            header_policy.add_operation(
                route.method, route.path, (p.name for p in route.parameters if p.location == "header")
            )

    server = fastmcp.FastMCP.from_openapi(
        document,
        client=client,
        name=name,
        version=version,
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
