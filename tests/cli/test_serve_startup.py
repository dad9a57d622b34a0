"""``serve``'s start-up: it says "starting" at once and how many tools it serves when ready; the app is
built with the cyclic collector paused, and what was built is frozen."""

from __future__ import annotations

import gc
import os
import pty
import re
import select
import subprocess
import sys
import time

import pytest

from agent_connector_sdk.serving.process import built_to_last
from tests.support.cli import ROOT


def test_the_build_runs_without_collections_and_its_objects_are_frozen() -> None:
    assert gc.isenabled()
    frozen_before = gc.get_freeze_count()
    try:
        with built_to_last():
            assert not gc.isenabled()
            built = [{"schema": [index]} for index in range(1000)]  # tracked containers
        assert gc.isenabled()
        assert gc.get_freeze_count() >= frozen_before + len(built)
    finally:
        gc.unfreeze()


def test_a_failed_build_turns_the_collector_back_on_and_freezes_nothing() -> None:
    frozen_before = gc.get_freeze_count()
    with pytest.raises(RuntimeError), built_to_last():
        raise RuntimeError("the document has no operations")
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen_before


def test_a_collector_already_off_stays_off() -> None:
    gc.disable()
    try:
        with built_to_last():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def _first_line(fd: int, timeout: float) -> str:
    """The first line written to a pty (its ``\r\n`` read as ``\n``), or what came before ``timeout``."""
    said = b""
    deadline = time.monotonic() + timeout
    while b"\n" not in said and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            said += os.read(fd, 4096)
    return said.decode().replace("\r\n", "\n").split("\n", 1)[0] + "\n"


def test_serve_says_starting_at_once_and_how_many_tools_it_serves_when_ready() -> None:
    """On a terminal the first line comes before the server stack loads; the URL line once it listens
    (on stdout, a pipe here, as scripts read it). The catalog-cost line ("disclosure reads resolve by
    name …") is a debug line: a default run does not print it."""
    terminal, stderr = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-c", "from agent_connector_sdk.cli import main_exit; main_exit()", "serve",
         "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=stderr,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "src"), ROOT])},
    )  # fmt: skip
    os.close(stderr)
    try:
        assert process.stdout is not None
        # A hang guard only: the line is printed before the stack is imported, whatever the load.
        assert _first_line(terminal, 120) == "starting: the contract lab …\n"
        serving = process.stdout.readline()
        assert re.fullmatch(
            r"serving 8 tools of the contract lab behind search \(demo bearer tokens: analyst "
            r"lab-analyst-demo-token, operator lab-operator-demo-token\) at http://127\.0\.0\.1:\d+/mcp\n",
            serving,
        ), serving
    finally:
        process.terminate()
        process.communicate(timeout=60)
        rest = b""
        while select.select([terminal], [], [], 0.2)[0]:
            try:
                chunk = os.read(terminal, 65536)
            except OSError:  # the other end is closed
                break
            if not chunk:
                break
            rest += chunk
        os.close(terminal)
    assert b"disclosure reads" not in rest and b"Traceback" not in rest, rest


def test_a_refused_serve_on_a_pipe_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """Not a terminal: no "starting" line, so a refusal is the one line a script reads."""
    from agent_connector_sdk.cli import main

    assert main(["serve", "--state", "ftp://nowhere"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("agent-connector: --state:"), err
