"""The host core, sans-I/O: Discover → Admit → Invoke → Consume as one sequence no path can skip.

Every host path — :class:`~agent_connector_sdk.mcp.host.contract_client.ContractClient` (tools from
``tools/list``), the disclosure consumer (tools reconstructed from schema disclosures) and the CLI
reviewer — runs this one state machine; only the I/O around it differs
(:mod:`~agent_connector_sdk.mcp.host._session`). Like h11, it never touches a socket: wire dicts in, verdicts
and values out, every refusal a typed error.

The sequence is enforced by the values it hands out, not by convention:

1. **Discover + Admit** — :meth:`HostCore.admit_listing` (a ``tools/list`` catalog) and
   :meth:`HostCore.admit_disclosed` (one reconstructed descriptor) run ``contracts._admission`` with
   the host's :class:`~agent_connector_sdk.core.contracts.AdmissionPolicy`. Only they create an
   :class:`AdmittedTool`; a rejected descriptor yields none (the disclosed path raises
   :class:`~agent_connector_sdk.core.contracts.errors.AdmissionError` with the admission category).
2. **Invoke** — :meth:`HostCore.invoke` accepts only an :class:`AdmittedTool` this core admitted and
   still holds (an object built by hand, or one forgotten since, is ``not_admitted``), validates the
   arguments, checks they are JSON data, and computes the ``Mcp-Param-*`` headers: a
   :class:`PreparedCall`.
3. **Consume** — :meth:`HostCore.consume` accepts only a :class:`PreparedCall` this core issued and
   validates the result against the admitted descriptor: a :class:`ToolResult`.

Audit events (tool and header names, categories, outcomes — never values) go to one bounded
:class:`~agent_connector_sdk.audit.AuditSink`.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import itertools
import marshal
import math
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, NamedTuple, cast

from agent_connector_sdk.audit import AuditEvent, AuditSink, BoundedAuditSink
from agent_connector_sdk.core.contracts import (
    X_MCP_HEADER_KEY,
    AdmissionPolicy,
    AdmissionReport,
    Finding,
    HeaderAnnotation,
    Rejection,
    SchemaKey,
    admit_keyed,
    admit_tools,
    exact_value_key,
    header_annotations,
    json_pointer,
    parameter_headers,
    poisoning_admission,
    server_text,
    validate_arguments,
    validate_tool_result,
)
from agent_connector_sdk.core.contracts.errors import AdmissionError, ArgumentError, ContractError
from agent_connector_sdk.core.contracts.lock import LockedServer, lock_admission
from agent_connector_sdk.core.host._options import HostOptions
from agent_connector_sdk.core.host.bounds import bounded_policy

__all__ = [
    "AdmittedTool",
    "HeaderGates",
    "HostCore",
    "Invocation",
    "PreparedCall",
    "ToolOrigin",
    "ToolResult",
    "annotations_may_write",
    "header_map",
    "may_write",
    "prepare_invocation",
    "require_json_data",
]

ToolOrigin = Literal["listing", "disclosure"]
HeaderGates = Literal["required", "optional", "not_applicable"]
_MAX_ARGUMENT_DEPTH: Final = 256
MAX_OUTSTANDING_CALLS: Final = 1024
SEARCH_TOOL: Final = "search_tools"
SEARCH_PROXY_TOOL: Final = "call_tool"
"""FastMCP's search transforms list these two in place of the tools they hide (their default names)."""
"""Prepared-but-unconsumed calls a core remembers (concurrent calls in flight, at most)."""


# -------------------------------------------------------------------------------------------- values
@dataclass(frozen=True)
class ToolResult:
    """A ``tools/call`` result that passed the Consume gate. ``raw`` is the wire dict as received;
    ``findings`` are the project rules it breaks that the session's profile reports instead of
    rejecting (``default``); always empty in ``strict``."""

    raw: dict[str, Any]
    findings: tuple[Finding, ...] = ()

    @property
    def text(self) -> str | None:
        """The server's text blocks joined by newlines, sanitized and bounded for display; ``None``
        when there are none (``raw`` keeps them verbatim)."""
        return server_text(self.raw)

    @property
    def content(self) -> list[Any]:
        return cast(list[Any], self.raw.get("content", []))

    @property
    def structured_content(self) -> Any:
        return self.raw.get("structuredContent")

    @property
    def has_structured_content(self) -> bool:
        return "structuredContent" in self.raw

    @property
    def is_error(self) -> bool:
        return self.raw.get("isError") is True


_MATERIALIZING: Final = threading.Lock()


class _Exact(NamedTuple):
    """A descriptor's :func:`exact_value_key` bytes, standing in for its private copy until first use."""

    data: bytes


class _PrivateCopy:
    """:attr:`AdmittedTool.descriptor`: the tool's private copy, made on first read when the core gave
    the exact bytes of the admitted descriptor instead (a data descriptor: the frozen dataclass's
    ``__init__`` stores through it; nothing else can assign)."""

    def __get__(self, tool: object, owner: type | None = None) -> Mapping[str, Any]:
        if tool is None:
            raise AttributeError("descriptor")  # no class-level default: the field is required
        state = tool.__dict__["_descriptor"]
        if isinstance(state, _Exact):
            with _MATERIALIZING:  # one copy per tool even when two threads read it first
                state = tool.__dict__["_descriptor"]
                if isinstance(state, _Exact):
                    state = tool.__dict__["_descriptor"] = marshal.loads(state.data)
        return cast(Mapping[str, Any], state)

    def __set__(self, tool: object, value: Mapping[str, Any] | _Exact) -> None:
        tool.__dict__["_descriptor"] = value


@dataclass(frozen=True, eq=False)
class AdmittedTool:
    """A descriptor the host admitted. Only :class:`HostCore` makes them (see the module docstring).

    ``descriptor`` is the core's private copy of the wire descriptor; ``header_map`` maps each annotated
    argument (its ``properties`` path joined with ``.``) to its ``Mcp-Param-*`` header name;
    ``schema_sha256`` is the disclosed identity for tools admitted from a disclosure; ``headers`` are the
    validated ``x-mcp-header`` annotations (with their declared types) the map was built from;
    ``findings`` are the project rules the descriptor breaks that did not stop its admission (the
    ``default`` profile; ``strict`` rejects instead).

    A listed tool's private copy is made on first read, from the exact bytes (``marshal``) of the
    descriptor as it was admitted: bytes are immutable, so the copy is what was admitted whatever the
    caller did to its own dicts since, and each :class:`AdmittedTool` (so each listing) gets its own
    copy — mutating one tool's ``descriptor`` never changes another's, nor what a later listing returns.
    Why lazy: copying all of GitHub's 1,223 descriptors on every listing cost more than a re-list's
    checks, and most listed tools are never called.
    """

    name: str
    descriptor: Mapping[str, Any] = field(repr=False)
    header_map: Mapping[str, str]
    origin: ToolOrigin
    schema_sha256: str | None = None
    headers: tuple[HeaderAnnotation, ...] = ()
    findings: tuple[Finding, ...] = ()

    @property
    def annotations(self) -> Mapping[str, Any]:
        """The descriptor's ``annotations`` (hints such as ``readOnlyHint``; untrusted), or ``{}``."""
        value = self.descriptor.get("annotations")
        return cast(Mapping[str, Any], value) if isinstance(value, Mapping) else {}


class _GateKeys(NamedTuple):
    """The schemas the Invoke and Consume gates check, as :class:`SchemaKey` bytes (``None``: absent, or
    not encodable; the gate then reads the descriptor as before)."""

    input: SchemaKey | None
    output: SchemaKey | None

    @classmethod
    def of(cls, descriptor: Mapping[str, Any]) -> _GateKeys:
        schema = descriptor.get("inputSchema")
        output = descriptor.get("outputSchema")
        return cls(
            SchemaKey.of(schema) if isinstance(schema, Mapping) else None,
            SchemaKey.of(output) if output is not None else None,
        )


def _gate_keys(tool: AdmittedTool) -> _GateKeys:
    """``tool``'s gate keys, made from its private copy on its first call and kept on the tool.

    Why: finding the validator of a schema by its exact bytes serializes the whole schema (``marshal``),
    a millisecond and more per call for GitHub's larger output schemas, on every call. Keyed once, the
    gates look the validator up by bytes already made. Exactness: a key's bytes determine its schema
    exactly and a cache miss compiles a copy decoded from them (:class:`SchemaKey`), so the verdict is
    the one the schema itself gets (``tests/core/contracts/test_schema_key.py``). The keys are a snapshot:
    from the first call on, the gates check the schemas as they were then, whatever is done to the
    ``descriptor`` dict the tool hands out. Made on first call, not at admission, so that only called
    tools hold them (every tool a search verifies is admitted). Kept in the tool's ``__dict__``, not a
    field: ``dataclasses.replace`` with another descriptor never carries keys of the old one.
    """
    keys = tool.__dict__.get("_gate_keys")
    if not isinstance(keys, _GateKeys):
        keys = tool.__dict__["_gate_keys"] = _GateKeys.of(tool.descriptor)
    return keys


# Installed after the dataclass is made, so the field stays required (no class-level default) while
# ``__init__`` (and ``dataclasses.replace``) store through it.
setattr(AdmittedTool, "descriptor", _PrivateCopy())  # noqa: B010


@dataclass(frozen=True, eq=False)
class PreparedCall:
    """A call that passed Invoke: the arguments to send (a copy) and the headers that must carry them."""

    tool: AdmittedTool
    arguments: dict[str, Any] = field(repr=False)
    headers: dict[str, str] = field(repr=False)
    ticket: int = field(default=-1, repr=False)


class Invocation(NamedTuple):
    """What :func:`prepare_invocation` returns."""

    arguments: dict[str, Any]
    headers: dict[str, str]
    event: AuditEvent


# ------------------------------------------------------------------------------------ pure functions
def require_json_data(value: Any) -> None:
    """Refuse anything in ``value`` that is not JSON data (iteratively: no recursion limit to hit).

    ``ArgumentError('invalid_arguments')`` with the path of the first offender and its Python type
    name, never its value. Otherwise the SDK would silently rewrite it (NaN to ``null``, a tuple to an
    array) or fail untyped while serializing.
    """
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if len(path) > _MAX_ARGUMENT_DEPTH:
            raise ArgumentError(
                "invalid_arguments", "arguments are nested too deeply", path=json_pointer(path)
            )
        if item is None or isinstance(item, str | bool | int):
            continue
        if isinstance(item, float):
            if math.isfinite(item):
                continue
        elif isinstance(item, dict):
            if all(isinstance(key, str) for key in item):
                stack.extend((member, (*path, key)) for key, member in item.items())
                continue
        elif isinstance(item, list):
            stack.extend((member, (*path, index)) for index, member in enumerate(item))
            continue
        raise ArgumentError(
            "invalid_arguments",
            f"value at '{json_pointer(path)}' is not JSON data ({type(item).__name__})",
            path=json_pointer(path),
        )


def prepare_invocation(
    descriptor: Mapping[str, Any], arguments: Mapping[str, Any] | None, *, input_key: SchemaKey | None = None
) -> Invocation:
    """The Invoke gate: ``(arguments as a dict copy, Mcp-Param-* headers, audit event)``.

    Refuses with the contracts' typed errors, before anything is sent: arguments that are not a JSON
    object or fail ``descriptor``'s input schema (``validate_arguments``); arguments holding anything
    that is not JSON data (:func:`require_json_data`); annotated values that cannot become headers
    (``parameter_headers``). ``input_key``: ``descriptor``'s ``inputSchema`` as admitted (see
    :func:`~agent_connector_sdk.core.contracts.validate_arguments`).
    """
    validate_arguments(descriptor, arguments, input_key=input_key)
    args = dict(arguments or {})
    require_json_data(args)
    headers, event = parameter_headers(descriptor, args)
    return Invocation(args, headers, event)


def header_map(descriptor: Mapping[str, Any]) -> dict[str, str]:
    """Annotated argument (``properties`` path joined with ``.``) → ``Mcp-Param-*`` header name."""
    annotations = header_annotations(descriptor.get("inputSchema"), placement="spec")
    return {".".join(annotation.path): annotation.header for annotation in annotations}


def may_write(tool: AdmittedTool) -> bool:
    """Whether a call may change state: not ``readOnlyHint: true``, or ``destructiveHint: true``.

    Missing annotations mean "may write" (the spec's defaults: ``readOnlyHint`` false,
    ``destructiveHint`` true). Hints are untrusted, so they only ever *add* a confirmation.
    """
    return annotations_may_write(tool.annotations)


def annotations_may_write(annotations: Mapping[str, Any] | None) -> bool:
    """:func:`may_write` for a descriptor's raw ``annotations`` (``None``: absent, so "may write").

    Only a real JSON ``true`` counts as ``readOnlyHint``; ``"true"`` or ``1`` are as good as absent.
    """
    hints = annotations if isinstance(annotations, Mapping) else {}
    return hints.get("readOnlyHint") is not True or hints.get("destructiveHint") is True


def _private_copy(descriptor: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of ``descriptor`` as a plain dict.

    Built-in data round-trips through ``marshal`` exactly — same types, values, key order and (format
    4) shared references, as with ``copy.deepcopy`` — in about 60% of deepcopy's time at GitHub's
    1,223 tools; anything marshal cannot write (subclasses, custom types) is deep-copied instead.
    """
    plain = dict(descriptor)
    try:
        return cast(dict[str, Any], marshal.loads(marshal.dumps(plain, 4)))
    except (ValueError, TypeError):
        return copy.deepcopy(plain)


class _ToolFacts(NamedTuple):
    """What admitting one listed tool decided: its index in the listing, header map, annotations and
    findings (immutable, except ``mapping``, which every :class:`AdmittedTool` gets a copy of)."""

    position: int
    mapping: Mapping[str, str]
    annotations: tuple[HeaderAnnotation, ...]
    findings: tuple[Finding, ...]


@dataclass(frozen=True, slots=True)
class _ListingVerdict:
    """A listing's verdict without the listing: enough to rebuild the exact report and tools from
    byte-identical descriptors (rejections as ``(tool, index, category, reason, copied)``; ``copied``:
    the rejection carries a shallow copy of the item, as lock and poisoning rejections do, rather than
    the item itself, as ``admit_tools``' own do)."""

    admitted: tuple[tuple[str, _ToolFacts], ...]
    rejected: tuple[tuple[str | None, int, str, str, bool], ...]

    @classmethod
    def of(
        cls, items: Sequence[Any], report: AdmissionReport, tools: Sequence[_ToolFacts]
    ) -> _ListingVerdict:
        rejected = tuple(
            (r["tool"], r["index"], r["category"], r["reason"], r["descriptor"] is not items[r["index"]])
            for r in report.rejected
        )
        frozen = tuple(fact._replace(mapping=dict(fact.mapping)) for fact in tools)  # never a tool's own
        return cls(tuple(zip(report.admitted, frozen, strict=True)), rejected)

    def replay(self, items: Sequence[Any]) -> tuple[AdmissionReport, list[_ToolFacts]]:
        admitted = {name: dict(items[fact.position]) for name, fact in self.admitted}
        rejected: list[Rejection] = [
            {
                "tool": tool,
                "index": index,
                "category": category,
                "reason": reason,
                "descriptor": dict(items[index]) if copied else items[index],
            }
            for tool, index, category, reason, copied in self.rejected
        ]
        return AdmissionReport(admitted=admitted, rejected=rejected), [fact for _, fact in self.admitted]


LISTING_MEMO_ENTRIES: Final = 16
"""Listing verdicts remembered process-wide (no descriptors: names, indexes, reasons, findings)."""

_ListingKey = tuple[AdmissionPolicy, bool, bytes, bytes]


class _ListingMemo:
    """``(policy, strict, lock, SHA-256 over every descriptor's exact bytes in order)`` → the listing's
    verdict, bounded (LRU). ``lock``: :func:`_lock_key` of the contract lock entry in force.

    Content-addressed like ``admit_tools``' verdict memo: the key is computed from the listing as given,
    every time, from :func:`exact_value_key` bytes (``marshal`` writes each value with its type and every
    key in order: equal bytes are an equal listing, a changed byte anywhere is a new key checked in
    full). Everything a listing's verdict depends on is in the key: the descriptors (their order and
    count too: each one's length is hashed before it), the admission policy, the profile and the
    contract lock. A listing holding anything marshal cannot encode is never memoized. Proven against
    the uncached path by ``tests/core/host/test_listing_memo.py``.
    """

    def __init__(self, max_entries: int) -> None:
        self._entries: OrderedDict[_ListingKey, _ListingVerdict] = OrderedDict()
        self._max_entries = max_entries
        self._lock = threading.Lock()

    @staticmethod
    def key(
        keys: Sequence[bytes | None], policy: AdmissionPolicy, strict: bool, lock: bytes
    ) -> _ListingKey | None:
        digest = hashlib.sha256(len(keys).to_bytes(8, "big"))
        for exact in keys:
            if exact is None:
                return None
            digest.update(len(exact).to_bytes(8, "big"))
            digest.update(exact)
        return policy, strict, lock, digest.digest()

    def get(self, key: _ListingKey) -> _ListingVerdict | None:
        with self._lock:
            verdict = self._entries.get(key)
            if verdict is not None:
                self._entries.move_to_end(key)
            return verdict

    def put(self, key: _ListingKey, verdict: _ListingVerdict) -> None:
        with self._lock:
            self._entries[key] = verdict
            self._entries.move_to_end(key)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


def _lock_key(locked: LockedServer | None) -> bytes:
    """What the listing memo keys a contract lock by: the SHA-256 of the lock entry's JSON (computed
    once per entry: the entry is frozen, and it holds whole contracts), or ``b"none"`` when the lock has
    no entry for this server (every tool refused). Never ``b""``: no lock at all."""
    if locked is None:
        return b"none"
    return locked.digest()


_LISTINGS: Final = _ListingMemo(LISTING_MEMO_ENTRIES)


# -------------------------------------------------------------------------------------- the core
class HostCore:
    """The host's gate sequence and its state: admitted tools, rejections, audit (no I/O).

    ``options`` (:class:`~agent_connector_sdk.mcp.host.HostOptions`) supply the admission policy, the profile,
    the audit sink (default: a :class:`~agent_connector_sdk.audit.BoundedAuditSink`) and ``max_disclosed``:
    how many tools admitted from disclosures are remembered (least recently admitted forgotten first; calling
    a forgotten one is ``not_admitted`` until it is disclosed and admitted again).
    """

    def __init__(self, options: HostOptions | None = None) -> None:
        self.options = options if options is not None else HostOptions()
        if self.options.max_disclosed < 1:
            raise ValueError("max_disclosed must be positive")
        max_disclosed = self.options.max_disclosed
        # The x-mcp-header placement is a project rule (strict: root properties only) the spec relaxed
        # on 2026-06-17: the host profile decides it, whatever placement the policy value carries.
        placement: Literal["strict", "spec"] = "strict" if self.options.profile == "strict" else "spec"
        # The host's bounds on descriptors and x-mcp-header annotations apply on top (the stricter wins).
        policy = dataclasses.replace(self.options.policy, profile=placement)
        self.policy = bounded_policy(policy, self.options.bounds)
        self.audit: AuditSink = self.options.audit if self.options.audit is not None else BoundedAuditSink()
        self._listed: dict[str, AdmittedTool] = {}
        self._disclosed: OrderedDict[tuple[str, str], AdmittedTool] = OrderedDict()
        self._max_disclosed = max_disclosed
        # Calls this core prepared and has not consumed yet, by ticket: a result is consumed once, and
        # only for a call that passed this core's Invoke. Bounded: the oldest outstanding call is
        # forgotten first (it can then no longer be consumed: fail closed).
        self._outstanding: OrderedDict[int, PreparedCall] = OrderedDict()
        self._tickets = itertools.count()
        self.last_report: AdmissionReport | None = None
        self.lock_applies = self.options.lock is not None
        self._drifted: dict[str | None, str] = {}
        lock = self.options.lock
        self.lock: LockedServer | None = lock.servers[0] if lock and len(lock.servers) == 1 else None
        """The contract lock's entry for this server (``HostOptions.lock``; the session picks it by the
        server's address when the lock holds several): with ``lock_applies``, a listed tool is admitted
        only while its contract is the approved one."""
        self.header_gates: HeaderGates = "required"
        """Set by the I/O adapter from the connection (``required``/``optional``/``not_applicable``);
        recorded on every header event, so a transport without headers is reported, not hidden."""

    # -- Discover + Admit ---------------------------------------------------------------------------
    def admit_listing(self, descriptors: Sequence[Any], *, pages: int) -> AdmissionReport:
        """Admit a complete ``tools/list`` catalog; it replaces the previously listed tools.

        A re-list of byte-identical descriptors reuses the listing's verdict (:data:`LISTING_MEMO_ENTRIES`,
        content-addressed: see :class:`_ListingMemo`); anything else is checked in full."""
        items = list(descriptors)
        strict = self.options.profile == "strict"
        keys = [exact_value_key(item) for item in items]
        # A listing holding anything marshal cannot encode exactly is checked in full every time.
        lock = _lock_key(self.lock) if self.lock_applies else b""
        memo_key = _LISTINGS.key(keys, self.policy, strict, lock)
        verdict = _LISTINGS.get(memo_key) if memo_key is not None else None
        if verdict is None:
            report, tools = self._check_listing(items, keys, strict)
            if memo_key is not None:
                _LISTINGS.put(memo_key, _ListingVerdict.of(items, report, tools))
        else:
            report, tools = verdict.replay(items)
        listed: dict[str, AdmittedTool] = {}
        for (name, descriptor), (position, mapping, headers, found) in zip(
            report.admitted.items(), tools, strict=True
        ):
            # Each tool gets its own header map and copy: what one caller mutates, no other tool sees.
            exact = keys[position]
            private: Any = _private_copy(descriptor) if exact is None else _Exact(exact)
            listed[name] = AdmittedTool(name, private, dict(mapping), "listing", None, headers, found)
        self._listed = listed
        self.last_report = report
        # Why each drifted tool is refused, by name: a call names the drift in O(1).
        self._drifted = {r["tool"]: r["reason"] for r in report.rejected if r["category"] == "contract_drift"}
        event: AuditEvent = {
            "event": "discover",
            "outcome": "ok",
            "pages": pages,
            "admitted": list(report.admitted),
            "rejected": [{"tool": r["tool"], "category": r["category"]} for r in report.rejected],
        }
        findings = [
            {"tool": name, "rule": f.rule, "category": f.category}
            for name, tool in self._listed.items()
            for f in tool.findings
        ]
        if findings:  # project rules the default profile admitted anyway (names and rule ids only)
            event["findings"] = findings
        self.audit(event)
        return report

    def _check_listing(
        self, items: list[Any], keys: list[bytes | None], strict: bool
    ) -> tuple[AdmissionReport, list[_ToolFacts]]:
        """Every check of a listing (the uncached path): the report, and for each admitted tool in
        report order its index in ``items``, header map, annotations and findings."""
        report = admit_keyed(items, keys, self.policy)
        if self.lock_applies:  # approved contracts only: drift is contract_drift, no entry refuses all
            report = lock_admission(items, report, self.lock)
        # Tool poisoning (project rules): findings by default, tool_poisoning rejections in strict.
        report, poisoning = poisoning_admission(items, report, strict=strict)
        positions = {
            name: i
            for i, item in enumerate(items)
            if isinstance(item, Mapping) and isinstance(name := item.get("name"), str)
        }
        tools: list[_ToolFacts] = []
        for name, descriptor in report.admitted.items():
            annotations = header_annotations(descriptor.get("inputSchema"), placement="spec")
            mapping = {".".join(annotation.path): annotation.header for annotation in annotations}
            found = _admit_findings(annotations) + poisoning.get(name, ())
            tools.append(_ToolFacts(positions[name], mapping, annotations, found))
        return report, tools

    def discovery_failed(self, category: str, *, pages: int) -> None:
        self.audit({"event": "discover", "outcome": category, "pages": pages})

    def admit_disclosed(
        self,
        descriptor: Mapping[str, Any],
        *,
        schema_sha256: str,
        known_headers: Mapping[str, str] | None = None,
    ) -> AdmittedTool:
        """Admit one descriptor reconstructed from a verified disclosure, before its first call.

        Raises :class:`AdmissionError` with the admission category (``contract_drift`` under a lock,
        ``sensitive_header``, ``invalid_header_annotation``, ...) when the policy rejects it, and
        ``header_map_mismatch`` when ``known_headers`` (a header map the host already knows, e.g. from a
        navigation entry) does not say exactly what the schema's annotations say (header names compare
        case-insensitively).
        """
        name = descriptor.get("name")
        report = admit_tools([descriptor], self.policy)
        if self.lock_applies:  # a tool behind search is held to the lock like a listed one
            report = lock_admission([descriptor], report, self.lock)
        # Tool poisoning in what the navigation entry said (name, title, description): as for listings.
        report, poisoning = poisoning_admission([descriptor], report, strict=self.options.profile == "strict")
        if report.rejected or not isinstance(name, str):
            (rejection,) = report.rejected
            self.audit({"event": "admit", "tool": rejection["tool"], "outcome": rejection["category"]})
            raise AdmissionError(cast(Any, rejection["category"]), rejection["reason"])
        found = poisoning.get(name, ())
        tool = self._admitted(name, report.admitted[name], "disclosure", schema_sha256, found)
        if known_headers is not None and not _same_header_map(known_headers, tool.descriptor):
            self.audit({"event": "admit", "tool": name, "outcome": "header_map_mismatch"})
            raise AdmissionError(
                "header_map_mismatch",
                "the known header map differs from the schema's x-mcp-header annotations",
            )
        key = (name, schema_sha256)
        self._disclosed[key] = tool
        self._disclosed.move_to_end(key)
        while len(self._disclosed) > self._max_disclosed:
            self._disclosed.popitem(last=False)
        event: AuditEvent = {"event": "admit", "tool": name, "outcome": "ok"}
        if tool.findings:
            event["findings"] = [{"rule": f.rule, "category": f.category} for f in tool.findings]
        self.audit(event)
        return tool

    def _admitted(
        self,
        name: str,
        descriptor: Mapping[str, Any],
        origin: ToolOrigin,
        digest: str | None,
        extra_findings: tuple[Finding, ...] = (),
    ) -> AdmittedTool:
        private = _private_copy(descriptor)  # a caller mutating its dict cannot change the contract
        annotations = header_annotations(private.get("inputSchema"), placement="spec")
        mapping = {".".join(annotation.path): annotation.header for annotation in annotations}
        findings = _admit_findings(annotations) + extra_findings
        return AdmittedTool(name, private, mapping, origin, digest, annotations, findings)

    @property
    def listed(self) -> Mapping[str, AdmittedTool]:
        """Tools admitted from the last ``tools/list`` discovery, by name, in server order."""
        return dict(self._listed)

    def listed_tool(self, name: Any) -> AdmittedTool:
        """The listed tool called ``name``, or ``AdmissionError('not_admitted')`` (audited)."""
        label = name if isinstance(name, str) else None  # never echo a non-string name
        tool = self._listed.get(label) if label is not None else None
        if tool is None:
            drift = self._drift_rejection(label)
            if drift is not None:  # say why: the contract changed since it was approved
                self.audit({"event": "call", "tool": label, "outcome": "contract_drift"})
                raise AdmissionError("contract_drift", f"tool {label!r}: {drift}")
            self.audit({"event": "call", "tool": label, "outcome": "not_admitted"})
            hint = (
                # FastMCP's search transforms list this tool in place of the ones they hide.
                "; this server lists 'search_tools': a tool behind search is called through "
                "SchemaDisclosureConsumer (discover, disclose, call)"
                if SEARCH_TOOL in self._listed
                else ""
            )
            raise AdmissionError("not_admitted", f"tool {label!r} was not admitted by discovery{hint}")
        return tool

    def _drift_rejection(self, name: str | None) -> str | None:
        return self._drifted.get(name) if name is not None else None

    def disclosed_tool(self, alias: str, schema_sha256: str) -> AdmittedTool | None:
        """The tool admitted from the disclosure ``(alias, schema_sha256)``, if still remembered."""
        return self._disclosed.get((alias, schema_sha256))

    def _holds(self, tool: AdmittedTool) -> bool:
        if tool.origin == "listing":
            return self._listed.get(tool.name) is tool
        return tool.schema_sha256 is not None and self._disclosed.get((tool.name, tool.schema_sha256)) is tool

    # -- Invoke ---------------------------------------------------------------------------------------
    def invoke(self, tool: AdmittedTool, arguments: Mapping[str, Any] | None) -> PreparedCall:
        """The Invoke gate for an admitted tool; refusals are audited and raised (typed, value-free)."""
        if not isinstance(tool, AdmittedTool) or not self._holds(tool):
            label = tool.name if isinstance(tool, AdmittedTool) else None
            self.audit({"event": "call", "tool": label, "outcome": "not_admitted"})
            raise AdmissionError("not_admitted", f"tool {label!r} is not admitted by this host")
        try:
            invocation = prepare_invocation(tool.descriptor, arguments, input_key=_gate_keys(tool).input)
            proxied = self._proxied_invocation(tool, invocation.arguments)
        except ContractError as refusal:
            self.refused(tool, refusal.category)
            raise
        headers = invocation.headers
        if proxied is not None:
            target, inner = proxied
            headers = {**headers, **inner.headers}
            invocation.event["headers"] = [*invocation.event["headers"], *inner.event["headers"]]
            invocation.event["base64_encoded"] = [
                *invocation.event["base64_encoded"],
                *inner.event["base64_encoded"],
            ]
            invocation.event["proxied_tool"] = target
        invocation.event["header_gates"] = self.header_gates  # the event is ours: fresh per call
        self.audit(invocation.event)
        call = PreparedCall(tool, invocation.arguments, headers, next(self._tickets))
        self._outstanding[call.ticket] = call
        if len(self._outstanding) > MAX_OUTSTANDING_CALLS:
            self._outstanding.popitem(last=False)
        return call

    def _proxied_invocation(
        self, tool: AdmittedTool, arguments: Mapping[str, Any]
    ) -> tuple[str, Invocation] | None:
        """A call through a search transform's proxy (``call_tool {name, arguments}`` beside
        ``search_tools``) of a tool this host admitted: the inner call crosses the same Invoke gate
        (arguments against the inner schema, its ``Mcp-Param-*`` headers built), so the proxied call
        carries the inner tool's headers too and intermediaries can route it. The server does not need
        them (``call_tool`` annotates nothing) but checks each one sent. ``None`` for any other call,
        and for an inner tool this host has not admitted (then no header is sent, as the spec asks)."""
        if tool.name != SEARCH_PROXY_TOOL or SEARCH_TOOL not in self._listed:
            return None
        target, inner = arguments.get("name"), arguments.get("arguments")
        if not isinstance(target, str) or not isinstance(inner, Mapping | None):
            return None
        known = self._admitted_by_name(target)
        if known is None:
            return None
        return target, prepare_invocation(known.descriptor, inner, input_key=_gate_keys(known).input)

    def _admitted_by_name(self, name: str) -> AdmittedTool | None:
        """The listed tool ``name``, else the most recently disclosed one (a bounded scan)."""
        listed = self._listed.get(name)
        if listed is not None:
            return listed
        for (alias, _), tool in reversed(self._disclosed.items()):
            if alias == name:
                return tool
        return None

    # -- Consume --------------------------------------------------------------------------------------
    def consume(self, call: PreparedCall, raw: Any) -> ToolResult:
        """The Consume gate: ``raw`` must honour the admitted tool's contract.

        Spec rules reject (``ContractViolation``, carrying the server's text); project rules follow the
        session's profile: findings on the :class:`ToolResult` and in the audit event (``default``), or
        rejections (``strict``).

        ``call`` must be one this core prepared and has not consumed yet (``not_admitted`` otherwise).
        """
        if not isinstance(call, PreparedCall) or self._outstanding.get(call.ticket) is not call:
            raise AdmissionError("not_admitted", "this call was not prepared by this host")
        del self._outstanding[call.ticket]
        try:
            findings = validate_tool_result(
                call.tool.descriptor,
                raw,
                profile=self.options.profile,
                output_key=_gate_keys(call.tool).output,
            )
        except ContractError as violation:
            self.refused(call.tool, violation.category)
            raise
        result = ToolResult(cast(dict[str, Any], raw), findings)
        event: AuditEvent = {
            "event": "call",
            "tool": call.tool.name,
            "outcome": "tool_error" if result.is_error else "ok",
        }
        if findings:
            event["findings"] = [{"rule": f.rule, "category": f.category} for f in findings]
        self.audit(event)
        return result

    # -- audit helpers -----------------------------------------------------------------------------
    def refused(
        self, tool: AdmittedTool, outcome: str, call: PreparedCall | None = None, **extra: Any
    ) -> None:
        """Record a call that ended before a result (a refusal or a failed exchange)."""
        if call is not None and self._outstanding.get(call.ticket) is call:
            del self._outstanding[call.ticket]
        self.audit({"event": "call", "tool": tool.name, "outcome": outcome, **extra})


def _admit_findings(annotations: Sequence[HeaderAnnotation]) -> tuple[Finding, ...]:
    """Project rules an admitted descriptor breaks (only reachable in the ``default`` profile: the
    ``strict`` one rejected it at Admit). ``header-placement``: an annotation below the root properties."""
    nested = [annotation for annotation in annotations if len(annotation.path) > 1]
    return tuple(
        Finding(
            rule="header-placement",
            category="invalid_header_annotation",
            # Said as what it is: valid per the spec, refused by this project's stricter rule.
            message=(
                f"{X_MCP_HEADER_KEY} on a nested property: the spec allows it since 2026-06-17; this "
                "project's rule keeps annotations on root properties (earlier clients drop such a tool)"
            ),
            path=f"/inputSchema{annotation.pointer}",
        )
        for annotation in nested
    )


def _argument_keys(path: tuple[str, ...]) -> set[str]:
    """The spellings a header map may use for one annotated argument: its ``properties`` path joined
    with ``.`` (ours), or as a JSON pointer into the arguments (``/target/zone``)."""
    return {".".join(path), json_pointer(path)}


def _same_header_map(known: Mapping[str, str], descriptor: Mapping[str, Any]) -> bool:
    """Whether ``known`` names exactly the annotations of ``descriptor``'s schema, each once; header
    names compare case-insensitively, as HTTP field names do."""
    if not isinstance(known, Mapping):
        return False
    annotations = header_annotations(descriptor.get("inputSchema"), placement="spec")
    argument_of = {key: annotation for annotation in annotations for key in _argument_keys(annotation.path)}
    matched: set[tuple[str, ...]] = set()
    for key, header in known.items():
        annotation = argument_of.get(key) if isinstance(key, str) else None
        if annotation is None or annotation.path in matched or not isinstance(header, str):
            return False
        if header.lower() != annotation.header.lower():
            return False
        matched.add(annotation.path)
    return len(matched) == len(annotations)
