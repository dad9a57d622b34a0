"""The live review: run the host side over a real session and say what a host would do.

Thin on purpose: ONE :class:`~agent_connector_sdk.mcp.host.HostSession` for the connection (one core,
one audit trail, the profile from ``--strict``), with both faces over it: discovery, admission and
calls through ``ContractClient``; tools hidden behind a search transform through
``SchemaDisclosureConsumer`` (search → manifest → fragments → verified reconstruction → admission of
the reconstructed descriptor → validated call). One ``tools/list``: rejected descriptors come with
their rejections, header policy from the annotations the core read at Admit (the contracts' codec
applied to the reviewer's synthetic sample values). Errors arrive as their own families and are
recorded by class, never decoded from strings; the server's own words (tool text, JSON-RPC message)
are kept, sanitized and capped. This module is the I/O-driving part of the review: it only orders
those steps and records what they said in a :class:`~agent_connector_sdk.review.report.ReviewReport`,
built by :mod:`agent_connector_sdk.review.build`.
"""

from __future__ import annotations

import contextlib
import difflib
import logging
import re
import shlex
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

import anyio
import fastmcp
from fastmcp.skills import SkillsClientExtension
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from agent_connector_sdk.audit import BoundedAuditSink
from agent_connector_sdk.core.contracts import (
    SERVER_TEXT_LIMIT,
    ContractError,
    Rejection,
    SourceNotPinned,
    server_text,
    server_text_findings,
)
from agent_connector_sdk.core.contracts.errors import (
    AdmissionError,
    ContractViolation,
    PaginationError,
)
from agent_connector_sdk.core.disclosure_navigation import SchemaNavigation
from agent_connector_sdk.core.host import HostBounds, HttpStatusError, JsonRpcError, ProtocolError
from agent_connector_sdk.core.host.bounds import BoundExceeded
from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.mcp.host import (
    AdmittedTool,
    CallSummary,
    HostOptions,
    HostSession,
    StderrRecord,
    operation_deadline,
    translate_unreadable,
)
from agent_connector_sdk.mcp.host.contract_client import ContractClient
from agent_connector_sdk.mcp.host.disclosure_consumer import (
    CallerScope,
    DisclosedTool,
    DisclosureConsumerError,
    SchemaDisclosureConsumer,
    SelectedTool,
    StaleSelection,
)
from agent_connector_sdk.review.build import (
    admitted_header_policy,
    build_review_report,
    finding_reports,
    header_policy,
    showable,
)
from agent_connector_sdk.review.enumeration import SearchEnumeration
from agent_connector_sdk.review.errors import ReviewError, ServerUnavailable
from agent_connector_sdk.review.options import ReviewOptions
from agent_connector_sdk.review.report import (
    AdmissionVerdict,
    CallReport,
    CompletionProbe,
    DisclosureCheck,
    HeaderPolicy,
    ReviewReport,
    SearchReport,
    ServerIdentity,
    ServerTextReview,
    SkillEntry,
    Target,
    ToolReview,
    output_kind,
)
from agent_connector_sdk.review.stdio_server import environment_hint, informative_line
from agent_connector_sdk.review.unreachable import explain_unreachable, unavailable_reason
from agent_connector_sdk.sanitize import sanitize_text

__all__ = ["ReviewOptions", "quiet_sdk_loggers", "review_server"]

_SDK_LOGGERS: Final = ("mcp", "fastmcp", "httpx", "httpx2", "httpcore", "httpcore2", "sse_starlette")


@contextlib.contextmanager
def quiet_sdk_loggers() -> Iterator[None]:
    """Silence the SDKs' own loggers: a non-MCP reply makes them log pydantic tracebacks and
    "Unexpected content type" lines, which the reviewer already explains in one sentence."""
    saved = {name: logging.getLogger(name).level for name in _SDK_LOGGERS}
    for name in _SDK_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


# ----------------------------------------------------------------------------------- the session
def _client(
    target: Target,
    options: ReviewOptions,
    unreadable: list[Exception] | None = None,
    stderr: StderrRecord | None = None,
) -> fastmcp.Client[Any]:
    if target.kind == "http":
        from fastmcp.client.transports.http import StreamableHttpTransport

        transport: Any = StreamableHttpTransport(options.url or target.address, headers=dict(options.headers))
    else:
        from fastmcp.client.transports.stdio import StdioTransport

        argv = list(options.command) if options.command else shlex.split(target.address)
        if not argv:
            raise ReviewError("the stdio server command is empty")
        # The server's stderr (banners, its own logs) is kept off the review as a bounded tail in
        # memory: the review stays readable, and when the server dies its most telling line is quoted
        # in the one-line error (without a record, the session relays it, sanitized, to stderr).
        transport = StdioTransport(
            argv[0],
            argv[1:],
            env=dict(options.env) or None,
            cwd=options.cwd,
            keep_alive=False,
            log_file=stderr.writer if stderr is not None else None,
        )

    async def note_unreadable(message: Any) -> None:
        # The SDK hands a line it could not parse to the message handler and drops it; the request it
        # answered then times out. Kept (at most a few) so the one-line error can say why.
        if isinstance(message, Exception) and unreadable is not None and len(unreadable) < 8:
            unreadable.append(message)

    return fastmcp.Client(
        transport,
        auth=options.token,
        timeout=options.timeout,
        init_timeout=options.timeout,
        message_handler=note_unreadable,
        # Opt into the Skills extension (SEP-2640) so the review can list a server's skills.
        extensions=[SkillsClientExtension()],
    )


async def review_server(target: Target, options: ReviewOptions) -> ReviewReport:
    """Review the server at ``target`` (HTTP or stdio). Raises :class:`ServerUnavailable` when no
    review is possible (unreachable, not MCP, timed out); everything else lands in the report."""
    unreadable: list[Exception] = []
    over_http = target.kind == "http"
    stderr = None if over_http else StderrRecord("server")
    try:
        return await _review_session(target, options, unreadable, stderr)
    finally:
        if stderr is not None:
            stderr.close()


async def _review_session(
    target: Target, options: ReviewOptions, unreadable: list[Exception], stderr: StderrRecord | None
) -> ReviewReport:
    client = _client(target, options, unreadable, stderr)
    over_http = stderr is None
    # One readable trail for both faces of the host core: the report quotes header names from it.
    audit = BoundedAuditSink()

    # Write confirmation: naming a tool with --call is the person's confirmation for that one tool; the
    # reviewer confirms nothing else (it calls nothing else).
    def confirm(summary: CallSummary) -> bool:
        return options.call is not None and summary.tool == options.call

    # ONE host session for the connection: both faces run over its one core (one policy, one set of
    # admitted tools, one audit trail that the report quotes header names from). Bounds (deadline,
    # sizes) hold in the library; the reviewer only chooses the deadline.
    bounds = HostBounds(deadline_s=options.deadline)
    session = HostSession(
        client,
        # refuse_server_text=False: a poisoned text is a reported failure here, not a refused connection.
        HostOptions(
            profile=options.profile,
            audit=audit,
            confirm_write=confirm,
            bounds=bounds,
            refuse_server_text=False,
        ),
    )
    host = ContractClient(session)
    consumer = SchemaDisclosureConsumer(
        session,
        scope=CallerScope("reviewer", target.address),
        source_pins=options.source_pins,
        max_in_flight=_READS_PER_TOOL,
    )
    failure: BaseException
    try:
        async with operation_deadline(bounds, "the review"), host:
            return await _review(host, consumer, target, options, over_http, audit)
    except BoundExceeded as refusal:
        # This host's own refusal: said as such, never as the server being unreachable.
        hint = " (raise --deadline?)" if refusal.bound == "deadline_s" else ""
        raise ServerUnavailable(f"refused by this host: {refusal.message}{hint}") from None
    except (ProtocolError, OSError, RuntimeError) as error:
        failure = error
    except BaseExceptionGroup as group:
        failure = group
    # A line the SDK dropped explains the failure better than the timeout it caused, when it was
    # this host's own bound (a message nested past the parser): decided by class, never by text.
    for dropped in unreadable:
        own = translate_unreadable(dropped, bounds, what="the review")
        if isinstance(own, BoundExceeded):
            raise ServerUnavailable(f"refused by this host: {own.message}") from None
    sent = options.token is not None or any(name.lower() == "authorization" for name in options.headers)
    message = explain_unreachable(failure, target=target.address, timeout=options.timeout, credentials=sent)
    reason = unavailable_reason(failure)
    quoted = None
    if stderr is not None:
        stderr.close()  # the server is gone (keep_alive=False): the record reads to its end
        stderr.join(timeout=1.0)
        quoted = informative_line(stderr.tail())
    if not quoted:
        raise ServerUnavailable(message, reason=reason) from None
    raise ServerUnavailable(
        f"{message} (server stderr: {quoted}){environment_hint(quoted)}", reason=reason
    ) from None


async def _review(
    host: ContractClient,
    consumer: SchemaDisclosureConsumer,
    target: Target,
    options: ReviewOptions,
    over_http: bool,
    audit: BoundedAuditSink,
) -> ReviewReport:
    client = host.client
    info = client.server_info
    identity = ServerIdentity(
        name=info.name if info is not None else None,
        version=info.version if info is not None else None,
        protocol_version=client.protocol_version,
    )
    try:
        report = await host.discover_tools()
    except PaginationError as refusal:
        raise ServerUnavailable(
            f"tools/list cannot be followed safely: {refusal.category} after {len(refusal.trace)} pages"
        ) from None
    listed = await _listed_reviews(host, report.rejected, over_http)

    search_report: SearchReport | None = None
    disclosed: dict[str, DisclosedTool] = {}
    hidden: list[ToolReview] = []
    search_tool = _search_tool(report.admitted)
    if search_tool is not None:
        search_report, hidden, disclosed = await _review_hidden(consumer, search_tool, options, over_http)

    tools = listed + hidden
    said = await _server_said(host)
    completion = await _probe_completion(host, said) if _declared(client, "completions") else None
    call = await _call(host, consumer, tools, disclosed, options, audit) if options.call is not None else None
    if call is not None and not over_http:
        # Over stdio the channel is inert: the headers were computed, but nothing carries them.
        call = call.model_copy(update={"headers_sent": []})
    return build_review_report(
        target=target,
        profile=options.profile,
        header_gates=over_http,
        tools=tools,
        server=identity,
        page_trace=host.cursor_trace,
        search=search_report,
        completion=completion,
        call=call,
        skills=await _list_skills(client),
        server_text=said.review(),
    )


async def _list_skills(client: fastmcp.Client[Any]) -> list[SkillEntry] | None:
    """The server's skills over the Skills extension, or ``None`` when it offers none (not negotiated,
    an older revision, or the listing failed: the review stands without it)."""
    try:
        skills = await client.list_skills(max_pages=10)
    except (RuntimeError, MCPError, ValidationError):
        return None
    return [
        SkillEntry(
            name=skill.frontmatter.name,
            description=skill.frontmatter.description,
            uri=str(skill.uri),
            files=len(skill.resources),
        )
        for skill in skills
    ]


async def _listed_reviews(
    host: ContractClient, rejected: Sequence[Rejection], over_http: bool
) -> list[ToolReview]:
    # Everything comes from the one discovery: admitted tools as the core holds them (their header
    # annotations already read), rejected ones with the descriptor the rejection carries.
    reviews = [
        ToolReview(
            name=name,
            found="listed",
            descriptor=dict(tool.descriptor),
            output_kind=output_kind(tool.descriptor),
            admission=AdmissionVerdict(decision="admitted"),
            headers=admitted_header_policy(tool, applicable=over_http),
            findings=finding_reports(tool.findings),
        )
        for name, tool in host.session.listed_tools.items()
    ]
    for rejection in rejected:
        descriptor = rejection["descriptor"] if isinstance(rejection["descriptor"], dict) else None
        if descriptor is not None and not showable(descriptor):
            descriptor = None  # the reason says what is wrong with it; the report cannot carry it
        reviews.append(
            ToolReview(
                name=rejection["tool"],
                found="listed",
                descriptor=descriptor,
                output_kind=output_kind(descriptor),
                admission=AdmissionVerdict(
                    decision="rejected", category=rejection["category"], reason=rejection["reason"]
                ),
                headers=header_policy(descriptor, applicable=over_http),
            )
        )
    return reviews


def _search_tool(admitted: Mapping[str, dict[str, Any]]) -> str | None:
    """The admitted tool that searches a hidden catalog (FastMCP's search transform: a ``pattern``
    or ``query`` string argument, and a ``call_tool`` proxy beside it)."""
    for name in ("search_tools",):
        descriptor = admitted.get(name)
        properties = descriptor.get("inputSchema", {}).get("properties", {}) if descriptor else {}
        if isinstance(properties, dict) and "pattern" in properties:
            return name
    return None


async def _review_hidden(
    consumer: SchemaDisclosureConsumer, search_tool: str, options: ReviewOptions, over_http: bool
) -> tuple[SearchReport, list[ToolReview], dict[str, DisclosedTool]]:
    entries: dict[str, SchemaNavigation] = {}
    enumeration = SearchEnumeration(consumer, entries)
    try:
        await enumeration.run(options.search_patterns)
    except AgentConnectorError as error:
        # The search is a call through the core: its admission, result and protocol failures arrive
        # as themselves (AdmissionError, ContractViolation, JsonRpcError, BoundExceeded, ...), each
        # with its category.
        search = SearchReport(
            tool=search_tool,
            patterns=list(options.search_patterns),
            entries=len(entries),
            category=error.category,
            reason=error.message,
        )
        return search, [], {}
    search = SearchReport(
        tool=search_tool,
        patterns=list(options.search_patterns),
        entries=len(entries),
        searches=enumeration.searches,
        complete=enumeration.incomplete is None,
        incomplete=enumeration.incomplete,
    )
    if options.progress is not None:
        options.progress("total", len(entries))
    ordered = list(entries.values())
    results: list[tuple[ToolReview, DisclosedTool | None] | None] = [None] * len(ordered)
    limiter = anyio.Semaphore(_TOOLS_IN_FLIGHT)

    async def review_one(index: int, entry: SchemaNavigation) -> None:
        async with limiter:
            results[index] = await _review_disclosed(consumer, entry, over_http)
        if options.progress is not None:
            options.progress("advance", 1)

    try:
        async with anyio.create_task_group() as group:
            for index, entry in enumerate(ordered):
                group.start_soon(review_one, index, entry)
    except BaseExceptionGroup as failures:
        # What ends the review (a lost connection, the deadline) arrives as itself, not as a group.
        raise _first_failure(failures) from None
    reviews: list[ToolReview] = []
    disclosed: dict[str, DisclosedTool] = {}
    for entry, result in zip(ordered, results, strict=True):
        assert result is not None  # every task ran to its end, or the group raised
        review, tool = result
        reviews.append(review)
        if tool is not None:
            disclosed[entry.name] = tool
    return search, reviews, disclosed


async def _review_disclosed(
    consumer: SchemaDisclosureConsumer, entry: SchemaNavigation, over_http: bool
) -> tuple[ToolReview, DisclosedTool | None]:
    """One searched tool: its disclosure read and verified, then the host core's Admit gate."""
    selection = SelectedTool(navigation=entry, scope=consumer.scope, generation=consumer.generation)
    tool: DisclosedTool | None = None
    admitted: AdmittedTool | None = None
    failure: AgentConnectorError | None = None
    try:
        tool = await consumer.verify(selection)
        # Verified, then the session core's Admit gate: the review shows both facts.
        admitted = consumer.admit(tool)
    except (DisclosureConsumerError, SourceNotPinned, AdmissionError, JsonRpcError) as error:
        # SourceNotPinned: --pins, the manifest's source is not a reviewed one; JsonRpcError: the
        # server refused one read in its own way (a lost connection ends the review instead).
        failure = error
    if tool is None:
        assert failure is not None
        check = DisclosureCheck(
            verified=False,
            manifest_uri=entry.manifest_uri,
            schema_sha256=entry.schema_sha256,
            fragment_count=entry.fragment_count,
            step=failure.where,
            source_sha256=failure.offered if isinstance(failure, SourceNotPinned) else None,
            category=failure.category,
            reason=failure.message,
        )
        return (
            ToolReview(
                name=entry.name,
                found="search",
                descriptor=None,
                output_kind="none",
                admission=AdmissionVerdict(
                    decision="rejected",
                    category="undisclosed",
                    reason="its schemas could not be verified",
                ),
                headers=HeaderPolicy(applicable=over_http),
                disclosure=check,
            ),
            None,
        )
    else:
        descriptor = _disclosed_descriptor(entry, tool)
        # The host core's own Admit verdict (the one a call is held to), not a second evaluation.
        verdict = (
            AdmissionVerdict(decision="rejected", category=failure.category, reason=failure.message)
            if failure is not None
            else AdmissionVerdict(decision="admitted")
        )
        manifest = tool.manifest
        return (
            ToolReview(
                name=entry.name,
                found="search",
                descriptor=descriptor,
                output_kind=output_kind(descriptor),
                admission=verdict,
                findings=finding_reports(admitted.findings) if admitted is not None else [],
                headers=(
                    admitted_header_policy(admitted, applicable=over_http)
                    if admitted is not None
                    else header_policy(descriptor, applicable=over_http)
                ),
                disclosure=DisclosureCheck(
                    verified=True,
                    manifest_uri=manifest.manifest_uri,
                    schema_sha256=manifest.schema_sha256,
                    source_sha256=manifest.source_sha256,
                    fragment_count=manifest.fragment_count,
                    schema_bytes=manifest.schema_bytes,
                    bytes_read=tool.bytes_read,
                ),
            ),
            tool,
        )


_TOOLS_IN_FLIGHT: Final = 4
"""Searched tools reviewed at once, each with at most :data:`_READS_PER_TOOL` reads in flight: 4 x 2
stays within a served app's default per-caller bound (``DEFAULT_MAX_IN_FLIGHT_PER_CALLER``, 8, over
which it answers HTTP 429) and overlaps this process's verification and admission with the server's
reads instead of waiting on each round trip in turn."""
_READS_PER_TOOL: Final = 2


def _first_failure(group: BaseExceptionGroup[Any]) -> BaseException:
    """The first failure in a task group's (possibly nested) group, itself."""
    first = group.exceptions[0]
    return _first_failure(first) if isinstance(first, BaseExceptionGroup) else first


def _disclosed_descriptor(entry: SchemaNavigation, tool: DisclosedTool) -> dict[str, Any]:
    descriptor: dict[str, Any] = {"name": entry.name}
    if entry.title is not None:
        descriptor["title"] = entry.title
    if entry.description is not None:
        descriptor["description"] = entry.description
    descriptor.update(tool.descriptor)
    return descriptor


_INSTRUCTIONS_SHOWN: Final = 2_000
"""Characters of a server's instructions the report shows (sanitized; a marker counts the rest)."""


def _declared(client: fastmcp.Client[Any], capability: str) -> bool:
    """Whether the server declared ``capability`` (``prompts``, ``resources``, ``completions``): only
    what it declares is listed or probed, so a server is never held to a method it did not offer."""
    capabilities = client.server_capabilities
    return capabilities is not None and getattr(capabilities, capability, None) is not None


@dataclass
class _ServerSaid:
    """What the server tells a model besides its tools, listed as its capabilities declare."""

    instructions: str | None
    prompts: list[dict[str, Any]] | None = None
    resources: list[dict[str, Any]] | None = None
    templates: list[dict[str, Any]] | None = None
    notes: list[str] = field(default_factory=list)

    def review(self) -> ServerTextReview:
        findings = server_text_findings(
            instructions=self.instructions,
            prompts=self.prompts or (),
            resources=self.resources or (),
            resource_templates=self.templates or (),
        )
        instructions = self.instructions if isinstance(self.instructions, str) else None
        return ServerTextReview(
            instructions=_shown_instructions(instructions) if instructions else None,
            instructions_chars=len(instructions) if instructions else None,
            prompts=None if self.prompts is None else len(self.prompts),
            resources=None if self.resources is None else len(self.resources),
            resource_templates=None if self.templates is None else len(self.templates),
            findings=finding_reports(findings),
            notes=self.notes,
        )


def _shown_instructions(text: str) -> str:
    """The first :data:`_INSTRUCTIONS_SHOWN` characters with their line breaks kept, each line sanitized
    (every other control character, bidi control and escape shown escaped), and a marker counting the
    characters cut."""
    kept = text[:_INSTRUCTIONS_SHOWN]
    shown = "\n".join(sanitize_text(line, _INSTRUCTIONS_SHOWN) for line in kept.split("\n"))
    cut = len(text) - len(kept)
    return shown + (f"…[+{cut} chars]" if cut else "")


async def _server_said(host: ContractClient) -> _ServerSaid:
    """The instructions, and every prompt, resource and resource template the server declares, each
    listing under the session's bounds. A listing that fails is a note (the review stands without it)."""
    client = host.client
    said = _ServerSaid(instructions=client.instructions)
    listings: list[tuple[str, Any, str]] = []
    if _declared(client, "prompts"):
        listings.append(("prompts", "prompts", "prompts/list"))
    if _declared(client, "resources"):
        listings += [
            ("resources", "resources", "resources/list"),
            ("templates", "resourceTemplates", "resources/templates/list"),
        ]
    for attribute, kind, method in listings:
        try:
            # Bounded (pages, items, bytes, the deadline): a listing that never ends costs a note.
            items = await host.session.list_catalog(kind)
        except AgentConnectorError as error:
            said.notes.append(sanitize_text(f"{method} failed: {error.category}: {error.message}"))
            continue
        setattr(said, attribute, items)
    return said


async def _probe_completion(host: ContractClient, said: _ServerSaid) -> CompletionProbe:
    """One ``completion/complete`` on the first prompt argument, or else the first variable of a
    resource template: only references the server declared and listed. Nothing to complete, or a
    listing that failed, is a note: the probe could not run, which is no finding."""
    target = _completion_target(said)
    if target is None:
        declared = [
            kind
            for kind, items in (("prompts", said.prompts), ("resources", said.templates))
            if items is not None
        ]
        if said.notes:
            note = "; ".join(said.notes)
        elif not declared:
            note = "the server declares neither prompts nor resources: nothing to complete"
        else:
            note = f"no {' or '.join(declared)} with an argument to complete"
        return CompletionProbe(advertised=True, note=note)
    ref, argument = target
    try:
        result = await host.complete(ref, argument, "")
    except ContractError as error:
        return CompletionProbe(
            advertised=True, ref=ref, argument=argument, category=error.category, reason=str(error)
        )
    except JsonRpcError as error:
        # The family's one label; the code and the server's own message (sanitized, capped).
        words = sanitize_text(str(error.message), SERVER_TEXT_LIMIT)
        return CompletionProbe(
            advertised=True,
            ref=ref,
            argument=argument,
            category=error.category,
            reason=f"JSON-RPC error {error.code}: {words}",
        )
    return CompletionProbe(
        advertised=True,
        ref=ref,
        argument=argument,
        values=result.values,
        total=result.total,
        has_more=result.has_more,
    )


_TEMPLATE_VARIABLE: Final = re.compile(r"\{[+#./;?&]?([A-Za-z0-9_%.]+)")


def _completion_target(said: _ServerSaid) -> tuple[dict[str, str], str] | None:
    """``(ref, argument)`` of the first completable argument the server listed, or ``None``."""
    for prompt in said.prompts or ():
        arguments = prompt.get("arguments")
        name = prompt.get("name")
        first = arguments[0] if isinstance(arguments, list) and arguments else None
        if isinstance(name, str) and isinstance(first, dict) and isinstance(first.get("name"), str):
            return {"type": "ref/prompt", "name": name}, first["name"]
    for template in said.templates or ():
        uri = template.get("uriTemplate")
        variable = _TEMPLATE_VARIABLE.search(uri) if isinstance(uri, str) else None
        if variable is not None and isinstance(uri, str):
            return {"type": "ref/resource", "uri": uri}, variable.group(1)
    return None


def _headers_sent(audit: Iterable[Mapping[str, Any]], tool: str) -> list[str]:
    for event in reversed(list(audit)):
        if event.get("event") == "parameter_headers_built" and event.get("tool") == tool:
            return list(event.get("headers", []))
    return []


async def _call(
    host: ContractClient,
    consumer: SchemaDisclosureConsumer,
    tools: Sequence[ToolReview],
    disclosed: Mapping[str, DisclosedTool],
    options: ReviewOptions,
    audit: BoundedAuditSink,
) -> CallReport:
    name = cast(str, options.call)
    arguments = dict(options.arguments or {})
    review = next((t for t in tools if t.name == name), None)
    if review is None:
        # A typo is the usual cause: name the closest tool the server has (sanitized where it is printed).
        close = difflib.get_close_matches(name, [t.name for t in tools if t.name is not None], n=1)
        return CallReport(
            tool=name,
            outcome="unknown_tool",
            gate="discover",
            reason="no listed or searchable tool has this name"
            + (f" (did you mean {close[0]}?)" if close else ""),
        )
    if review.admission.decision != "admitted":
        return CallReport(
            tool=name,
            outcome="refused",
            gate="admit",
            category=review.admission.category,
            reason="the tool was not admitted, so the host never calls it",
        )
    try:
        if review.found == "search":
            result = await consumer.call(disclosed[name], arguments)
        else:
            result = await host.call(name, arguments)
    except (StaleSelection, ContractError) as error:
        # Refused before anything was sent (admission, binding, arguments, headers, confirmation), or
        # Consume refused the result (a ContractViolation): the server's own words still reach the reader.
        violation = error if isinstance(error, ContractViolation) else None
        return CallReport(
            tool=name,
            outcome="rejected_result" if violation is not None else "refused",
            gate=error.where,
            category=error.category,
            reason=error.message,
            headers_sent=_headers_sent(audit, name),
            text=violation.server_text if violation is not None else None,
        )
    except JsonRpcError as error:
        # One label for every JSON-RPC answer (the family's category); the code and the server's own
        # message (sanitized, capped) say which.
        over = f" with HTTP {error.http_status}" if error.http_status is not None else ""
        return CallReport(
            tool=name,
            outcome="failed",
            gate="execute",
            category=error.category,
            reason=f"the server answered JSON-RPC error {error.code}{over}",
            headers_sent=_headers_sent(audit, name),
            code=error.code,
            message=sanitize_text(str(error.message), SERVER_TEXT_LIMIT),
        )
    except HttpStatusError as error:
        # An HTTP error page with no JSON-RPC error in it: the status, and the page's own words.
        return CallReport(
            tool=name,
            outcome="failed",
            gate="exchange",
            category=error.category,
            reason=f"the server answered HTTP {error.status}",
            headers_sent=_headers_sent(audit, name),
            message=error.words,
        )
    except ProtocolError as error:  # TransportFailure, MalformedResponse, ...: observed on this side
        return CallReport(
            tool=name,
            outcome="failed",
            gate="exchange",
            category=error.category,
            reason=sanitize_text(error.message, SERVER_TEXT_LIMIT),
        )
    except BoundExceeded as error:  # this host refused the answer (too large): not the server's error
        return CallReport(
            tool=name,
            outcome="rejected_result",
            gate="consume",
            category=error.category,
            reason=error.message,
            headers_sent=_headers_sent(audit, name),
        )
    content = result.content
    return CallReport(
        tool=name,
        outcome="tool_error" if result.is_error else "validated",
        gate="consume",
        headers_sent=_headers_sent(audit, name),
        content_types=[str(block.get("type")) for block in content if isinstance(block, dict)],
        structured_content=result.structured_content,
        structured_content_present=result.has_structured_content,
        is_error=result.is_error,
        # Laid out as the server wrote it: its line breaks kept, each line sanitized.
        text=server_text(result.raw, line_breaks=True),
        findings=finding_reports(result.findings),
    )
