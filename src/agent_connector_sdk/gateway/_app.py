"""The gateway: many child servers behind one gated, disclosed catalog.

Toward each child the gateway is a **host** (:mod:`._children`: one ``HostSession`` per connection,
Discover with pagination, Admit, Invoke, Consume). Toward its callers it is a **gated server**: one
FastMCP server whose tools are the admitted child tools, namespaced ``NAME_tool`` (FastMCP's mount
convention), all behind one ``RegexSearchTransform`` whose results are schema-navigation entries
(``describe_schema_tools``), with the disclosure resources registered on the same transform and the
server gates installed (``ServerGates``: header parity, argument validation, output self-check, audit;
DNS-rebinding protection, request bounds).

Why not FastMCP's ``ProxyProvider``/``create_proxy``: a proxy lists the child through the SDK's result
model (one malformed descriptor fails the whole page) and passes every result through unchecked; the
gateway must judge each descriptor alone and each result against its admitted descriptor. So each child
tool is a :class:`GatewayTool` — a FastMCP ``Tool`` whose ``run`` calls through the child's host session
— added to the gateway's own local provider under its namespaced name. Tools are never edited in place:
a generation move replaces them (``remove_tool`` + ``add_tool``), which is the declaration
``cache_tool_catalog`` and ``frozen_schemas=True`` rely on.

What a caller gets when a child fails: an ``isError`` result whose first text line is
``gateway refused NAME_tool: CATEGORY (…)`` — for a child that is down (``child_unavailable``), slow
(``child_timeout``), answering an error (``json_rpc_error``), answering outside its contract (the Consume
gate's category, e.g. ``output_schema_violation``: never the result itself) or changed since it was
admitted (``tool_changed``). The other children keep working.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any, ClassVar, Final

import mcp_types
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.auth import require_scopes
from fastmcp.server.dependencies import fastmcp_request_ctx
from fastmcp.tools.base import RawStructuredToolResult, Tool
from fastmcp.tools.base import ToolResult as FastMCPToolResult
from opentelemetry import context as otel_context
from opentelemetry import trace
from pydantic import PrivateAttr, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agent_connector_sdk.audit import AuditSink, BoundedAuditSink
from agent_connector_sdk.core.contracts import reissue_trace_context
from agent_connector_sdk.core.contracts.errors import ContractViolation
from agent_connector_sdk.core.host import JsonRpcError
from agent_connector_sdk.core.schema_disclosure import compute_schema_digests
from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.gateway._children import Child, ChildHealth
from agent_connector_sdk.gateway._config import GatewayConfig
from agent_connector_sdk.gateway._errors import CONTRACT_BINDING_META_KEY, GatewayError, refusal_code
from agent_connector_sdk.gateway._fanout import FederatedSearch
from agent_connector_sdk.gateway._generations import ChildCatalog, ChildTool, diff_catalogs, gateway_name
from agent_connector_sdk.gateway._locks import LockWatch
from agent_connector_sdk.gateway._verified import VerifiedCache
from agent_connector_sdk.gateway._watch import PING_INTERVAL, watch_child
from agent_connector_sdk.mcp.host import HostOptions
from agent_connector_sdk.mcp.schema_disclosure_provider import (
    DisclosureOrigin,
    SchemaDisclosureRegistry,
    describe_schema_tools,
    register_schema_resources,
)
from agent_connector_sdk.mcp.server import (
    ServerGates,
    cache_tool_catalog,
    published_contract_sha256,
    relay_refusal,
)

__all__ = [
    "CONTRACT_BINDING_META_KEY",
    "SCHEMA_DIGEST_META_KEY",
    "STOP_GRACE",
    "Gateway",
    "GatewayTool",
    "caller_meta",
    "child_trace_context",
    "default_host_options",
    "gateway_search_transform",
    "refusal_text",
    "wire_refusal",
]

# Named as before the file moved: operators filter logs on this name.
logger = logging.getLogger("agent_connector_sdk.gateway.app")

STOP_GRACE = 2.0
"""Seconds a cancelled child supervisor gets to end before :meth:`Gateway.stop` goes on without it."""


def default_host_options(audit: AuditSink | None = None) -> HostOptions:
    """The gateway's host policy toward its children: the default admission policy and profile, and
    no write confirmation — the gateway relays a caller's call and cannot ask anyone; confirming
    writes is the calling host's duty, which sees the child's hints on the gateway's descriptor."""
    return HostOptions(audit=audit, require_confirmation=False)


def gateway_search_transform(
    max_results: int,
    *,
    find: Callable[[str], Awaitable[list[list[str]]]] | None = None,
    resolve: Callable[[str], Awaitable[None]] | None = None,
) -> FederatedSearch:
    """The gateway's search — the one seam where its ranking is chosen.

    A :class:`~._fanout.FederatedSearch`, a ``RankedSearchTransform`` (FastMCP's
    ``RegexSearchTransform`` ranked by :mod:`agent_connector_sdk.core.search`): it indexes the caller's
    visible, admitted tools only, so a hidden or rejected tool never shapes a result, score or count.
    ``find`` fans the caller's query out to the search-first children; their answers are fused with
    the gateway's own ranking by ``core.search.merge_by_rank`` (``transform.rank(tools, pattern,
    query)`` gives the listed tools best first). ``resolve`` makes a hidden tool named by a call known.
    """
    return FederatedSearch(
        search_result_serializer=describe_schema_tools, max_results=max_results, find=find, resolve=resolve
    )


def refusal_text(exposed: str, error: AgentConnectorError) -> str:
    """The message of a refused call: tool, category and the value-free message (a JSON-RPC error of
    the child adds its code; the child's own words are not relayed, they may quote values and the
    caller's model has no use for another server's internals)."""
    detail = f"code {error.code}" if isinstance(error, JsonRpcError) else error.message
    return f"gateway refused {exposed}: {error.category} ({detail})"


def wire_refusal(exposed: str, child: str, error: AgentConnectorError) -> ToolError:
    """The JSON-RPC error a caller gets for ``error`` (see :data:`~._errors.REFUSAL_CODES`): the code says
    which kind of failure, ``data`` names the tool, the child and the precise category."""
    kind, code = refusal_code(error)
    data: dict[str, Any] = {"tool": exposed, "child": child, "kind": kind, "category": str(error.category)}
    if isinstance(error, JsonRpcError):
        data["childCode"] = error.code
    return relay_refusal(refusal_text(exposed, error), code=code, data=data)


def caller_meta() -> Mapping[str, Any] | None:
    """The ``_meta`` of the request being served (``None`` outside one)."""
    request = fastmcp_request_ctx.get()
    return None if request is None else request.meta


@contextlib.contextmanager
def child_trace_context(meta: Mapping[str, Any] | None) -> Iterator[None]:
    """Within this block, requests to a child carry the gateway's own trace context for the caller's
    ``meta`` (:func:`~agent_connector_sdk.core.contracts._trace_context.reissue_trace_context`) and
    nothing else: the ``mcp`` client injects the *current* OpenTelemetry context into every request's
    ``_meta``, and FastMCP made the caller's ``traceparent``/``tracestate`` (and ``baggage``) current
    while serving it, so without this they would reach the child verbatim."""
    serving = trace.get_current_span()
    context = otel_context.Context()  # empty: no span, no baggage
    if serving.is_recording():
        # An OpenTelemetry SDK is on: the gateway's own server span (whose parent is the caller's
        # context) is the parent of the hop to the child, so caller, gateway and child are one trace
        # (docs/observability.md). Only that span is kept, not the caller's baggage.
        token = otel_context.attach(trace.set_span_in_context(serving, context))
        try:
            yield
        finally:
            otel_context.detach(token)
        return
    reissued = reissue_trace_context(meta)
    if reissued is not None:
        span = trace.NonRecordingSpan(
            trace.SpanContext(
                trace_id=int(reissued.trace_id, 16),
                span_id=int(reissued.parent_id, 16),
                is_remote=False,
                trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED if reissued.sampled else 0),
                trace_state=trace.TraceState(list(reissued.tracestate)),
            )
        )
        context = trace.set_span_in_context(span, context)
    token = otel_context.attach(context)
    try:
        yield
    finally:
        otel_context.detach(token)


# CONTRACT_BINDING_META_KEY (defined in ._errors, which ._children can import):
"""The ``_meta`` key of a ``tools/call`` by which a caller binds the call to the contract it read: the
``contract_sha256`` of the tool's navigation entry (the lock's contract fingerprint: schemas,
description, title, icons, annotations, execution, host-facing ``_meta``, header map). When it is not
the fingerprint of the tool the gateway publishes now, the call is refused ``tool_changed`` (JSON-RPC
error, code ``REFUSAL_CODES["tool_changed"]`` = -32015) and nothing reaches the child, on both call
routes (a direct call and the search transform's ``call_tool``). Without a binding a call runs against
the current tool. A hidden tool's call to its child carries, under the same key, the ``contract_sha256``
the child's navigation entry stated when the gateway verified it: a child that is itself a gateway (or
any server judging the binding) refuses it when the tool changed since, so a change behind a gateway of
gateways cannot run under a binding either, even before the outer gateway searches again."""

SCHEMA_DIGEST_META_KEY: Final = "agent-connector-sdk/schema_sha256"
"""The binding key before the contract fingerprint (it carried the entry's ``schema_sha256``, which
covers the schemas only, so a flip of ``readOnlyHint`` or of the description went unseen). Still
recognised, and judged as :data:`CONTRACT_BINDING_META_KEY`: it binds only when its value is the
contract fingerprint. A schema digest under it is refused ``tool_changed`` with a message naming the
new key — a caller that skipped a confirmation for the contract it read must never run another one."""


class GatewayTool(Tool):
    """A child tool as the gateway publishes it: the admitted descriptor's schemas and hints under the
    namespaced name; ``run`` goes through the child's host session (Invoke → child → Consume) and relays
    the child's valid result as the child produced it (``relays_results``)."""

    relays_results: ClassVar[bool] = True
    _child: Child | None = PrivateAttr(default=None)
    _source: ChildTool | None = PrivateAttr(default=None)
    _schema_sha256: str | None = PrivateAttr(default=None)
    _contract_sha256: str | None = PrivateAttr(default=None)

    @classmethod
    def of(cls, child: Child, source: ChildTool, scopes: tuple[str, ...] = ()) -> GatewayTool:
        """``scopes``: every one is required of a caller (FastMCP's ``require_scopes``: the same rule
        filters search results, disclosure reads and calls)."""
        descriptor = source.descriptor
        annotations = None
        raw_annotations = descriptor.get("annotations")
        if isinstance(raw_annotations, Mapping):
            with contextlib.suppress(ValidationError):
                annotations = mcp_types.ToolAnnotations.model_validate(dict(raw_annotations))
        title = descriptor.get("title")
        description = descriptor.get("description")
        # Copies: the core keeps its admitted descriptor private, and these objects are never edited.
        tool = cls(
            name=source.exposed,
            title=title if isinstance(title, str) else None,
            description=description if isinstance(description, str) else None,
            parameters=copy.deepcopy(dict(descriptor["inputSchema"])),
            output_schema=copy.deepcopy(descriptor.get("outputSchema")),
            annotations=annotations,
            auth=require_scopes(*scopes) if scopes else None,
        )
        tool._child = child
        tool._source = source
        return tool

    @property
    def source(self) -> ChildTool:
        assert self._source is not None
        return self._source

    @property
    def schema_sha256(self) -> str:
        """The ``schema_sha256`` of this tool's disclosure (what a caller binds a call to)."""
        if self._schema_sha256 is None:
            self._schema_sha256 = compute_schema_digests(self.parameters, self.output_schema).schema_sha256
        return self._schema_sha256

    @property
    def contract_sha256(self) -> str:
        """The contract fingerprint this tool is published with (its navigation entry's
        ``contract_sha256``, what a caller binds a call to); computed once, the tool is never edited.
        A contract that cannot be fingerprinted binds nothing: ``""`` equals no caller's value."""
        if self._contract_sha256 is None:
            self._contract_sha256 = published_contract_sha256(self) or ""
        return self._contract_sha256

    def _check_binding(self, child: str, meta: Mapping[str, Any] | None) -> None:
        """Refuse (``tool_changed``) a call bound to another contract than the one published now."""
        if meta is None:
            return
        for key in (CONTRACT_BINDING_META_KEY, SCHEMA_DIGEST_META_KEY):
            bound = meta.get(key)
            if bound is None or bound == self.contract_sha256:
                continue
            message = f"{self.name} is not the tool the call was bound to"
            if key == SCHEMA_DIGEST_META_KEY and bound == self.schema_sha256:
                message = (
                    f"{self.name}: a call bound by {SCHEMA_DIGEST_META_KEY} covers the schemas only; bind "
                    f"{CONTRACT_BINDING_META_KEY} to the navigation entry's contract_sha256"
                )
            raise wire_refusal(self.name, child, GatewayError("tool_changed", message))

    async def run(self, arguments: dict[str, Any]) -> FastMCPToolResult:
        child, source = self._child, self._source
        assert child is not None and source is not None
        meta = caller_meta()
        self._check_binding(child.name, meta)
        try:
            with child_trace_context(meta):
                result = await child.call(source, arguments)
        except AgentConnectorError as error:
            # A JSON-RPC error: no result of the tool's contract can say "the child never answered".
            raise wire_refusal(self.name, child.name, error) from None
        raw = result.raw
        try:
            blocks = mcp_types.CallToolResult.model_validate(
                {"content": raw.get("content", []), "isError": result.is_error}
            ).content
        except ValidationError:
            malformed = ContractViolation("malformed_result", "the content blocks are not MCP content")
            raise wire_refusal(self.name, child.name, malformed) from None
        # The child's blocks as it sent them: no serialization added beside structuredContent (the
        # gateway's own stricter rules are findings in the Consume audit event, not a second copy).
        if result.has_structured_content:
            return _ConsumedStructured(
                content=list(blocks), structured_content=result.structured_content, is_error=result.is_error
            )
        return _Consumed(content=list(blocks), is_error=result.is_error)


class _Consumed(FastMCPToolResult):
    """A child result that passed the host core's Consume gate against the admitted descriptor — the
    schemas the gateway tool publishes — so the server's output self-check need not repeat it."""

    consumed_against_published_contract: ClassVar[bool] = True


class _ConsumedStructured(RawStructuredToolResult):
    """:class:`_Consumed`, with the child's ``structuredContent`` sent as it is."""

    consumed_against_published_contract: ClassVar[bool] = True


class Gateway:
    """Children → one gated, disclosed catalog (see the module docstring).

    Python API::

        gateway = Gateway(GatewayConfig(children=(ChildSpec("weather", url=...),)))
        app = gateway.http_app()          # ASGI; children connect in its lifespan
        # or, without HTTP:
        async with gateway:               # connects every child, starts their supervisors
            ...gateway.server...

    ``options`` are the host options toward every child (default :func:`default_host_options`);
    ``audit`` receives the server gates' events and, with the default options, the host cores' too.
    """

    def __init__(
        self,
        config: GatewayConfig,
        *,
        options: HostOptions | None = None,
        audit: AuditSink | None = None,
        environ: Mapping[str, str] | None = None,
        max_results: int = 50,
        name: str = "agent-connector-gateway",
        health_detail: bool = False,
    ) -> None:
        self.config = config
        self.audit: AuditSink = audit if audit is not None else BoundedAuditSink()
        self.options = options if options is not None else default_host_options(self.audit)

        @contextlib.asynccontextmanager
        async def lifespan(server: FastMCP[Any]) -> AsyncIterator[dict[str, Any]]:
            await self.start()
            try:
                yield {}
            finally:
                await self.stop()

        auth = config.auth
        verifier = None if auth is None else auth.verifier()
        self.server: FastMCP[Any] = FastMCP(name=name, lifespan=lifespan, auth=verifier)
        self.search = gateway_search_transform(max_results, find=self._find, resolve=self._resolve)
        self.server.add_transform(self.search)
        self.gates = ServerGates(audit=self.audit)
        # Read now: a lock file that cannot be used refuses start-up (GatewayError invalid_config).
        self.lock = None if config.lock is None else LockWatch(config.lock, len(config.children))
        self.verified = VerifiedCache()
        """Verified disclosures of every search-first child, by contract (bounded, shared)."""
        self.children: dict[str, Child] = {
            spec.name: Child(
                spec, config, self.options, self._apply, environ=environ, lock=self.lock, cache=self.verified
            )
            for spec in config.children
        }
        for key in () if auth is None else auth.require:
            owner = self.children.get(_owner(key))
            if owner is not None and key != owner.name:
                owner.required |= {key[len(owner.name) + 1 :]}
        self._tools: dict[str, GatewayTool] = {}
        self._pending_origins: dict[str, DisclosureOrigin] = {}
        self._registry: SchemaDisclosureRegistry | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._started = False
        self._serving = True
        self.health_detail = health_detail
        self.ping_interval = PING_INTERVAL
        """Seconds a child may be quiet before the gateway pings it (:mod:`._watch`)."""
        self._details: dict[str, tuple[tuple[Any, ...], str, bytes]] = {}
        """Per child: the health-detail key (generation, state...), its state and its evidence JSON."""
        self.unmatched: tuple[str, ...] = ()
        self.held: dict[str, tuple[str, ...]] = {}
        """Children whose tools are held back (not published), with the ``[auth.require]`` keys naming
        them that their listing does not resolve."""
        self._resolved_once: set[str] = set()
        self.start_error: GatewayError | None = None
        """Why :meth:`start` refused to serve (also raised; kept for a server whose lifespan ran it)."""
        """``[auth.require]`` keys that stopped naming anything after a re-list (the gateway is degraded)."""

    # -- lifecycle -------------------------------------------------------------------------------
    async def start(self, *, supervise: bool = True) -> None:
        """Connect every child concurrently (each within ``connect_timeout``; a child that fails is
        ``down`` and, with ``supervise``, retried with backoff), publish the catalogs, start the
        supervisors (``supervise=False``: one attempt each, e.g. for ``--check``)."""
        if self._started:
            return
        self._started = True
        self._serving = supervise
        await asyncio.gather(*(self._first_connect(child, supervise) for child in self.children.values()))
        unmatched = self.unmatched_requirements()
        if unmatched:
            # A typo must not leave a tool open: refuse to serve at all (and --check fails the same way).
            await self.stop()
            self.start_error = GatewayError(
                "invalid_config",
                f"[auth.require] {unmatched[0]} names no child and no tool its child lists "
                f"({len(unmatched)} unmatched)",
            )
            raise self.start_error
        # One registration for every tool published so far (registering checks the server holds them).
        self._registry = register_schema_resources(
            self.server, self.search, dict(self._pending_origins), frozen_schemas=True
        )
        self._pending_origins.clear()
        cache_tool_catalog(self.server, self.search)
        if not supervise:
            return
        self._tasks = [
            asyncio.create_task(child.supervise(), name=f"gateway-child-{child.name}")
            for child in self.children.values()
        ]
        # Health that watches: a quiet child is pinged, so a hung one is degraded without any call.
        self._tasks += [
            asyncio.create_task(watch_child(child, self.ping_interval), name=f"gateway-watch-{child.name}")
            for child in self.children.values()
        ]

    async def _first_connect(self, child: Child, supervise: bool) -> None:
        # A child that fails is down (logged once by the child, with its reason); its supervisor retries.
        # Serving, a search-first child's search is not waited for: its supervisor finishes connecting.
        with contextlib.suppress(AgentConnectorError, OSError, RuntimeError):
            await child.connect(await_search=not supervise)

    # -- on demand: search-first children ------------------------------------------------------------
    async def _find(self, pattern: str) -> list[list[str]]:
        """The caller's search sent to every search-first child that is up, concurrently; each answer
        (verified, admitted, published) as gateway names in the child's order."""
        searching = [c for c in self.children.values() if c.front is not None and c.state == "up"]
        if not searching:
            return []
        return list(await asyncio.gather(*(child.search(pattern) for child in searching)))

    async def _resolve(self, exposed: str) -> None:
        """A call names ``exposed``, which the gateway does not publish: if it is ``CHILD_tool`` of a
        search-first child, that child resolves the one name (verified before anything runs)."""
        if exposed in self._tools:
            return
        for child in self.children.values():
            prefix = f"{child.name}_"
            if child.front is not None and child.state == "up" and exposed.startswith(prefix):
                tool = exposed[len(prefix) :]
                if tool and child.front is not None and tool not in child.front.withheld:
                    await child.resolve(tool)

    async def stop(self) -> None:
        """Stop the supervisors and close every child, all at once and bounded in time, whatever the
        children are doing: a supervisor that does not end within :data:`STOP_GRACE` of its cancel
        is abandoned (it is not awaited again), and the children close concurrently (a stdio child
        gets the ``mcp`` SDK's shutdown: stdin closed, then SIGTERM, then SIGKILL, about 4 s at worst,
        which also ends a stopped process)."""
        tasks, self._tasks = self._tasks, []
        for child in self.children.values():
            child.state = "closed"  # a supervisor between two awaits ends its loop
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=STOP_GRACE)
        await asyncio.gather(*(child.close() for child in self.children.values()), return_exceptions=True)
        self._started = False

    async def __aenter__(self) -> Gateway:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- catalogs ----------------------------------------------------------------------------------
    def _apply(self, child: Child, catalog: ChildCatalog) -> None:
        """Publish ``catalog`` (a new generation of ``child``): synchronous, so no request sees half of it.

        A changed tool is replaced and its disclosure origin re-registered with the new descriptor's
        digest as ``source_sha256``; old disclosure URIs of changed schemas are then stale."""
        if not self._serving:
            return  # ``--check`` (start without supervisors): evidence only, nothing is served
        published = {
            name: tool.source.descriptor_sha256
            for name, tool in self._tools.items()
            if tool.source.child == child.name
        }
        held = self._held_keys(child.name, catalog)
        if held != self.held.get(child.name, ()):
            self._log_held(child.name, held)
        if held:
            # Names resolve or the tools stay closed: a requirement naming no tool of this listing may be
            # a typo, or guard a tool now listed under another name; publishing the child's tools now
            # could serve one under a weaker scope than the operator wrote. None is published until
            # every key naming the child resolves (a later listing, or a corrected configuration).
            self.held[child.name] = held
            catalog = replace(catalog, tools={})
        else:
            self.held.pop(child.name, None)
        diff = diff_catalogs(published, catalog)
        for name in (*diff.removed, *diff.changed):
            self.server.local_provider.remove_tool(name)
            del self._tools[name]
            if self._registry is not None and name in diff.removed:
                self._registry.remove(name)
            self._pending_origins.pop(name, None)
        for name in (*diff.changed, *diff.added):
            source = catalog.tools[name]
            tool = GatewayTool.of(child, source, self._scopes(child.name, name))
            self.server.add_tool(tool)
            self._tools[name] = tool
            origin = DisclosureOrigin(
                operation=f"{child.name}/{source.name}", source_sha256=source.descriptor_sha256
            )
            if self._registry is None:
                self._pending_origins[name] = origin
            else:
                self._registry.replace(name, origin)
        self.audit(
            {
                "event": "generation",
                "child": child.name,
                "generation": catalog.generation,
                "added": len(diff.added),
                "changed": len(diff.changed),
                "removed": len(diff.removed),
                "rejected": [{"tool": r.tool, "category": r.category} for r in catalog.rejected],
                "held_back": bool(held),
            }
        )
        if self._registry is not None:  # after start-up (start-up refuses an unmatched key outright)
            self._recheck_requirements()

    def _held_keys(self, child: str, catalog: ChildCatalog) -> tuple[str, ...]:
        """The ``[auth.require]`` keys naming a tool of ``child`` (``child_tool``) that ``catalog`` does
        not resolve: neither a tool it publishes nor one admission rejected (a real name, never exposed)."""
        auth = self.config.auth
        if auth is None:
            return ()
        owner = self.children.get(child)
        confirmed = frozenset() if owner is None else owner.confirmed
        held: list[str] = []
        for key in auth.require:
            if key == child or _owner(key) != child:
                continue
            # A search-first child's hidden tool is confirmed by an anchored exact search (when the child
            # comes up): it stays resolved when the LRU of published hidden tools lets it go, and
            # whenever a search or a call publishes it again it carries the scopes written for it.
            if _key_resolves(catalog, key) or key in confirmed:
                self._resolved_once.add(key)
            else:
                held.append(key)
        return tuple(held)

    def _log_held(self, child: str, held: tuple[str, ...]) -> None:
        if not held:
            logger.warning(
                "child %s: every [auth.require] key naming it resolves: its tools are published", child
            )
            return
        for key in held:
            wording = "no longer names a" if key in self._resolved_once else "names no"
            logger.warning(
                "[auth.require] %s %s tool child %s lists: its tools are held back (not published)",
                key,
                wording,
                child,
            )

    def unmatched_requirements(self) -> tuple[str, ...]:
        """``[auth.require]`` keys that name neither a child nor a tool some listed child lists (published,
        or rejected by admission: a real name, never exposed). A key under a child that has not listed
        yet (down since start-up) is not judged until it lists: until then that child publishes nothing
        it did not list (:attr:`held`), and when it lists, an unresolved key holds its tools back."""
        auth = self.config.auth
        if auth is None:
            return ()
        unmatched: list[str] = []
        for key in auth.require:
            if key in self.children:
                continue
            owner = self.children.get(_owner(key))
            if owner is None:
                unmatched.append(key)
                continue
            catalog = owner.catalog
            if catalog is None:
                continue
            if _key_resolves(catalog, key) or key in owner.confirmed:
                self._resolved_once.add(key)
            elif not owner.requirements_pending:
                unmatched.append(key)
        return tuple(unmatched)

    def pending_requirements(self) -> tuple[str, ...]:
        """``[auth.require]`` keys under a child that has never listed (down since start-up), or that a
        search-first child does not list and has not looked up by name yet, so they could not be resolved
        yet: ``gateway --check`` says so (a key that never resolves is an error)."""
        auth = self.config.auth
        if auth is None:
            return ()
        return tuple(
            key
            for key in auth.require
            if key not in self.children
            and (owner := self.children.get(_owner(key))) is not None
            and (
                owner.catalog is None
                or (owner.requirements_pending and not _key_resolves(owner.catalog, key))
            )
        )

    def _recheck_requirements(self) -> None:
        """After a generation move: a requirement that does not resolve degrades the gateway (a
        ``/healthz`` finding; the child's tools are held back and :meth:`_log_held` named the key)."""
        self.unmatched = self.unmatched_requirements()

    def _scopes(self, child: str, exposed: str) -> tuple[str, ...]:
        auth = self.config.auth
        return () if auth is None else auth.scopes_for(child, exposed)

    def tool(self, exposed: str) -> GatewayTool | None:
        return self._tools.get(exposed)

    # -- health --------------------------------------------------------------------------------------
    def health(self) -> list[ChildHealth]:
        return [child.health() for child in self.children.values()]

    async def _healthz(self, request: Request) -> Response:
        """Per-child state; with ``health_detail`` on, ``?detail=1`` adds each child's evidence (page
        trace, admitted and rejected tools with reasons) for operators. Unauthenticated, like every
        health route, so the detail (tool names) is off unless the operator turns it on."""
        if self.health_detail and request.query_params.get("detail") == "1":
            details = [await self._child_detail(child) for child in self.children.values()]
            status = _status([state for state, _ in details])
            encoded = b'{"status":"%s","children":[%s]}' % (
                status.encode(),
                b",".join(part for _, part in details),
            )
            return Response(encoded, media_type="application/json")
        children = [health.as_json() for health in self.health()]
        status = _status([health["state"] for health in children])
        if self.unmatched and status == "ok":
            status = "degraded"  # a requirement resolves to nothing: the log line names it
        body = {
            "status": status,
            "children": children,
            "unmatched_requirements": len(self.unmatched),
            # Child names only (health is unauthenticated): whose tools an unresolved key holds back.
            "held_back": sorted(self.held),
        }
        return JSONResponse(body, status_code=503 if status == "down" else 200)

    async def _child_detail(self, child: Child) -> tuple[str, bytes]:
        """``child``'s evidence for ``/healthz?detail=1`` (its state and JSON), computed once per catalog
        generation and health state, not per request: at 1,500 tools it is ~0.35 s of event loop and
        ~1.2 MB (a fingerprint per tool), which any unauthenticated poller could otherwise make it spend."""
        from agent_connector_sdk.gateway._evidence import collect_evidence

        health = child.health()
        key = (health.generation, health.state, health.last_error, child.reason, health.protocol_version)
        cached = self._details.get(child.name)
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        evidence = await collect_evidence(child, probe=False)
        encoded = json.dumps(evidence.as_json(), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        self._details[child.name] = (key, evidence.state, encoded.encode())
        return evidence.state, encoded.encode()

    # -- serving ---------------------------------------------------------------------------------------
    def http_app(
        self,
        *,
        state: Any = None,
        replica_id: str | None = None,
        namespace: str = "gateway",
        **http_app_kwargs: Any,
    ) -> Any:
        """The gated ASGI app (stateless Streamable HTTP at ``/mcp``); its lifespan starts and stops the
        children. Per-child health is ``GET /healthz``.

        With ``state`` (a backend or URL, e.g. ``redis://…``) or ``replica_id`` the app is one replica
        among many (``state.replica.build_replica_app``: a shared tool switch under ``namespace``, shared
        audit, ``Agent-Connector-Replica`` on every answer); the replica's own health is then
        ``GET /healthz`` and the children's ``GET /healthz/children``. Every replica holds its own
        connections to the children. With a shared store the verified disclosures of search-first
        children get their shared tier there too (replicas share the verification work)."""
        if state is not None and self.verified.shared is None:
            from agent_connector_sdk.gateway._shared_verified import shared_disclosures

            self.verified.shared = shared_disclosures(state, self.config.children)
        if state is None and replica_id is None:
            self._route_health("/healthz")
            http_app_kwargs.setdefault("stateless_http", True)
            return self.gates.http_app(self.server, **http_app_kwargs)
        from agent_connector_sdk.state.replica import build_replica_app

        self._route_health("/healthz/children")
        return build_replica_app(
            self.server, state=state, namespace=namespace, replica_id=replica_id, **http_app_kwargs
        )

    def _route_health(self, path: str) -> None:
        self.server.custom_route(path, methods=["GET"], include_in_schema=False)(self._healthz)


def _owner(key: str) -> str:
    """The child an ``[auth.require]`` key belongs to: a child name (no ``_`` in one) or ``child_tool``."""
    return key.split("_", 1)[0]


def _key_resolves(catalog: ChildCatalog, key: str) -> bool:
    """Whether ``catalog`` lists the gateway tool ``key`` (published, or rejected by admission)."""
    if key in catalog.tools:
        return True
    child = catalog.child
    return any(r.tool is not None and gateway_name(child, r.tool) == key for r in catalog.rejected)


def _status(states: list[str]) -> str:
    """``ok`` when every child is up, ``down`` when none serves, else ``degraded`` (a degraded child
    still serves: its calls go through, they time out)."""
    if all(state == "up" for state in states):
        return "ok"
    return "degraded" if any(state in ("up", "degraded") for state in states) else "down"
