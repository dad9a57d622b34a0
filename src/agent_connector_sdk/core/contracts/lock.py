"""Admit: the contract lock — the tool contracts a person approved, per server, and drift against them.

A lock file holds, per server and per tool (both sorted, so a reviewed file diffs cleanly), the
approved **contract** itself (the normalized :func:`~._fingerprint.contract_view`, without the name)
and its :mod:`._fingerprint` digests. ``agent-connector review URL --write-lock FILE`` writes one;
``review URL --lock FILE`` and ``HostOptions(lock=...)`` compare a server's current tools with it:

* ``unchanged`` — same contract under the same name;
* ``changed`` — same name, different contract; ``fields`` names the top-level fields that changed and
  ``changes`` says what changed, where (a JSON pointer), from what to what, and what kind of change
  it is (:mod:`._contract_diff`: escalation, breaking, compatible, narrowing or cosmetic);
* ``added`` — a name the lock does not know (an escalation: a capability nobody approved);
* ``removed`` — a locked name the server no longer offers (breaking);
* ``renamed`` — a new name whose contract, with the name and a title that only spells the name set
  aside, equals a removed one's, or (``changes`` not empty: "renamed with changes") is close to it.
  ``previous`` is the old name. A rename, or a new tool, whose name looks like another name
  (:mod:`._confusables`) is an escalation; ``confusable_of`` names the look-alike.

Reordering is never drift: neither the order of tools, nor of object keys, nor of ``required``/``type``
arrays (see :mod:`._fingerprint`). At runtime a tool whose status is not ``unchanged`` is refused at
Admit with category ``contract_drift`` until it is re-approved (a new lock, or ``review --approve``).
Fail closed: a lock with no entry for the server refuses every tool.

The file is JSON of the :class:`ContractLock` model (``schemas/contract-lock.schema.json``)::

    {"lock_version": 2, "encoding": "agent-connector-canonical-json-1",
     "servers": [{"server": URL, "tools": [{"name", "sha256", "contract_sha256", "fields": {...},
                                            "contract": {...}, "approved_diff": null}]}]}

Format 1 (digests only, fingerprint version 1) is still read: its entries are compared by digest, so
drift is found and the changed fields named, but not what changed; re-write the lock to see diffs.
Whatever is written is format 2. A stored contract must hash to its stored digests, or the file is
refused: a reviewer is never shown old values the approval did not cover.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StringConstraints,
    ValidationError,
    model_validator,
)

from agent_connector_sdk.core.contracts._admission import AdmissionReport
from agent_connector_sdk.core.contracts._contract_diff import (
    ContractChange,
    Severity,
    diff_contracts,
    most_severe,
    name_derived_title,
)
from agent_connector_sdk.core.contracts._fingerprint import (
    CONTRACT_FIELDS,
    CONTRACT_FIELDS_V1,
    ENCODING,
    ContractField,
    ContractFingerprint,
    contract_view,
    equivalent_view,
    fingerprint,
    fingerprint_view,
)
from agent_connector_sdk.core.contracts.errors import AdmissionError, ContractError
from agent_connector_sdk.sanitize import sanitize_json

__all__ = [
    "LOCK_VERSION",
    "ContractLock",
    "DriftStatus",
    "LockFileError",
    "LockedServer",
    "LockedTool",
    "ToolDrift",
    "compare_tools",
    "diff_digest",
    "lock_admission",
]

LOCK_VERSION: Literal[2] = 2
"""The format written; format 1 (digests only) is still read."""
DriftStatus = Literal["unchanged", "changed", "added", "removed", "renamed"]

_Sha256Hex = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$", strict=True)]
_MAX_NAME: Final = 128
_ToolName = Annotated[str, StringConstraints(min_length=1, max_length=_MAX_NAME, strict=True)]
_ServerKey = Annotated[str, StringConstraints(min_length=1, max_length=2048, strict=True)]
_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True)


class LockFileError(ContractError, ValueError):
    """Admit: a lock file is not JSON of the :class:`ContractLock` shape (category ``malformed_lock``).

    The message names the failing locations, never a value."""

    gate = "admit"
    category: Literal["malformed_lock"]

    def __init__(self, category: Literal["malformed_lock"], message: str) -> None:
        super().__init__(category, message)


class LockedTool(BaseModel):
    """One approved tool contract: its name, the contract (format 2) and its :mod:`._fingerprint`
    digests."""

    model_config = _FROZEN
    name: _ToolName
    sha256: _Sha256Hex = Field(description="the whole contract")
    contract_sha256: _Sha256Hex = Field(description="the contract without the name (finds renames)")
    fields: dict[ContractField, _Sha256Hex] = Field(description="one digest per contract field present")
    contract: dict[str, Any] | None = Field(
        default=None,
        description=(
            "the approved contract without its name: the normalized descriptor fields a host acts on "
            "(format 2; absent in entries of format 1, which hold digests only)"
        ),
    )
    approved_diff: _Sha256Hex | None = Field(
        default=None, description="sha256 of the drift a person approved into this entry (review --approve)"
    )

    @model_validator(mode="after")
    def _contract_matches_its_digests(self) -> LockedTool:
        if self.contract is None:
            return self
        if "name" in self.contract:
            raise ValueError("contract holds no name (the entry's name is it)")
        try:
            found = fingerprint_view({"name": self.name, **self.contract})
        except ContractError:
            raise ValueError("contract cannot be fingerprinted") from None
        if (found.sha256, found.contract_sha256, dict(found.fields)) != (
            self.sha256,
            self.contract_sha256,
            self.fields,
        ):
            raise ValueError("contract does not match its digests")
        return self

    @classmethod
    def of(
        cls,
        contract: ContractFingerprint,
        view: Mapping[str, Any] | None = None,
        approved_diff: str | None = None,
    ) -> LockedTool:
        """The entry approving ``contract``; with its ``view`` (:func:`contract_view`), format 2.
        Built without re-validation: the digests were just computed from this very view (reading a
        file validates everything, including that each contract hashes to its digests)."""
        return cls.model_construct(
            name=contract.name,
            sha256=contract.sha256,
            contract_sha256=contract.contract_sha256,
            fields={field: contract.fields[field] for field in CONTRACT_FIELDS if field in contract.fields},
            contract=None if view is None else {k: v for k, v in view.items() if k != "name"},
            approved_diff=approved_diff,
        )

    def view(self) -> dict[str, Any] | None:
        """The approved :func:`contract_view` with its name (``None``: a format 1 entry)."""
        return None if self.contract is None else {"name": self.name, **self.contract}


class LockedServer(BaseModel):
    """The approved tools of one server (``server``: the URL or stdio command line reviewed)."""

    model_config = _FROZEN
    server: _ServerKey
    tools: list[LockedTool]
    _by_name: dict[str, LockedTool] = PrivateAttr(default_factory=dict)
    _digest: bytes | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _sorted_and_unique(self) -> LockedServer:
        names = [tool.name for tool in self.tools]
        if names != sorted(set(names)):
            raise ValueError("tools must be sorted by name, each name once")
        self._by_name = {tool.name: tool for tool in self.tools}  # O(1) per tool at Admit
        return self

    def locked(self, name: str) -> LockedTool | None:
        return self._by_name.get(name)

    def digest(self) -> bytes:
        """SHA-256 of this entry's JSON, computed once (the entry is frozen): what a memo keys it by."""
        if self._digest is None:
            self._digest = hashlib.sha256(self.model_dump_json().encode()).digest()
        return self._digest

    def check(self, descriptor: Mapping[str, Any]) -> ToolDrift:
        """The drift of one current descriptor against this lock (``added`` when its name is unknown:
        a rename is only recognisable over a whole listing, see :func:`compare_tools`). Digests only:
        ``changes`` is empty (O(1) per tool, for Admit)."""
        current = _Current.of(descriptor)
        return _against(self._by_name.get(current.name), current, detail=False)


class ContractLock(BaseModel):
    """A lock file: approved tool contracts per server (sorted by server)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, title="ContractLock")
    lock_version: Literal[1, 2] = Field(
        default=LOCK_VERSION, description="2 (written now); 1: digests only, still read"
    )
    encoding: Literal["agent-connector-canonical-json-1"] = ENCODING
    servers: list[LockedServer] = Field(default_factory=list)

    @model_validator(mode="after")
    def _sorted_and_unique(self) -> ContractLock:
        keys = [server.server for server in self.servers]
        if keys != sorted(set(keys)):
            raise ValueError("servers must be sorted by key, each once")
        if self.lock_version == 1 and any(
            tool.contract is not None or tool.approved_diff is not None
            for server in self.servers
            for tool in server.tools
        ):
            raise ValueError("a lock of format 1 holds digests only")
        return self

    @property
    def digest_only(self) -> bool:
        """Whether any entry holds digests only (format 1): its drift cannot say what changed."""
        return any(tool.contract is None for server in self.servers for tool in server.tools)

    # -- reading and writing ---------------------------------------------------------------------
    @classmethod
    def from_json(cls, text: str | bytes) -> ContractLock:
        """Parse a lock file; :class:`LockFileError` on anything but the documented shape."""
        try:
            raw = json.loads(text)
        except (ValueError, UnicodeDecodeError):
            raise LockFileError("malformed_lock", "the lock file is not JSON") from None
        except RecursionError:  # nesting no contract can have (see .fingerprint): refused, not a crash
            raise LockFileError("malformed_lock", "the lock file nests too deeply") from None
        try:
            return cls.model_validate(raw)
        except ValidationError as error:
            where = sorted({"/".join(str(part) for part in item["loc"]) or "/" for item in error.errors()})
            raise LockFileError("malformed_lock", f"invalid lock file at {', '.join(where)}") from None

    def to_json(self) -> str:
        """The file text, always of format 2 (entries read from format 1 keep their digests).

        Locks are read in diffs and terminals, so the file holds no raw control or bidi character: JSON
        escapes C0 controls itself and :func:`~agent_connector_sdk.sanitize.sanitize_json` writes DEL,
        C1, bidi controls and U+2028/U+2029 as ``\\uXXXX``. An escape decodes to the same character, so
        the stored contract is exactly the one approved and still hashes to its digests."""
        text = self.model_copy(update={"lock_version": LOCK_VERSION}).model_dump_json(indent=2)
        return sanitize_json(text) + "\n"

    # -- building --------------------------------------------------------------------------------
    def with_server(self, server: str, descriptors: Iterable[Mapping[str, Any]]) -> ContractLock:
        """A copy whose entry for ``server`` approves exactly ``descriptors`` (replacing any earlier
        entry). A name that occurs more than once is left out: no one contract can be approved for it;
        so is a descriptor that cannot be fingerprinted (a non-finite number, a lone surrogate, no
        name): that tool's problem, never the server's — it is not approved, and the rest are."""
        contracts, refused = _currents(descriptors)
        counts = Counter([*(contract.name for contract in contracts), *refused])
        tools = sorted(
            (LockedTool.of(c.digests, c.view) for c in contracts if counts[c.name] == 1),
            key=lambda tool: tool.name,
        )
        return self._replaced(LockedServer(server=server, tools=tools))

    def _replaced(self, entry: LockedServer) -> ContractLock:
        servers = {existing.server: existing for existing in self.servers}
        servers[entry.server] = entry
        return ContractLock(servers=[servers[key] for key in sorted(servers)])

    def with_approvals(
        self, server: str, descriptors: Iterable[Mapping[str, Any]], approved: Iterable[ToolDrift]
    ) -> ContractLock:
        """A copy whose entry for ``server`` takes only the ``approved`` drifts (each from
        :func:`compare_tools` over these ``descriptors`` against this lock): a changed or added tool's
        entry becomes its current contract, recording the drift's :attr:`~ToolDrift.diff_sha256`; a
        removed tool's entry goes; a renamed tool's old entry goes and its new one comes. Every other
        entry stays as it was. The caller checks that each drift is one a person approved. A drift with
        no one current contract (a duplicated or unfingerprintable name) cannot be approved: its entry
        is left as it was."""
        fingerprinted, _ = _currents(descriptors)
        currents = {c.name: c for c in fingerprinted}
        entry = self.server(server)
        tools = {tool.name: tool for tool in (entry.tools if entry is not None else [])}
        for drift in approved:
            if drift.previous is not None:
                tools.pop(drift.previous, None)
            if drift.status == "removed":
                tools.pop(drift.tool, None)
                continue
            current = currents.get(drift.tool)
            if current is None or (
                drift.status == "changed" and drift.fields in (("name",), ("unfingerprintable",))
            ):
                continue
            tools[drift.tool] = LockedTool.of(current.digests, current.view, drift.diff_sha256)
        key = entry.server if entry is not None else server
        return self._replaced(LockedServer(server=key, tools=[tools[name] for name in sorted(tools)]))

    # -- looking up ------------------------------------------------------------------------------
    def server(self, key: str) -> LockedServer | None:
        """The entry for ``key``; a lock holding exactly one server applies to any key (the caller
        chose this lock for this connection). ``None`` when there is no such entry."""
        if len(self.servers) == 1:
            return self.servers[0]
        return next((entry for entry in self.servers if entry.server == key), None)


@dataclass(frozen=True, slots=True)
class ToolDrift:
    """One tool's status against a lock.

    ``fields`` (``changed``, ``renamed``) names the top-level contract fields that differ; ``changes``
    says what changed at which pointer (empty for ``added``/``removed``, for a lock entry of format 1
    — ``digest_only`` — and at runtime, where only the status counts). ``severity`` is the most
    severe class (``None``: unknown, a format 1 entry; ``unchanged`` tools have none). ``previous``
    (``renamed``) is the locked name; ``confusable_of`` a name this one looks like. ``diff_sha256``
    identifies this drift (the approved and the current contract digests and both names): approving
    records it, and any other change has another."""

    tool: str
    status: DriftStatus
    fields: tuple[str, ...] = ()
    previous: str | None = None
    changes: tuple[ContractChange, ...] = ()
    severity: Severity | None = None
    confusable_of: str | None = None
    digest_only: bool = False
    diff_sha256: str | None = None

    @property
    def drifted(self) -> bool:
        return self.status != "unchanged"

    def reason(self) -> str:
        """A value-free sentence for a refusal or a report line."""
        if self.fields == ("unfingerprintable",):
            return (
                "the contract cannot be fingerprinted (it holds a value no JSON text carries, "
                "or nests deeper than 200)"
            )
        if self.status == "changed":
            return f"the contract changed since it was approved: {', '.join(self.fields)}"
        if self.status == "added":
            return "the tool is not in the contract lock"
        if self.status == "renamed":
            return f"the approved contract of {self.previous!r} is offered under a new name"
        if self.status == "removed":
            return "the approved tool is no longer offered"
        return "unchanged"


def diff_digest(tool: str, previous: str | None, locked: str | None, current: str | None) -> str:
    """The identity of one drift: SHA-256 over the canonical JSON of the tool's name, the locked name
    (renames), the locked and the current contract digests (``None`` where there is none)."""
    body = {"current": current, "locked": locked, "previous": previous, "tool": tool}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _currents(descriptors: Iterable[Mapping[str, Any]]) -> tuple[list[_Current], list[str]]:
    """The descriptors that can be fingerprinted, and the names of those that cannot (each its own
    tool's problem; a descriptor without a name is no tool and is dropped). A name in both lists
    occurs more than once."""
    currents: list[_Current] = []
    refused: list[str] = []
    for descriptor in descriptors:
        try:
            currents.append(_Current.of(descriptor))
        except AdmissionError:
            name = descriptor.get("name") if isinstance(descriptor, Mapping) else None
            if isinstance(name, str) and name:
                refused.append(name)
    return currents, refused


@dataclass(slots=True)
class _Current:
    """One current descriptor: its contract view and digests (format 2), and lazily those of format 1."""

    descriptor: Mapping[str, Any]
    view: dict[str, Any]
    digests: ContractFingerprint
    _v1: ContractFingerprint | None = None

    @classmethod
    def of(cls, descriptor: Mapping[str, Any]) -> _Current:
        name = descriptor.get("name") if isinstance(descriptor, Mapping) else None
        if not isinstance(name, str) or not name:
            raise AdmissionError("malformed", "name must be a non-empty string")
        if len(name) > _MAX_NAME:  # a lock entry cannot hold it (the spec's bound): not approvable
            raise AdmissionError("malformed", f"name longer than {_MAX_NAME} characters")
        view = contract_view(descriptor)
        return cls(descriptor, view, fingerprint_view(view))

    @property
    def name(self) -> str:
        return self.digests.name

    def v1(self) -> ContractFingerprint:
        if self._v1 is None:
            self._v1 = fingerprint(self.descriptor, 1)
        return self._v1


def _set_aside(view: Mapping[str, Any], title: bool) -> dict[str, Any]:
    """A view without its name (and, with ``title``, without its title): what a rename keeps."""
    return {
        field: value for field, value in view.items() if field != "name" and not (title and field == "title")
    }


def _derived_title(view: Mapping[str, Any]) -> bool:
    """Whether the view's title only spells its name (or there is no title)."""
    name = view.get("name")
    return "title" not in view or (isinstance(name, str) and name_derived_title(view["title"], name))


def _untitled_key(view: Mapping[str, Any]) -> str:
    return fingerprint_view({"name": "-", **_set_aside(view, title=True)}).contract_sha256


class _RenameIndex:
    """The removed entries by what a rename keeps, so each added tool finds its old name in O(1): a
    rename without changes has equal contracts without the names, or equal ones without the titles
    too when each title only spells its tool's name (FastMCP: ``Cancel Order``). Format 1 entries
    match on their version 1 digests. Ties go to the first name in sorted order."""

    def __init__(self, removed: Mapping[str, LockedTool]) -> None:
        self.removed = removed
        self.by_contract: dict[str, list[str]] = {}
        self.by_contract_v1: dict[str, list[str]] = {}
        self.by_untitled: dict[str, list[str]] = {}
        for name in sorted(removed):
            entry = removed[name]
            view = entry.view()
            if view is None:
                self.by_contract_v1.setdefault(entry.contract_sha256, []).append(name)
                continue
            self.by_contract.setdefault(entry.contract_sha256, []).append(name)
            if _derived_title(view):
                self.by_untitled.setdefault(_untitled_key(view), []).append(name)

    def take(self, current: _Current) -> str | None:
        """The removed name ``current`` renames (still in ``removed``), or ``None``."""
        candidates = list(self.by_contract.get(current.digests.contract_sha256, ()))
        if _derived_title(current.view):
            candidates += self.by_untitled.get(_untitled_key(current.view), ())
        if self.by_contract_v1:
            candidates += self.by_contract_v1.get(current.v1().contract_sha256, ())
        return min((name for name in candidates if name in self.removed), default=None)


def _diff(
    old_view: Mapping[str, Any],
    new_view: Mapping[str, Any],
    other_names: Sequence[str],
    fields: Sequence[str],
) -> tuple[ContractChange, ...]:
    """:func:`diff_contracts`, or — for contracts nested deeper than the interpreter can walk (a hostile
    schema; the fingerprint's own bound is deeper) — one change per changed field, without values,
    classed as an escalation: the drift stays visible and fails closed."""
    try:
        return diff_contracts(old_view, new_view, other_names=other_names)
    except RecursionError:
        reason = "nested too deeply to compare location by location (values not shown)"
        return tuple(
            ContractChange(f"/{field}", "changed", None, None, "escalation", reason) for field in fields
        )


def _against(
    locked: LockedTool | None, current: _Current, *, detail: bool, other_names: Sequence[str] = ()
) -> ToolDrift:
    if locked is None:
        digest = diff_digest(current.name, None, None, current.digests.sha256)
        return ToolDrift(current.name, "added", severity="escalation", diff_sha256=digest)
    old_view = locked.view()
    if old_view is None:  # format 1: digests of fingerprint version 1
        digests = current.v1()
        if locked.sha256 == digests.sha256:
            return ToolDrift(current.name, "unchanged")
        changed = tuple(
            field for field in CONTRACT_FIELDS_V1 if locked.fields.get(field) != digests.fields.get(field)
        )
        digest = diff_digest(current.name, None, locked.sha256, current.digests.sha256)
        return ToolDrift(current.name, "changed", changed, digest_only=True, diff_sha256=digest)
    if locked.sha256 == current.digests.sha256:
        return ToolDrift(current.name, "unchanged")
    # A contract stored before a normalization existed (1.0 for 1, a $ref for its definition) is read
    # as it would be written now: what provably means the same is not drift.
    # (``==`` would hold 1.0 and 1 equal: the digests say whether the rewriting changed anything.)
    rewritten = equivalent_view(old_view)
    rewritten_sha256 = fingerprint_view(rewritten).sha256
    if rewritten_sha256 == current.digests.sha256:
        return ToolDrift(current.name, "unchanged")
    if rewritten_sha256 != locked.sha256:
        old_view = rewritten
    changed = tuple(
        field for field in CONTRACT_FIELDS if locked.fields.get(field) != current.digests.fields.get(field)
    )
    digest = diff_digest(current.name, None, locked.sha256, current.digests.sha256)
    if not detail:
        return ToolDrift(current.name, "changed", changed, diff_sha256=digest)
    changes = _diff(old_view, current.view, other_names, changed)
    severity = most_severe(change.severity for change in changes) or "compatible"
    return ToolDrift(current.name, "changed", changed, changes=changes, severity=severity, diff_sha256=digest)


_SIMILAR: Final = 0.8
"""Leaf overlap (Jaccard) from which an added and a removed tool are one tool "renamed with changes"."""
_SIMILAR_ANY_NAME: Final = 0.95
_SIMILAR_LOOK_ALIKE: Final = 0.5
"""Above this overlap the names need not resemble each other at all."""
_MAX_PAIRS: Final = 4096
"""Similar renames are searched only when added × removed stays below this (bounded cost)."""
_MAX_LEAVES: Final = 20_000


def _leaves(value: Any, path: str, out: set[str]) -> None:
    if len(out) > _MAX_LEAVES:
        return
    if isinstance(value, dict) and value:
        for key, child in value.items():
            _leaves(child, f"{path}/{key}", out)
    elif isinstance(value, list) and value:
        for index, child in enumerate(value):
            _leaves(child, f"{path}/{index}", out)
    else:
        out.add(path + "=" + json.dumps(value, sort_keys=True, ensure_ascii=False))


def _leaf_set(view: Mapping[str, Any]) -> frozenset[str]:
    out: set[str] = set()
    _leaves(_set_aside(view, title=True), "", out)  # titles follow names too often to weigh
    return frozenset(out)


def _paired(score: float, old_name: str, new_name: str) -> bool:
    """Whether contracts sharing ``score`` of their leaves, under these names, are one tool renamed:
    close contracts under resembling names, near-equal ones under any, and a look-alike name (the
    rename an attacker makes) with half the contract kept."""
    if score >= _SIMILAR_ANY_NAME:
        return True
    if score < _SIMILAR_LOOK_ALIKE:
        return False
    from agent_connector_sdk.core.contracts._confusables import skeleton

    if skeleton(old_name) == skeleton(new_name):
        return True
    return score >= _SIMILAR and difflib.SequenceMatcher(None, old_name, new_name).ratio() >= 0.5


def _similar_renames(
    added: Sequence[_Current], removed: Mapping[str, LockedTool]
) -> list[tuple[_Current, LockedTool]]:
    """Pairs (best overlap first, one to one) of an added and a removed tool whose contracts share at
    least :data:`_SIMILAR` of their leaves (and whose names resemble each other, below
    :data:`_SIMILAR_ANY_NAME`)."""
    candidates = {name: tool for name, tool in removed.items() if tool.contract is not None}
    if not added or not candidates or len(added) * len(candidates) > _MAX_PAIRS:
        return []
    old_leaves = {name: _leaf_set(tool.view() or {}) for name, tool in candidates.items()}
    scored: list[tuple[float, str, str]] = []
    for current in added:
        new = _leaf_set(current.view)
        for name, old in old_leaves.items():
            union = len(old | new)
            score = len(old & new) / union if union else 1.0
            if _paired(score, name, current.name):
                scored.append((-score, current.name, name))
    pairs: list[tuple[_Current, LockedTool]] = []
    taken_new: set[str] = set()
    taken_old: set[str] = set()
    by_name = {current.name: current for current in added}
    for _, new_name, old_name in sorted(scored):
        if new_name in taken_new or old_name in taken_old:
            continue
        taken_new.add(new_name)
        taken_old.add(old_name)
        pairs.append((by_name[new_name], candidates[old_name]))
    return pairs


def _renamed(current: _Current, locked: LockedTool, detail: bool, other_names: Sequence[str]) -> ToolDrift:
    old_view = locked.view()
    fields: tuple[str, ...] = ("name",)
    changes: tuple[ContractChange, ...] = ()
    if old_view is not None:
        fields += tuple(
            field
            for field in CONTRACT_FIELDS
            if field not in ("name", "title")
            and locked.fields.get(field) != current.digests.fields.get(field)
        )
        if detail:
            titles = _derived_title(old_view) and _derived_title(current.view)
            aside_old, aside_new = _set_aside(old_view, titles), _set_aside(current.view, titles)
            changes = _diff(aside_old, aside_new, other_names, fields[1:])
    severity = most_severe(["breaking", *(change.severity for change in changes)])
    digest = diff_digest(current.name, locked.name, locked.sha256, current.digests.sha256)
    return ToolDrift(
        current.name,
        "renamed",
        fields,
        locked.name,
        changes=changes,
        severity=severity,
        digest_only=old_view is None,
        diff_sha256=digest,
    )


def compare_tools(
    locked: LockedServer | None, descriptors: Iterable[Mapping[str, Any]], *, detail: bool = True
) -> list[ToolDrift]:
    """Every current and every locked tool with its status, sorted by tool name (the stable entry
    point of drift: the review, the host and the gateway call it).

    ``locked=None`` (no entry for the server) makes every tool ``added``. A name the server lists more
    than once is ``changed`` with field ``name`` (no one contract is offered under it). Renames pair an
    added tool with a removed one, one to one: first equal contracts with the name and a name-derived
    title set aside (in name order), then — with ``detail`` — similar ones ("renamed with changes").
    ``detail=False`` (Admit at runtime) computes statuses only: no per-pointer changes, no similarity
    search, no look-alike check, O(1) per tool beyond the fingerprints.
    A named descriptor that cannot be fingerprinted (a non-finite number, a lone surrogate) is that
    tool's drift alone: ``changed`` with field ``unfingerprintable`` (it can never match an approval);
    one without a name is no tool and is left out.
    """
    currents, refused = _currents(descriptors)
    counts = Counter([*(current.name for current in currents), *refused])
    entries = {tool.name: tool for tool in (locked.tools if locked is not None else [])}
    names = sorted(set(counts) | set(entries))
    results: dict[str, ToolDrift] = {}
    for name in refused:
        if counts[name] > 1:  # listed more than once: no one contract is offered under it
            digest = diff_digest(name, None, None, None)
            results[name] = ToolDrift(name, "changed", ("name",), severity="escalation", diff_sha256=digest)
            continue
        entry = entries.get(name)
        digest = diff_digest(name, None, entry.sha256 if entry is not None else None, None)
        results[name] = ToolDrift(
            name, "changed", ("unfingerprintable",), severity="breaking", diff_sha256=digest
        )
    added: list[_Current] = []
    for current in currents:
        if current.name in results:
            continue
        if counts[current.name] > 1:
            digest = diff_digest(current.name, None, None, None)
            results[current.name] = ToolDrift(
                current.name, "changed", ("name",), severity="escalation", diff_sha256=digest
            )
            continue
        entry = entries.get(current.name)
        if entry is None:
            added.append(current)
            continue
        others = [name for name in names if name != current.name] if detail else []
        results[current.name] = _against(entry, current, detail=detail, other_names=others)
    removed = {name: tool for name, tool in entries.items() if name not in counts}
    unmatched: list[_Current] = []
    index = _RenameIndex(removed) if added else None
    for current in sorted(added, key=lambda c: c.name):
        previous = index.take(current) if index is not None else None
        if previous is None:
            unmatched.append(current)
            continue
        others = [name for name in names if name not in (current.name, previous)] if detail else []
        results[current.name] = _renamed(current, removed.pop(previous), detail, others)
    if detail:
        try:
            similar = _similar_renames(unmatched, removed)
        except RecursionError:  # a contract nested past what Python can walk: equal contracts only
            similar = []
        for current, entry in similar:
            del removed[entry.name]
            unmatched.remove(current)
            others = [name for name in names if name not in (current.name, entry.name)]
            results[current.name] = _renamed(current, entry, detail, others)
    for current in unmatched:
        results[current.name] = _against(None, current, detail=detail)
    for name, entry in removed.items():
        digest = diff_digest(name, None, entry.sha256, None)
        results[name] = ToolDrift(name, "removed", severity="breaking", diff_sha256=digest)
    if detail:
        _mark_look_alikes(results, names)
    return [results[name] for name in sorted(results)]


def _mark_look_alikes(results: dict[str, ToolDrift], names: Sequence[str]) -> None:
    """A new or renamed tool whose name looks like its old name or another tool's: an escalation.
    Names are indexed by skeleton once, so this is linear in the listing (not one scan per new tool).
    ``names`` holds every current and locked name, so a renamed tool's old name is among them."""
    from agent_connector_sdk.core.contracts._confusables import skeleton

    fresh = [name for name, drift in results.items() if drift.status in ("added", "renamed")]
    if not fresh:
        return
    by_skeleton: dict[str, list[str]] = {}
    for name in sorted(set(names)):
        by_skeleton.setdefault(skeleton(name), []).append(name)
    for name in fresh:
        look_alike = next((other for other in by_skeleton.get(skeleton(name), ()) if other != name), None)
        if look_alike is not None:
            results[name] = replace(results[name], severity="escalation", confusable_of=look_alike)


def lock_admission(
    descriptors: Sequence[Any], report: AdmissionReport, locked: LockedServer | None
) -> AdmissionReport:
    """Admit only what the lock approved: every admitted tool whose status against ``locked`` is not
    ``unchanged`` moves to ``rejected`` with category ``contract_drift`` (the reason names the changed
    fields, or added/renamed; never a value). ``locked=None`` (the lock has no entry for this server)
    rejects every tool: fail closed. ``descriptors`` is the listing ``report`` was made from (for the
    rejection's index). Pure; O(listing), run once per discovery."""
    drift = {d.tool: d for d in compare_tools(locked, list(report.admitted.values()), detail=False)}
    admitted: dict[str, dict[str, Any]] = {}
    rejected = list(report.rejected)
    positions = {  # string names only: a hostile listing's name may be an unhashable list
        name: index
        for index, item in enumerate(descriptors)
        if isinstance(item, Mapping) and isinstance(name := item.get("name"), str)
    }
    for name, descriptor in report.admitted.items():
        verdict = drift.get(name)
        if verdict is None or not verdict.drifted:
            admitted[name] = descriptor
            continue
        rejected.append(
            {
                "tool": name,
                "index": positions.get(name, -1),
                "category": "contract_drift",
                "reason": verdict.reason(),
                "descriptor": descriptor,
            }
        )
    rejected.sort(key=lambda rejection: rejection["index"])
    return AdmissionReport(admitted=admitted, rejected=rejected)
