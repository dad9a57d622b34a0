"""The Execute gate's one resolution hook and the one per-request record.

:class:`ResolutionGate` shadows the server's ``get_tool`` (through :mod:`agent_connector_sdk.mcp.compat`).
When the resolved tool is the one the current ``tools/call`` is about to run, it

1. refuses a header-annotated argument whose body value is not of its annotated type (``region: 5``
   for a string, sent with ``Mcp-Param-Region: 5``) as the caller's invalid argument
   (:func:`mistyped_header_argument`), not as a header disagreement;
2. judges the request's ``Mcp-Param-*`` headers with the one checker, :class:`.HeaderParityGate`
   (:meth:`ResolutionGate._judge_headers`, the only caller of the verdict). A refusal is an
   ``MCPError(-32020)`` raised before the tool runs; ``mcp``'s 2026-07-28 transport maps it to HTTP 400.
   The handshake-era transports would answer it with HTTP 200, so the ASGI entry (:mod:`._entry`) hands
   their calls, parsed, to :meth:`ResolutionGate.judge_before_dispatch`, which resolves the tool as this
   caller sees it and judges the same way before the app runs (the entry answers HTTP 400); dispatch
   then does not judge that call again unless it resolves a different tool. Calls without an HTTP
   request (in-memory, stdio) carry no headers and are not judged;
   then validates the call's ``arguments`` against the tool's published ``inputSchema`` (Invoke rule, on
   the server: many tools never validate — FastMCP's OpenAPI tools, raw ``Tool`` subclasses). Invalid
   arguments (1 included) raise :class:`ArgumentsRefused` (a ``ToolError``), which the output self-check
   answers with an ``isError`` result naming the failing argument path and keyword, never the value, as
   the spec's input-validation rule asks. The tool does not run;
3. through a search transform's ``call_tool`` proxy (:func:`._parity.unwrap_proxy`), resolves the
   *proxied* tool once — as the proxy's own ``call_tool`` will — and applies 1 and 2 to it with
   ``arguments.arguments``, except that its headers are checked when sent and never required: a client
   computes headers from the schema of the tool it names, and ``call_tool``'s annotates nothing. A
   direct call's ``missing`` refusal names the proxy as the other way to call the tool.

Everything learnt about the call goes into its one :class:`~._record.CallRecord`: which tool's headers
were judged, the tool resolved (so each call is checked once, even when FastMCP's version
fallback re-enters ``get_tool``) and the proxied tool. The output self-check reads the tool that ran
from it instead of resolving it a second time.

Why ``get_tool`` and not a transform: transforms run *before* FastMCP's own enabled/auth filtering and
its version fallback, so a transform sees candidates the server may still discard (a disabled highest
version, a tool this caller may not use) and would answer about them. ``FastMCP.get_tool``'s result
is exactly the tool ``call_tool`` executes, after every transform, visibility rule and component-auth
check. Only the lookup whose name is the wire request's ``params.name`` is the call being made (nested
lookups for other names are not).

Installing also switches off ``mcp``'s own pre-dispatch header check (covers only listed tools, answers
without ``data``): this gate checks every tool with a stricter codec, a superset.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, MutableMapping
from typing import Any, ClassVar

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.dependencies import extract_version_spec
from fastmcp.tools import Tool
from fastmcp.utilities.versions import VersionSpec
from mcp.shared.exceptions import MCPError

from agent_connector_sdk.core.contracts import header_annotations, header_text, validate_instance
from agent_connector_sdk.core.contracts.errors import (
    HEADER_MISMATCH_CODE,
    AdmissionError,
    ArgumentCategory,
    HeaderValueError,
)
from agent_connector_sdk.errors import AgentConnectorError, Gate
from agent_connector_sdk.mcp import compat
from agent_connector_sdk.mcp.server._logsafe import quoted
from agent_connector_sdk.mcp.server._parity import (
    HeaderParityGate,
    HeaderRefusal,
    gate_applies,
    search_proxy_name,
    unwrap_proxy,
)
from agent_connector_sdk.mcp.server._record import CallRecord, call_record, http_call_record
from agent_connector_sdk.mcp.server._refusals import header_mismatch, internal_error
from agent_connector_sdk.mcp.server._telemetry import record_gate

__all__ = [
    "ArgumentsRefused",
    "ResolutionGate",
    "argument_refusal",
    "install_resolution",
    "mistyped_header_argument",
]

# Named as before the file moved: operators filter logs on this name.
_logger = logging.getLogger("agent_connector_sdk.mcp.server.resolution")


class ArgumentsRefused(ToolError, AgentConnectorError):
    """The call's arguments break the tool's published ``inputSchema``; the tool was not run.

    ``category`` is ``invalid_arguments`` (or the schema's own failure: ``invalid_schema``,
    ``unsupported_dialect``, ``unresolvable_ref``); ``path`` a JSON pointer into the arguments, ``keyword``
    the failing schema keyword. The message carries the tool name, path and keyword, never a value.
    """

    # A ToolError so FastMCP answers an ``isError`` result (the spec's input-validation rule); an
    # AgentConnectorError so it routes like every other refusal. The server runs it: Execute.
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


def argument_refusal(tool: Tool, arguments: Mapping[str, Any]) -> ArgumentsRefused | None:
    """The refusal of ``arguments`` against ``tool``'s published ``inputSchema``, else ``None``."""
    # jsonschema's "object" type is `dict`; a read-only Mapping view must not fail as "not an object".
    instance = arguments if isinstance(arguments, dict) else dict(arguments)
    failure = validate_instance(tool.parameters, instance)
    if failure is None:
        return None
    category: ArgumentCategory = "invalid_arguments" if failure.kind == "instance" else failure.kind
    return ArgumentsRefused(tool.name, category, failure.path, failure.keyword, failure.message)


def mistyped_header_argument(tool: Tool, arguments: Mapping[str, Any]) -> ArgumentsRefused | None:
    """The refusal of the first header-annotated argument whose body value is not of its annotated type.

    The type rule is the client's own (``contracts._headers.header_text``, which a client uses to write
    the header), so the two ends agree on what "not of the annotated type" is. Invalid annotations are
    left to the header check (it refuses them, fail closed).
    """
    try:
        annotations = header_annotations(tool.parameters)
    except AdmissionError:
        return None
    for annotation in annotations:
        value = _argument_at(arguments, annotation.path)
        if value is None:
            continue
        try:
            header_text(value, annotation.type)
        except HeaderValueError as refused:
            if refused.category != "type_mismatch":
                continue  # e.g. an integer beyond the safe range: the header check answers for it
            path = "/" + "/".join(step.replace("~", "~0").replace("/", "~1") for step in annotation.path)
            return ArgumentsRefused(
                tool.name, "invalid_arguments", path, "type", f"argument is not a JSON {annotation.type}"
            )
    return None


def _argument_at(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = arguments
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


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
            try:
                await self._check_call(name, tool)
            except ArgumentsRefused as refused:
                record_gate("arguments", "refused", refused.category)
                raise
            except MCPError as refused:
                data = refused.error.data if isinstance(refused.error.data, Mapping) else {}
                gate = "parity" if refused.error.code == HEADER_MISMATCH_CODE else "resolution"
                record_gate(
                    gate, "refused", str(data.get("category", gate)), error_type=str(refused.error.code)
                )
                raise
            except ToolError:
                record_gate("resolution", "refused", "unknown_tool")
                raise
        return tool

    async def _check_call(self, name: str, tool: Tool) -> None:
        current = compat.wire_request()
        if current is None:
            return  # a lookup outside any request
        request_ctx, method, params = current
        if method is None or not isinstance(params, Mapping):
            # FastMCP changed shape: the gate cannot see the call, so it refuses rather than let it pass.
            raise internal_error("execute gate cannot read the request")
        if method != "tools/call" or params.get("name") != name:
            return
        record = call_record(request_ctx)
        if record.tool is not None:
            return  # this call was checked already (e.g. FastMCP's version fallback re-resolving)
        record.name, record.tool = name, tool
        arguments = params.get("arguments") if params.get("arguments") is not None else {}
        if not isinstance(arguments, Mapping):
            return  # the server answers malformed params itself
        proxy_call, proxied = await self._proxied(name, arguments)
        if proxied is not None:
            record.proxied = proxied[0]
        if self.arguments:
            # A body value that is not of its header-annotated type is the caller's invalid argument:
            # the header then cannot agree with it, but -32020 would blame the header.
            _raise(mistyped_header_argument(tool, arguments))
            if proxied is not None:
                _raise(mistyped_header_argument(*proxied))
        request = request_ctx.request
        judged = record.judged
        if request is not None and not (judged is not None and _same_tool(judged, tool)):
            headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]
            refusal = self._judge_headers(tool, arguments, headers, proxied, record)
            if refusal is not None:
                message, data = refusal
                raise header_mismatch(message, data)
        if self.arguments:
            _raise(argument_refusal(tool, arguments))
        if proxy_call is not None:
            if proxied is None:
                # Answered here, before the proxy runs: FastMCP would log a full traceback per call
                # (with the caller's chosen name in it) for what is only a caller's mistake.
                raise ToolError(f"Unknown tool: {quoted(proxy_call[0])}")
            if self.arguments:
                _raise(argument_refusal(*proxied))

    async def judge_before_dispatch(
        self, scope: MutableMapping[str, Any], params: Mapping[str, Any], headers: list[tuple[str, str]]
    ) -> HeaderRefusal | None:
        """The header verdict on a ``tools/call`` (its ``params``) before the app runs, for the ASGI entry.

        Resolves the tool as this caller sees it (the entry runs inside authentication) and judges as
        dispatch would (:meth:`_judge_headers`), recording in the request's one record which tool was
        judged. ``None`` also when there is nothing to judge here: malformed params, an unknown tool (the
        server answers its own error), or a mistyped header-annotated argument (answered in dispatch
        as invalid arguments, not as a header disagreement).
        """
        name = params.get("name")
        arguments = params.get("arguments") if params.get("arguments") is not None else {}
        if not isinstance(name, str) or not isinstance(arguments, Mapping):
            return None
        tool = await self._lookup(name, _version(params))
        if tool is None:
            return None
        _, proxied = await self._proxied(name, arguments)
        if self.arguments and (
            mistyped_header_argument(tool, arguments) is not None
            or (proxied is not None and mistyped_header_argument(*proxied) is not None)
        ):
            return None
        return self._judge_headers(tool, arguments, headers, proxied, http_call_record(scope))

    def _judge_headers(
        self,
        tool: Tool,
        arguments: Mapping[str, Any],
        headers: list[tuple[str, str]],
        proxied: tuple[Tool, Mapping[str, Any]] | None,
        record: CallRecord,
    ) -> HeaderRefusal | None:
        """The one call of the header verdict (:meth:`.HeaderParityGate.check`) per request."""
        record.judged = tool
        if self.headers is None or not gate_applies(headers):
            return None
        return self.headers.check(
            tool, arguments, headers, proxied, proxy_name=search_proxy_name(self.server)
        )

    async def _proxied(
        self, name: str, arguments: Mapping[str, Any]
    ) -> tuple[tuple[str, Mapping[str, Any]] | None, tuple[Tool, Mapping[str, Any]] | None]:
        """The proxy call (target name, inner arguments) and the proxied tool as its ``call_tool`` will
        resolve it, when ``name`` is a search transform's ``call_tool`` proxy."""
        proxy_call = unwrap_proxy(self.server, name, arguments)
        if proxy_call is None:
            return None, None
        found = await self.original(proxy_call[0], None)
        return proxy_call, (None if found is None else (found, proxy_call[1]))

    async def _lookup(self, name: str, version: VersionSpec | None) -> Tool | None:
        try:
            return await self.original(name, version)
        except Exception:
            # A lookup that fails (e.g. a provider error) is not a verdict on the headers: the server
            # fails the same lookup for the real call and answers with its own error.
            _logger.debug("header verdict before dispatch: tool lookup failed", exc_info=True)
            return None


def _same_tool(judged: Tool, resolved: Tool) -> bool:
    """Whether the tool judged before dispatch is the one dispatch resolved (else it is judged again)."""
    return judged is resolved or (
        judged.name == resolved.name
        and judged.version == resolved.version
        and judged.parameters == resolved.parameters
    )


def _version(params: Mapping[str, Any]) -> VersionSpec | None:
    meta = params.get("_meta")
    spec = extract_version_spec(dict(meta)) if isinstance(meta, Mapping) else None
    return VersionSpec(eq=spec) if spec else None


def _raise(refusal: ArgumentsRefused | None) -> None:
    if refusal is not None:
        raise refusal


def install_resolution(
    server: FastMCP[Any], headers: HeaderParityGate | None, *, arguments: bool = True
) -> ResolutionGate:
    """Install the resolution hook on ``server`` (idempotent: an installed hook is returned as is)."""
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
