"""``gated_http_app``: FastMCP's Streamable HTTP app with the server-side contract gates switched on.

It returns exactly what ``server.http_app(**http_app_kwargs)`` returns (same type, same routes, same
lifespan, same auth), after arranging four things:

(a) **Header parity** — every ``tools/call`` — including tools hidden by a search transform and calls
    through its ``call_tool`` proxy — whose ``Mcp-Param-*`` headers disagree with the body gets HTTP 400
    and JSON-RPC -32020. 2026-07-28 calls are checked inside FastMCP's own tool resolution
    (``install_header_gate``: the tool that is about to run, as this caller resolves it, looked up once);
    ``HeaderParityMiddleware`` is added as the innermost Starlette middleware, i.e. inside FastMCP's
    authentication, for handshake-era calls (whose transport would not answer HTTP 400).
(b) **Output self-check** — ``OutputSelfCheck`` FastMCP middleware: a result that violates its tool's
    published output schema never leaves as a success (-32603 instead), a tool's own failure becomes a
    conforming ``isError`` result, an unknown tool a JSON-RPC -32602 error.
(c) **Authorized completion** — when ``completions`` is given it becomes the server's completion handler
    (per-value authorization, ≤ 100 values with ``total``/``hasMore``, per-caller rate limit).
(d) **Cursor hygiene** — a listing cursor the server never issued is refused with -32602: FastMCP 4.2
    decodes its own cursors (garbage already fails), but without ``list_page_size`` it ignores any cursor
    and treats ``""`` as "first page" even when paginating. The list handlers are wrapped for that.

Call it after configuring the server's transforms. (b)–(d) install onto ``server`` itself (FastMCP
has no per-app middleware); installing is idempotent, so calling ``gated_http_app`` twice on one server
does not stack gates. Notifications pass every gate untouched and get no JSON-RPC response.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

import mcp_types
from fastmcp import FastMCP
from mcp.shared.exceptions import MCPError
from starlette.middleware import Middleware as StarletteMiddleware

from agent_connector_sdk.mcp.server.completion import AuthorizedCompletions
from agent_connector_sdk.mcp.server.header_gate import install_header_gate
from agent_connector_sdk.mcp.server.header_parity import AuditSink, HeaderParityMiddleware
from agent_connector_sdk.mcp.server.output_check import OutputSelfCheck, ResolvedToolRecorder

__all__ = ["gated_http_app", "install_gates"]

_LIST_METHODS: tuple[tuple[str, str], ...] = (
    ("tools/list", "_on_list_tools"),
    ("prompts/list", "_on_list_prompts"),
    ("resources/list", "_on_list_resources"),
    ("resources/templates/list", "_on_list_resource_templates"),
)
_CURSOR_GUARD_MARK = "_agent_connector_sdk_cursor_guard"


def install_gates(
    server: FastMCP[Any],
    *,
    output_check: OutputSelfCheck | None = None,
    completions: AuthorizedCompletions | None = None,
    header_audit: AuditSink | None = None,
) -> None:
    """Install the server-side gates on ``server`` (idempotent except ``completions``; see the module
    docstring): header parity inside tool resolution (a), output self-check (b), completions (c) and
    cursor hygiene (d). (a) also needs ``HeaderParityMiddleware`` in the HTTP app for handshake-era
    calls; ``gated_http_app`` adds it."""
    install_header_gate(server, audit=header_audit)
    if not any(isinstance(existing, OutputSelfCheck) for existing in server.middleware):
        server.add_middleware(output_check if output_check is not None else OutputSelfCheck())
    if not any(isinstance(existing, ResolvedToolRecorder) for existing in server.transforms):
        # Outermost (added last), so the output check sees each tool exactly as served. Transforms added
        # to the server after this still work; the check then re-resolves tools it cannot match.
        server.add_transform(ResolvedToolRecorder())
    if completions is not None:
        completions.install(server)
    _guard_cursors(server)


def gated_http_app(
    server: FastMCP[Any],
    *,
    output_check: OutputSelfCheck | None = None,
    completions: AuthorizedCompletions | None = None,
    header_audit: AuditSink | None = None,
    **http_app_kwargs: Any,
) -> Any:
    """``server.http_app(**http_app_kwargs)`` with the contract gates on (see the module docstring).

    ``output_check`` replaces the default ``OutputSelfCheck()`` (e.g. to supply conforming error
    payloads); ``completions`` becomes the completion handler; ``header_audit`` receives the header
    gate's audit events (names and categories only). A ``middleware=[...]`` argument is kept: the
    header gate is appended after it, so it runs innermost.
    """
    install_gates(server, output_check=output_check, completions=completions, header_audit=header_audit)
    gate_options: dict[str, Any] = {"server": server}
    if header_audit is not None:
        gate_options["audit"] = header_audit
    middleware = list(http_app_kwargs.pop("middleware", None) or [])
    middleware.append(StarletteMiddleware(HeaderParityMiddleware, **gate_options))
    return server.http_app(middleware=middleware, **http_app_kwargs)


ListHandler = Callable[[Any, mcp_types.PaginatedRequestParams | None], Awaitable[Any]]


def _guard_cursors(server: FastMCP[Any]) -> None:
    """Wrap FastMCP's own list handlers so cursors it never issues are refused with -32602.

    A handler someone registered in FastMCP's place issues its own cursors and is left alone.
    """
    if getattr(server, _CURSOR_GUARD_MARK, False):
        return
    # FastMCP registers these bound methods on its low-level server in `_setup_handlers`; there is no
    # public hook for list params (list middleware sees `params=None`), so the handler is re-registered.
    low_level = server._mcp_server
    for method, attribute in _LIST_METHODS:
        own = cast(ListHandler, getattr(server, attribute))
        entry = low_level.get_request_handler(method)
        if entry is None or entry.handler != own:
            continue
        low_level.add_request_handler(method, mcp_types.PaginatedRequestParams, _guarded(server, own))
    setattr(server, _CURSOR_GUARD_MARK, True)


def _guarded(server: FastMCP[Any], handler: ListHandler) -> ListHandler:
    async def guarded(ctx: Any, params: mcp_types.PaginatedRequestParams | None) -> Any:
        cursor = params.cursor if params is not None else None
        # FastMCP issues cursors only when it paginates, and never the empty string.
        if cursor is not None and (server._list_page_size is None or cursor == ""):
            raise MCPError(code=mcp_types.INVALID_PARAMS, message="Invalid cursor")
        return await handler(ctx, params)

    return guarded
