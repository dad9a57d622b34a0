"""Tests leave no state behind: the conftest's restore gives back every piece it names, and a
representative subset (in-process CLI runs, one-line logging, in-process servers, telemetry) has the same
outcomes run first to last and last to first (``--reverse-order``, ``tests/conftest.py``)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from opentelemetry import trace

from tests.support import process_state
from tests.support.cli import ROOT

# Modules that change process-wide state as they work: in-process commands (environment, working
# directory, root handlers), the gateway's logger, an in-process server's fastmcp logging, the telemetry
# provider. A few seconds each; the whole suite's order is xdist's, so this is the sample that is run
# both ways on every `make test`.
SUBSET = (
    "tests/gateway/test_child_logs.py",
    "tests/mcp/server/test_server_spans_http.py",
    "tests/cli/test_lock_report_offline.py",
    "tests/cli/test_messages.py::test_a_refused_token_is_said_to_be_refused",
    "tests/cli/test_messages.py::test_an_address_without_a_scheme_is_told_the_url",
)


def test_the_restore_gives_back_every_piece_it_names(tmp_path: Path) -> None:
    before = process_state.snapshot()
    logger = logging.getLogger("fastmcp.order_probe")
    logger.addHandler(logging.NullHandler())
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    logging.getLogger("uvicorn").setLevel(logging.CRITICAL)
    os.environ["COLUMNS"] = "33"
    os.environ["ORDER_PROBE"] = "left behind"
    os.chdir(tmp_path)
    trace._TRACER_PROVIDER_SET_ONCE._done = False  # whatever an earlier test installed: set anew
    trace.set_tracer_provider(trace.NoOpTracerProvider())  # no-op: harmless should a tracer bind to it
    changed = process_state.differences(before, process_state.snapshot())
    process_state.restore(before)
    assert set(changed) >= {
        "logger 'fastmcp.order_probe'",
        "logger 'uvicorn'",
        "environment variable COLUMNS",
        "environment variable ORDER_PROBE",
        "the working directory",
        "the OpenTelemetry tracer provider",
    }, changed
    assert process_state.differences(before, process_state.snapshot()) == []
    assert logging.getLogger("fastmcp.order_probe").isEnabledFor(logging.DEBUG) is False


def _start(report: Path, *order: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={report}",
            *order,
            *SUBSET,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
    )


def _outcomes(report: Path, run: subprocess.Popen[str]) -> dict[str, str]:
    try:
        said, _ = run.communicate(timeout=600)
    finally:
        run.kill()
    assert report.exists(), said[-3000:]
    outcomes = {}
    for case in ElementTree.parse(report).iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[f"{case.get('classname')}::{case.get('name')}"] = kinds[0] if kinds else "passed"
    return outcomes


def test_a_representative_subset_has_the_same_outcomes_in_both_orders(tmp_path: Path) -> None:
    """Both orders at once, each in a fresh interpreter (most of each run is start-up and imports)."""
    forward_report, backward_report = tmp_path / "forward.xml", tmp_path / "backward.xml"
    forward_run = _start(forward_report)
    backward_run = _start(backward_report, "--reverse-order")
    forward = _outcomes(forward_report, forward_run)
    backward = _outcomes(backward_report, backward_run)
    assert len(forward) >= 20
    assert forward == backward
    assert set(forward.values()) == {"passed"}, {
        name: kind for name, kind in forward.items() if kind != "passed"
    }
