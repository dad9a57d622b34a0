"""The host core over a real ``fastmcp.Client`` session: the thin I/O around :class:`~.HostCore`.

:class:`HostSession` is what every host path runs: ``ContractClient`` is a face of it, the disclosure
consumer calls through it, the CLI reviewer discovers through it. It only moves wire dicts between the
session and the core, and translates the SDK's failures into the :mod:`~agent_connector_sdk.core.host._errors`
families.

What it adds to the core is the connection's facts (:class:`ConnectionReport`):

* ``protocol_version`` — the revision the client negotiated (``2026-07-28`` via ``server/discover``, or
  an older one such as ``2025-11-25`` via the ``initialize`` handshake; the ``fastmcp.Client``'s
  default ``mode="auto"`` falls back by itself);
* ``transport`` — ``streamable_http``, ``stdio``, ``in_memory`` or ``other``;
* ``header_gates`` — ``required`` (Streamable HTTP at 2026-07-28: ``Mcp-Param-*`` headers are an
  obligation and are sent), ``optional`` (Streamable HTTP at an older revision: no obligation, sent
  anyway because gateways may route on them and a gated server checks them on older calls too),
  ``not_applicable`` (no HTTP headers exist on this transport; reported, never silently skipped).

And what the server says besides its tools, judged by the same poisoning rules as tool descriptions
(:mod:`~agent_connector_sdk.core.contracts._server_text`): its ``instructions`` at connect, its declared
prompts, resources and templates when the caller asks (:meth:`HostSession.check_server_text`).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import shlex
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeAlias, cast

import anyio.to_thread
import fastmcp
import mcp_types
from fastmcp.client.transports import FastMCPTransport, StdioTransport
from fastmcp.client.transports.http import StreamableHttpTransport
from mcp.client import ClientRequestContext, InputRequiredRoundsExceededError
from mcp.shared.exceptions import MCPError
from mcp_types.methods import validate_server_result
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import TypeAdapter, ValidationError

from agent_connector_sdk.audit import AuditSink
from agent_connector_sdk.core.contracts import (
    AdmissionReport,
    Finding,
    apaginate,
    is_input_required,
    server_text_findings,
    validate_input_required_result,
)
from agent_connector_sdk.core.contracts.errors import (
    AdmissionError,
    ConfirmationCategory,
    ContractError,
    ContractViolation,
    PaginationError,
)
from agent_connector_sdk.core.contracts.lock import LockedServer
from agent_connector_sdk.core.host import (
    AdmittedTool,
    ConfirmationRefused,
    HeaderGates,
    HostBounds,
    HostCore,
    HostOptions,
    HttpStatusError,
    JsonRpcError,
    MalformedResponse,
    NotificationTally,
    NotMcpServer,
    PreparedCall,
    ProtocolError,
    ToolExecutionError,
    ToolResult,
    TransportFailure,
    may_write,
)
from agent_connector_sdk.core.host.bounds import (
    BoundExceeded,
    check_list_items,
    check_listing_size,
    check_result_size,
)
from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.mcp import compat, probe_http
from agent_connector_sdk.mcp.host._deadline import operation_deadline
from agent_connector_sdk.mcp.host._floods import NotificationGate
from agent_connector_sdk.mcp.host._param_headers import (
    ParamHeaderChannel,
)
from agent_connector_sdk.mcp.host._server_output import StderrRelay, sanitized_log_message
from agent_connector_sdk.mcp.host._telemetry import (
    client_operation,
    in_operation,
    record_admission,
    record_result,
)
from agent_connector_sdk.mcp.host._translate import map_errors, translate
from agent_connector_sdk.mcp.host._wire import HttpGuard, StdioLineCap

__all__ = [
    "CallSummary",
    "CatalogKind",
    "ConfirmWrite",
    "ConnectionReport",
    "HeaderGates",
    "HostSession",
    "SessionFace",
    "TransportKind",
    "as_session",
]

JsonObject: TypeAlias = dict[str, Any]

_PROBE_TIMEOUT = 1.0
"""Seconds each step of the probe after a failed connect waits at most (see ``_what_answered``)."""
TransportKind = Literal["streamable_http", "stdio", "in_memory", "other"]
CatalogKind = Literal["prompts", "resources", "resourceTemplates"]
_CATALOG_REQUESTS: dict[str, tuple[Any, str]] = {
    "prompts": (mcp_types.ListPromptsRequest, "prompts/list"),
    "resources": (mcp_types.ListResourcesRequest, "resources/list"),
    "resourceTemplates": (mcp_types.ListResourceTemplatesRequest, "resources/templates/list"),
}
_RAW_RESULT: TypeAdapter[JsonObject] = TypeAdapter(JsonObject)
_SERVER_TEXT_LISTINGS: tuple[tuple[CatalogKind, str], ...] = (
    ("prompts", "prompts"),
    ("resources", "resources"),
    ("resourceTemplates", "resources"),
)
"""Each listing :meth:`HostSession.check_server_text` reads, and the capability that must declare it."""


@dataclass(frozen=True, slots=True)
class ConnectionReport:
    """Which revision and transport this host session used, and whether header gates apply."""

    protocol_version: str | None
    transport: TransportKind
    header_gates: HeaderGates

    @property
    def discovery(self) -> Literal["server/discover", "initialize"] | None:
        """How the revision was negotiated: the 2026-07-28 probe, or the older handshake."""
        if self.protocol_version is None:
            return None
        return "server/discover" if self.protocol_version in MODERN_PROTOCOL_VERSIONS else "initialize"


@dataclass(frozen=True, slots=True)
class CallSummary:
    """What a write-confirmation callback is shown: identity and hints, argument *names* only."""

    tool: str
    origin: str
    annotations: Mapping[str, Any]
    arguments: tuple[str, ...]
    headers: tuple[str, ...]


ConfirmWrite: TypeAlias = Callable[[CallSummary], "bool | Awaitable[bool]"]
"""The host's write confirmation: ``True`` lets a call of a tool that may write go ahead (may be async)."""


def server_key(client: fastmcp.Client[Any]) -> str:
    """The key a contract lock files this connection's server under: the Streamable HTTP URL, or the
    stdio command line (what ``agent-connector review`` was given); ``""`` for other transports."""
    transport = client.transport
    if isinstance(transport, StreamableHttpTransport):
        return str(transport.url)
    if isinstance(transport, StdioTransport):
        return shlex.join([transport.command, *transport.args])
    return ""


def transport_kind(client: fastmcp.Client[Any]) -> TransportKind:
    transport = client.transport
    if isinstance(transport, StreamableHttpTransport):
        return "streamable_http"
    if isinstance(transport, StdioTransport):
        return "stdio"
    if isinstance(transport, FastMCPTransport):
        return "in_memory"
    return "other"


class HostSession:
    """Run the host core over ``client`` (a ``fastmcp.Client``): ONE per connection.

    It holds the connection's one :class:`~.HostCore` and one
    :class:`~.param_headers.ParamHeaderChannel`; ``options`` (:class:`~.HostOptions`, frozen)
    say how it admits, audits, confirms and bounds.
    The faces (``ContractClient``, ``SchemaDisclosureConsumer``) are built *over* a session, so a host
    that uses both on one connection shares one core: one set of admitted tools, one audit trail.

    Create it before the client connects when the transport is Streamable HTTP, so the ``Mcp-Param-*``
    hook is in the HTTP client built on connect (otherwise a call that needs headers is refused as
    ``undeliverable`` rather than sent without them).

    Write confirmation is on by default (the disclosure contract keeps it mandatory: a verified schema
    says how to call a tool, never that the host may): before every call of a tool that may write
    (:func:`~.may_write` — annotations that do not say ``readOnlyHint: true``, or that say
    ``destructiveHint: true``) ``confirm_write`` is asked with a value-free :class:`CallSummary`; without
    a callback such a call is refused (``confirmation_required``). ``HostOptions(require_confirmation=False)``
    is the host's explicit opt-out (e.g. a test harness or a batch job whose operator confirmed up front).
    """

    def __init__(self, client: fastmcp.Client[Any], options: HostOptions | None = None) -> None:
        self.client = client
        self.options = options if options is not None else HostOptions()
        self.bounds: HostBounds = self.options.bounds
        self.core = HostCore(self.options)
        if self.options.lock is not None and len(self.options.lock.servers) != 1:
            # Several servers in the lock: this connection's entry is the one filed under its address.
            self.core.lock = self.options.lock.server(server_key(client))
        # notifications/tools/list_changed: the catalog is stale; re-list (and re-apply the lock) before
        # the next call of a listed tool. Set from the session's receive loop, read on our own task.
        self.tools_changed = False
        compat.on_tool_list_changed(client, self._tools_list_changed)
        # Every notification passes the connection's bound on the receive path (_floods.py); one the
        # bound drops still marks the catalog stale when it says the tools changed (no audit event each).
        self.notifications = NotificationGate(self.bounds, self._mark_tools_changed)
        self.stderr_relay: StderrRelay | None = None
        if self.options.sanitize_server_output:
            compat.filter_server_logs(client, sanitized_log_message)
            transport = client.transport
            if isinstance(transport, StdioTransport) and transport.log_file is None:
                # Inherited, the server's stderr would reach the terminal raw.
                self.stderr_relay = StderrRelay(Path(transport.command).name)
                transport.log_file = self.stderr_relay.writer
        # A lone surrogate or a schema nested past the SDK's parser costs its own tool, not the page.
        compat.install_tolerant_json_reader()
        self._channel = ParamHeaderChannel(client)
        # The byte and value caps while reading, and the server's words on an HTTP error (_wire.py).
        bounds = self.bounds
        self.http_guard = HttpGuard(
            client, bounds.max_message_bytes, bounds.max_message_values, bounds.max_stream_bytes
        )
        self.stdio_cap = StdioLineCap(
            self.bounds.max_message_bytes, max_values=self.bounds.max_message_values
        )
        self._confirm_write: ConfirmWrite | None = self.options.confirm_write
        self._require_confirmation = self.options.require_confirmation or self._confirm_write is not None
        self.cursor_trace: list[str | None] = []
        self._server_text_findings: tuple[Finding, ...] = ()

    # -- connection facts --------------------------------------------------------------------------
    @property
    def protocol_version(self) -> str | None:
        """The negotiated revision (``None`` before connecting)."""
        return self.client.protocol_version if self.client.is_connected() else None

    @property
    def transport(self) -> TransportKind:
        return transport_kind(self.client)

    @property
    def header_gates(self) -> HeaderGates:
        if not self._channel.carries_headers:
            return "not_applicable"
        version = self.protocol_version
        return "optional" if version is not None and version not in MODERN_PROTOCOL_VERSIONS else "required"

    @property
    def report(self) -> ConnectionReport:
        return ConnectionReport(self.protocol_version, self.transport, self.header_gates)

    @property
    def server_text_findings(self) -> tuple[Finding, ...]:
        """The ``hidden-unicode`` / ``instruction-markup`` findings (category ``tool_poisoning``) of the
        last judgement of what the server says besides its tools: its ``instructions`` at connect, and
        its prompts and resources after :meth:`check_server_text`. Each ``path`` is a location
        (``instructions``, ``prompts/NAME/description``, ...); messages never quote the text."""
        return self._server_text_findings

    # -- the core's admitted tools: thin, named delegations (other folders use these, never ``.core``) --
    @property
    def listed_tools(self) -> Mapping[str, AdmittedTool]:
        """Tools admitted from the last ``tools/list`` discovery, by name, in server order."""
        return self.core.listed

    def disclosed_tool(self, alias: str, schema_sha256: str) -> AdmittedTool | None:
        """The tool admitted from the disclosure ``(alias, schema_sha256)``, if the core still holds it."""
        return self.core.disclosed_tool(alias, schema_sha256)

    def admit_disclosed(
        self,
        descriptor: Mapping[str, Any],
        *,
        schema_sha256: str,
        known_headers: Mapping[str, str] | None = None,
    ) -> AdmittedTool:
        """Admit one descriptor reconstructed from a verified disclosure (:meth:`HostCore.admit_disclosed`:
        an :class:`AdmissionError` with the admission category when the policy rejects it)."""
        return self.core.admit_disclosed(descriptor, schema_sha256=schema_sha256, known_headers=known_headers)

    def use_lock_entry(self, entry: LockedServer | None) -> None:
        """Admit listed tools against ``entry`` (the contract lock's entry for this server) from the next
        listing on: an updated lock file applies without a new connection."""
        self.core.lock = entry

    # -- lifecycle ---------------------------------------------------------------------------------
    async def connect(self) -> None:
        """Connect the client; a failure is the host's family (:func:`~._translate.map_errors`): an
        unreachable server a ``TransportFailure``, a server's error a ``JsonRpcError`` or
        ``HttpStatusError`` with its words, no common revision ``UnsupportedVersion`` (never fastmcp's
        bare ``RuntimeError``); a stdio server line over ``max_message_bytes`` is
        :class:`~agent_connector_sdk.core.host.bounds.BoundExceeded`."""
        with self.http_guard.watch() as watch:
            try:
                # The stdio reader starts in the connecting task's context: the line cap holds for it.
                with compat.stdio_line_cap(self.stdio_cap), compat.session_hooks(self.notifications):
                    await cast(Any, self.client).__aenter__()
            except BaseException as error:
                if not watch.errors and self.http_guard.last_error is not None:
                    # The handshake may POST from the session's own task: the guard's last answer.
                    watch.errors.append(self.http_guard.last_error)
                mapped = translate(error, self.bounds, what="connecting", watch=watch, stdio=self.stdio_cap)
                if mapped is None or mapped is error:
                    raise
                found = await self._what_answered(mapped)
                raise (found or mapped) from error
        self.notifications.say_dropped(NotificationTally(), "connecting")
        self.core.audit({"event": "connect", **_report_event(self.report)})
        try:
            self._judge_server_text(server_text_findings(instructions=self.client.instructions))
        except AdmissionError:
            # Fail closed: a refused connection is not left open behind the caller's back (``async with``
            # never reaches its exit when entering fails).
            with contextlib.suppress(AgentConnectorError):  # the refusal is what the caller must see
                await self.close()
            raise

    async def check_server_text(self) -> tuple[Finding, ...]:
        """Judge everything the server says that a model may read: its ``instructions`` and every prompt,
        resource and resource template it *declares* (a capability the server did not declare is never
        listed), each listing bounded like :meth:`list_catalog`. The findings replace
        :attr:`server_text_findings` and are returned; in the ``strict`` profile (with
        ``HostOptions.refuse_server_text``) any finding is an ``AdmissionError('tool_poisoning')``."""
        listed: dict[CatalogKind, list[JsonObject]] = {}
        capabilities = self.client.server_capabilities
        for kind, capability in _SERVER_TEXT_LISTINGS:
            if capabilities is not None and getattr(capabilities, capability, None) is not None:
                listed[kind] = await self.list_catalog(kind)
        findings = server_text_findings(
            instructions=self.client.instructions,
            prompts=listed.get("prompts", ()),
            resources=listed.get("resources", ()),
            resource_templates=listed.get("resourceTemplates", ()),
        )
        self._judge_server_text(findings)
        return self._server_text_findings

    def _judge_server_text(self, findings: list[Finding]) -> None:
        """Record the findings, audit them (rules and locations only, never the text) and, in the
        ``strict`` profile, refuse: a poisoned text reaches the model as surely as a tool description."""
        self._server_text_findings = tuple(findings)
        if not findings:
            return
        refuse = self.options.profile == "strict" and self.options.refuse_server_text
        locations = list(dict.fromkeys(finding.path or "/" for finding in findings))
        self.core.audit(
            {
                "event": "server_text",
                "outcome": "refused" if refuse else "findings",
                "findings": len(findings),
                "rules": sorted({finding.rule for finding in findings}),
                "locations": locations,
            }
        )
        if refuse:
            raise AdmissionError(
                "tool_poisoning",
                f"the server's own text is poisoned at {', '.join(locations)} (refused: strict profile)",
            )

    async def _what_answered(self, failure: BaseException) -> NotMcpServer | None:
        """After a connect over Streamable HTTP failed in transport (not by timing out): one bounded
        standard-library probe of the address (:func:`~agent_connector_sdk.mcp._preflight.probe_http`)
        says whether what listens there does not speak HTTP, or speaks plain HTTP behind
        ``https://`` -- a transport exception's class cannot tell either."""
        transport = self.client.transport
        if not isinstance(transport, StreamableHttpTransport) or not isinstance(failure, TransportFailure):
            return None
        if failure.code == -32001:
            return None  # it timed out: a probe would only wait again
        probe = functools.partial(probe_http, str(transport.url), timeout=_PROBE_TIMEOUT, credentials=True)
        answer = await anyio.to_thread.run_sync(probe, abandon_on_cancel=True)
        if answer.found is None:
            return None
        return NotMcpServer(answer.found, sample=answer.sample, status=answer.status)

    async def close(
        self,
        exc_type: type[BaseException] | None = None,
        exc: BaseException | None = None,
        tb: TracebackType | None = None,
    ) -> None:
        # Closing a session whose server vanished (or sent garbage) fails like a call: same families,
        # never an exception group of private transport errors.
        try:
            with map_errors(self.bounds, what="closing"):
                await cast(Any, self.client).__aexit__(exc_type, exc, tb)
        finally:
            if self.stderr_relay is not None and not self.client.is_connected():
                self.stderr_relay.close()

    # -- Discover + Admit --------------------------------------------------------------------------
    async def discover_tools(self) -> AdmissionReport:
        """Page through ``tools/list`` (raw wire pages) and admit the descriptors.

        Raises ``PaginationError`` (Discover) when the cursor chain cannot be followed safely; the
        trace so far is kept in ``cursor_trace``. A malformed page is a ``ProtocolError``. One
        ``tools/list`` CLIENT span covers every page and carries Admit's verdict (:mod:`._telemetry`).
        """
        with client_operation("tools/list", protocol_version=self.protocol_version) as operation:
            report = await self._discover_tools()
            if operation.span.is_recording():
                findings = sum(len(self.core.listed_tool(name).findings) for name in report.admitted)
                rejected = {str(r["tool"]): str(r["category"]) for r in report.rejected}
                record_admission(operation, len(report.admitted), rejected, findings)
            return report

    async def _discover_tools(self) -> AdmissionReport:

        listed = 0

        async def fetch_page(cursor: str | None) -> Mapping[str, Any]:
            nonlocal listed
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
            # Raw: each descriptor is judged alone by Admit (an SDK result model fails the whole page).
            page = await self.request(
                mcp_types.ListToolsRequest(params=params), gate="discover", validate=False
            )
            tools = page.get("tools")
            listed += len(tools) if isinstance(tools, list) else 0
            check_listing_size(listed, self.bounds)
            return page

        try:
            async with operation_deadline(self.bounds, "tools/list"):
                pages = await apaginate(fetch_page, max_pages=self.bounds.max_pages, items_key="tools")
        except PaginationError as error:
            self.cursor_trace = list(error.trace)
            self.core.discovery_failed(error.category, pages=len(error.trace))
            raise
        self.cursor_trace = list(pages.trace)
        self.tools_changed = False
        return self.core.admit_listing(list(pages.items), pages=len(pages.trace))

    async def list_catalog(self, kind: CatalogKind) -> list[JsonObject]:
        """Every prompt, resource or resource template the server lists (``kind``: ``prompts``,
        ``resources``, ``resourceTemplates``), raw wire dicts in server order, under the session's
        bounds: ``max_pages`` (a cursor chain that never ends is a ``PaginationError``), ``max_list_items``
        over all pages, ``max_message_bytes`` per page and ``deadline_s`` for the whole listing (each a
        :class:`~agent_connector_sdk.core.host.bounds.BoundExceeded`). Use it instead of
        ``fastmcp.Client.list_prompts()`` and its siblings, which follow a server's cursors without end. An
        item that is not a JSON object is dropped (a listing is information, never a gate)."""
        request_type, method = _CATALOG_REQUESTS[kind]
        listed = 0

        async def fetch_page(cursor: str | None) -> Mapping[str, Any]:
            nonlocal listed
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
            page = await self.request(request_type(params=params), gate="discover", validate=False)
            items = page.get(kind)
            listed += len(items) if isinstance(items, list) else 0
            check_list_items(listed, self.bounds, method)
            return page

        async with operation_deadline(self.bounds, method):
            pages = await apaginate(fetch_page, max_pages=self.bounds.max_pages, items_key=kind)
        return [item for item in pages.items if isinstance(item, dict)]

    def _tools_list_changed(self) -> None:
        self.tools_changed = True
        self.core.audit({"event": "tools_list_changed"})

    def _mark_tools_changed(self) -> None:
        self.tools_changed = True

    # -- Invoke + Execute + Consume ----------------------------------------------------------------
    async def call(
        self,
        tool: AdmittedTool | str,
        arguments: Mapping[str, Any] | None = None,
        *,
        raise_on_error: bool = False,
        meta: Mapping[str, Any] | None = None,
    ) -> ToolResult:
        """Call an admitted tool (an :class:`AdmittedTool`, or the name of a listed one) through every
        host-side gate and return the validated result.

        Admit: ``AdmissionError('not_admitted')``. Invoke: argument, header and deliverability
        refusals, and ``ConfirmationRefused`` for an unconfirmed tool that may write. Execute: the
        server's verdict arrives as ``JsonRpcError`` (e.g. -32020). Consume: ``ContractViolation``;
        ``raise_on_error`` turns a valid ``isError`` result into ``ToolExecutionError``; ``meta`` goes in
        the request's ``_meta`` (e.g. a contract binding the server judges).
        """
        if self.tools_changed and (not isinstance(tool, AdmittedTool) or tool.origin == "listing"):
            # The server said its tools changed since they were admitted: admit them again first, so a
            # drifted contract is refused (contract_drift) instead of called under the old verdict.
            await self.discover_tools()
            tool = tool.name if isinstance(tool, AdmittedTool) else tool
        admitted = tool if isinstance(tool, AdmittedTool) else self.core.listed_tool(tool)
        result = await self._run(admitted, arguments, confirm=True, meta=meta)
        if result.is_error and raise_on_error:
            raise ToolExecutionError(admitted.name, result)
        return result

    async def call_control(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Call a listed tool the *host itself* uses to run the session (the disclosure consumer's
        search tool): admitted, invoked, consumed and audited by the core like any call, but never put
        to write confirmation — that question is for a model's
        actions, and a host that had to confirm its own catalog searches could not discover at all.
        """
        admitted = self.core.listed_tool(name)
        return await self._run(admitted, arguments, confirm=False)

    async def _run(
        self,
        admitted: AdmittedTool,
        arguments: Mapping[str, Any] | None,
        *,
        confirm: bool,
        meta: Mapping[str, Any] | None = None,
    ) -> ToolResult:
        """One call through Invoke, Execute and Consume, in one ``tools/call NAME`` CLIENT span."""
        with client_operation("tools/call", tool=admitted.name, protocol_version=self.protocol_version) as op:
            result = await self._run_gates(admitted, arguments, confirm=confirm, meta=meta)
            record_result(op, is_error=bool(result.is_error))
            return result

    async def _run_gates(
        self,
        admitted: AdmittedTool,
        arguments: Mapping[str, Any] | None,
        *,
        confirm: bool,
        meta: Mapping[str, Any] | None = None,
    ) -> ToolResult:
        self.core.header_gates = self.header_gates
        prepared = self.core.invoke(admitted, arguments)
        try:
            self._channel.require_deliverable(prepared.headers)
        except ContractError as refusal:
            self.core.refused(admitted, refusal.category, call=prepared)
            raise
        if confirm:
            await self._confirm(prepared)

        async def send(responses: mcp_types.InputResponses | None, state: str | None) -> Any:
            # SEP-2322: a retry is a new request (fresh JSON-RPC id) carrying the same arguments and
            # headers, the client's answers and the server's requestState echoed byte-exact (or none).
            params = mcp_types.CallToolRequestParams(
                name=admitted.name,
                arguments=prepared.arguments,
                input_responses=responses,
                request_state=state,
                _meta=None if meta is None else dict(meta),
            )
            with self._channel.sending(admitted.name, prepared.headers):
                raw = await self.request(
                    mcp_types.CallToolRequest(params=params), gate="consume", call=prepared
                )
            if not is_input_required(raw):
                return raw
            try:
                # The SDK's own dispatch refuses embedded requests this client did not declare.
                validate_input_required_result(raw, request_method="tools/call", client_capabilities=None)
            except ContractViolation as violation:
                self.core.refused(admitted, violation.category, call=prepared)
                raise
            return mcp_types.InputRequiredResult.model_validate(raw)

        # The deadline covers what the server controls (the exchange and its input_required rounds),
        # not the host's own confirmation above.
        try:
            async with operation_deadline(self.bounds, f"the call of {admitted.name!r}"):
                raw = await self._exchange(prepared, send)
        except BoundExceeded:
            self.core.refused(admitted, "bound_exceeded", call=prepared)
            raise
        try:
            check_result_size(raw, self.bounds)
        except BoundExceeded:
            self.core.refused(admitted, "bound_exceeded", call=prepared)
            raise
        return self.core.consume(prepared, raw)

    async def _exchange(
        self,
        prepared: PreparedCall,
        send: Callable[[mcp_types.InputResponses | None, str | None], Awaitable[Any]],
    ) -> JsonObject:
        """Send the call and drive its SEP-2322 input_required rounds to a final result."""
        admitted = prepared.tool
        first = await send(None, None)
        # The SDK's multi-round-trip driver answers each round through the wrapped client's sampling /
        # elicitation / roots callbacks and retries until a final result (or its round limit).
        try:
            raw = cast(
                JsonObject,
                await compat.run_input_required_driver(
                    first,
                    dispatch=self._dispatch_input_request,
                    retry=send,
                    max_rounds=self.client.input_required_max_rounds,
                ),
            )
        except InputRequiredRoundsExceededError as error:
            self.core.refused(admitted, "input_required_rounds_exceeded", call=prepared)
            raise ContractViolation(
                "input_required_rounds_exceeded", "the server kept asking for input past the round limit"
            ) from error
        except MCPError as error:
            # Only our own dispatch raises MCPError here (a peer's errors arrive as JsonRpcError): this
            # client declined an embedded request, e.g. one for a capability it has no callback for.
            self.core.refused(admitted, "input_request_refused", call=prepared)
            raise ContractViolation(
                "input_request_refused", f"an embedded input request was refused locally (code {error.code})"
            ) from error
        return raw

    async def _confirm(self, prepared: PreparedCall) -> None:
        tool = prepared.tool
        if not self._require_confirmation or not may_write(tool):
            return
        category: ConfirmationCategory
        if self._confirm_write is None:
            category, message = "confirmation_required", "the tool may write and the host has no confirmation"
        else:
            summary = CallSummary(
                tool=tool.name,
                origin=tool.origin,
                annotations=dict(tool.annotations),
                arguments=tuple(sorted(prepared.arguments)),
                headers=tuple(prepared.headers),
            )
            try:
                verdict = self._confirm_write(summary)
                if inspect.isawaitable(verdict):
                    verdict = await verdict
            except Exception:  # a failing callback is a refusal, never a silent go-ahead
                verdict = False
            if verdict is True:
                self.core.audit({"event": "confirm", "tool": tool.name, "outcome": "confirmed"})
                return
            category, message = "not_confirmed", "the host's confirmation declined the call"
        self.core.refused(tool, category, call=prepared)
        raise ConfirmationRefused(category, message, tool=tool.name)

    async def _dispatch_input_request(
        self, key: str, request: mcp_types.InputRequest
    ) -> mcp_types.InputResponse | mcp_types.ErrorData:
        session = self.client.session
        meta = request.params.meta if request.params is not None else None
        context = ClientRequestContext(session=session, request_id=key, meta=meta)
        return await session.dispatch_input_request(context, request)

    def _complete_when_untagged(self, request: Any, error: ValidationError) -> JsonObject | None:
        """The result the SDK refused only for lacking ``resultType``, read as ``"complete"``; else None.

        schema.ts (2026-07-28, ``Result.resultType``): when the field is absent "the client MUST treat
        the absent field as ``"complete"``". ``mcp`` 2.3 validates 2026-07-28 results with the field
        required, so such a result would fail before our gates; it is re-validated here, by the SDK's
        own wire schema, with the tag the spec says it means (any other defect still fails).
        """
        untagged = [
            failure
            for failure in error.errors()
            if failure.get("type") == "missing" and tuple(failure.get("loc", ()))[-1:] == ("resultType",)
        ]
        raw = untagged[0].get("input") if untagged else None
        version = self.client.session.protocol_version
        if not isinstance(raw, dict) or "resultType" in raw or version is None:
            return None
        tagged = {**raw, "resultType": "complete"}
        try:
            validate_server_result(str(request.method), version, tagged)
        except (ValidationError, KeyError, ValueError):
            return None
        return tagged

    # -- plumbing ----------------------------------------------------------------------------------
    async def request(
        self,
        request: Any,
        *,
        gate: Literal["discover", "consume"] = "consume",
        call: PreparedCall | None = None,
        validate: bool = True,
    ) -> JsonObject:
        """Send one request and return the raw result dict; every failure is translated once, here
        (:func:`~._translate.map_errors`), into the host's families, keeping the server's code and words.

        ``validate=False`` skips the SDK's result model (the caller judges the raw dict); a response
        over ``max_message_bytes`` is :class:`~agent_connector_sdk.core.host.bounds.BoundExceeded`, whatever
        the SDK made of it.
        """
        method = str(getattr(request, "method", "request"))
        if not in_operation():  # a request of its own (a disclosure read, a prompt listing): its own span
            with client_operation(method, protocol_version=self.protocol_version):
                return await self.request(request, gate=gate, call=call, validate=validate)
        before = self.notifications.tally.snapshot()
        with self.http_guard.watch() as watch:
            try:
                try:
                    with map_errors(self.bounds, what=method, watch=watch, stdio=self.stdio_cap):
                        return await self._request(request, gate=gate, call=call, validate=validate)
                finally:
                    flood = self.notifications.say_dropped(before, method)
            except TransportFailure as error:
                if flood is not None and error.code == mcp_types.REQUEST_TIMEOUT:
                    # Not slowness alone: name what the server sent instead of its answer.
                    error = TransportFailure(f"{error.message} ({flood})", code=error.code, flood=flood)
                if call is not None:
                    self.core.refused(call.tool, _failed_outcome(error), call=call, **_error_code(error))
                raise error from error.__cause__
            except (ProtocolError, BoundExceeded) as error:
                if call is not None:
                    self.core.refused(call.tool, _failed_outcome(error), call=call, **_error_code(error))
                raise

    async def _request(
        self,
        request: Any,
        *,
        gate: Literal["discover", "consume"],
        call: PreparedCall | None,
        validate: bool,
    ) -> JsonObject:
        try:
            if not validate:
                raw = await compat.send_unvalidated_request(self.client.session, request)
                if not isinstance(raw, dict):
                    raise MalformedResponse(f"the {request.method} result is not a JSON object")
                return cast(JsonObject, raw)
            # A raw dict result type keeps the wire shape (and keeps the SDK's per-tool caches out of it).
            raw = await self.client.session.send_request(request, cast(Any, _RAW_RESULT))
            return cast(JsonObject, raw)
        except ValidationError as error:
            untagged = self._complete_when_untagged(request, error)
            if untagged is not None:
                return untagged
            # The SDK checks result shapes for the negotiated revision before we see them. Only the
            # location and error type are reported: pydantic's messages would quote the values.
            first = error.errors()[0] if error.errors() else {"loc": (), "type": "invalid"}
            path = "/" + "/".join(str(part) for part in first.get("loc", ()))
            if gate == "discover":
                raise MalformedResponse(f"malformed {request.method} result at {path}") from error
            if call is not None:
                self.core.refused(call.tool, "malformed_result", call=call)
            raise ContractViolation(
                "malformed_result", f"result does not match the MCP schema at {path}", path=path
            ) from error


def as_session(connection: fastmcp.Client[Any] | HostSession, options: HostOptions | None) -> HostSession:
    """The session a face runs over: ``connection`` itself when it is a :class:`HostSession` (then
    ``options`` must be ``None``), else a new session for that client.

    A session should wrap the client before it connects: the ``Mcp-Param-*`` hook lives in the HTTP
    client the transport builds on connect (otherwise calls that need headers are refused).
    """
    if isinstance(connection, HostSession):
        if options is not None:
            raise ValueError("the session already has its options; pass options to HostSession")
        return connection
    return HostSession(connection, options)


class SessionFace:
    """What both faces (``ContractClient``, ``SchemaDisclosureConsumer``) read straight from their one
    session: the connection facts and the audit sink — written once here, not once per face."""

    session: HostSession

    @property
    def audit(self) -> AuditSink:
        """The session's sink (:class:`~.HostOptions` ``audit``), shared by both faces."""
        return self.session.core.audit

    @property
    def protocol_version(self) -> str | None:
        """The negotiated revision, e.g. ``2026-07-28`` or ``2025-11-25`` (``None`` before connecting)."""
        return self.session.protocol_version

    @property
    def header_gates(self) -> HeaderGates:
        """``required``, ``optional`` (an older revision over HTTP) or ``not_applicable`` (no HTTP)."""
        return self.session.header_gates

    @property
    def server_text_findings(self) -> tuple[Finding, ...]:
        """Poisoning findings in what the server says besides its tools
        (:attr:`HostSession.server_text_findings`; read-only)."""
        return self.session.server_text_findings


def _failed_outcome(error: ProtocolError | BoundExceeded) -> str:
    """The audit outcome of a call whose exchange failed: the family, never the server's words."""
    if isinstance(error, BoundExceeded):
        return "bound_exceeded"
    if isinstance(error, TransportFailure):
        return "transport_failure"
    return "protocol_error"


def _error_code(error: ProtocolError | BoundExceeded) -> dict[str, int]:
    """The JSON-RPC code or HTTP status of a failed exchange, for the audit event (numbers only)."""
    if isinstance(error, JsonRpcError):
        return {"code": error.code}
    if isinstance(error, HttpStatusError):
        return {"http_status": error.status}
    return {}


def _report_event(report: ConnectionReport) -> dict[str, Any]:
    return {
        "protocol_version": report.protocol_version,
        "transport": report.transport,
        "header_gates": report.header_gates,
    }
