"""The contract lock folded into the review report (pure: report and lock in, report out).

The lock itself (contracts, fingerprints, drift, classes) is
:mod:`agent_connector_sdk.core.contracts.lock`; this module compares the reviewed tools with it and
puts the comparison in the :class:`ReviewReport`, and says which approvals ``--approve`` takes into
the lock; reading and writing the file is the CLI's (:mod:`agent_connector_sdk.cli.lockfile`). Every
tool the review saw with a descriptor is locked and compared — listed, found through search (its
reconstructed descriptor), and rejected ones too (so a rejected tool that changes is still drift).
The server key is the reviewed address (URL, stdio command line or descriptor files).

``--approve TOOL`` (or ``TOOL@DIGEST``, a prefix of the drift's ``diff_sha256`` as the report shows
it) takes exactly that tool's current drift into the lock file and leaves every other entry as it
was; with a digest, the approval holds only if the drift is still the one the reviewer read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from agent_connector_sdk.core.contracts import REAPPROVAL, ContractChange, escaped
from agent_connector_sdk.core.contracts.errors import AdmissionError
from agent_connector_sdk.core.contracts.lock import ContractLock, ToolDrift, compare_tools
from agent_connector_sdk.review.errors import ReviewError
from agent_connector_sdk.review.report import (
    CalloutReport,
    ContractChangeReport,
    FailOn,
    LockCheck,
    ReviewReport,
    ToolDriftReport,
    WordEditReport,
)

__all__ = ["LockComparison", "compare_with_lock", "lock_lines", "locked_server"]

MAX_CHANGES: Final = 200
"""Changes listed per tool (the rest are counted): a rewritten schema should not drown the report."""
MAX_VALUE: Final = 2_000
"""Characters of one old or new value's JSON shown in the report; larger ones are summarized."""
_DIGEST_PREFIX: Final = re.compile(r"^[0-9a-f]{8,64}$")
FAILING: Final[dict[str, frozenset[str]]] = {
    "reapproval": frozenset(REAPPROVAL),
    "escalation_or_breaking": frozenset({"escalation", "breaking"}),
}
"""Per ``fail_on`` mode, the classes that are findings (``any``: every drift is)."""


def _descriptors(report: ReviewReport) -> list[dict[str, object]]:
    return [tool.descriptor for tool in report.tools if tool.descriptor is not None]


def locked_server(report: ReviewReport, lock: ContractLock) -> tuple[ContractLock, int]:
    """``lock`` approving every reviewed contract of this server (other servers kept as they are),
    and how many tools its entry now locks."""
    try:
        lock = lock.with_server(report.target.address, _descriptors(report))
    except AdmissionError as error:
        raise ReviewError(f"cannot lock this server: {error.message}") from None
    entry = lock.server(report.target.address)
    return lock, len(entry.tools) if entry is not None else 0


def _bounded(value: Any) -> tuple[Any, bool]:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if len(text) <= MAX_VALUE:
        return value, False
    kind = type(value).__name__.replace("dict", "object").replace("list", "array").replace("str", "string")
    return f"<{kind} of {len(text):,} characters of JSON>", True


def _change(change: ContractChange) -> ContractChangeReport:
    old, old_cut = _bounded(change.old)
    new, new_cut = _bounded(change.new)
    words = [WordEditReport(op=edit.op, text=edit.text) for edit in change.words]
    if old_cut or new_cut:
        words = []
    return ContractChangeReport(
        pointer=change.pointer,
        kind=change.kind,
        severity=change.severity,
        reason=change.reason,
        old=old,
        new=new,
        truncated=old_cut or new_cut,
        words=words,
        callouts=[CalloutReport(kind=callout.kind, text=callout.text) for callout in change.callouts],
    )


def _fails(drift: ToolDrift, fail_on: FailOn) -> bool:
    if not drift.drifted:
        return False
    return fail_on == "any" or drift.severity is None or drift.severity in FAILING[fail_on]


def _tool_report(drift: ToolDrift, *, approved: bool, fail_on: FailOn) -> ToolDriftReport:
    shown = escaped(drift.tool)
    return ToolDriftReport(
        tool=drift.tool,
        status=drift.status,
        fields=list(drift.fields),
        previous=drift.previous,
        severity=drift.severity,
        changes=[_change(change) for change in drift.changes[:MAX_CHANGES]],
        changes_omitted=max(0, len(drift.changes) - MAX_CHANGES),
        confusable_of=drift.confusable_of,
        escaped=shown if shown != drift.tool else None,
        digest_only=drift.digest_only,
        diff_sha256=drift.diff_sha256,
        approved=approved,
        fails=not approved and _fails(drift, fail_on),
    )


def _approvals(drift: Sequence[ToolDrift], approve: Sequence[str]) -> list[ToolDrift]:
    """The drifts ``approve`` names, each checked: a name that matches no drift, or whose drift is not
    the one its digest names, stops the run (exit 2) before anything is written."""
    by_name = {d.tool: d for d in drift}
    chosen: dict[str, ToolDrift] = {}
    for spec in approve:
        name, at, digest = spec.rpartition("@") if "@" in spec else (spec, "", "")
        found = by_name.get(name)
        if found is None:
            renamed = next((d.tool for d in drift if d.previous == name), None)
            if renamed is not None:
                raise ReviewError(f"--approve {spec}: {name} was renamed; approve the new name ({renamed})")
            raise ReviewError(f"--approve {spec}: no such tool on this server or in the lock")
        if not found.drifted:
            raise ReviewError(f"--approve {spec}: {name} has not drifted, there is nothing to approve")
        if found.status == "changed" and found.fields == ("name",):
            raise ReviewError(
                f"--approve {spec}: the server lists {name} more than once; no one contract to approve"
            )
        if found.fields == ("unfingerprintable",):
            raise ReviewError(f"--approve {spec}: {name}'s contract cannot be fingerprinted, nor approved")
        if at and not _DIGEST_PREFIX.match(digest):
            raise ReviewError(f"--approve {spec}: the digest must be 8 to 64 lowercase hex digits")
        if at and not (found.diff_sha256 or "").startswith(digest):
            raise ReviewError(
                f"--approve {spec}: {name} has drifted differently since (diff {found.diff_sha256 or '?'}); "
                "review it again"
            )
        chosen[name] = found
    return list(chosen.values())


@dataclass(frozen=True)
class LockComparison:
    """The report with its :class:`LockCheck`, and the lock file's new content when ``--approve``
    took drift into it (``None``: the file stays as it is)."""

    report: ReviewReport
    approved_lock: ContractLock | None = None
    approved: int = 0


def compare_with_lock(
    report: ReviewReport,
    lock: ContractLock,
    file: str,
    *,
    approve: Sequence[str] = (),
    any_drift: bool = False,
    allow_compatible: bool = False,
) -> LockComparison:
    """``report`` with its :class:`LockCheck`. Each failing drift is one more finding: by default
    every change a person must re-approve (escalation, breaking, compatible, and unknown: format 1);
    with ``allow_compatible`` only escalation, breaking and unknown; with ``any_drift`` any drift.
    ``approve``: those tools' drift taken into the lock (only their entries change); a name or digest
    that does not hold stops before anything changes."""
    fail_on: FailOn = "any" if any_drift else "escalation_or_breaking" if allow_compatible else "reapproval"
    entry = lock.server(report.target.address)
    descriptors = _descriptors(report)
    try:
        drift = compare_tools(entry, descriptors)
    except AdmissionError as error:
        raise ReviewError(f"cannot compare with the lock: {error.message}") from None
    approved = _approvals(drift, approve) if approve else []
    updated: ContractLock | None = None
    if approved:
        key = entry.server if entry is not None else report.target.address
        updated = lock.with_approvals(key, descriptors, approved)
    names = {d.tool for d in approved}
    tools = [_tool_report(d, approved=d.tool in names, fail_on=fail_on) for d in drift]
    drifted = sum(1 for tool in tools if tool.status != "unchanged" and not tool.approved)
    failing = sum(1 for tool in tools if tool.fails)
    check = LockCheck(
        file=file,
        server=entry.server if entry is not None else report.target.address,
        entry=entry is not None,
        tools=tools,
        drifted=drifted,
        fail_on=fail_on,
        digest_only=lock.digest_only,
    )
    summary = report.summary.model_copy(
        update={"drifted": drifted, "findings": report.summary.findings + failing}
    )
    reviewed = report.model_copy(update={"lock": check, "summary": summary})
    return LockComparison(report=reviewed, approved_lock=updated, approved=len(approved))


_SERVER_LINE: Final = " " * 6 + '"server": '
_NAME_LINE: Final = " " * 10 + '"name": '


def lock_lines(text: str, server: str) -> dict[str, int]:
    """Per tool name, the 1-based line of its entry under ``server`` in a lock file's text as
    :meth:`ContractLock.to_json` writes it (entries at a fixed indentation), for SARIF locations."""
    lines: dict[str, int] = {}
    current: object = None
    for number, line in enumerate(text.splitlines(), start=1):
        for prefix in (_SERVER_LINE, _NAME_LINE):
            if not line.startswith(prefix) or line[len(prefix)] == " ":
                continue
            try:
                value = json.loads(line.removeprefix(prefix).rstrip(","))
            except ValueError:
                continue
            if prefix == _SERVER_LINE:
                current = value
            elif current == server and isinstance(value, str):
                lines.setdefault(value, number)
    return lines
