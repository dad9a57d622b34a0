"""Server-side output self-check: a result that breaks its own tool's published contract never ships.

``OutputSelfCheck`` is FastMCP middleware (``on_call_tool``). Around every ``tools/call`` it:

* turns an **unknown or disabled tool** into a JSON-RPC error ``-32602`` (FastMCP 4.2 answers with an
  ``isError`` result, which tells a client the tool exists and failed);
* turns a **tool's own failure** (FastMCP raises ``ToolError``/``ValidationError`` out of ``call_next``)
  into an ``isError: true`` result that *still conforms*: when the tool publishes an ``outputSchema`` our
  policy requires conforming ``structuredContent`` even on errors, so the check takes the tool's own
  failure payload when the tool models its failures (:class:`ModelsItsFailures`, e.g. the OpenAPI
  connector's failure envelope) and that payload conforms, else asks
  ``error_structured_content(tool_name, output_schema)`` for a payload (default: the first of ``[]``,
  ``{}``, ``""``, ``0``, ``false`` that validates; JSON ``null`` is not offered because FastMCP cannot put
  a null ``structuredContent`` on the wire). The result's *first* text block is the failure text (cut
  to ``ERROR_TEXT_LIMIT`` characters, so an upstream error body arrives as a bounded excerpt); the
  payload's JSON serialization follows it. When no conforming payload exists the failure becomes a
  JSON-RPC ``-32603`` error carrying the same text instead — never a non-conforming result, at any
  protocol revision (for handshake-era clients FastMCP wraps a non-object value in ``{"result": ...}``
  under the wrapper schema it advertises there; an object payload for an object schema is sent as it
  is, so it conforms to the schema as advertised at both revisions). Invalid arguments
  (``ArgumentsRefused`` from the resolution hook) are such a failure: the tool never ran;
* checks an interim ``InputRequiredResult`` (SEP-2322) with
  ``contracts._input_required.validate_input_required_result`` against the capabilities the client
  declared on this request: one that asks for input the client cannot give (or is empty, or malformed)
  becomes a JSON-RPC ``-32603`` error with ``data = {tool, category, path}``, like a contract violation;
* runs ``contracts._results.validate_tool_result`` on every final result against the descriptor this server
  publishes. A **violation** (e.g. the schema promises an object and the tool returned an array) is a
  JSON-RPC ``-32603`` error with ``data = {tool, category, path}``. Decision: not an ``isError``
  result, because (a) a conforming error result cannot be synthesized for arbitrary schemas and (b) the
  model cannot fix a server bug by retrying, which is what ``isError`` invites. Exception: a result
  with *no* ``structuredContent`` (the tool produced no value — e.g. an upstream answering garbage) is
  a failed call, answered as a conforming ``isError`` result; so is a value of a tool that answers for
  an upstream (:class:`AnswersForAnUpstream`, the OpenAPI connector's tools) breaking the response
  schema the upstream declares (category ``upstream_contract``, the pointer and keyword in the text).
  Every JSON-RPC error is built by the translator (:mod:`._refusals`).

Finding the descriptor costs nothing extra: the resolution hook (:mod:`._resolution`) records the tool
FastMCP resolved for the call (and, through a search proxy, the proxied tool) in the call's one
:class:`~._record.CallRecord`, so the check reads the very tool that ran instead of resolving it a
second time (a ``server.get_tool`` costs ~80 µs, more than the check itself). Without that record (a
server without the hook) the check falls back to ``server.get_tool``.

Two exceptions for relays (the gateway), whose tools return another server's results:

* a tool that raises :class:`WireRefusal` (a failure it cannot model inside its output schema: the
  server behind it is down, slow, or answered outside its contract) is answered with that JSON-RPC
  error — never an ``isError`` result holding a placeholder the tool did not produce;
* a tool whose class says ``relays_results = True`` has its results checked in the ``default``
  profile: spec rules still withhold a result, but the project's stricter rules (a text serialization
  beside ``structuredContent``, conforming ``structuredContent`` on an error) are findings, and the
  result is sent exactly as the server behind produced it — no second copy of its value added, no
  placeholder invented. The relay's host side already judged that result and audited the findings;
  a result whose class says it passed that Consume gate against the schemas the tool publishes
  (``consumed_against_published_contract``) is not validated a second time.

Messages and ``data`` name the tool, category and JSON path — never result or argument values.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any, Protocol, runtime_checkable

import mcp_types
from fastmcp.exceptions import DisabledError, FastMCPError, NotFoundError, ToolError
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.server.transforms.catalog import CatalogTransform
from fastmcp.tools.base import InputRequiredToolResult, RawStructuredToolResult, Tool, ToolResult
from fastmcp.utilities.json_schema import is_object_schema
from mcp.shared.exceptions import MCPError

from agent_connector_sdk.core.contracts import (
    validate_input_required_result,
    validate_instance,
    validate_tool_result,
)
from agent_connector_sdk.core.contracts.errors import ContractViolation
from agent_connector_sdk.errors import iter_causes
from agent_connector_sdk.mcp import compat
from agent_connector_sdk.mcp.server._logsafe import quoted
from agent_connector_sdk.mcp.server._record import resolved_tool
from agent_connector_sdk.mcp.server._refusals import internal_error, invalid_params, wire_error
from agent_connector_sdk.mcp.server._telemetry import record_gate

__all__ = [
    "ERROR_TEXT_LIMIT",
    "ErrorPayloadFactory",
    "ModelsItsFailures",
    "OutputSelfCheck",
    "bounded_error_text",
    "first_conforming_placeholder",
    "relay_refusal",
]

# Named as before the file moved: operators filter logs on this name.
logger = logging.getLogger("agent_connector_sdk.mcp.server.output_check")

ErrorPayloadFactory = Callable[[str, Mapping[str, Any]], Any]
"""``(tool_name, output_schema) -> structuredContent`` of an ``isError`` result; may raise ``LookupError``."""

_NO_PAYLOAD = object()


_PLACEHOLDERS: tuple[Any, ...] = ([], {}, "", 0, False)


def _placeholder_candidates(output_schema: Mapping[str, Any]) -> Iterator[Any]:
    if _is_object_schema(output_schema):
        # Objects first: FastMCP sends an object as it is at every revision, while a non-object value is
        # wrapped in `{"result": ...}` for handshake-era clients — which an object schema does not allow.
        yield {}
    yield from _PLACEHOLDERS
    # An object with required members (e.g. FastMCP's `{"result": ...}` wrapper of a `-> str` tool):
    # fill each required member with the first plain placeholder its own subschema accepts. The whole
    # object is still validated against the full schema by the caller.
    properties = output_schema.get("properties")
    required = output_schema.get("required")
    if not isinstance(properties, Mapping) or not isinstance(required, list) or not required:
        return
    filled: dict[str, Any] = {}
    for member in required:
        if not isinstance(member, str):
            return
        subschema = properties.get(member, True)
        fitting = [c for c in _PLACEHOLDERS if validate_instance(subschema, c) is None]
        if not fitting:
            return
        filled[member] = fitting[0]
    yield filled


def _is_object_schema(schema: Mapping[str, Any]) -> bool:
    """FastMCP's own rule for an output schema it advertises unwrapped to handshake-era clients."""
    return is_object_schema(dict(schema))


def first_conforming_placeholder(tool_name: str, output_schema: Mapping[str, Any]) -> Any:
    """Default ``ErrorPayloadFactory``: the first of ``[]``, ``{}``, ``""``, ``0``, ``false`` that fits
    (``{}`` first for an object schema), else an object whose required members are each filled that way
    (FastMCP's wrapped results)."""
    for candidate in _placeholder_candidates(output_schema):
        if validate_instance(output_schema, candidate) is None:
            return candidate
    raise LookupError(f"no placeholder conforms to the output schema of {tool_name!r}")


def _tool_descriptor(tool: Tool) -> dict[str, Any]:
    """The parts of the published wire descriptor the Consume gate reads (built without pydantic dumps)."""
    descriptor: dict[str, Any] = {"name": tool.name, "inputSchema": tool.parameters}
    if tool.output_schema is not None:
        descriptor["outputSchema"] = tool.output_schema
    return descriptor


def _dump(model: Any) -> Any:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def _wire_result(result: ToolResult) -> dict[str, Any]:
    """What FastMCP will put on the wire for ``result`` at 2026-07-28, as a dict."""
    wire: dict[str, Any] = {"content": [_dump(block) for block in result.content]}
    if result.structured_content is not None:
        wire["structuredContent"] = result.structured_content
    wire["isError"] = bool(result.is_error)
    return wire


class WireRefusal(ToolError):
    """A tool's failure that no result of its contract can carry: sent as JSON-RPC error ``code`` with
    ``data`` (names and categories only), never as an ``isError`` result. For relays whose tool never
    reached anything that could answer (see the module docstring). Logged by FastMCP at DEBUG: the
    relay reports the cause (a server down, a timeout) itself, once, not once per call. Not exported:
    a carrier between a relay's tool and this check, not an error family of the SDK."""

    def __init__(self, message: str, *, code: int, data: Mapping[str, Any]) -> None:
        super().__init__(message, log_level=logging.DEBUG)
        self.code = code
        self.data = dict(data)

    def as_mcp_error(self) -> MCPError:
        return wire_error(self.code, bounded_error_text(str(self)), self.data)


def relay_refusal(message: str, *, code: int, data: Mapping[str, Any]) -> ToolError:
    """What a relay's tool raises for a failure no result of its contract can carry: a
    :class:`WireRefusal`, sent as JSON-RPC error ``code`` with ``data``. A function, so the carrier class
    stays private to this check (it is not an error family of the SDK)."""
    return WireRefusal(message, code=code, data=data)


def _wire_refusal_behind(failure: BaseException) -> WireRefusal | None:
    """``failure`` itself or the first :class:`WireRefusal` in its cause chain (bounded walk)."""
    return next((cause for cause in iter_causes(failure, limit=8) if isinstance(cause, WireRefusal)), None)


def relays_results(tool: Tool | None) -> bool:
    """Whether ``tool`` returns another server's results as they are (see the module docstring)."""
    return getattr(tool, "relays_results", False) is True


def consumed_by_relay(tool: Tool | None, result: object) -> bool:
    """Whether a relay's ``result`` already passed its host side's Consume gate against the very
    schemas ``tool`` publishes (the result's class says ``consumed_against_published_contract``): then
    validating it again here would only repeat the same verdict (for GitHub's largest output schemas,
    ~4 ms per call)."""
    return relays_results(tool) and getattr(result, "consumed_against_published_contract", False) is True


def _synthetic_through_proxy(
    context: MiddlewareContext[mcp_types.CallToolRequestParams], name: str
) -> str | None:
    """The synthetic tool (``search_tools``, ``call_tool``) a search transform's ``call_tool`` proxy
    named ``name`` is asked to run, else ``None``. Looks at the server's own transforms only (a few)."""
    arguments = context.message.arguments
    inner = arguments.get("name") if isinstance(arguments, Mapping) else None
    server = context.fastmcp_context.fastmcp if context.fastmcp_context is not None else None
    if not isinstance(inner, str) or server is None:
        return None
    for transform in server.transforms:
        if isinstance(transform, CatalogTransform) and compat.search_proxy_tool_name(transform) == name:
            names = compat.synthetic_tool_names(transform)
            if names is not None and inner in names:
                return inner
    return None


_CHECKS_AROUND: ContextVar[int] = ContextVar("output_checks_around", default=0)
"""How many :meth:`OutputSelfCheck.on_call_tool` are running around this one: more than none when a
tool calls another through the server (a search transform's ``call_tool`` proxy)."""


class OutputSelfCheck(Middleware):
    """FastMCP middleware enforcing the Consume contract on the server's own results (see module doc)."""

    def __init__(
        self, *, error_structured_content: ErrorPayloadFactory = first_conforming_placeholder
    ) -> None:
        self._error_payload = error_structured_content

    async def __call__(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]) -> Any:
        # Fast path for the typed tools/call pass: FastMCP's generic dispatch wraps `on_message` and
        # `on_request` around `on_call_tool` (two more coroutine layers per call); this class leaves
        # both as the base pass-throughs, so calling `on_call_tool` directly is the same pipeline. The
        # root pass (a raw mapping, not typed params) and every other method take the generic route, as
        # does a subclass that overrides either hook.
        if (
            isinstance(context.message, mcp_types.CallToolRequestParams)
            and type(self).on_message is Middleware.on_message
            and type(self).on_request is Middleware.on_request
        ):
            return await self.on_call_tool(context, call_next)
        return await super().__call__(context, call_next)

    async def on_call_tool(
        self,
        context: MiddlewareContext[mcp_types.CallToolRequestParams],
        call_next: CallNext[mcp_types.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        name = context.message.name
        synthetic = _synthetic_through_proxy(context, name)
        if synthetic is not None:
            # FastMCP's proxy raises a ValueError for it, which its server logs at ERROR with a
            # traceback on every call: a caller could flood alerting. A caller's mistake, answered
            # as one, before anything runs.
            raise invalid_params(
                f"{synthetic!r} is the server's own search tool: call it directly, not through {name!r}"
            )
        around = _CHECKS_AROUND.get()
        token = _CHECKS_AROUND.set(around + 1)
        try:
            result = await call_next(context)
        except (NotFoundError, DisabledError) as missing:
            raise invalid_params(f"Unknown tool: {name!r}") from missing
        except FastMCPError as failure:
            refusal = _wire_refusal_behind(failure)
            if refusal is not None and around:
                # Called through a proxy tool: the check around it sends the refusal. Passed up as
                # itself (logged by FastMCP at DEBUG), not as an MCPError, which FastMCP would log
                # under the proxy's name at ERROR with a traceback, for an expected outcome.
                raise refusal from None
            if refusal is not None:
                # Also when a proxy (a search transform's call_tool) wrapped it in its own ToolError.
                raise refusal.as_mcp_error() from refusal
            tool = resolved_tool(name) or await self._published_tool(context, name)
            category = getattr(failure, "category", "tool_failed")
            return self._conforming_error(name, tool, str(failure) or "tool failed", str(category), failure)
        finally:
            _CHECKS_AROUND.reset(token)
        if isinstance(result, InputRequiredToolResult):
            # Not a final result (the final one is checked on the retry that completes the call), but
            # the interim shape has its own rules: never ask a client for what it cannot answer.
            self._check_input_required(context, name, result)
            return result
        tool = resolved_tool(name) or await self._published_tool(context, name)
        if tool is None:
            # Served by something that is not a listed tool (e.g. a transform's synthetic tool that
            # the server cannot look up): fail closed rather than ship an unchecked result.
            raise internal_error(f"cannot check the result of {name!r}")
        if consumed_by_relay(tool, result):
            return result
        descriptor = _tool_descriptor(tool)
        try:
            validate_tool_result(
                descriptor, _wire_result(result), profile="default" if relays_results(tool) else "strict"
            )
        except ContractViolation as violation:
            if violation.category == "missing_text_serialization":
                # The value conforms (the schema is checked first); only the compatibility text is
                # absent — e.g. FastMCP's `x-fastmcp-wrap-result` tools serialize the unwrapped value.
                # That text is derived data, so the check adds it rather than withholding the result.
                return _with_text_serialization(result)
            record_gate("output", "refused", violation.category)
            logger.warning(
                "tool result withheld: %s violates its contract (%s at %s)",
                quoted(name),
                violation.category,
                quoted(violation.path or "/"),
            )
            if result.is_error and not relays_results(tool):
                return self._conforming_error(name, tool, _error_text(result))
            broken = _upstream_contract_break(tool, result, violation.category)
            if broken is not None:
                # An upstream answered outside the response schema its document declares: the call
                # failed (the tool's failure envelope models it), it is not a bug of this server.
                pointer, keyword = broken
                return self._conforming_error(
                    name,
                    tool,
                    f"upstream_contract: the upstream's answer to tool {name!r} breaks its declared "
                    f"response schema at {pointer or '/'!r} (keyword {keyword!r})",
                    "upstream_contract",
                )
            if violation.category == "missing_structured_content" and not relays_results(tool):
                # The tool produced no value at all (e.g. an OpenAPI tool whose upstream answered
                # something that is not JSON): a failure of the call, not a wrong value. Its text is
                # the upstream's, so it is not passed on.
                return self._conforming_error(
                    name,
                    tool,
                    f"tool {name!r} produced no structured result although its output schema requires "
                    "one (e.g. the upstream answered with something other than JSON)",
                    "no_structured_result",
                )
            raise internal_error(
                f"result of tool {name!r} violates its published contract",
                {"tool": name, "category": violation.category, "path": violation.path},
            ) from violation
        return result

    def _check_input_required(
        self,
        context: MiddlewareContext[mcp_types.CallToolRequestParams],
        name: str,
        result: InputRequiredToolResult,
    ) -> None:
        fastmcp_context = context.fastmcp_context
        capabilities = fastmcp_context.session.client_capabilities if fastmcp_context is not None else None
        declared = _dump(capabilities) if capabilities is not None else {}
        try:
            validate_input_required_result(
                _dump(result.input_required), request_method="tools/call", client_capabilities=declared
            )
        except ContractViolation as violation:
            logger.warning(
                "input_required result withheld: %s (%s at %s)",
                name,
                violation.category,
                violation.path or "/",
            )
            raise internal_error(
                f"tool {name!r} asked for input in a way the protocol does not allow",
                {"tool": name, "category": violation.category, "path": violation.path},
            ) from violation

    async def _published_tool(
        self, context: MiddlewareContext[mcp_types.CallToolRequestParams], name: str
    ) -> Tool | None:
        server = context.fastmcp_context.fastmcp if context.fastmcp_context is not None else None
        if server is None:
            return None
        return await server.get_tool(name)

    def _conforming_error(
        self,
        name: str,
        tool: Tool | None,
        message: str,
        category: str = "tool_failed",
        failure: BaseException | None = None,
    ) -> ToolResult:
        """An ``isError`` result that conforms to ``tool``'s published contract, or a -32603 error.

        The error text comes first (a client reading the first block reads why the call failed), cut to
        :data:`ERROR_TEXT_LIMIT` characters; the payload's JSON serialization follows it. A tool that
        models its failures (:class:`ModelsItsFailures`) supplies the payload; it is used only when it
        conforms, else the payload factory is asked.
        """
        text = bounded_error_text(message)
        blocks: list[mcp_types.ContentBlock] = [mcp_types.TextContent(type="text", text=text)]
        if relays_results(tool):
            # A relay never invents the value of the server behind it: the failure text, nothing else.
            return ToolResult(content=blocks, is_error=True)
        payload: Any = _NO_PAYLOAD
        if tool is not None and tool.output_schema is not None:
            payload = _modelled_failure(tool, failure, category, text)
            if payload is _NO_PAYLOAD:
                try:
                    payload = self._error_payload(name, tool.output_schema)
                    if payload is None:  # FastMCP drops a None structuredContent: it would not conform
                        raise LookupError("null structuredContent cannot be sent")
                except LookupError as none_fits:
                    raise internal_error(
                        f"{text} (and no error result conforms to the output schema of {name!r})",
                        {"tool": name, "category": category},
                    ) from none_fits
            blocks.append(mcp_types.TextContent(type="text", text=json.dumps(payload, ensure_ascii=False)))
        if payload is _NO_PAYLOAD or tool is None or tool.output_schema is None:
            return ToolResult(content=blocks, is_error=True)
        if isinstance(payload, dict) and _is_object_schema(tool.output_schema):
            # Sent as it is at every revision. FastMCP wraps a *raw* result's value in `{"result": ...}`
            # for handshake-era clients, under the wrapper schema it advertises there for a non-object
            # output schema (so a raw result is right for those); an object schema is advertised
            # unwrapped, and a wrapped payload would violate it.
            return ToolResult(content=blocks, structured_content=payload, is_error=True)
        return RawStructuredToolResult(content=blocks, structured_content=payload, is_error=True)


@runtime_checkable
class ModelsItsFailures(Protocol):
    """A tool whose output schema models its own failures (e.g. the OpenAPI connector's tools, whose
    schema has a failure envelope beside the success shape): it builds the ``structuredContent`` of
    its ``isError`` result from the failure (the exception, when there is one), its category and the
    result's text; ``None`` when it has none to offer."""

    def failure_structured_content(self, failure: BaseException | None, category: str, text: str) -> Any: ...


@runtime_checkable
class AnswersForAnUpstream(Protocol):
    """A tool whose success value is an upstream's answer (the OpenAPI connector's tools): a value that
    breaks its output schema is the upstream breaking its declared contract, a failed call answered as
    a conforming ``isError`` result (category ``upstream_contract``), not a JSON-RPC -32603."""

    def upstream_contract_break(self, structured: Any) -> tuple[str, str] | None:
        """``(JSON pointer, schema keyword)`` of where ``structured`` breaks the declared success
        schema, or ``None`` when it does not (then the check's own verdict stands)."""
        ...


def _upstream_contract_break(tool: Tool, result: ToolResult, category: str) -> tuple[str, str] | None:
    if category != "output_schema_violation" or result.is_error or relays_results(tool):
        return None
    if not isinstance(tool, AnswersForAnUpstream) or not isinstance(tool, ModelsItsFailures):
        return None
    return tool.upstream_contract_break(result.structured_content)


def _modelled_failure(tool: Tool, failure: BaseException | None, category: str, text: str) -> Any:
    """The tool's own failure payload when it models its failures and the payload conforms."""
    if not isinstance(tool, ModelsItsFailures) or tool.output_schema is None:
        return _NO_PAYLOAD
    payload = tool.failure_structured_content(failure, category, text)
    if payload is None or validate_instance(tool.output_schema, payload) is not None:
        return _NO_PAYLOAD
    return payload


ERROR_TEXT_LIMIT = 512
"""Most characters of failure text an ``isError`` result made by the check carries (e.g. an upstream
API's error body inside FastMCP's ``HTTP error 404: ...``); longer text is cut and marked."""
_TRUNCATION_MARK = "… (truncated)"


def bounded_error_text(text: str) -> str:
    """``text`` cut to :data:`ERROR_TEXT_LIMIT` characters (marked when cut)."""
    if len(text) <= ERROR_TEXT_LIMIT:
        return text
    return text[: ERROR_TEXT_LIMIT - len(_TRUNCATION_MARK)] + _TRUNCATION_MARK


def _error_text(result: ToolResult) -> str:
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            return block.text
    return "tool failed"


def _with_text_serialization(result: ToolResult) -> ToolResult:
    """``result`` plus a text block carrying the JSON serialization of its ``structuredContent``."""
    serialization = mcp_types.TextContent(
        type="text", text=json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
    )
    return result.model_copy(update={"content": [*result.content, serialization]})
