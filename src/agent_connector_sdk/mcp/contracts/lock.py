"""Admit: the contract lock — the tool contracts a person approved, per server, and drift against them.

A lock file holds, per server and per tool (both sorted, so a reviewed file diffs cleanly), the
:mod:`.fingerprint` digests of each approved tool contract — digests only, never a descriptor value.
``agent-connector review URL --write-lock FILE`` writes one; ``review URL --lock FILE`` and
``HostOptions(lock=...)`` compare a server's current tools with it:

* ``unchanged`` — same contract under the same name;
* ``changed`` — same name, different contract; ``fields`` names what changed (``description``,
  ``inputSchema``, ``headers``, ...);
* ``added`` — a name the lock does not know;
* ``removed`` — a locked name the server no longer offers;
* ``renamed`` — a new name whose contract (everything but the name) equals a removed one's;
  ``previous`` is the old name.

Reordering is never drift: neither the order of tools, nor of object keys, nor of ``required``/``type``
arrays (see :mod:`.fingerprint`). At runtime a tool whose status is not ``unchanged`` is refused at
Admit with category ``contract_drift`` until it is re-approved (a new lock). Fail closed: a lock with
no entry for the server refuses every tool.

The file is JSON of the :class:`ContractLock` model (``schemas/contract-lock.schema.json``)::

    {"lock_version": 1, "encoding": "agent-connector-canonical-json-1",
     "servers": [{"server": URL, "tools": [{"name", "sha256", "contract_sha256", "fields": {...}}]}]}
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StringConstraints,
    ValidationError,
    model_validator,
)

from agent_connector_sdk.mcp.contracts.admission import AdmissionReport
from agent_connector_sdk.mcp.contracts.errors import ContractError
from agent_connector_sdk.mcp.contracts.fingerprint import (
    CONTRACT_FIELDS,
    ENCODING,
    ContractField,
    ContractFingerprint,
    fingerprint,
)

__all__ = [
    "LOCK_VERSION",
    "ContractLock",
    "DriftStatus",
    "LockFileError",
    "LockedServer",
    "LockedTool",
    "ToolDrift",
    "compare_tools",
    "lock_admission",
]

LOCK_VERSION: Literal[1] = 1
DriftStatus = Literal["unchanged", "changed", "added", "removed", "renamed"]

_Sha256Hex = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$", strict=True)]
_ToolName = Annotated[str, StringConstraints(min_length=1, max_length=128, strict=True)]
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
    """One approved tool contract: its name and the :mod:`.fingerprint` digests."""

    model_config = _FROZEN
    name: _ToolName
    sha256: _Sha256Hex = Field(description="the whole contract")
    contract_sha256: _Sha256Hex = Field(description="the contract without the name (finds renames)")
    fields: dict[ContractField, _Sha256Hex] = Field(description="one digest per contract field present")

    @classmethod
    def of(cls, contract: ContractFingerprint) -> LockedTool:
        return cls(
            name=contract.name,
            sha256=contract.sha256,
            contract_sha256=contract.contract_sha256,
            fields={field: contract.fields[field] for field in CONTRACT_FIELDS if field in contract.fields},
        )


class LockedServer(BaseModel):
    """The approved tools of one server (``server``: the URL or stdio command line reviewed)."""

    model_config = _FROZEN
    server: _ServerKey
    tools: list[LockedTool]
    _by_name: dict[str, LockedTool] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _sorted_and_unique(self) -> LockedServer:
        names = [tool.name for tool in self.tools]
        if names != sorted(set(names)):
            raise ValueError("tools must be sorted by name, each name once")
        self._by_name = {tool.name: tool for tool in self.tools}  # O(1) per tool at Admit
        return self

    def locked(self, name: str) -> LockedTool | None:
        return self._by_name.get(name)

    def check(self, descriptor: Mapping[str, Any]) -> ToolDrift:
        """The drift of one current descriptor against this lock (``added`` when its name is unknown:
        a rename is only recognisable over a whole listing, see :func:`compare_tools`)."""
        current = fingerprint(descriptor)
        return _against(self._by_name.get(current.name), current)


class ContractLock(BaseModel):
    """A lock file: approved tool contracts per server (sorted by server)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, title="ContractLock")
    lock_version: Literal[1] = LOCK_VERSION
    encoding: Literal["agent-connector-canonical-json-1"] = ENCODING
    servers: list[LockedServer] = Field(default_factory=list)

    @model_validator(mode="after")
    def _sorted_and_unique(self) -> ContractLock:
        keys = [server.server for server in self.servers]
        if keys != sorted(set(keys)):
            raise ValueError("servers must be sorted by key, each once")
        return self

    # -- reading and writing ---------------------------------------------------------------------
    @classmethod
    def from_json(cls, text: str | bytes) -> ContractLock:
        """Parse a lock file; :class:`LockFileError` on anything but the documented shape."""
        try:
            raw = json.loads(text)
        except (ValueError, UnicodeDecodeError):
            raise LockFileError("malformed_lock", "the lock file is not JSON") from None
        try:
            return cls.model_validate(raw)
        except ValidationError as error:
            where = sorted({"/".join(str(part) for part in item["loc"]) or "/" for item in error.errors()})
            raise LockFileError("malformed_lock", f"invalid lock file at {', '.join(where)}") from None

    def to_json(self) -> str:
        return self.model_dump_json(indent=2) + "\n"

    # -- building --------------------------------------------------------------------------------
    def with_server(self, server: str, descriptors: Iterable[Mapping[str, Any]]) -> ContractLock:
        """A copy whose entry for ``server`` approves exactly ``descriptors`` (replacing any earlier
        entry). A name that occurs more than once is left out: no one contract can be approved for it.
        Raises :class:`~.errors.AdmissionError` (``malformed``) for a descriptor that cannot be
        fingerprinted."""
        contracts = [fingerprint(descriptor) for descriptor in descriptors]
        counts = Counter(contract.name for contract in contracts)
        tools = sorted(
            (LockedTool.of(contract) for contract in contracts if counts[contract.name] == 1),
            key=lambda tool: tool.name,
        )
        entry = LockedServer(server=server, tools=tools)
        servers = {existing.server: existing for existing in self.servers}
        servers[server] = entry
        return ContractLock(servers=[servers[key] for key in sorted(servers)])

    # -- looking up ------------------------------------------------------------------------------
    def server(self, key: str) -> LockedServer | None:
        """The entry for ``key``; a lock holding exactly one server applies to any key (the caller
        chose this lock for this connection). ``None`` when there is no such entry."""
        if len(self.servers) == 1:
            return self.servers[0]
        return next((entry for entry in self.servers if entry.server == key), None)


@dataclass(frozen=True, slots=True)
class ToolDrift:
    """One tool's status against a lock. ``fields`` (``changed``) names contract fields, never values;
    ``previous`` (``renamed``) is the locked name."""

    tool: str
    status: DriftStatus
    fields: tuple[str, ...] = ()
    previous: str | None = None

    @property
    def drifted(self) -> bool:
        return self.status != "unchanged"

    def reason(self) -> str:
        """A value-free sentence for a refusal or a report line."""
        if self.status == "changed":
            return f"the contract changed since it was approved: {', '.join(self.fields)}"
        if self.status == "added":
            return "the tool is not in the contract lock"
        if self.status == "renamed":
            return f"the approved contract of {self.previous!r} is offered under a new name"
        if self.status == "removed":
            return "the approved tool is no longer offered"
        return "unchanged"


def _against(locked: LockedTool | None, current: ContractFingerprint) -> ToolDrift:
    if locked is None:
        return ToolDrift(current.name, "added")
    if locked.sha256 == current.sha256:
        return ToolDrift(current.name, "unchanged")
    changed = tuple(
        field for field in CONTRACT_FIELDS if locked.fields.get(field) != current.fields.get(field)
    )
    return ToolDrift(current.name, "changed", changed)


def compare_tools(locked: LockedServer | None, descriptors: Iterable[Mapping[str, Any]]) -> list[ToolDrift]:
    """Every current and every locked tool with its status, sorted by tool name.

    ``locked=None`` (no entry for the server) makes every tool ``added``. A name the server lists more
    than once is ``changed`` with field ``name`` (no one contract is offered under it). Renames pair an
    added tool with a removed one of equal ``contract_sha256``, one to one, in name order.
    """
    contracts = [fingerprint(descriptor) for descriptor in descriptors]
    counts = Counter(contract.name for contract in contracts)
    entries = {tool.name: tool for tool in (locked.tools if locked is not None else [])}
    results: dict[str, ToolDrift] = {}
    added: list[ContractFingerprint] = []
    for contract in contracts:
        if contract.name in results:
            continue
        if counts[contract.name] > 1:
            results[contract.name] = ToolDrift(contract.name, "changed", ("name",))
            continue
        drift = _against(entries.get(contract.name), contract)
        if drift.status == "added":
            added.append(contract)
        else:
            results[contract.name] = drift
    removed = {name: tool for name, tool in entries.items() if name not in counts}
    for contract in sorted(added, key=lambda c: c.name):
        previous = next(
            (name for name in sorted(removed) if removed[name].contract_sha256 == contract.contract_sha256),
            None,
        )
        if previous is None:
            results[contract.name] = ToolDrift(contract.name, "added")
        else:
            del removed[previous]
            results[contract.name] = ToolDrift(contract.name, "renamed", ("name",), previous)
    for name in removed:
        results[name] = ToolDrift(name, "removed")
    return [results[name] for name in sorted(results)]


def lock_admission(
    descriptors: Sequence[Any], report: AdmissionReport, locked: LockedServer | None
) -> AdmissionReport:
    """Admit only what the lock approved: every admitted tool whose status against ``locked`` is not
    ``unchanged`` moves to ``rejected`` with category ``contract_drift`` (the reason names the changed
    fields, or added/renamed; never a value). ``locked=None`` (the lock has no entry for this server)
    rejects every tool: fail closed. ``descriptors`` is the listing ``report`` was made from (for the
    rejection's index). Pure; O(listing), run once per discovery."""
    drift = {d.tool: d for d in compare_tools(locked, list(report.admitted.values()))}
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
