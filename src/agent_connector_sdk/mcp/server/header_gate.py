"""The resolution entry point of the Execute gate: header parity and argument validation on the tool
FastMCP is about to run, inside FastMCP's own tool resolution (no second lookup).

:class:`ResolutionGate` shadows the server's ``get_tool`` (through :mod:`agent_connector_sdk.mcp.compat`).
When the resolved tool is the one the current ``tools/call`` is about to run, it

1. checks the request's ``Mcp-Param-*`` headers with the one checker, :class:`.HeaderParityGate` — unless
   the ASGI entry already checked this request (``request.state``; see :mod:`.header_parity`). A
   refusal is an ``MCPError(-32020)`` raised before the tool runs; ``mcp``'s 2026-07-28 transport maps
   it to HTTP 400. Calls without an HTTP request (in-memory, stdio) carry no headers and are not
   checked;
2. validates the call's ``arguments`` against the tool's published ``inputSchema`` (Invoke rule, on the
   server: many tools never validate — FastMCP's OpenAPI tools, raw ``Tool`` subclasses). Invalid
   arguments raise :class:`ArgumentsRefused` (a ``ToolError``), which the output self-check answers with
   a conforming ``isError`` result naming the failing JSON path and keyword, never the value, as the
   spec's input-validation rule asks. The tool does not run. Through a search transform's ``call_tool``
   proxy, the *proxied* tool's ``arguments.arguments`` are validated the same way.

Why ``get_tool`` and not a transform: transforms run *before* FastMCP's own enabled/auth filtering and
its version fallback, so a transform sees candidates the server may still discard (a disabled highest
version, a tool this caller may not use) and would answer about them. ``FastMCP.get_tool``'s result
is exactly the tool ``call_tool`` executes, after every transform, visibility rule and component-auth
check. Only the lookup whose name is the wire request's ``params.name`` is the call being made (nested
lookups for other names are not), and it is checked once per request.

It also switches off ``mcp``'s own pre-dispatch header check (covers only listed tools, answers without
``data``): this gate checks every tool with a stricter codec, a superset.
"""

from __future__ import annotations

import contextvars
from collections.abc import Mapping
from typing import Any, ClassVar

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools import Tool
from fastmcp.utilities.versions import VersionSpec
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR

from agent_connector_sdk.errors import AgentConnectorError, Gate
from agent_connector_sdk.mcp import compat
from agent_connector_sdk.mcp.contracts.errors import HEADER_MISMATCH_CODE, ArgumentCategory
from agent_connector_sdk.mcp.contracts.validation import validate_instance
from agent_connector_sdk.mcp.server.header_parity import (
    REQUEST_STATE_KEY,
    AuditTarget,
    HeaderParityGate,
    gate_applies,
    proxy_tool_names,
)
from agent_connector_sdk.mcp.server.logsafe import quoted

__all__ = ["ArgumentsRefused", "ResolutionGate", "install_header_gate", "install_resolution_gate"]

# The request context already checked in this task: a second lookup of the same name within one call
# (FastMCP's version fallback re-enters `get_tool`) is not re-checked, so each call has one verdict.
_CHECKED: contextvars.ContextVar[object | None] = contextvars.ContextVar(
    "agent_connector_sdk_resolution_gate_checked", default=None
)


class ArgumentsRefused(ToolError, AgentConnectorError):
    """The call's arguments break the tool's published ``inputSchema``; the tool was not run.

    ``category`` is ``invalid_arguments`` (or the schema's own failure: ``invalid_schema``,
    ``unsupported_dialect``, ``unresolvable_ref``); ``path`` a JSON pointer into the arguments, ``keyword``
    the failing schema keyword. The message carries the tool name, path and keyword, never a value.
    """

    # A ToolError so FastMCP answers a conforming ``isError`` result (the spec's input-validation rule);
    # an AgentConnectorError so it routes like every other refusal. The server runs it: Execute.
    gate: ClassVar[Gate | None] = "execute"
    category: ArgumentCategory

    def __init__(self, tool: str, category: ArgumentCategory, path: str, keyword: str, detail: str) -> None:
        self.tool = tool
        self.path = path
        self.keyword = keyword
        AgentConnectorError.__init__(self, category, _argument_message(tool, category, path, keyword, detail))


def _argument_message(tool: str, category: str, path: str, keyword: str, detail: str) -> str:
    if category != "invalid_arguments":
        return f"tool {tool!r} cannot validate its arguments ({category}): {detail}"
    if keyword == "required":
        return f"invalid arguments for tool {tool!r}: required argument '{path}' is missing"
    if keyword:
        return (
            f"invalid arguments for tool {tool!r}: value at '{path or '/'}' fails schema keyword '{keyword}'"
        )
    return f"invalid arguments for tool {tool!r}: {detail}"


class ResolutionGate:
    """The callable installed in place of ``server.get_tool`` (see the module docstring)."""

    def __init__(
        self,
        server: FastMCP[Any],
        original: compat.GetTool,
        *,
        headers: HeaderParityGate | None,
        arguments: bool,
    ) -> None:
        self.server = server
        self.original = original
        self.headers = headers
        self.arguments = arguments

    async def __call__(self, name: str, version: VersionSpec | None = None) -> Tool | None:
        tool = await self.original(name, version)
        if tool is not None:
            await self._check_call(name, tool)
        return tool

    async def _check_call(self, name: str, tool: Tool) -> None:
        current = compat.wire_request()
        if current is None:
            return  # a lookup outside any request
        request_ctx, method, params = current
        if method is None or not isinstance(params, Mapping):
            # FastMCP changed shape: the gate cannot see the call, so it refuses rather than let it pass.
            raise MCPError(code=INTERNAL_ERROR, message="execute gate cannot read the request")
        if method != "tools/call" or params.get("name") != name or _CHECKED.get() is request_ctx:
            return
        _CHECKED.set(request_ctx)
        arguments = params.get("arguments") if params.get("arguments") is not None else {}
        if not isinstance(arguments, Mapping):
            return  # the server answers malformed params itself
        request = request_ctx.request
        if self.headers is not None and request is not None and not _checked_by_asgi(request):
            headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]
            if gate_applies(headers):
                refusal = await self.headers.check(self.server, tool, arguments, headers, self.original)
                if refusal is not None:
                    message, data = refusal
                    raise MCPError(code=HEADER_MISMATCH_CODE, message=message, data=data)
        if self.arguments:
            _validate(tool, arguments)
        if name in proxy_tool_names(self.server):
            target = arguments.get("name")
            inner = arguments.get("arguments") if arguments.get("arguments") is not None else {}
            if isinstance(target, str) and isinstance(inner, Mapping) and target != name:
                proxied = await self.original(target, None)  # what the proxy's call_tool resolves
                if proxied is None:
                    # Answered here, before the proxy runs: FastMCP would log a full traceback per call
                    # (with the caller's chosen name in it) for what is only a caller's mistake.
                    raise ToolError(f"Unknown tool: {quoted(target)}")
                if self.arguments:
                    _validate(proxied, inner)


def _checked_by_asgi(request: Any) -> bool:
    state = request.scope.get("state")
    return isinstance(state, Mapping) and state.get(REQUEST_STATE_KEY) is True


def _validate(tool: Tool, arguments: Mapping[str, Any]) -> None:
    # jsonschema's "object" type is `dict`; a read-only Mapping view must not fail as "not an object".
    instance = arguments if isinstance(arguments, dict) else dict(arguments)
    failure = validate_instance(tool.parameters, instance)
    if failure is None:
        return
    category: ArgumentCategory = "invalid_arguments" if failure.kind == "instance" else failure.kind
    raise ArgumentsRefused(tool.name, category, failure.path, failure.keyword, failure.message)


def install_resolution_gate(
    server: FastMCP[Any], headers: HeaderParityGate | None, *, arguments: bool = True
) -> ResolutionGate:
    """Install the resolution entry on ``server`` (idempotent: an installed gate is returned as is)."""
    installed = compat.installed_tool_resolution(server)
    if isinstance(installed, ResolutionGate):
        return installed
    gate: ResolutionGate | None = None

    def make(original: compat.GetTool) -> compat.GetTool:
        nonlocal gate
        gate = ResolutionGate(server, original, headers=headers, arguments=arguments)
        return gate

    compat.replace_tool_resolution(server, make)
    compat.disable_sdk_parameter_header_check(server)
    assert gate is not None
    return gate


def install_header_gate(server: FastMCP[Any], *, audit: AuditTarget | None = None) -> None:
    """Enforce header parity (and argument validation) inside ``server``'s tool resolution.

    Idempotent. ``audit`` receives the gate's events (names and categories only). Kept for
    compatibility; :class:`~agent_connector_sdk.mcp.server.ServerGates` installs the same thing.
    """
    install_resolution_gate(server, HeaderParityGate(audit=audit))
