"""``ContractClient``: the host core (:mod:`agent_connector_sdk.mcp.host`) as a client of listed tools.

The host owns **Discover**, **Admit** and **Consume** (a server cannot force a client to trust its
descriptors or its output) and prepares **Invoke**. This face only adds the ``tools/list`` naming
(``call("name", ...)``) and completion requests; the gate sequence, the ``Mcp-Param-*`` delivery and
the error translation are the host core's, shared with the disclosure consumer and the CLI reviewer.

Three failure families never mix (all under :class:`~agent_connector_sdk.errors.AgentConnectorError`):

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
the spec's looser encoding, for tools it has listed through ``ClientSession.list_tools``. Discovery goes
through ``session.send_request`` with a raw result type, which never feeds the SDK's per-tool header
map, and each call carries exactly the headers the host core computed
(:mod:`agent_connector_sdk.mcp.host._param_headers`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import fastmcp
import mcp_types

from agent_connector_sdk.core.contracts import AdmissionReport, Finding, Rejection
from agent_connector_sdk.core.contracts.errors import ContractViolation
from agent_connector_sdk.core.host import HostOptions, InvalidCompletionRequest, ToolResult
from agent_connector_sdk.mcp.host._session import ConnectionReport, HostSession, SessionFace, as_session

__all__ = ["CompletionResult", "ContractClient"]

JsonObject = dict[str, Any]
_MAX_COMPLETION_VALUES = 100


@dataclass(frozen=True)
class CompletionResult:
    """A ``completion/complete`` answer that passed our shape checks."""

    values: list[str]
    total: int | None = None
    has_more: bool | None = None


class ContractClient(SessionFace):
    """The host core as a client of listed tools: a face over one :class:`~.HostSession`.

    ``connection`` is a ``fastmcp.Client`` (a session is built for it with ``options``) or an existing
    :class:`~.HostSession` (then ``options`` must be ``None``: the session already has them),
    e.g. the one a :class:`~.disclosure_consumer.SchemaDisclosureConsumer` uses on the same
    connection. ``async with`` connects it.

    ``discover_tools`` must run before ``call``: only admitted tools are callable. ``audit`` is the
    session's bounded sink (:class:`~.HostOptions` ``audit``; default a
    :class:`~agent_connector_sdk.audit.BoundedAuditSink`) of events naming tools, headers, categories
    and outcomes — never argument or header values. Write confirmation: see :class:`~.HostSession`.
    Bounds (:class:`~.HostOptions` ``bounds``): what it takes from the server at most; a bound
    hit is :class:`~agent_connector_sdk.core.host.bounds.BoundExceeded`.
    """

    def __init__(
        self, connection: fastmcp.Client[Any] | HostSession, options: HostOptions | None = None
    ) -> None:
        if not isinstance(connection, HostSession) and connection.is_connected():
            # The HTTP client (and our header hook on it) is built when the session connects.
            raise ValueError("wrap the fastmcp.Client before connecting it")
        self.session = as_session(connection, options)

    # -- lifecycle ---------------------------------------------------------------------------------
    async def __aenter__(self) -> ContractClient:
        """Connect the wrapped client. A server that cannot be reached is a ``TransportFailure``; a
        JSON-RPC error while connecting is a ``JsonRpcError`` (never fastmcp's bare ``RuntimeError``)."""
        await self.session.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.session.close(exc_type, exc, tb)

    @property
    def client(self) -> fastmcp.Client[Any]:
        return self.session.client

    @property
    def options(self) -> HostOptions:
        return self.session.options

    # -- connection facts --------------------------------------------------------------------------
    @property
    def report(self) -> ConnectionReport:
        return self.session.report

    # -- discover + admit --------------------------------------------------------------------------
    @property
    def cursor_trace(self) -> list[str | None]:
        """Cursors sent by the last discovery, in order (``None`` = the first, cursor-less request)."""
        return list(self.session.cursor_trace)

    @property
    def rejections(self) -> list[Rejection]:
        """``{tool, index, category, reason}`` for each descriptor admission refused in the last discovery."""
        report = self.session.core.last_report
        return list(report.rejected) if report is not None else []

    @property
    def admitted(self) -> Mapping[str, JsonObject]:
        """Admitted wire descriptors by name, in server order (copies)."""
        return {name: dict(tool.descriptor) for name, tool in self.session.core.listed.items()}

    async def discover_tools(self) -> AdmissionReport:
        """Page through ``tools/list`` (raw wire pages) and admit the descriptors.

        Raises ``PaginationError`` (Discover) when the cursor chain cannot be followed safely; the
        trace so far is kept in ``cursor_trace``. A malformed page is a ``ProtocolError``.
        """
        return await self.session.discover_tools()

    async def check_server_text(self) -> tuple[Finding, ...]:
        """Judge the server's instructions and the prompts, resources and resource templates it declares
        (bounded listings; nothing undeclared is asked) with the poisoning rules: findings by default,
        ``AdmissionError('tool_poisoning')`` in the ``strict`` profile. The instructions alone are judged
        at connect (:attr:`server_text_findings`)."""
        return await self.session.check_server_text()

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
        discovery). Invoke: ``validate_arguments`` and header refusals (and ``ConfirmationRefused`` when
        write confirmation is on). Execute: the server's verdict arrives as ``JsonRpcError`` (e.g.
        -32020 for header mismatch). Consume: ``validate_tool_result`` — spec MUST rules reject
        (``ContractViolation``, carrying the server's text), project rules follow the session's profile
        (findings on ``ToolResult.findings`` by default, rejections in ``strict``). ``raise_on_error``
        turns a valid ``isError`` result into ``ToolExecutionError``.
        """
        return await self.session.call(name, arguments, raise_on_error=raise_on_error)

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
        raw = await self.session.request(mcp_types.CompleteRequest(params=params), gate="consume")
        result = _completion_from_wire(raw)
        self.audit(
            {"event": "complete", "ref": ref.get("type"), "argument": argument, "count": len(result.values)}
        )
        return result


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
