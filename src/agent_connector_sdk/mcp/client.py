"""``ContractClient``: the host side of the five gates, run around a real ``fastmcp.Client`` session.

The host owns **Discover**, **Admit** and **Consume** (a server cannot force a client to trust its
descriptors or its output) and prepares **Invoke**. This adapter only moves wire dicts between the
MCP session and the pure core in ``agent_connector_sdk.mcp.contracts``; it has no policy of its own.

Three failure families never mix:

* ``ContractError`` subclasses (from ``contracts.errors``): *our* gates refused something — a cursor
  chain, a descriptor, arguments, a header value, a result.
* ``ProtocolError``: the peer answered with a JSON-RPC error (``JsonRpcError``, with ``code`` and
  ``data``), or the transport failed (``TransportFailure``, also when connecting). The tool never ran,
  or we cannot know. Their ``str()`` names the code or failure type only: the peer's message and
  ``data`` (which may quote request values) stay attributes.
* ``ToolExecutionError``: the tool ran and reported failure (``isError: true``). It is only raised when
  the caller asks for it (``raise_on_error=True``); by default ``call`` returns the validated result with
  ``is_error`` set, because a tool error is content the model should see.

``Mcp-Param-*`` headers. The ``mcp`` SDK mirrors ``x-mcp-header`` arguments into headers by itself, with
the spec's looser encoding (a value with an inner space travels plain), for tools it has listed through
``ClientSession.list_tools``. We want our stricter encoding (``contracts.headers.encode_header_value``)
and exactly one header per annotation, so:

1. discovery goes through ``session.send_request`` with a raw result type, which never feeds the SDK's
   per-tool header map — so the SDK emits no ``Mcp-Param-*`` header for our calls;
2. ``call`` computes the headers with ``build_parameter_headers`` and sends them on exactly this
   ``tools/call`` POST through a :class:`~agent_connector_sdk.mcp.param_headers_transport.ParamHeaderChannel`
   (a context variable read by an ``httpx2`` request hook, installed by wrapping the Streamable HTTP
   transport's ``httpx_client_factory``; other transports carry no HTTP headers and need none).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, TypeAlias, cast

import fastmcp
import httpx2
import mcp_types
from mcp.client import ClientRequestContext, InputRequiredRoundsExceededError

# The SDK's SEP-2322 retry loop (fastmcp.Client drives its own calls with it too); `mcp` exports only its
# error type publicly, so it is imported from its module rather than re-implemented.
from mcp.client._input_required import run_input_required_driver
from mcp.shared.exceptions import MCPError
from mcp_types.methods import validate_server_result
from pydantic import TypeAdapter, ValidationError

from agent_connector_sdk.mcp.contracts.admission import (
    AdmissionPolicy,
    AdmissionReport,
    Rejection,
    admit_tools,
)
from agent_connector_sdk.mcp.contracts.errors import (
    AdmissionError,
    ContractError,
    ContractViolation,
    PaginationError,
)
from agent_connector_sdk.mcp.contracts.input_required import is_input_required, validate_input_required_result
from agent_connector_sdk.mcp.contracts.pagination import apaginate
from agent_connector_sdk.mcp.contracts.results import validate_tool_result
from agent_connector_sdk.mcp.param_headers_transport import (
    TRANSPORT_EXCEPTIONS,
    ParamHeaderChannel,
    is_local_transport_error,
)

__all__ = [
    "CompletionResult",
    "ContractClient",
    "InvalidCompletionRequest",
    "JsonRpcError",
    "MalformedResponse",
    "ProtocolError",
    "ToolExecutionError",
    "ToolResult",
    "TransportFailure",
]

logger = logging.getLogger(__name__)

JsonObject: TypeAlias = dict[str, Any]
_RAW_RESULT: TypeAdapter[JsonObject] = TypeAdapter(JsonObject)
_MAX_COMPLETION_VALUES = 100


# --------------------------------------------------------------------------------------------- errors
class ProtocolError(Exception):
    """The exchange with the peer failed at the protocol level; the tool result is not available."""


class JsonRpcError(ProtocolError):
    """The server answered with a JSON-RPC error object (``code``, ``message``, optional ``data``)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        # ``message`` and ``data`` are the peer's text and may quote request values (argument or header
        # values), so they stay attributes: ``str(error)``, which ends up in logs, names the code only.
        super().__init__(f"JSON-RPC error {code}")
        self.code = code
        self.message = message
        self.data = data

    @property
    def retry_after_ms(self) -> int | None:
        """``data.retryAfterMs`` when the server sent one (rate limiting), else ``None``."""
        if isinstance(self.data, Mapping):
            value = self.data.get("retryAfterMs")
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None


class TransportFailure(ProtocolError):
    """The HTTP/stream transport failed (or timed out) before a JSON-RPC answer arrived.

    ``code`` is the SDK's locally synthesized JSON-RPC code when there is one (``-32000`` connection
    closed, ``-32001`` request timeout), else ``None``.
    """

    def __init__(self, message: str, *, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


class InvalidCompletionRequest(ContractError, ValueError):
    """``complete`` was given a request it cannot send (category ``invalid_request``); nothing was sent.

    A ``ValueError`` too, as before. The message names the offending part, never its value.
    """

    gate = "invoke"


class ToolExecutionError(Exception):
    """The tool ran and returned ``isError: true``. ``result`` is the (validated) result."""

    def __init__(self, tool: str, result: ToolResult) -> None:
        super().__init__(f"tool {tool!r} reported an error")
        self.tool = tool
        self.result = result


# -------------------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class ToolResult:
    """A ``tools/call`` result that passed the Consume gate. ``raw`` is the wire dict as received."""

    raw: JsonObject

    @property
    def content(self) -> list[JsonObject]:
        return cast(list[JsonObject], self.raw.get("content", []))

    @property
    def structured_content(self) -> Any:
        """Any JSON value (array, scalar, null, object) — never assume a dict."""
        return self.raw.get("structuredContent")

    @property
    def has_structured_content(self) -> bool:
        return "structuredContent" in self.raw

    @property
    def is_error(self) -> bool:
        return self.raw.get("isError") is True


@dataclass(frozen=True)
class CompletionResult:
    """A ``completion/complete`` answer that passed our shape checks."""

    values: list[str]
    total: int | None = None
    has_more: bool | None = None


# ------------------------------------------------------------------------------------------- client
@dataclass
class _State:
    admitted: dict[str, JsonObject] = field(default_factory=dict)
    rejections: list[Rejection] = field(default_factory=list)
    cursor_trace: list[str | None] = field(default_factory=list)


class ContractClient:
    """Run the host-side gates around ``client`` (a ``fastmcp.Client``; it is entered by ``async with``).

    ``discover_tools`` must run before ``call``: only admitted tools are callable. ``audit`` collects
    audit events (tool and header names, categories, outcomes — never argument or header values).
    """

    def __init__(
        self,
        client: fastmcp.Client[Any],
        *,
        policy: AdmissionPolicy | None = None,
        max_pages: int = 100,
    ) -> None:
        if client.is_connected():
            # The HTTP client (and our header hook on it) is built when the session connects.
            raise ValueError("wrap the fastmcp.Client before connecting it")
        self._client = client
        self._policy = policy if policy is not None else AdmissionPolicy()
        self._max_pages = max_pages
        self._state = _State()
        self.audit: list[JsonObject] = []
        self._param_headers = ParamHeaderChannel(client)

    # -- lifecycle ---------------------------------------------------------------------------------
    async def __aenter__(self) -> ContractClient:
        """Connect the wrapped client. A server that cannot be reached is a ``TransportFailure``; a
        JSON-RPC error while connecting is a ``JsonRpcError`` (never fastmcp's bare ``RuntimeError``)."""
        try:
            await cast(Any, self._client).__aenter__()
        except MCPError as error:
            if is_local_transport_error(error):
                raise TransportFailure(f"connecting failed (code {error.code})", code=error.code) from error
            raise JsonRpcError(error.code, error.message, error.data) from error
        except TRANSPORT_EXCEPTIONS as error:
            raise TransportFailure(f"connecting failed: {type(error).__name__}") from error
        except RuntimeError as error:
            # fastmcp reports a connection that never came up as RuntimeError("Client failed to connect:
            # <transport error>") raised from the transport error; its text may name the URL.
            if isinstance(error.__cause__, TRANSPORT_EXCEPTIONS):
                raise TransportFailure(f"connecting failed: {type(error.__cause__).__name__}") from error
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            await cast(Any, self._client).__aexit__(exc_type, exc, tb)
        except (httpx2.HTTPError, OSError) as error:
            # Closing a session whose server vanished fails in the transport: same family as a call.
            raise TransportFailure(f"transport failed while closing: {type(error).__name__}") from error

    @property
    def client(self) -> fastmcp.Client[Any]:
        return self._client

    # -- discover + admit --------------------------------------------------------------------------
    @property
    def cursor_trace(self) -> list[str | None]:
        """Cursors sent by the last discovery, in order (``None`` = the first, cursor-less request)."""
        return list(self._state.cursor_trace)

    @property
    def rejections(self) -> list[Rejection]:
        """``{tool, index, category, reason}`` for each descriptor admission refused in the last discovery."""
        return list(self._state.rejections)

    @property
    def admitted(self) -> Mapping[str, JsonObject]:
        """Admitted wire descriptors by name, in server order."""
        return dict(self._state.admitted)

    async def discover_tools(self) -> AdmissionReport:
        """Page through ``tools/list`` (raw wire pages) and admit the descriptors.

        Raises ``PaginationError`` (Discover) when the cursor chain cannot be followed safely; the
        trace so far is kept in ``cursor_trace``. A malformed page is a ``ProtocolError``.
        """

        async def fetch_page(cursor: str | None) -> Mapping[str, Any]:
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
            return await self._request(mcp_types.ListToolsRequest(params=params), gate="discover")

        try:
            pages = await apaginate(fetch_page, max_pages=self._max_pages, items_key="tools")
        except PaginationError as error:
            self._state.cursor_trace = list(error.trace)
            self.audit.append({"event": "discover", "outcome": error.category, "pages": len(error.trace)})
            raise
        self._state.cursor_trace = list(pages.trace)
        report = admit_tools(list(pages.items), self._policy)
        self._state.admitted = dict(report.admitted)
        self._state.rejections = list(report.rejected)
        self.audit.append(
            {
                "event": "discover",
                "outcome": "ok",
                "pages": len(pages.trace),
                "admitted": list(report.admitted),
                "rejected": [{"tool": r["tool"], "category": r["category"]} for r in report.rejected],
            }
        )
        return report

    # -- invoke + consume --------------------------------------------------------------------------
    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        raise_on_error: bool = False,
    ) -> ToolResult:
        """Call an admitted tool through all host-side gates and return the validated result.

        Admit: ``AdmissionError('not_admitted')`` for a tool that was not admitted (or before
        discovery). Invoke: ``validate_arguments`` and ``build_parameter_headers`` refusals. Execute:
        the server's verdict arrives as ``JsonRpcError`` (e.g. -32020 for header mismatch). Consume:
        ``validate_tool_result`` — error results must conform too. ``raise_on_error`` turns a valid
        ``isError`` result into ``ToolExecutionError``. An interim ``InputRequiredResult`` (SEP-2322) is
        checked (``contracts.input_required``), answered through the wrapped client's sampling /
        elicitation / roots callbacks and retried by the ``mcp`` SDK's driver until the final result.
        """
        # A non-string name (a caller bug) is refused like any unknown tool, without echoing it.
        label = name if isinstance(name, str) else None
        tool = self._state.admitted.get(name) if label is not None else None
        if tool is None:
            self.audit.append({"event": "call", "tool": label, "outcome": "not_admitted"})
            raise AdmissionError("not_admitted", f"tool {label!r} was not admitted by discovery")
        try:
            args, headers = self._param_headers.prepare(tool, arguments, self.audit)
        except ContractError as refusal:
            self.audit.append({"event": "call", "tool": name, "outcome": refusal.category})
            raise

        async def send(responses: mcp_types.InputResponses | None, state: str | None) -> Any:
            # SEP-2322: a retry is a new request (fresh JSON-RPC id) carrying the same arguments and
            # headers, the client's answers and the server's requestState echoed byte-exact (or none).
            params = mcp_types.CallToolRequestParams(
                name=name, arguments=args, input_responses=responses, request_state=state
            )
            with self._param_headers.sending(name, headers):
                raw = await self._request(mcp_types.CallToolRequest(params=params), gate="consume", tool=name)
            if not is_input_required(raw):
                return raw
            try:
                # The SDK's own dispatch refuses embedded requests this client did not declare.
                validate_input_required_result(raw, request_method="tools/call", client_capabilities=None)
            except ContractViolation as violation:
                self.audit.append({"event": "call", "tool": name, "outcome": violation.category})
                raise
            return mcp_types.InputRequiredResult.model_validate(raw)

        first = await send(None, None)
        # The SDK's multi-round-trip driver answers each round through this client's sampling /
        # elicitation / roots callbacks and retries until a final result (or its round limit).
        try:
            raw = cast(JsonObject, await run_input_required_driver(
                first, dispatch=self._dispatch_input_request, retry=send,
                max_rounds=self._client.input_required_max_rounds,
            ))
        except InputRequiredRoundsExceededError as error:
            self.audit.append({"event": "call", "tool": name, "outcome": "input_required_rounds_exceeded"})
            raise ContractViolation(
                "input_required_rounds_exceeded", "the server kept asking for input past the round limit"
            ) from error
        except MCPError as error:
            # Only our own dispatch raises MCPError here (a peer's errors arrive as JsonRpcError): this
            # client declined an embedded request, e.g. one for a capability it has no callback for.
            self.audit.append({"event": "call", "tool": name, "outcome": "input_request_refused"})
            raise ContractViolation(
                "input_request_refused", f"an embedded input request was refused locally (code {error.code})"
            ) from error
        try:
            validate_tool_result(tool, raw)
        except ContractViolation as violation:
            self.audit.append({"event": "call", "tool": name, "outcome": violation.category})
            raise
        result = ToolResult(raw)
        self.audit.append(
            {"event": "call", "tool": name, "outcome": "tool_error" if result.is_error else "ok"}
        )
        if result.is_error and raise_on_error:
            raise ToolExecutionError(name, result)
        return result

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        *,
        context_arguments: Mapping[str, str] | None = None,
    ) -> CompletionResult:
        """Ask ``completion/complete`` for ``ref`` (``{"type": "ref/prompt", "name"}`` or
        ``{"type": "ref/resource", "uri"}``) and check the answer's shape (≤ 100 string values,
        ``total`` ≥ the values returned, ``hasMore`` boolean). A rate-limited request raises
        ``JsonRpcError`` whose ``retry_after_ms`` says when to retry.
        """
        params = _completion_params(ref, argument, value, context_arguments)
        raw = await self._request(mcp_types.CompleteRequest(params=params), gate="consume")
        result = _completion_from_wire(raw)
        self.audit.append(
            {"event": "complete", "ref": ref.get("type"), "argument": argument, "count": len(result.values)}
        )
        return result

    # -- plumbing ----------------------------------------------------------------------------------
    def _complete_when_untagged(self, request: Any, error: ValidationError) -> JsonObject | None:
        """The result the SDK refused only for lacking ``resultType``, read as ``"complete"``; else None.

        schema.ts (2026-07-28, ``Result.resultType``): when the field is absent "the client MUST treat
        the absent field as ``"complete"``". ``mcp`` 2.3 validates 2026-07-28 results with the field
        required, so such a result would fail before our gates; it is re-validated here, by the SDK's
        own wire schema, with the tag the spec says it means (any other defect still fails).
        """
        failures = error.errors()
        untagged = [
            failure for failure in failures
            if failure.get("type") == "missing" and tuple(failure.get("loc", ()))[-1:] == ("resultType",)
        ]
        raw = untagged[0].get("input") if untagged else None
        version = self._client.session.protocol_version
        if not isinstance(raw, dict) or "resultType" in raw or version is None:
            return None
        tagged = {**raw, "resultType": "complete"}
        try:
            validate_server_result(str(request.method), version, tagged)
        except (ValidationError, KeyError, ValueError):
            return None
        return tagged

    async def _dispatch_input_request(
        self, key: str, request: mcp_types.InputRequest
    ) -> mcp_types.InputResponse | mcp_types.ErrorData:
        session = self._client.session
        meta = request.params.meta if request.params is not None else None
        context = ClientRequestContext(session=session, request_id=key, meta=meta)
        return await session.dispatch_input_request(context, request)

    async def _request(
        self, request: Any, *, gate: Literal["discover", "consume"], tool: str | None = None
    ) -> JsonObject:
        """Send one request and return the raw result dict, translating failures into our families."""
        try:
            # A raw dict result type keeps the wire shape (and keeps the SDK's per-tool caches out of it).
            raw = await self._client.session.send_request(request, cast(Any, _RAW_RESULT))
            return cast(JsonObject, raw)
        except MCPError as error:
            if is_local_transport_error(error):
                # The SDK folds connection failures and read timeouts into locally synthesized JSON-RPC
                # errors with these codes; a server sending the same codes is indistinguishable.
                if tool is not None:
                    self.audit.append({"event": "call", "tool": tool, "outcome": "transport_failure"})
                # The code only: a peer may send these codes too, with any message text.
                raise TransportFailure(f"transport failed (code {error.code})", code=error.code) from error
            if tool is not None:
                self.audit.append(
                    {"event": "call", "tool": tool, "outcome": "protocol_error", "code": error.code}
                )
            raise JsonRpcError(error.code, error.message, error.data) from error
        except ValidationError as error:
            untagged = self._complete_when_untagged(request, error)
            if untagged is not None:
                return untagged
            # The SDK checks result shapes for the negotiated revision before we see them. Only the
            # location and error type are reported: pydantic's messages would quote the values.
            first = error.errors()[0] if error.errors() else {"loc": (), "type": "invalid"}
            path = "/" + "/".join(str(part) for part in first.get("loc", ()))
            if gate == "discover":
                raise MalformedResponse(f"malformed tools/list page at {path}") from error
            raise ContractViolation(
                "malformed_result", f"result does not match the MCP schema at {path}", path=path
            ) from error
        except TRANSPORT_EXCEPTIONS as error:
            raise TransportFailure(f"transport failed: {type(error).__name__}") from error


class MalformedResponse(ProtocolError):
    """A ``tools/list`` page did not have the shape the protocol requires (refused by the SDK)."""


def _completion_params(
    ref: Any, argument: Any, value: Any, context_arguments: Any
) -> mcp_types.CompleteRequestParams:
    """Build the request params, refusing (typed, value-free) what the wire types would not accept:
    pydantic's own errors would escape untyped and quote the offending value."""
    reference: mcp_types.PromptReference | mcp_types.ResourceTemplateReference
    kind = ref.get("type") if isinstance(ref, Mapping) else None
    if kind == "ref/prompt" and isinstance(ref.get("name"), str):
        reference = mcp_types.PromptReference(type="ref/prompt", name=ref["name"])
    elif kind == "ref/resource" and isinstance(ref.get("uri"), str):
        reference = mcp_types.ResourceTemplateReference(type="ref/resource", uri=ref["uri"])
    else:
        raise InvalidCompletionRequest(
            "invalid_request", "ref must be {type: ref/prompt, name: str} or {type: ref/resource, uri: str}"
        )
    if not isinstance(argument, str) or not isinstance(value, str):
        raise InvalidCompletionRequest("invalid_request", "argument name and value must be strings")
    context: mcp_types.CompletionContext | None = None
    if context_arguments is not None:
        if not isinstance(context_arguments, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in context_arguments.items()
        ):
            raise InvalidCompletionRequest("invalid_request", "context arguments must map strings to strings")
        context = mcp_types.CompletionContext(arguments=dict(context_arguments))
    return mcp_types.CompleteRequestParams(
        ref=reference, argument=mcp_types.CompletionArgument(name=argument, value=value), context=context
    )


def _completion_from_wire(raw: Mapping[str, Any]) -> CompletionResult:
    """Consume-side shape check of a ``completion/complete`` result (values ≤ 100, typed hints)."""
    completion = raw.get("completion")
    if not isinstance(completion, Mapping):
        raise ContractViolation(
            "malformed_completion", "completion result has no completion object", path="/completion"
        )
    values = completion.get("values")
    if not isinstance(values, Sequence) or isinstance(values, str | bytes):
        raise ContractViolation(
            "malformed_completion", "completion.values is not an array", path="/completion/values"
        )
    if len(values) > _MAX_COMPLETION_VALUES:
        raise ContractViolation(
            "malformed_completion", "more than 100 completion values", path="/completion/values"
        )
    for index, item in enumerate(values):
        if not isinstance(item, str):
            raise ContractViolation(
                "malformed_completion", "completion value is not a string", path=f"/completion/values/{index}"
            )
    total = completion.get("total")
    if total is not None and (not isinstance(total, int) or isinstance(total, bool) or total < len(values)):
        raise ContractViolation(
            "malformed_completion",
            "completion.total is not an integer ≥ the values",
            path="/completion/total",
        )
    has_more = completion.get("hasMore")
    if has_more is not None and not isinstance(has_more, bool):
        raise ContractViolation(
            "malformed_completion", "completion.hasMore is not a boolean", path="/completion/hasMore"
        )
    return CompletionResult(values=list(values), total=total, has_more=has_more)
