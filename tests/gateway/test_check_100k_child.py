"""``gateway --check`` against a 100,000-tool search-first child: "converges, or says how far it got".

Real processes: the child (100,000 hidden tools behind FastMCP's regex search, its disclosure reads
counted) and each check run (``tests.support.check_run``: what ``gateway --check`` does with a child,
with the bounds a test picks, reporting its own ``/proc`` memory). A whole enumeration of 100,000 tools
takes far longer than a test may (every tool's disclosure is read and verified), so this test drives
the **bound path**, which is what decides whether the issue's promise holds at that size: a run stopped
by its search bound says exactly how far it got ("partial: N of at least M (the search bound ...)"),
its memory stays under the issue's +100 MB bar (resident set by ``/proc``, peak over the start), and a
second run with the shared tier (a real ``redis-server``) resumes: it reads no disclosure the first
run verified, only new ones, and gets further. Bounds are counted in searches, never in seconds, so no
result depends on the machine's speed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tests.gateway.test_federation_on_demand import _child
from tests.support.cli import ROOT
from tests.support.services import RedisServer, redis_server

TOOLS = 100_000
HANG_GUARD = 900.0
MEMORY_BAR_KB = 100 * 1024
FIRST_SEARCHES = 4
SECOND_SEARCHES = 12


@pytest.fixture(scope="module")
def child() -> Iterator[str]:
    with _child("huge", str(TOOLS)) as (_, url):
        yield url


def _reads(url: str) -> list[str]:
    uris: list[str] = httpx2.get(url.removesuffix("/mcp") + "/reads", timeout=60).json()
    return uris


def _check(url: str, searches: int, state: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "src"), ROOT])}
    run = subprocess.run(
        [sys.executable, "-m", "tests.support.check_run", url, "--searches", str(searches), "--state", state],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=HANG_GUARD,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    outcome: dict[str, Any] = json.loads(run.stdout.splitlines()[-1])
    assert "partial" in outcome, (outcome, run.stderr[-3000:])  # the child was reached and enumerated
    return outcome


def test_a_100000_tool_child_says_how_far_it_got_within_bounded_memory_and_resumes(child: str) -> None:
    redis: RedisServer
    with redis_server() as redis:
        # Few searches: each verified tool costs this child ~0.15 s (FastMCP's per-request work grows with
        # its catalog), so the runs stay short; 4 searches verify the first page, 12 reach further.
        first = _check(child, FIRST_SEARCHES, redis.url)
        done = first["admitted_total"] + first["rejected_total"]
        # Stopped by its bound, and saying so with the numbers: N verified of at least M names seen.
        assert first["partial"].startswith(f"partial: {done} of at least "), first
        assert first["partial"].endswith(f"(the search bound ({FIRST_SEARCHES} searches) was reached)"), first
        at_least = int(first["partial"].split(" of at least ")[1].split()[0])
        assert 50 <= done <= at_least < TOOLS  # the first search alone verifies a page of 50
        assert first["rejected_total"] == 0  # an honest child: every tool found is admitted
        read_first = _reads(child)
        assert read_first  # verified by reading the disclosures

        second = _check(child, SECOND_SEARCHES, redis.url)  # a new process: only the shared tier carries over
        done_second = second["admitted_total"] + second["rejected_total"]
        bound = f"(the search bound ({SECOND_SEARCHES} searches) was reached)"
        assert second["partial"].endswith(bound), second
        assert done_second > done  # further than the first run
        read_second = _reads(child)[len(read_first) :]
        # Resumed: nothing the first run verified is read again, only what is new.
        assert read_second and set(read_second).isdisjoint(read_first)

    # Memory: the peak resident set of each run over its start (the same process before it connects).
    for outcome in (first, second):
        grown = outcome["peak_kb"] - outcome["rss_before_kb"]
        print(f"check run: {outcome['partial']}; RSS {outcome['rss_before_kb']} kB, peak +{grown} kB")
        assert grown < MEMORY_BAR_KB
