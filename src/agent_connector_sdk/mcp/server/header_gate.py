"""Execute gate inside FastMCP's own tool resolution: ``Mcp-Param-*`` parity without a second lookup.

``HeaderParityMiddleware`` (ASGI) must resolve the called tool itself (``server.get_tool``, ~80 µs: FastMCP
spawns a task per provider) before the server resolves it again to run it. ``install_header_gate(server)``
moves the check to the one resolution the server performs anyway: it wraps the server's ``get_tool`` so
that, when the result is the tool a ``tools/call`` over HTTP is about to run, the request's headers are
checked against the request's own ``arguments`` (read from FastMCP's request context, the same parsed
body the server dispatches) with the same ``parameter_header_refusal`` the ASGI gate uses. A refusal is an
``MCPError(-32020)`` raised before the tool runs; ``mcp``'s 2026-07-28 transport maps it to HTTP 400.

Why ``get_tool`` and not a transform: transforms run *before* FastMCP's own enabled/auth filtering and
its version fallback, so a transform sees candidates the server may still discard (a disabled highest
version, a tool this caller may not use) and would answer -32020 about them. ``FastMCP.get_tool``'s result
is exactly the tool ``call_tool`` executes, after every transform, visibility rule and component-auth
check — the same resolution the ASGI gate's lookup made, so auth still applies to the check.

Which lookups are checked: only one whose name is the wire request's ``params.name`` (nested lookups for
other names — a search transform's ``call_tool`` proxy resolving its target, a tool body looking
something up — are not the call being made), once per request. A call to a search transform's
``call_tool`` proxy is also checked against the *proxied* tool and ``arguments.arguments`` when the proxy
resolves, so the refusal is a -32020 of the outer call (inside the proxy it would become an ``isError``
result). Calls without an HTTP request (in-memory, stdio) carry no headers and are not checked.
Handshake-era calls that carry ``Mcp-Param-*`` headers are checked here too (fail closed), but their
transports answer -32020 with HTTP 200, so ``HeaderParityMiddleware`` checks them first in ASGI (each
such call then yields two audit events; 2026-07-28 calls yield one).

It also switches off ``mcp``'s own pre-dispatch header check (``get_tool_input_schema``), which covers only
tools FastMCP has listed and answers without ``data``: this gate checks every tool with a stricter codec
(a superset), and running both would make the answer depend on which fired first.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from fastmcp import FastMCP
from fastmcp.server.dependencies import fastmcp_request_ctx
from fastmcp.tools import Tool
from fastmcp.utilities.versions import VersionSpec
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agent_connector_sdk.mcp.contracts.errors import HEADER_MISMATCH_CODE
from agent_connector_sdk.mcp.server.header_parity import (
    RESOLUTION_GATE_MARK,
    AuditSink,
    _log_audit,
    parameter_header_refusal,
    proxy_tool_names,
)

__all__ = ["install_header_gate"]

GetTool = Callable[[str, VersionSpec | None], Awaitable[Tool | None]]

_PARAM_PREFIX: Final = b"mcp-param-"
_PROTOCOL_VERSION: Final = b"mcp-protocol-version"

# The request context already checked in this task: a second lookup of the same name within one call
# (FastMCP's version fallback re-enters `get_tool`; a check falling back to `get_tool`) is not re-checked,
# so each call yields exactly one verdict and one audit event.
_CHECKED: contextvars.ContextVar[object | None] = contextvars.ContextVar(
    "agent_connector_sdk_header_gate_checked", default=None
)


def install_header_gate(server: FastMCP[Any], *, audit: AuditSink | None = None) -> None:
    """Enforce header parity inside ``server``'s tool resolution (idempotent; see the module docstring).

    ``audit`` receives the gate's events (names and categories only; default: the ``header_parity``
    logger). After this, ``HeaderParityMiddleware`` lets 2026-07-28 calls through untouched.
    """
    if getattr(server, RESOLUTION_GATE_MARK, False):
        return
    sink: AuditSink = audit if audit is not None else _log_audit
    original: GetTool = server.get_tool

    async def get_tool(name: str, version: VersionSpec | None = None) -> Tool | None:
        tool = await original(name, version)
        if tool is not None:
            await _check_call(server, original, sink, name, tool)
        return tool

    # FastMCP offers no hook between "resolved, filtered, authorized" and "run"; its `call_tool` resolves
    # through `self.get_tool`, so an instance attribute is the one place that sees the final answer.
    setattr(server, "get_tool", get_tool)  # noqa: B010 (mypy refuses assigning to a method)
    # mcp's pre-dispatch check would answer listed tools first, without `data`; ours covers it (superset).
    server._mcp_server.get_tool_input_schema = _no_input_schema
    setattr(server, RESOLUTION_GATE_MARK, True)


def _no_input_schema(name: str) -> dict[str, Any] | None:
    return None  # "unknown": mcp skips its own check; `install_header_gate` checks every tool instead


async def _check_call(server: FastMCP[Any], lookup: GetTool, audit: AuditSink, name: str, tool: Tool) -> None:
    request_ctx = fastmcp_request_ctx.get()
    if request_ctx is None or request_ctx.request is None:
        return  # no HTTP request (in-memory, stdio, a lookup outside any call): no headers to disagree
    sdk_ctx = getattr(request_ctx, "_srctx", None)
    method = getattr(sdk_ctx, "method", None)
    params = getattr(sdk_ctx, "params", None)
    if method is None or not isinstance(params, Mapping):
        # FastMCP changed shape: the gate cannot see the call, so it refuses rather than pass it unchecked.
        raise MCPError(code=INTERNAL_ERROR, message="parameter header gate cannot read the request")
    if method != "tools/call" or params.get("name") != name or _CHECKED.get() is sdk_ctx:
        return
    _CHECKED.set(sdk_ctx)
    arguments = params.get("arguments") if params.get("arguments") is not None else {}
    if not isinstance(arguments, Mapping):
        return  # the server answers malformed params itself
    headers = _gate_headers(request_ctx.request.headers.raw)
    if headers is None:
        return
    _refuse_if_mismatched(tool, arguments, headers, audit)
    if name in proxy_tool_names(server):
        target = arguments.get("name")
        inner = arguments.get("arguments") if arguments.get("arguments") is not None else {}
        if not isinstance(target, str) or not isinstance(inner, Mapping) or target == name:
            return  # the proxy refuses these itself
        proxied = await lookup(target, None)  # the resolution the proxy's own `call_tool` will make
        if proxied is not None:
            _refuse_if_mismatched(proxied, inner, headers, audit)


def _gate_headers(raw: list[tuple[bytes, bytes]]) -> list[tuple[str, str]] | None:
    """The ``Mcp-Param-*`` header pairs (duplicates kept) when the gate applies to the call, else ``None``."""
    params: list[tuple[str, str]] = []
    modern = False
    for key, value in raw:
        folded = key.lower()
        if folded.startswith(_PARAM_PREFIX):
            params.append((key.decode("latin-1"), value.decode("latin-1")))
        elif folded == _PROTOCOL_VERSION and value.decode("latin-1") in MODERN_PROTOCOL_VERSIONS:
            modern = True
    # The rule of `header_parity._gate_applies`, on raw bytes: Mcp-Param headers exist from 2026-07-28 on;
    # an older call is checked only when it carries one anyway.
    return params if params or modern else None


def _refuse_if_mismatched(
    tool: Tool, arguments: Mapping[str, Any], headers: list[tuple[str, str]], audit: AuditSink
) -> None:
    refusal = parameter_header_refusal(tool, arguments, headers, audit)
    if refusal is not None:
        message, data = refusal
        raise MCPError(code=HEADER_MISMATCH_CODE, message=message, data=data)
