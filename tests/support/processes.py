"""This test process's own child processes, read from ``/proc`` (Linux): which are running a given
command, so a test can stop, signal or wait for the one it started through a gateway or a client."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["children_running"]


def children_running(marker: bytes) -> set[int]:
    """The pids of this process's children whose command line contains ``marker``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue  # ended meanwhile
        if int(fields[1]) == os.getpid() and marker in command:
            found.add(int(entry.name))
    return found
