"""Consumer side of schema disclosure, over the caller's own ``fastmcp.Client`` session.

For a host or gateway that reaches a server whose tools hide behind a search transform:

1. **discover** — call the search tool and parse its ``schema-navigation`` entries; **select** one;
2. **read** — the manifest, then every fragment URI, through the same session, concurrently with a
   bound on in-flight reads and on total bytes (URIs are sent exactly as derived, never normalized);
3. **verify** — the manifest must agree exactly with the selected navigation entry; then
   ``reconstruct_schema`` proves the fragments are that document;
4. **admit** — the reconstructed descriptor goes through the session core's Admit gate before its
   first call: a tool admission rejects (e.g. ``sensitive_header``) raises the core's own
   ``AdmissionError`` and is never called;
5. **invoke** — through the host core (:mod:`agent_connector_sdk.mcp.host`), the same sequence
   ``ContractClient`` runs: validate arguments against the reconstructed input schema, mirror
   ``x-mcp-header`` arguments into ``Mcp-Param-*`` headers, call the tool by name, validate the result
   against the reconstructed output schema;
6. **bind** — the disclosed identity is bound to the caller scope and the consumer's catalog
   generation. Before each call the manifest is read again (the provider re-authorizes and re-hashes
   the tool's current schemas); if the identity moved or the catalog changed, the call is refused with
   :class:`StaleSelection` and the caller must discover again.

The consumer's own failures (discovery, reads, verification, binding) are
:class:`DisclosureConsumerError` subclasses with a stable ``category`` and the ``step`` that owns it;
what the session's core refuses (admission, arguments, headers, confirmation, results) and protocol
failures arrive as themselves, never re-wrapped. Transport exceptions never escape bare. Messages carry
names and categories, never argument values.

Per-request headers: the ``mcp`` SDK mirrors ``x-mcp-header`` only for tools it saw in ``tools/list``,
which a search transform hides. The host core computes them from the reconstructed schema and sends
them on exactly this ``tools/call`` POST. Construct the consumer *before* entering an HTTP client, so
the hook is in the HTTP client the transport builds on connect; otherwise a call that needs headers is
refused (``HeaderValueError('undeliverable')``) instead of being sent without them.
"""

from __future__ import annotations

import hashlib
import marshal
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal

import anyio
import fastmcp
import mcp_types
from pydantic import ValidationError

from agent_connector_sdk.core.contracts import SourcePins, json_pointer
from agent_connector_sdk.core.disclosure_navigation import SchemaNavigation
from agent_connector_sdk.core.host import (
    AdmittedTool,
    HostOptions,
    JsonRpcError,
    MalformedResponse,
    ProtocolError,
    ToolResult,
)
from agent_connector_sdk.core.host.bounds import BoundExceeded, check_navigation_entries
from agent_connector_sdk.core.schema_disclosure import (
    MAX_DOCUMENT_BYTES,
    SchemaDisclosureCategory,
    SchemaDisclosureError,
    SchemaFragment,
    SchemaManifest,
    fragment_uri,
    parse_fragment,
    parse_manifest,
    reconstruct_schema,
)
from agent_connector_sdk.errors import AgentConnectorError, Gate, iter_causes
from agent_connector_sdk.mcp.host._deadline import operation_deadline
from agent_connector_sdk.mcp.host._session import HostSession, SessionFace, as_session

__all__ = [
    "DEFAULT_MAX_IN_FLIGHT",
    "CallerScope",
    "ConsumerCategory",
    "DisclosedTool",
    "DisclosureConsumerError",
    "DisclosureMismatch",
    "DisclosureReadFailed",
    "DiscoveryFailed",
    "SchemaDisclosureConsumer",
    "SelectedTool",
    "StaleSelection",
]

Step = Literal["discover", "read", "verify", "admit", "invoke", "bind", "consume"]

_CAUSES_PER_FAILURE: Final = 8  # a failed read's own chain, walked for the refusal that ended it
_ENVELOPE_ALLOWANCE: Final = 64 * 1024  # manifest body + per-fragment identity overhead, over schema_bytes
DEFAULT_MAX_IN_FLIGHT: Final = 8
"""Default bound on concurrent manifest/fragment reads, chosen by measurement
(``python -m bench.disclosure_scale --only http --sweep-in-flight``: GitHub's largest tool, 106 reads,
loopback HTTP, FastMCP defaults, 2 shared cores, best of 5). Disclose time by bound: 1 → 683 ms,
2 → 613, 4 → 554, 8 → 687 (537 in the same run's main measurement: 2–8 are within noise), 16 → 770,
32 → 957. Past 8 reads only queue on the provider's single event loop and add contention; below it,
loopback hides what concurrency buys on a real network (each read's round trip overlaps the others'),
so 8 is the largest bound that costs nothing on loopback. Raise it for a distant server, lower it for
a constrained one (``max_in_flight=``)."""

DiscoveryCategory = Literal["search_failed", "malformed_navigation", "no_match", "ambiguous", "undisclosable"]
ReadCategory = Literal["not_found", "malformed_body", "too_large", "too_many_fragments"]
MismatchCategory = Literal["navigation_mismatch"] | SchemaDisclosureCategory
StaleCategory = Literal["stale", "catalog_changed", "scope_mismatch", "not_disclosed"]
ConsumerCategory = DiscoveryCategory | ReadCategory | MismatchCategory | StaleCategory


# -------------------------------------------------------------------------------------------- errors
class DisclosureConsumerError(AgentConnectorError):
    """Base of every consumer refusal: stable ``category``, owning ``step`` (and its ``gate``)."""

    step: ClassVar[Step]
    category: ConsumerCategory

    def __init__(self, category: ConsumerCategory, message: str) -> None:
        super().__init__(category, message, text=f"{category}: {message}")


class DiscoveryFailed(DisclosureConsumerError):
    """Step 1. ``search_failed`` (the search tool reported an error or returned no list),
    ``malformed_navigation``, ``no_match``, ``ambiguous``, ``undisclosable``."""

    gate: ClassVar[Gate | None] = "discover"
    step = "discover"
    category: DiscoveryCategory


class DisclosureReadFailed(DisclosureConsumerError):
    """Step 2. ``not_found`` (the provider refused: unknown, unauthorized or stale — deliberately not
    told apart), ``malformed_body``, ``too_large``, ``too_many_fragments``. (A lost connection is a
    ``TransportFailure`` and another JSON-RPC error a ``JsonRpcError``, as on every path.)"""

    gate: ClassVar[Gate | None] = "discover"
    step = "read"
    category: ReadCategory


class DisclosureMismatch(DisclosureConsumerError):
    """Step 3. ``navigation_mismatch``, or the core's ``SchemaDisclosureError`` category (``stale``,
    ``mixed_operation``, ``corrupt``, ``incomplete``, ``reordered``, ``inconsistent_identity``, ...)."""

    gate: ClassVar[Gate | None] = "discover"
    step = "verify"
    category: MismatchCategory


class StaleSelection(DisclosureConsumerError):
    """Step 6. The bound identity no longer holds: ``stale`` (the provider no longer serves it or serves
    another one), ``catalog_changed`` (a later discovery saw the catalog move), ``scope_mismatch`` (the
    tool was disclosed to another caller scope), ``not_disclosed`` (this consumer did not disclose that
    identity, or no longer remembers it: see ``max_disclosed``). Discover again."""

    gate: ClassVar[Gate | None] = "invoke"
    step = "bind"
    category: StaleCategory


# ------------------------------------------------------------------------------------------- values
@dataclass(frozen=True, slots=True)
class CallerScope:
    """Who is asking, as the host knows it: an opaque principal (e.g. token subject) and server id.

    A disclosed tool is bound to the scope it was disclosed under: another scope cannot use it, because
    the provider authorized the reads for *this* caller only.
    """

    principal: str
    server: str


@dataclass(frozen=True, slots=True)
class SelectedTool:
    """A navigation entry chosen in step 1, bound to the scope and the catalog generation it came from."""

    navigation: SchemaNavigation
    scope: CallerScope
    generation: int

    @property
    def alias(self) -> str:
        return self.navigation.name


@dataclass(frozen=True, slots=True)
class DisclosedTool:
    """The verified result of steps 2–3: the manifest and the reconstructed schemas of one tool."""

    selection: SelectedTool
    manifest: SchemaManifest
    input_schema: dict[str, Any]
    output_schema: Any
    bytes_read: int

    @property
    def descriptor(self) -> dict[str, Any]:
        """A wire-shaped tool descriptor (camelCase) for the contracts' validators."""
        descriptor = _descriptor(self.manifest.alias, self.input_schema, self.output_schema)
        hints = _hints(self.selection.navigation)
        if hints is not None:
            descriptor["annotations"] = hints
        return descriptor


def _descriptor(alias: str, input_schema: Any, output_schema: Any) -> dict[str, Any]:
    descriptor: dict[str, Any] = {"name": alias, "inputSchema": input_schema}
    if output_schema is not None:
        descriptor["outputSchema"] = output_schema
    return descriptor


def _hints(entry: SchemaNavigation) -> dict[str, bool] | None:
    """The navigation entry's tool hints, wire-shaped (``None`` when it states none)."""
    if entry.annotations is None:
        return None
    return entry.annotations.model_dump(exclude_none=True)


# ----------------------------------------------------------------------------------------- consumer
@dataclass
class _Catalog:
    generation: int = 0
    identities: dict[str, tuple[Any, ...]] = field(default_factory=dict)


def _identity(entry: SchemaNavigation) -> tuple[Any, ...]:
    return (
        entry.input_schema_sha256,
        entry.output_schema_sha256,
        entry.schema_sha256,
        entry.fragment_count,
        entry.manifest_uri,
        # The hints are not under the digests: a later search that sees them change (say readOnlyHint
        # dropped) moves the catalog, so a tool selected under the old hints must be discovered again.
        _hints(entry),
    )


_PARSED_ENTRIES: Final = 2_048
"""Navigation entries a consumer keeps parsed (a warm search parses none of the entries it saw)."""


class _ParsedEntries:
    """Navigation entries parsed before, keyed by the SHA-256 of their exact value (``marshal`` format
    2 writes every object with its type and in its key order, so ``True``, ``1`` and ``1.0`` differ):
    equal bytes are an equal value of the same types, which strict validation judges the same way, so
    a hit is exactly what parsing again would give. Only entries that parsed are kept (a malformed one
    is judged again, and refused again); bounded (LRU). A value ``marshal`` cannot write is parsed
    afresh. ``SchemaNavigation`` is frozen: the one parsed object can be shared."""

    def __init__(self, max_entries: int = _PARSED_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[bytes, SchemaNavigation] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def parse(self, raw: Any) -> SchemaNavigation:
        """``SchemaNavigation.model_validate(raw)``, or the model it gave for an identical ``raw``."""
        try:
            key = hashlib.sha256(marshal.dumps(raw, 2)).digest()
        except (ValueError, TypeError):
            return SchemaNavigation.model_validate(raw)
        known = self._entries.get(key)
        if known is not None:
            self._entries.move_to_end(key)
            return known
        parsed = SchemaNavigation.model_validate(raw)
        self._entries[key] = parsed
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        return parsed


class SchemaDisclosureConsumer(SessionFace):
    """Discover, read, verify and call tools disclosed by a schema disclosure provider.

    ``connection`` is the :class:`~.HostSession` of the caller's connection (shared with a
    ``ContractClient`` on the same connection: one core, one audit trail), or the caller's
    ``fastmcp.Client``, for which a session is built with ``options`` (its session carries the caller's
    credentials; nothing else is created). ``scope`` identifies the caller.

    ``max_in_flight`` bounds concurrent reads; ``max_total_bytes`` bounds the bytes of all bodies read
    for one tool (and the manifest's ``schema_bytes`` is checked against it before any fragment is
    read); ``max_fragments`` bounds the fragment count a manifest may claim;
    ``HostOptions.max_disclosed`` bounds how many verified tools the session remembers (least recently
    disclosed forgotten first; calling a forgotten one asks to disclose it again). ``call`` validates
    against the session core's own admitted copies of the schemas, so mutating or re-assembling a
    :class:`DisclosedTool` cannot change what is enforced.

    ``source_pins`` (a :class:`~agent_connector_sdk.core.contracts._source_pins.SourcePins`, keyed by
    ``scope.server``) makes ``disclose`` refuse a manifest whose ``source_sha256`` is not pinned, before
    any fragment is read, with :class:`~agent_connector_sdk.core.contracts._source_pins.SourceNotPinned`.

    Policy, profile, audit sink and write confirmation are the session's :class:`~.HostOptions`.
    ``session`` is the :class:`~agent_connector_sdk.mcp.host.HostSession` it runs. Its bounds
    (``HostOptions.bounds``): a search answering more than ``max_navigation_entries``, a disclosure
    past ``deadline_s`` are refused (:class:`~agent_connector_sdk.core.host.bounds.BoundExceeded`); the
    bytes read for one disclosure are at most ``max_schema_bytes`` plus the envelope (``too_large``).
    """

    def __init__(
        self,
        connection: fastmcp.Client[Any] | HostSession,
        *,
        scope: CallerScope,
        options: HostOptions | None = None,
        search_tool: str = "search_tools",
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        max_total_bytes: int = MAX_DOCUMENT_BYTES + _ENVELOPE_ALLOWANCE,
        max_fragments: int = 8192,
        source_pins: SourcePins | None = None,
    ) -> None:
        if min(max_in_flight, max_total_bytes, max_fragments) < 1:
            raise ValueError("bounds must be positive")
        self.session = as_session(connection, options)
        self.bounds = self.session.bounds
        max_total_bytes = min(max_total_bytes, self.bounds.max_schema_bytes + _ENVELOPE_ALLOWANCE)
        self._scope = scope
        self._source_pins = source_pins
        self._search_tool = search_tool
        self._max_in_flight = max_in_flight
        self._max_total_bytes = max_total_bytes
        self._max_fragments = max_fragments
        self._catalog = _Catalog()
        self._parsed = _ParsedEntries()

    @property
    def scope(self) -> CallerScope:
        return self._scope

    @property
    def generation(self) -> int:
        """Bumped whenever a discovery or a pre-call check sees the catalog differ from what it knew."""
        return self._catalog.generation

    # -- step 1 ------------------------------------------------------------------------------------
    async def discover(self, pattern: str) -> list[SchemaNavigation]:
        """Search and parse the navigation entries (strictly; any malformed entry refuses the page).

        The search is a tool call like any other, through the session's core: the search tool must be
        listed and admitted (the first discovery lists ``tools/list`` once when the session has not),
        its arguments and result are checked against its descriptor, and the call is audited. It is the
        host's own control-plane call, so it is not put to write confirmation
        (:meth:`~.HostSession.call_control`). Its failures arrive as themselves
        (``AdmissionError``, ``ContractViolation``, ``JsonRpcError``, ``TransportFailure``).
        """
        if self.session.core.last_report is None:
            await self.session.discover_tools()
        raw = (await self.session.call_control(self._search_tool, {"pattern": pattern})).raw
        structured = raw.get("structuredContent")
        # FastMCP wraps a non-object output under "result" for the advertised schema; accept a bare
        # list too, which is how a 2026-07-28 result may carry it.
        entries = structured.get("result") if isinstance(structured, dict) else structured
        if isinstance(entries, str) and raw.get("isError") is not True:
            entries = []  # a ranked search that abstained answers a one-line note and no entries
        if raw.get("isError") is True or not isinstance(entries, list):
            raise DiscoveryFailed("search_failed", "the search tool returned no navigation list")
        check_navigation_entries(len(entries), self.bounds)  # before any entry is parsed
        try:
            found = [self._parsed.parse(entry) for entry in entries]
        except ValidationError as error:
            where = sorted({".".join(str(p) for p in item["loc"]) for item in error.errors()})
            raise DiscoveryFailed(
                "malformed_navigation", f"invalid navigation at {', '.join(where)}"
            ) from None
        self._observe(found)
        return found

    def _observe(self, entries: list[SchemaNavigation]) -> None:
        changed = False
        for entry in entries:
            identity = _identity(entry)
            known = self._catalog.identities.get(entry.name)
            if known is not None and known != identity:
                changed = True
            self._catalog.identities[entry.name] = identity
        if changed:
            self._catalog.generation += 1

    async def select(self, pattern: str, name: str) -> SelectedTool:
        """Discover with ``pattern`` and select the entry whose name is exactly ``name``."""
        matches = [entry for entry in await self.discover(pattern) if entry.name == name]
        if not matches:
            raise DiscoveryFailed("no_match", f"no navigation entry named {name!r}")
        if len(matches) > 1:
            raise DiscoveryFailed("ambiguous", f"several navigation entries named {name!r}")
        (entry,) = matches
        if entry.manifest_uri is None or entry.schema_sha256 is None or entry.fragment_count is None:
            raise DiscoveryFailed("undisclosable", f"tool {name!r} has no disclosure")
        return SelectedTool(navigation=entry, scope=self._scope, generation=self._catalog.generation)

    # -- steps 2 and 3 -----------------------------------------------------------------------------
    async def disclose(self, selection: SelectedTool) -> DisclosedTool:
        """Steps 2–4: :meth:`verify` the disclosure of ``selection``, then :meth:`admit` it.

        A policy refusal is the core's ``AdmissionError`` (the tool is never callable).
        """
        disclosed = await self.verify(selection)
        self.admit(disclosed)
        return disclosed

    async def verify(self, selection: SelectedTool) -> DisclosedTool:
        """Steps 2–3: read the manifest and all fragments of ``selection`` and verify them, within the
        bounds' ``deadline_s`` (:class:`~agent_connector_sdk.core.host.bounds.BoundExceeded`).

        The result is not callable until :meth:`admit` admits it (a reviewer shows what verified even
        when the host's policy then refuses it).
        """
        async with operation_deadline(self.bounds, "the disclosure"):
            return await self._verify(selection)

    async def _verify(self, selection: SelectedTool) -> DisclosedTool:
        self._require_scope(selection.scope)
        navigation = selection.navigation
        if navigation.manifest_uri is None:
            raise DiscoveryFailed("undisclosable", f"tool {navigation.name!r} has no disclosure")
        manifest_text, manifest_size = await self._read(navigation.manifest_uri)
        manifest = self._parse(parse_manifest, manifest_text)
        _require_agreement(navigation, manifest)
        if self._source_pins is not None:
            # Source compatibility, before any fragment is read: a schema that verifies perfectly may
            # still come from an API version nobody reviewed. Raises SourceNotPinned (digests named).
            self._source_pins.require(
                server=self._scope.server, alias=manifest.alias, source_sha256=manifest.source_sha256
            )
        if manifest.fragment_count > self._max_fragments:
            raise DisclosureReadFailed("too_many_fragments", f"{manifest.fragment_count} fragments")
        budget = _Budget(self._max_total_bytes)
        budget.spend(manifest_size)
        if manifest.schema_bytes > budget.remaining:
            raise DisclosureReadFailed(
                "too_large", f"schema of {manifest.schema_bytes} bytes is over the bound"
            )
        fragments = await self._read_fragments(manifest, budget)
        try:
            document = reconstruct_schema(manifest, fragments)
        except SchemaDisclosureError as error:
            raise DisclosureMismatch(error.category, error.message) from None
        self.audit({"event": "disclosed", "tool": manifest.alias, "fragments": manifest.fragment_count})
        return DisclosedTool(
            selection=selection,
            manifest=manifest,
            input_schema=document["inputSchema"],
            output_schema=document["outputSchema"],
            bytes_read=budget.spent,
        )

    async def _read_fragments(self, manifest: SchemaManifest, budget: _Budget) -> list[SchemaFragment]:
        fragments: list[SchemaFragment | None] = [None] * manifest.fragment_count
        limiter = anyio.Semaphore(self._max_in_flight)

        async def read_one(index: int) -> None:
            async with limiter:
                text, size = await self._read(fragment_uri(manifest.alias, manifest.schema_sha256, index))
            budget.spend(size)  # raises too_large, which cancels the siblings
            fragments[index] = self._parse(parse_fragment, text)

        try:
            async with anyio.create_task_group() as group:
                for index in range(manifest.fragment_count):
                    group.start_soon(read_one, index)
        except BaseExceptionGroup as failures:
            # Report the first refusal as itself (not wrapped in a group); anything else propagates.
            first = _first_consumer_error(failures)
            if first is None:
                raise
            raise first from None
        return [fragment for fragment in fragments if fragment is not None]

    async def _read(self, uri: str) -> tuple[str, int]:
        """One ``resources/read`` of exactly ``uri`` through the raw session: one JSON text body and its
        size in UTF-8 bytes."""
        request = mcp_types.ReadResourceRequest(params=mcp_types.ReadResourceRequestParams(uri=uri))
        try:
            # Through the session's one translator; the URI as given (fastmcp.Client.read_resource
            # re-spells URIs through AnyUrl).
            raw = await self.session.request(request, gate="discover")
        except JsonRpcError as error:
            # A peer's JSON-RPC errors stay JsonRpcError, wherever they happen; only the provider's
            # uniform refusal (-32602: unknown, unauthorized or stale, deliberately not told apart)
            # is ours.
            if error.code == mcp_types.INVALID_PARAMS:
                raise DisclosureReadFailed("not_found", f"read refused with code {error.code}") from None
            raise
        except MalformedResponse:
            raise DisclosureReadFailed(
                "malformed_body", "the read result is not a valid MCP result"
            ) from None
        contents = raw.get("contents")
        if not isinstance(contents, list) or len(contents) != 1 or not isinstance(contents[0], dict):
            raise DisclosureReadFailed("malformed_body", "a disclosure read must return exactly one body")
        (content,) = contents
        text = content.get("text")
        if (
            content.get("uri") != uri
            or content.get("mimeType") != "application/json"
            or not isinstance(text, str)
        ):
            raise DisclosureReadFailed(
                "malformed_body", "the body is not one application/json text for this URI"
            )
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError:
            # A JSON "\ud800" escape decodes to a lone surrogate, which no UTF-8 document contains.
            raise DisclosureReadFailed("malformed_body", "the body is not valid Unicode text") from None
        return text, size

    @staticmethod
    def _parse(parser: Any, text: str) -> Any:
        try:
            return parser(text)
        except SchemaDisclosureError as error:
            raise DisclosureMismatch(error.category, error.message) from None

    def admit(self, tool: DisclosedTool) -> AdmittedTool:
        """Step 4: the session core's Admit gate on the reconstructed descriptor, before any call.

        The core keeps its own copy, by (alias, schema digest): calls validate against it, never against
        the caller-held :class:`DisclosedTool`'s (mutable, forgeable) dicts. Raises the core's
        ``AdmissionError`` (e.g. ``sensitive_header``, ``header_map_mismatch``).
        """
        self._require_scope(tool.selection.scope)
        navigation, manifest = tool.selection.navigation, tool.manifest
        # A navigation entry may carry the tool's header map; when it does, it must agree with the
        # schema the digests prove (the schema decides; a disagreeing claim is refused, not trusted).
        known = (
            None
            if navigation.headers is None
            else {json_pointer(entry.argument): entry.header for entry in navigation.headers}
        )
        return self.session.core.admit_disclosed(
            tool.descriptor, schema_sha256=manifest.schema_sha256, known_headers=known
        )

    # -- steps 5 and 6 -----------------------------------------------------------------------------
    async def call(self, tool: DisclosedTool, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Call a disclosed, admitted tool through the session core; returns the validated result.

        Before sending: the scope and catalog generation must be the ones the tool was disclosed under,
        and a fresh manifest read must return exactly the bound manifest (else :class:`StaleSelection`).
        Then the core's gates raise their own errors, as for ``ContractClient.call``: ``AdmissionError``,
        ``ArgumentError``/``HeaderValueError``/``ConfirmationRefused`` (Invoke), ``JsonRpcError`` /
        ``TransportFailure`` (the exchange), ``ContractViolation`` (Consume).
        """
        admitted = await self._require_current(tool)
        return await self.session.call(admitted, arguments)

    def _require_scope(self, scope: CallerScope) -> None:
        if scope != self._scope:
            raise StaleSelection("scope_mismatch", "the tool was selected under another caller scope")

    async def _require_current(self, tool: DisclosedTool) -> AdmittedTool:
        """Step 6: scope, generation, the tool the host core admitted for the bound manifest, and a
        live manifest re-read that must equal the bound manifest. Returns the admitted tool."""
        self._require_scope(tool.selection.scope)
        if tool.selection.generation != self._catalog.generation:
            raise StaleSelection("catalog_changed", "the catalog changed since selection; discover again")
        admitted = self.session.core.disclosed_tool(tool.manifest.alias, tool.manifest.schema_sha256)
        if admitted is None:
            raise StaleSelection("not_disclosed", "this consumer holds no verified schemas for the tool")
        try:
            text, _ = await self._read(tool.manifest.manifest_uri)
            current = self._parse(parse_manifest, text)
        except (DisclosureReadFailed, DisclosureMismatch) as error:
            self._catalog.generation += 1
            raise StaleSelection(
                "stale", f"the disclosed identity is no longer served ({error.category})"
            ) from None
        except ProtocolError:
            # The re-read itself failed (raised as itself): nothing proves the identity still holds,
            # so selections made before are void either way.
            self._catalog.generation += 1
            raise
        if current != tool.manifest:
            self._catalog.generation += 1
            raise StaleSelection("stale", "the provider now serves another manifest; discover again")
        return admitted


def _first_consumer_error(group: BaseExceptionGroup[Any]) -> AgentConnectorError | None:
    # A bound hit inside a fragment read is that bound, named. One task per fragment: the walk's bound
    # grows with the group (each exception is visited once).
    causes = iter_causes(group, limit=_CAUSES_PER_FAILURE * (1 + len(group.exceptions)))
    refusals = DisclosureConsumerError | ProtocolError | BoundExceeded
    return next((error for error in causes if isinstance(error, refusals)), None)


@dataclass
class _Budget:
    limit: int
    spent: int = 0

    @property
    def remaining(self) -> int:
        return self.limit - self.spent

    def spend(self, size: int) -> None:
        self.spent += size
        if self.spent > self.limit:
            raise DisclosureReadFailed("too_large", f"disclosure reads exceeded {self.limit} bytes")


_NAV_FIELDS: Final = (
    "input_schema_sha256",
    "output_schema_sha256",
    "schema_sha256",
    "fragment_count",
    "manifest_uri",
)


def _require_agreement(navigation: SchemaNavigation, manifest: SchemaManifest) -> None:
    """Step 3's first half: the manifest must say exactly what the selected navigation entry said."""
    if manifest.alias != navigation.name:
        raise DisclosureMismatch("navigation_mismatch", "manifest alias differs from the selected tool")
    for name in _NAV_FIELDS:
        if getattr(manifest, name) != getattr(navigation, name):
            raise DisclosureMismatch(
                "navigation_mismatch", f"manifest {name} differs from the navigation entry"
            )
