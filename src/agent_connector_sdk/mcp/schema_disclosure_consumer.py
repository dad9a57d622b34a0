"""Consumer side of schema disclosure, over the caller's own ``fastmcp.Client`` session.

For a host or gateway that reaches a server whose tools hide behind a search transform:

1. **discover** — call the search tool and parse its ``schema-navigation`` entries; **select** one;
2. **read** — the manifest, then every fragment URI, through the same session, concurrently with a
   bound on in-flight reads and on total bytes (URIs are sent exactly as derived, never normalized);
3. **verify** — the manifest must agree exactly with the selected navigation entry; then
   ``reconstruct_schema`` proves the fragments are that document;
4. **invoke** — validate arguments against the reconstructed input schema, mirror ``x-mcp-header``
   arguments into ``Mcp-Param-*`` headers, call the tool by name, validate the result against the
   reconstructed output schema;
5. **bind** — the disclosed identity is bound to the caller scope and the consumer's catalog
   generation. Before each call the manifest is read again (the provider re-authorizes and re-hashes
   the tool's current schemas); if the identity moved or the catalog changed, the call is refused with
   :class:`StaleSelection` and the caller must discover again.

Every failure is a :class:`DisclosureConsumerError` subclass with a stable ``category`` and the
``step`` that owns it; transport exceptions never escape bare. Messages carry names and categories,
never argument values.

Per-request headers: the ``mcp`` SDK mirrors ``x-mcp-header`` only for tools it saw in ``tools/list``,
which a search transform hides. The consumer therefore computes the headers itself
(``contracts.headers.build_parameter_headers``) and sends them on exactly this ``tools/call`` POST
through :class:`~agent_connector_sdk.mcp.param_headers_transport.ParamHeaderChannel`, shared with
``agent_connector_sdk.mcp.client``. Construct the consumer *before* entering an HTTP client, so the hook
is in the HTTP client the transport builds on connect; otherwise a call that needs headers is refused
(``InvocationRefused('undeliverable')``) instead of being sent without them.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal, cast

import anyio
import fastmcp
import mcp_types
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter, ValidationError

from agent_connector_sdk.mcp.contracts.errors import ContractError
from agent_connector_sdk.mcp.contracts.results import validate_tool_result
from agent_connector_sdk.mcp.param_headers_transport import (
    TRANSPORT_EXCEPTIONS,
    ParamHeaderChannel,
    is_local_transport_error,
)
from agent_connector_sdk.mcp.schema_disclosure import (
    MAX_DOCUMENT_BYTES,
    SchemaDisclosureError,
    SchemaFragment,
    SchemaManifest,
    fragment_uri,
    parse_fragment,
    parse_manifest,
    reconstruct_schema,
)
from agent_connector_sdk.mcp.schema_disclosure_navigation import SchemaNavigation

__all__ = [
    "DEFAULT_MAX_IN_FLIGHT",
    "CallFailed",
    "CallerScope",
    "DisclosedTool",
    "DisclosureConsumerError",
    "DisclosureMismatch",
    "DisclosureReadFailed",
    "DiscoveryFailed",
    "InvocationRefused",
    "ResultRejected",
    "SchemaDisclosureConsumer",
    "SelectedTool",
    "StaleSelection",
]

Step = Literal["discover", "read", "verify", "invoke", "bind", "consume"]

_RAW: Final[TypeAdapter[dict[str, Any]]] = TypeAdapter(dict[str, Any])
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


# -------------------------------------------------------------------------------------------- errors
class DisclosureConsumerError(Exception):
    """Base of every consumer refusal: stable ``category``, owning ``step``."""

    step: ClassVar[Step]

    def __init__(self, category: str, message: str) -> None:
        super().__init__(f"{category}: {message}")
        self.category = category
        self.message = message


class DiscoveryFailed(DisclosureConsumerError):
    """Step 1. ``search_failed``, ``malformed_navigation``, ``no_match``, ``ambiguous``, ``undisclosable``."""

    step = "discover"


class DisclosureReadFailed(DisclosureConsumerError):
    """Step 2. ``not_found`` (the provider refused: unknown, unauthorized or stale — deliberately not
    told apart), ``protocol_error``, ``transport``, ``malformed_body``, ``too_large``,
    ``too_many_fragments``."""

    step = "read"


class DisclosureMismatch(DisclosureConsumerError):
    """Step 3. ``navigation_mismatch``, or the core's ``SchemaDisclosureError`` category (``stale``,
    ``mixed_operation``, ``corrupt``, ``incomplete``, ``reordered``, ``inconsistent_identity``, ...)."""

    step = "verify"


class StaleSelection(DisclosureConsumerError):
    """Step 5. The bound identity no longer holds: ``stale`` (the provider no longer serves it or serves
    another one), ``catalog_changed`` (a later discovery saw the catalog move), ``scope_mismatch`` (the
    tool was disclosed to another caller scope), ``not_disclosed`` (this consumer did not disclose that
    identity, or no longer remembers it: see ``max_disclosed``). Discover again."""

    step = "bind"


class InvocationRefused(DisclosureConsumerError):
    """Step 4, before sending: the contracts' argument/header category (``invalid_arguments``,
    ``type_mismatch``, ``out_of_range``, ``invalid_annotation``, ...)."""

    step = "invoke"


class CallFailed(DisclosureConsumerError):
    """Step 4, sending: ``protocol_error`` (``code`` set) or ``transport``; the result is unknown."""

    step = "invoke"

    def __init__(self, category: str, message: str, *, code: int | None = None) -> None:
        super().__init__(category, message)
        self.code = code


class ResultRejected(DisclosureConsumerError):
    """Step 4, the answer: the result fails the reconstructed output schema or the result contract
    (the contracts' ``ContractViolation`` category, ``path`` kept)."""

    step = "consume"

    def __init__(self, category: str, message: str, *, path: str = "") -> None:
        super().__init__(category, message)
        self.path = path


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
        descriptor: dict[str, Any] = {"name": self.manifest.alias, "inputSchema": self.input_schema}
        if self.output_schema is not None:
            descriptor["outputSchema"] = self.output_schema
        return descriptor


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
    )


class SchemaDisclosureConsumer:
    """Discover, read, verify and call tools disclosed by a schema disclosure provider.

    ``client`` is the caller's ``fastmcp.Client`` (its session carries the caller's credentials; nothing
    else is created). ``scope`` identifies the caller. ``max_in_flight`` bounds concurrent reads;
    ``max_total_bytes`` bounds the bytes of all bodies read for one tool (and the manifest's
    ``schema_bytes`` is checked against it before any fragment is read); ``max_fragments`` bounds the
    fragment count a manifest may claim; ``max_disclosed`` bounds how many verified tools the consumer
    remembers (least recently disclosed forgotten first; calling a forgotten one asks to disclose it
    again). ``call`` validates against the consumer's own verified copies of the schemas, so mutating
    or re-assembling a :class:`DisclosedTool` cannot change what is enforced.
    """

    def __init__(
        self,
        client: fastmcp.Client[Any],
        *,
        scope: CallerScope,
        search_tool: str = "search_tools",
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        max_total_bytes: int = MAX_DOCUMENT_BYTES + _ENVELOPE_ALLOWANCE,
        max_fragments: int = 8192,
        max_disclosed: int = 256,
    ) -> None:
        if min(max_in_flight, max_total_bytes, max_fragments, max_disclosed) < 1:
            raise ValueError("bounds must be positive")
        self._client = client
        self._scope = scope
        self._search_tool = search_tool
        self._max_in_flight = max_in_flight
        self._max_total_bytes = max_total_bytes
        self._max_fragments = max_fragments
        self._catalog = _Catalog()
        # The schemas this consumer verified, by (alias, schema digest), in private copies: calls
        # validate against these, never against the caller-held DisclosedTool's (mutable, forgeable)
        # dicts, so the schemas used are always the ones the bound manifest's digests prove.
        self._verified: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()
        self._max_disclosed = max_disclosed
        self.audit: list[dict[str, Any]] = []
        self._param_headers = ParamHeaderChannel(client)

    @property
    def scope(self) -> CallerScope:
        return self._scope

    @property
    def generation(self) -> int:
        """Bumped whenever a discovery or a pre-call check sees the catalog differ from what it knew."""
        return self._catalog.generation

    # -- step 1 ------------------------------------------------------------------------------------
    async def discover(self, pattern: str) -> list[SchemaNavigation]:
        """Search and parse the navigation entries (strictly; any malformed entry refuses the page)."""
        raw = await self._send(
            mcp_types.CallToolRequest(
                params=mcp_types.CallToolRequestParams(name=self._search_tool, arguments={"pattern": pattern})
            ),
            DiscoveryFailed,
            "search_failed",
        )
        structured = raw.get("structuredContent")
        # FastMCP wraps a non-object output under "result" for the advertised schema; accept a bare
        # list too, which is how a 2026-07-28 result may carry it.
        entries = structured.get("result") if isinstance(structured, dict) else structured
        if raw.get("isError") is True or not isinstance(entries, list):
            raise DiscoveryFailed("search_failed", "the search tool returned no navigation list")
        try:
            found = [SchemaNavigation.model_validate(entry) for entry in entries]
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
        """Read the manifest and all fragments of ``selection`` and verify them (steps 2–3)."""
        self._require_scope(selection.scope)
        navigation = selection.navigation
        if navigation.manifest_uri is None:
            raise DiscoveryFailed("undisclosable", f"tool {navigation.name!r} has no disclosure")
        manifest_text, manifest_size = await self._read(navigation.manifest_uri)
        manifest = self._parse(parse_manifest, manifest_text)
        _require_agreement(navigation, manifest)
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
        self.audit.append(
            {"event": "disclosed", "tool": manifest.alias, "fragments": manifest.fragment_count}
        )
        self._remember(manifest, copy.deepcopy(document))
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
        try:
            # The raw session on purpose: fastmcp.Client.read_resource re-spells URIs through AnyUrl.
            result = await self._client.session.read_resource(uri)
        except MCPError as error:
            category = "not_found" if error.code == mcp_types.INVALID_PARAMS else _failure_category(error)
            raise DisclosureReadFailed(category, f"read refused with code {error.code}") from None
        except ValidationError:
            raise DisclosureReadFailed(
                "malformed_body", "the read result is not a valid MCP result"
            ) from None
        except TRANSPORT_EXCEPTIONS as error:
            raise DisclosureReadFailed("transport", f"transport failed: {type(error).__name__}") from None
        contents = result.contents
        if len(contents) != 1:
            raise DisclosureReadFailed("malformed_body", "a disclosure read must return exactly one body")
        (content,) = contents
        text = getattr(content, "text", None)
        if content.uri != uri or content.mime_type != "application/json" or not isinstance(text, str):
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

    # -- steps 4 and 5 -----------------------------------------------------------------------------
    async def call(self, tool: DisclosedTool, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Call a disclosed tool; returns the validated ``CallToolResult`` wire dict.

        Before sending: the scope and catalog generation must be the ones the tool was disclosed under,
        and a fresh manifest read must return exactly the bound manifest (else :class:`StaleSelection`);
        the arguments must satisfy the reconstructed input schema (:class:`InvocationRefused`). After:
        the result must satisfy the reconstructed output schema (:class:`ResultRejected`).
        """
        descriptor = await self._require_current(tool)
        try:
            args, headers = self._param_headers.prepare(descriptor, arguments, self.audit)
        except ContractError as error:
            raise InvocationRefused(error.category, error.message) from None
        with self._param_headers.sending(tool.manifest.alias, headers):
            raw = await self._send(
                mcp_types.CallToolRequest(
                    params=mcp_types.CallToolRequestParams(name=tool.manifest.alias, arguments=args)
                ),
                CallFailed,
                "protocol_error",
            )
        try:
            validate_tool_result(descriptor, raw)
        except ContractError as error:
            self.audit.append({"event": "call", "tool": tool.manifest.alias, "outcome": error.category})
            raise ResultRejected(error.category, error.message, path=getattr(error, "path", "")) from None
        self.audit.append({"event": "call", "tool": tool.manifest.alias, "outcome": "ok"})
        return raw

    def _require_scope(self, scope: CallerScope) -> None:
        if scope != self._scope:
            raise StaleSelection("scope_mismatch", "the tool was selected under another caller scope")

    def _remember(self, manifest: SchemaManifest, document: dict[str, Any]) -> None:
        descriptor: dict[str, Any] = {"name": manifest.alias, "inputSchema": document["inputSchema"]}
        if document["outputSchema"] is not None:
            descriptor["outputSchema"] = document["outputSchema"]
        key = (manifest.alias, manifest.schema_sha256)
        self._verified[key] = descriptor
        self._verified.move_to_end(key)
        while len(self._verified) > self._max_disclosed:
            self._verified.popitem(last=False)

    async def _require_current(self, tool: DisclosedTool) -> dict[str, Any]:
        """Step 5: scope, generation, the schemas this consumer verified for the bound manifest, and a
        live manifest re-read that must equal the bound manifest. Returns the verified descriptor."""
        self._require_scope(tool.selection.scope)
        if tool.selection.generation != self._catalog.generation:
            raise StaleSelection("catalog_changed", "the catalog changed since selection; discover again")
        descriptor = self._verified.get((tool.manifest.alias, tool.manifest.schema_sha256))
        if descriptor is None:
            raise StaleSelection("not_disclosed", "this consumer holds no verified schemas for the tool")
        try:
            text, _ = await self._read(tool.manifest.manifest_uri)
            current = self._parse(parse_manifest, text)
        except (DisclosureReadFailed, DisclosureMismatch) as error:
            self._catalog.generation += 1
            raise StaleSelection(
                "stale", f"the disclosed identity is no longer served ({error.category})"
            ) from None
        if current != tool.manifest:
            self._catalog.generation += 1
            raise StaleSelection("stale", "the provider now serves another manifest; discover again")
        return descriptor

    # -- plumbing ----------------------------------------------------------------------------------
    async def _send(
        self, request: Any, error_type: type[DisclosureConsumerError], category: str
    ) -> dict[str, Any]:
        try:
            raw = await self._client.session.send_request(request, cast(Any, _RAW))
            return cast(dict[str, Any], raw)
        except MCPError as error:
            if _failure_category(error) == "transport":
                category = "transport"
            if error_type is CallFailed:
                raise CallFailed(category, f"server answered code {error.code}", code=error.code) from None
            raise error_type(category, f"server answered code {error.code}") from None
        except ValidationError:
            raise error_type(category, "the result is not a valid MCP result") from None
        except TRANSPORT_EXCEPTIONS as error:
            raise error_type("transport", f"transport failed: {type(error).__name__}") from None


def _failure_category(error: MCPError) -> str:
    """The SDK reports a lost connection or a timeout as an ``MCPError`` with its own local codes."""
    if is_local_transport_error(error):
        return "transport"
    return "protocol_error"


def _first_consumer_error(group: BaseExceptionGroup[Any]) -> DisclosureConsumerError | None:
    for error in group.exceptions:
        if isinstance(error, DisclosureConsumerError):
            return error
        if isinstance(error, BaseExceptionGroup):
            nested = _first_consumer_error(error)
            if nested is not None:
                return nested
    return None


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
