"""``scripts/cpu_load.py`` (``make test-under-load``): it runs the command beside N spinning processes,
passes on the command's exit code, and leaves no spinner behind."""

from __future__ import annotations

import re
import subprocess
import sys
import time

from tests.support.cli import ROOT


def _state(pid: int) -> tuple[str, int] | None:
    """A process's state letter and its CPU ticks (user + system); ``None`` once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(") ", 1)[1].split()
    except FileNotFoundError:
        return None
    return fields[0], int(fields[11]) + int(fields[12])


def test_the_load_runs_beside_the_command_and_ends_with_it() -> None:
    run = subprocess.Popen(
        [sys.executable, "-m", "scripts.cpu_load", "2", "--", sys.executable, "-c", "import time, sys; "
         "time.sleep(2); sys.exit(7)"],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert run.stderr is not None
        first = run.stderr.readline()
        pids = [int(pid) for pid in re.findall(r"\d+", first.split("[", 1)[1])]
        assert len(pids) == 2, first
        time.sleep(0.5)
        states = [_state(pid) for pid in pids]
        # Running and burning CPU (work, not sleep): a tick is 10 ms, and they spun for half a second.
        assert all(state is not None and state[1] > 0 for state in states), states
        assert run.wait(timeout=60) == 7  # the command's own exit code
        rest = run.stderr.read()
    finally:
        run.kill()
    assert "exited 7" in rest and "beside a load of 2" in rest, rest
    left = [state for state in (_state(pid) for pid in pids) if state is not None and state[0] != "Z"]
    assert left == []
