"""``review --write-lock FILE``, ``review --lock FILE [--approve TOOL…]``: the contract lock *file*.

Reading it (a bad file is one line, exit 2), writing it, and saying what was written; the comparison
and what an approval changes are the review's (:mod:`agent_connector_sdk.review.lock`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from agent_connector_sdk.cli.operator_files import read_operator_file, write_operator_file
from agent_connector_sdk.core.contracts.lock import ContractLock
from agent_connector_sdk.review.lock import compare_with_lock, locked_server
from agent_connector_sdk.review.report import ReviewReport
from agent_connector_sdk.review.wording import count

__all__ = ["apply_lock", "read_lock", "write_lock"]


def read_lock(path: Path) -> ContractLock:
    """Read a lock file (unreadable or malformed: exit 2 with one line)."""
    return read_operator_file(path, "lock file", ContractLock.from_json)


def write_lock(report: ReviewReport, path: Path) -> None:
    """Approve every reviewed contract for this server; other servers already in the file are kept."""
    lock, locked = locked_server(report, read_lock(path) if path.exists() else ContractLock())
    write_operator_file(path, lock.to_json(), "lock file")
    print(f"wrote {path} ({count(locked, 'locked tool')})", file=sys.stderr)


def apply_lock(
    report: ReviewReport,
    lock: ContractLock,
    file: str,
    *,
    approve: Sequence[str] = (),
    path: Path | None = None,
    any_drift: bool = False,
    allow_compatible: bool = False,
) -> ReviewReport:
    """``report`` compared with ``lock``; ``approve``: those tools' drift written into the lock file at
    ``path`` (only their entries change)."""
    compared = compare_with_lock(
        report, lock, file, approve=approve, any_drift=any_drift, allow_compatible=allow_compatible
    )
    if compared.approved_lock is not None and path is not None:
        write_operator_file(path, compared.approved_lock.to_json(), "lock file")
        print(f"wrote {path} (approved {count(compared.approved, 'drift')})", file=sys.stderr)
    return compared.report
