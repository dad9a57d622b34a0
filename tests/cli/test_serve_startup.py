"""``serve``'s start-up: it says "starting" at once and how many tools it serves when ready; the app is
built with the cyclic collector paused, and what was built is frozen."""

from __future__ import annotations

import gc
import os
import re
import subprocess
import sys

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


def test_serve_says_starting_at_once_and_how_many_tools_it_serves_when_ready() -> None:
    """The first line comes before the server stack loads; the URL line once it listens. The catalog-cost
    line ("disclosure reads resolve by name …") is a debug line: a default run does not print it."""
    process = subprocess.Popen(
        [sys.executable, "-c", "from agent_connector_sdk.cli import main_exit; main_exit()", "serve",
         "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "src"), ROOT])},
    )  # fmt: skip
    try:
        assert process.stdout is not None and process.stderr is not None
        starting = process.stderr.readline()
        # Nothing served yet when it is said: it is printed before the stack is imported.
        assert starting == "starting: the contract lab …\n", starting
        serving = process.stdout.readline()
        assert re.fullmatch(
            r"serving 8 tools of the contract lab behind search \(demo bearer tokens: analyst "
            r"lab-analyst-demo-token, operator lab-operator-demo-token\) at http://127\.0\.0\.1:\d+/mcp\n",
            serving,
        ), serving
    finally:
        process.terminate()
        _, rest = process.communicate(timeout=60)
    assert "disclosure reads" not in rest and "Traceback" not in rest, rest
