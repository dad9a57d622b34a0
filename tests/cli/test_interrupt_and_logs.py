"""Ctrl-C is one line (exit 130); ``serve`` logs routine client errors as one line each."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

from agent_connector_sdk.demo.lab_service import ANALYST_TOKEN
from tests.support.cli import ROOT, non_mcp_server, review_call, run_cli_in_process

_ENTRY = "from agent_connector_sdk.cli import main_exit; main_exit()"


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _ENTRY, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": ROOT},
        cwd=ROOT,
    )


def test_ctrl_c_during_review_is_one_line_exit_130() -> None:
    contacted = threading.Event()
    with non_mcp_server("silent", contacted) as url:
        review = _spawn("review", url, "--timeout", "60")
        # Interrupt once the review is waiting on the server (not while Python is still importing).
        assert contacted.wait(60)
        time.sleep(0.5)
        review.send_signal(signal.SIGINT)
        _, err = review.communicate(timeout=30)
    assert review.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert [line for line in err.splitlines() if line.strip()] == ["agent-connector: interrupted"]


def test_serve_logs_routine_client_errors_as_one_line_each() -> None:
    server = _spawn("serve", "--port", "0")
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split(" at ")[-1].strip()
        assert url.startswith("http://127.0.0.1:")
        for tool in ("flaky_search", "inventory_snapshot"):
            arguments = {"query": "q"} if tool == "flaky_search" else {}
            run = review_call(url, tool, arguments, token=ANALYST_TOKEN)
            assert run.code == 0, run.err
        unauthenticated = run_cli_in_process("review", url)
        assert unauthenticated.code == 2
    finally:
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=30)
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert any("flaky_search" in line for line in lines)
    assert any("inventory_snapshot" in line and "output_schema_violation" in line for line in lines)
    assert all(len(line) < 400 for line in lines)
