"""``review --write-lock FILE`` and ``review --lock FILE``: the contract lock as a CI gate (thin).

The lock itself (fingerprints, drift) is :mod:`agent_connector_sdk.mcp.contracts.lock`; this module
only reads and writes the file and folds the comparison into the :class:`ReviewReport`. Every tool the
review saw with a descriptor is locked and compared — listed, found through search (its reconstructed
descriptor), and rejected ones too (so a rejected tool that changes is still drift). The server key is
the reviewed address (URL, stdio command line or descriptor files).
"""

from __future__ import annotations

import sys
from pathlib import Path

from agent_connector_sdk.cli.errors import CliError, read_operator_file, write_operator_file
from agent_connector_sdk.cli.render import count
from agent_connector_sdk.cli.report import LockCheck, ReviewReport, ToolDriftReport
from agent_connector_sdk.mcp.contracts.errors import AdmissionError
from agent_connector_sdk.mcp.contracts.lock import ContractLock, compare_tools

__all__ = ["apply_lock", "read_lock", "write_lock"]


def read_lock(path: Path) -> ContractLock:
    """Read a lock file (unreadable or malformed: exit 2 with one line)."""
    return read_operator_file(path, "lock file", ContractLock.from_json)


def _descriptors(report: ReviewReport) -> list[dict[str, object]]:
    return [tool.descriptor for tool in report.tools if tool.descriptor is not None]


def write_lock(report: ReviewReport, path: Path) -> None:
    """Approve every reviewed contract for this server; other servers already in the file are kept."""
    lock = read_lock(path) if path.exists() else ContractLock()
    try:
        lock = lock.with_server(report.target.address, _descriptors(report))
    except AdmissionError as error:
        raise CliError(f"cannot lock this server: {error.message}") from None
    write_operator_file(path, lock.to_json(), "lock file")
    entry = lock.server(report.target.address)
    locked = len(entry.tools) if entry is not None else 0
    print(f"wrote {path} ({count(locked, 'locked tool')})", file=sys.stderr)


def apply_lock(report: ReviewReport, lock: ContractLock, file: str) -> ReviewReport:
    """``report`` with its :class:`LockCheck`; every drifted tool is one more finding."""
    entry = lock.server(report.target.address)
    try:
        drift = compare_tools(entry, _descriptors(report))
    except AdmissionError as error:
        raise CliError(f"cannot compare with the lock: {error.message}") from None
    tools = [
        ToolDriftReport(tool=d.tool, status=d.status, fields=list(d.fields), previous=d.previous)
        for d in drift
    ]
    drifted = sum(1 for d in drift if d.drifted)
    check = LockCheck(
        file=file,
        server=entry.server if entry is not None else report.target.address,
        entry=entry is not None,
        tools=tools,
        drifted=drifted,
    )
    summary = report.summary.model_copy(
        update={"drifted": drifted, "findings": report.summary.findings + drifted}
    )
    return report.model_copy(update={"lock": check, "summary": summary})
