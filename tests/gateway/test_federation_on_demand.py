"""Federation on demand, with real processes: search-first children (slow, lying, 12,000 tools, a name
both listed and hidden) each their own process, the gateway its own process (the CLI). The gateway
serves at once, a caller's search fans out to the children's own searches, nothing unverified is shown
or run, memory stays bounded whatever a child answers, and SIGTERM ends it during a slow search.

No speed is asserted here (bench/gateway_federated.py measures it): every wait is a hang guard."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.support.cli import ROOT
from tests.support.gateway import rpc, wait_for

HANG_GUARD = 60.0


@contextmanager
def _process(args: list[str]) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A process whose first stdout line names its URL (``url URL`` or ``serving ... at URL``)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "src"), ROOT])}
    process = subprocess.Popen(
        [sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )
    # stderr drained in the background: a chatty process must never block on a full pipe.
    lines: list[str] = []
    assert process.stderr is not None
    drain = threading.Thread(target=lambda: lines.extend(process.stderr or ()), daemon=True)
    drain.start()
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line, f"no URL from {args}: {''.join(lines)[-2000:]}"
        yield process, line.split()[-1].strip()
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def _child(mode: str, *extra: str) -> Any:
    return _process(["-m", "tests.support.search_first_child", mode, *extra])


def _gateway(*children: str, extra: tuple[str, ...] = ()) -> Any:
    args = ["-c", "from agent_connector_sdk.cli import main_exit; main_exit()", "gateway", "--port", "0"]
    for child in children:
        args += ["--child", child]
    return _process([*args, "--no-auth", *extra])


def _health(url: str) -> dict[str, Any]:
    response = httpx2.get(url.removesuffix("/mcp") + "/healthz", timeout=HANG_GUARD)
    body: dict[str, Any] = response.json()
    return body


def _state(url: str, child: str) -> str:
    return str(next(c["state"] for c in _health(url)["children"] if c["name"] == child))


def _search(url: str, pattern: str) -> list[str]:
    _, message = rpc(url, "tools/call", {"name": "search_tools", "arguments": {"pattern": pattern}})
    result = message["result"]["structuredContent"]["result"]
    return [] if isinstance(result, str) else [entry["name"] for entry in result]  # a string: abstained


def _call(url: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return rpc(url, "tools/call", {"name": name, "arguments": arguments})[1]


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def slow() -> Iterator[str]:
    with _child("slow") as (_, url):
        yield url


@pytest.fixture(scope="module")
def dual() -> Iterator[str]:
    with _child("dual") as (_, url):
        yield url


def test_the_gateway_serves_at_once_and_a_slow_childs_tools_are_found_by_search(slow: str, dual: str) -> None:
    with _gateway(f"dual={dual}", f"slow={slow}") as (_, url):
        # Serving already (the URL line comes after start-up): health answers, the listed child is up,
        # the slow child's 3 s search is not waited for.
        body = _health(url)
        states = {c["name"]: c["state"] for c in body["children"]}
        assert states["slow"] in ("connecting", "up")
        wait_for(lambda: _state(url, "dual") == "up", HANG_GUARD, "dual up")
        # Hidden at dual, never searched for: the call resolves that one name first.
        assert _call(url, "dual_other", {"id": "a"})["result"]["structuredContent"] == {"ok": True}
        wait_for(lambda: _state(url, "slow") == "up", HANG_GUARD, "the slow child's search answered")
        # The caller's pattern goes to the child's own search; the entries come back verified.
        assert _search(url, "slow_op_0[12]") == ["slow_slow_op_01", "slow_slow_op_02"]
        result = _call(url, "slow_slow_op_01", {"id": "x"})["result"]
        assert result.get("isError") is not True and result["structuredContent"] == {"ok": True}


def test_a_name_a_child_both_lists_and_hides_is_rejected_for_that_child(dual: str) -> None:
    with _gateway(f"dual={dual}") as (_, url):
        wait_for(lambda: _state(url, "dual") == "up", HANG_GUARD, "dual up")
        assert "dual_dual" not in _search(url, "dual")  # the hidden copy shows the name is ambiguous
        refused = _call(url, "dual_dual", {})
        # Published under neither contract: the listed copy is withdrawn too, nothing runs.
        assert "error" in refused or refused["result"].get("isError") is True, refused
        detail = httpx2.get(url.removesuffix("/mcp") + "/healthz", timeout=HANG_GUARD).json()
        assert detail["children"][0]["rejected"] >= 1


def test_sigterm_during_a_slow_child_search_ends_the_gateway(slow: str) -> None:
    with _gateway(f"slow={slow}") as (process, url):
        wait_for(lambda: _state(url, "slow") == "up", HANG_GUARD, "slow up")
        searching = threading.Thread(target=lambda: _search_quietly(url), daemon=True)
        searching.start()
        time.sleep(1.0)  # the search is now waiting on the child's 3 s search
        assert process.poll() is None
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=HANG_GUARD) is not None


def _search_quietly(url: str) -> None:
    try:
        _search(url, "slow_op")
    except Exception:  # the gateway went away mid-search: that is the point
        return


def test_a_lying_child_shows_nothing_unverified_and_cannot_grow_the_gateway() -> None:
    with _child("liar") as (_, liar), _gateway(f"liar={liar}") as (process, url):
        wait_for(lambda: _state(url, "liar") == "up", HANG_GUARD, "liar up")
        first = _search(url, "anything")
        # 20 invented names (pointing at another tool's disclosure) and a wrong digest are refused;
        # the one honest entry is verified and shown.
        assert first == ["liar_real_0"], first
        baseline = _rss_mb(process.pid)
        for round_ in range(15):
            assert _search(url, f"x{round_}") == ["liar_real_0"]
            assert _health(url)["status"] in ("ok", "degraded")
        # 300 invented names later: remembered rejections are bounded, nothing invented is published.
        assert _rss_mb(process.pid) - baseline < 100
        assert _call(url, "liar_ghost_3", {})["error"]["code"] == -32602
        assert _call(url, "liar_real_2", {})["error"]["code"] == -32602  # its digest never matched


def test_a_12000_tool_child_is_served_at_once_and_found_by_search_and_by_call() -> None:
    with _child("many", "12000") as (_, many), _gateway(f"many={many}") as (_, url):
        assert _health(url)["children"][0]["state"] in ("connecting", "up")
        wait_for(lambda: _state(url, "many") == "up", HANG_GUARD, "many up")
        found = _search(url, "op_0123[0-9]")
        assert found == [f"many_op_0123{i}" for i in range(10)]
        # A tool never searched for: the call resolves that one name (anchored) and runs it.
        result = _call(url, "many_op_11999", {"id": "z"})["result"]
        assert result.get("isError") is not True and result["structuredContent"] == {"ok": True}
        assert _call(url, "many_op_99999", {})["error"]["code"] == -32602  # no such tool at the child
        body = _health(url)
        assert body["children"][0]["tools"] <= 20  # found tools only, never the catalog


def test_check_enumerates_a_search_first_child_completely_with_progress() -> None:
    with _child("many", "120") as (_, many):
        args = ["-c", "from agent_connector_sdk.cli import main_exit; main_exit()", "gateway", "--check"]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "src"), ROOT])}
        run = subprocess.run(
            [sys.executable, *args, "--child", f"many={many}", "--json"],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=300,
        )
        import json

        report = json.loads(run.stdout)
        (child,) = report["children"]
        assert child["enumeration"].startswith("complete: 120 tools in "), child["enumeration"]
        assert len(child["admitted"]) == 120
        # Not a terminal: one progress line per 10 % of what is known, on stderr.
        progress = [line for line in run.stderr.splitlines() if "hidden tools verified" in line]
        assert progress and progress[-1].startswith("child many: 120 of at least 120"), run.stderr[-2000:]


def test_check_says_how_far_a_lying_child_got() -> None:
    with _child("liar") as (_, liar):
        args = ["-c", "from agent_connector_sdk.cli import main_exit; main_exit()", "gateway", "--check"]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "src"), ROOT])}
        run = subprocess.run(
            [sys.executable, *args, "--child", f"liar={liar}", "--json"],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=300,
        )
        import json

        report = json.loads(run.stdout)
        (child,) = report["children"]
        # It answers outside the searched prefix: enumeration stops, nothing is guessed or published.
        assert [r["category"] for r in child["rejected"] if r["tool"] is None] == ["not_federated"]
        assert child["admitted"] == [] and report["passed"] is False
