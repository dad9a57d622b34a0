"""``ServerGates``: the server-side contract gates as one object that owns them, and ``gated_http_app``.

FastMCP has no per-app middleware: its middleware, transforms and tool resolution belong to the server.
So the gates are installed *onto the server*, explicitly — ``ServerGates(...).install(server)`` — and
installing is idempotent (a second install, by this or another ``ServerGates``, adds nothing). What gets
installed, each visible where FastMCP keeps such things:

(a) **Execute gate in tool resolution** (``server.get_tool``, the one hook, see :mod:`._resolution`):
    argument validation against the published ``inputSchema`` for every call (invalid → ``isError``
    result, tool not run) and ``Mcp-Param-*`` parity (:mod:`._parity`) for 2026-07-28 calls (HTTP 400,
    -32020);
(b) **Output self-check** (``server.middleware``: ``OutputSelfCheck``, see :mod:`._output_check`): a
    result that violates its tool's published output schema never leaves as a success (-32603), a
    tool's own failure becomes an ``isError`` result, an unknown tool a JSON-RPC -32602 error;
(c) **Authorized completion** when ``completions`` is given (the server's one completion handler);
(d) **Cursor hygiene**: FastMCP's own list handlers are wrapped so a cursor the server never issued is
    refused with -32602 (FastMCP 4.2 ignores any cursor when it does not paginate, and treats ``""`` as
    "first page");
(e) **Search tools built once**: a FastMCP search transform on the server builds its ``search_tools``
    and ``call_tool`` tools once instead of per request (:func:`~agent_connector_sdk.mcp.compat.
    memoize_synthetic_tools`). FastMCP 4.2 builds them afresh for every list, search and proxy call,
    and each new tool function gets its own ``TypeAdapter`` in FastMCP's type-adapter LRU (5,000
    entries): ~1 ms and ~6 KB that stay per request, so a server's memory grew with every round of
    identical load until that LRU was full (~40 MiB).

:meth:`ServerGates.http_app` then builds ``server.http_app(...)`` with the one ASGI entry (:mod:`._entry`):
its front in the place of FastMCP's Host/Origin guard, before authentication (cheap header checks), and
:class:`~.GatedEntry` as the last of the app's own middleware, inside authentication (in-flight
slots for authenticated callers, a separate pre-auth pool, the body read once under bounds, handshake-era
calls judged before the app, JSON-RPC 413 on every route, quiet client disconnects), and
**DNS-rebinding protection on by default**: FastMCP's Host/Origin rules in ``"auto"`` mode, which validate
``Host`` and ``Origin`` on a loopback bind (``localhost``, ``127.0.0.1``, ``::1`` and the bound address
are allowed; ``Host: evil.example`` → 421, ``Origin: http://evil.example`` → 403). Pass
``allowed_hosts=[...]`` / ``allowed_origins=[...]`` to allow more (this also turns validation on for
non-loopback binds), or ``host_origin_protection=True`` to validate on every bind, ``False`` to switch
it off.

``gated_http_app(server, ...)`` is ``ServerGates(...).http_app(server, ...)``: it *does* install the gates
on ``server`` (idempotently; call it after configuring the server's transforms). Notifications pass every
gate untouched and get no JSON-RPC response.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

import mcp_types
from fastmcp import FastMCP
from starlette.middleware import Middleware as StarletteMiddleware

from agent_connector_sdk.audit import AuditSink
from agent_connector_sdk.mcp import compat
from agent_connector_sdk.mcp.server._completion import AuthorizedCompletions
from agent_connector_sdk.mcp.server._entry import (
    DEFAULT_MAX_BODY_BYTES,
    GatedEntry,
    RequestBounds,
    install_entry_front,
)
from agent_connector_sdk.mcp.server._output_check import OutputSelfCheck
from agent_connector_sdk.mcp.server._parity import HeaderParityGate
from agent_connector_sdk.mcp.server._refusals import invalid_cursor
from agent_connector_sdk.mcp.server._resolution import install_resolution
from agent_connector_sdk.mcp.server._telemetry import SpanProbe

__all__ = ["DEFAULT_HOST_ORIGIN_PROTECTION", "ServerGates", "gated_http_app"]

DEFAULT_HOST_ORIGIN_PROTECTION = "auto"
"""FastMCP's Host/Origin guard mode ``gated_http_app`` uses unless told otherwise (see module doc)."""

_LIST_METHODS: tuple[compat.ListMethod, ...] = (
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
)


class ServerGates:
    """The server-side gates, owned by one object (see the module docstring).

    ``output_check`` replaces the default ``OutputSelfCheck()``; ``completions`` becomes the completion
    handler; ``audit`` (an :class:`~agent_connector_sdk.audit.AuditSink`) receives the header gate's
    events (one per checked call; names and categories only; default: a bounded record at
    ``.headers.audit.recent`` plus the ``parity`` module's logger);
    ``max_body_bytes`` bounds request bodies; ``validate_arguments=False`` leaves argument validation to
    the tools themselves; ``request_bounds`` sets the in-flight caps, the body deadline and the JSON
    value bound that the entry (:mod:`._entry`) enforces before anything parses a body.
    """

    def __init__(
        self,
        *,
        output_check: OutputSelfCheck | None = None,
        completions: AuthorizedCompletions | None = None,
        audit: AuditSink | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        validate_arguments: bool = True,
        request_bounds: RequestBounds | None = None,
    ) -> None:
        self.headers = HeaderParityGate(audit=audit)
        self.max_body_bytes = max_body_bytes
        self.request_bounds = request_bounds if request_bounds is not None else RequestBounds()
        self.output_check = output_check if output_check is not None else OutputSelfCheck()
        self.completions = completions
        self.validate_arguments = validate_arguments

    def install(self, server: FastMCP[Any]) -> FastMCP[Any]:
        """Install (a)–(e) on ``server`` and return it; idempotent (gates already there stay, once)."""
        install_resolution(server, self.headers, arguments=self.validate_arguments)
        if not any(isinstance(existing, OutputSelfCheck) for existing in server.middleware):
            server.add_middleware(self.output_check)
        if not any(isinstance(existing, SpanProbe) for existing in server.middleware):
            # Outermost, so it sees every request FastMCP handles and each call's final result.
            server.middleware.insert(0, SpanProbe())
        if self.completions is not None:
            self.completions.install(server)
        _guard_cursors(server)
        for transform in server.transforms:
            compat.memoize_synthetic_tools(transform)  # (e); anything but FastMCP's own: left alone
        return server

    def asgi_middleware(self, server: FastMCP[Any]) -> StarletteMiddleware:
        """The entry (:class:`~.GatedEntry`) for ``server.http_app(middleware=[...])``, appended last
        (installs the gates on ``server`` first: the entry needs its resolution hook)."""
        self.install(server)
        resolution = install_resolution(server, self.headers, arguments=self.validate_arguments)
        return StarletteMiddleware(
            GatedEntry,
            server=server,
            resolution=resolution,
            bounds=self.request_bounds,
            max_body_bytes=self.max_body_bytes,
        )

    def http_app(self, server: FastMCP[Any], **http_app_kwargs: Any) -> Any:
        """:meth:`install`, then ``server.http_app(**http_app_kwargs)`` with the entry appended to any
        ``middleware=[...]`` given (so it runs innermost, inside authentication), its front in the place
        of FastMCP's Host/Origin guard (before authentication) and DNS-rebinding protection defaulted on."""
        middleware = list(http_app_kwargs.pop("middleware", None) or [])
        middleware.append(self.asgi_middleware(server))
        http_app_kwargs.setdefault("host_origin_protection", DEFAULT_HOST_ORIGIN_PROTECTION)
        app = server.http_app(middleware=middleware, **http_app_kwargs)
        install_entry_front(app, max_body_bytes=self.max_body_bytes)
        return app


def gated_http_app(
    server: FastMCP[Any],
    *,
    output_check: OutputSelfCheck | None = None,
    completions: AuthorizedCompletions | None = None,
    audit: AuditSink | None = None,
    request_bounds: RequestBounds | None = None,
    **http_app_kwargs: Any,
) -> Any:
    """``ServerGates(...).http_app(server, **http_app_kwargs)``: installs the gates on ``server``
    (idempotently) and returns ``server.http_app(...)`` with the ASGI entry, the request bounds and
    DNS-rebinding protection (``host_origin_protection="auto"``; ``allowed_hosts`` / ``allowed_origins``
    extend it)."""
    gates = ServerGates(
        output_check=output_check, completions=completions, audit=audit, request_bounds=request_bounds
    )
    return gates.http_app(server, **http_app_kwargs)


ListHandler = Callable[[Any, mcp_types.PaginatedRequestParams | None], Awaitable[Any]]


class _CursorGuard:
    """FastMCP's own list handler, refusing cursors it never issues (-32602)."""

    def __init__(self, server: FastMCP[Any], handler: ListHandler) -> None:
        self.server = server
        self.handler = handler

    async def __call__(self, ctx: Any, params: mcp_types.PaginatedRequestParams | None) -> Any:
        cursor = params.cursor if params is not None else None
        # FastMCP issues cursors only when it paginates, and never the empty string.
        if cursor is not None and (compat.list_page_size(self.server) is None or cursor == ""):
            raise invalid_cursor()
        return await self.handler(ctx, params)


def _guard_cursors(server: FastMCP[Any]) -> None:
    """Wrap FastMCP's own list handlers (idempotent: a handler already guarded, or one someone
    registered in FastMCP's place — which issues its own cursors — is left alone)."""
    low_level = compat.low_level_server(server)
    for method in _LIST_METHODS:
        own = cast(ListHandler, compat.fastmcp_list_handler(server, method))
        entry = low_level.get_request_handler(method)
        if entry is None or entry.handler != own:
            continue
        low_level.add_request_handler(method, mcp_types.PaginatedRequestParams, _CursorGuard(server, own))
