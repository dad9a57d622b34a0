"""``gateway --lock FILE``: only approved child contracts are published (rug pulls stop at the gateway).

The file is a contract lock as ``agent-connector review CHILD --write-lock FILE`` writes it (one entry
per reviewed server, filed under the URL or the stdio command line it was given; reviewing every child
into one file builds the gateway's lock). Each child is held to the entry filed under its own address —
the same key :func:`~agent_connector_sdk.mcp.host._session.server_key` computes — through the host core's
Admit (:func:`~agent_connector_sdk.core.contracts.lock.lock_admission`): a tool whose contract is not the
approved one is rejected ``contract_drift`` with the lock's own reason (the fields that changed, an
unknown or renamed tool) and is not published. Fail closed: a child without an entry publishes nothing.
A lock holding exactly one server applies to a gateway of exactly one child, as for ``review``.

The file is re-read when it changes (checked before every re-list of a child, so within ``refresh``
seconds of an update, or at once after ``list_changed``); a tool approved by the new lock is then
published. A file that became unreadable or malformed keeps the lock in force and is logged.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shlex
from pathlib import Path

from agent_connector_sdk.core.contracts.lock import ContractLock, LockedServer, LockFileError
from agent_connector_sdk.gateway._config import ChildSpec
from agent_connector_sdk.gateway._errors import GatewayError
from agent_connector_sdk.mcp.host import HostOptions

__all__ = ["LockWatch", "child_address"]

# Named as before the file moved: operators filter logs on this name.
logger = logging.getLogger("agent_connector_sdk.gateway.locks")

_MAX_LOCK_BYTES = 64 * 1024 * 1024


def child_address(spec: ChildSpec) -> str:
    """The key a lock files a child under: its URL, or its command line as ``review`` was given it."""
    return spec.url if spec.url is not None else shlex.join(spec.command)


class LockWatch:
    """One lock file, re-read when its size or modification time changes."""

    def __init__(self, path: Path, children: int) -> None:
        self.path = path
        self._children = children
        self._stamp: tuple[int, int] | None = None
        self.lock = self._read()  # at start a bad file is an invalid_config refusal

    def _read(self) -> ContractLock:
        try:
            stat = self.path.stat()
            if stat.st_size > _MAX_LOCK_BYTES:
                raise GatewayError("invalid_config", f"--lock {self.path.name}: larger than 64 MiB")
            text = self.path.read_bytes()
        except OSError as error:
            raise GatewayError(
                "invalid_config", f"--lock {self.path.name}: cannot read ({error.strerror or 'error'})"
            ) from None
        try:
            lock = ContractLock.from_json(text)
        except LockFileError as error:
            raise GatewayError("invalid_config", f"--lock {self.path.name}: {error.message}") from None
        self._stamp = (stat.st_mtime_ns, stat.st_size)
        return lock

    def refresh(self) -> bool:
        """Re-read the file if it changed; whether the lock in force changed."""
        try:
            stat = os.stat(self.path)
        except OSError:
            return False
        if (stat.st_mtime_ns, stat.st_size) == self._stamp:
            return False
        try:
            lock = self._read()
        except GatewayError as error:
            logger.warning("lock file not re-read, the previous lock stays in force: %s", error.message)
            return False
        changed = lock != self.lock
        self.lock = lock
        if changed:
            logger.warning("lock file %s re-read: %d server entries", self.path.name, len(lock.servers))
        return changed

    def entry(self, spec: ChildSpec) -> LockedServer | None:
        """The approved contracts of ``spec``'s child (``None``: no entry, nothing is approved)."""
        if len(self.lock.servers) == 1 and self._children == 1:
            return self.lock.servers[0]
        address = child_address(spec)
        return next((entry for entry in self.lock.servers if entry.server == address), None)

    def options(self, spec: ChildSpec, base: HostOptions) -> HostOptions:
        """``base`` holding ``spec``'s child to its entry (an empty lock when it has none: fail closed)."""
        entry = self.entry(spec)
        return dataclasses.replace(base, lock=ContractLock(servers=[] if entry is None else [entry]))
