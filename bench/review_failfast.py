"""Benchmark: how fast ``agent-connector review`` says no, each case beside ``python -c "import json"``.

    python -m bench.review_failfast [--repeat N]

Each case is the real command in a fresh interpreter (``python -c "from agent_connector_sdk.cli import
main_exit; main_exit()" review ...``), against real processes started untimed: a port where nothing
listens, a program that does not exist, a malformed URL (these three are decided by the pre-flight,
before the host stack loads: target <= 0.5 s wall on a quiet machine), and Python's ``http.server``, a
raw TCP service, ``https://`` to a plain-HTTP port (pre-flight too), and a stdio program printing
"hello world" (that one gets past the pre-flight: the program exists, so the full stack loads and the
session ends at its first line). The floor is ``python -c "import json"``: an interpreter start.

Printed per case: the best wall time over ``--repeat`` runs (the cases and the floor interleaved, so
a busy machine slows all alike), the command's CPU time on that run, the ratio to the floor, and
PASS/MISS against 0.5 s for the three pre-flight targets (a shared, loaded machine can MISS what a
quiet one passes; the CPU time says how much of the wall was the command's own work). Every exit
code is checked (2) so a case that stopped failing is not timed as fast.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from collections.abc import Sequence

from tests.support.not_mcp_peers import HELLO_WORLD, python_http_server, raw_tcp_listener, refused_port

TARGET_S = 0.5
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _timed(argv: Sequence[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the child, exit code) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        list(argv), capture_output=True, timeout=120, check=False, cwd=ROOT, stdin=subprocess.DEVNULL
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


_ENTRY = "from agent_connector_sdk.cli import main_exit; main_exit()"


def _review(*args: str) -> list[str]:
    return [sys.executable, "-c", _ENTRY, "review", *args]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args(argv)
    hello = _review("--timeout", "600", "--", sys.executable, "-c", HELLO_WORLD)
    with python_http_server() as web, raw_tcp_listener() as raw:
        cases: list[tuple[str, list[str], bool]] = [
            ("refused port", _review(f"http://127.0.0.1:{refused_port()}/mcp"), True),
            ("missing program", _review("--", "no-such-mcp-server-xyz"), True),
            ("malformed URL", _review("http://[::1/mcp"), True),
            ("http.server (HTML page)", _review(f"http://127.0.0.1:{web}/mcp"), False),
            ("raw TCP (not HTTP)", _review(f"http://127.0.0.1:{raw}/mcp"), False),
            ("https to plain HTTP", _review(f"https://127.0.0.1:{web}/mcp"), False),
            ("stdio hello world", hello, False),
        ]
        floor_argv = [sys.executable, "-c", "import json"]
        best: dict[str, tuple[float, float]] = {}
        for _ in range(options.repeat):
            for name, command, _target in [("floor", floor_argv, False), *cases]:
                wall, cpu, code = _timed(command)
                expected = 0 if name == "floor" else 2
                if code != expected:
                    raise SystemExit(f"{name}: exit {code}, expected {expected}")
                if name not in best or wall < best[name][0]:
                    best[name] = (wall, cpu)
    floor = best["floor"][0]
    print(f"review fail-fast, best of {options.repeat} (floor: python -c 'import json' {floor:.3f} s wall)")
    print(f"{'case':28} {'wall s':>8} {'cpu s':>7} {'x floor':>8}  target")
    for name, _command, target in cases:
        wall, cpu = best[name]
        verdict = ("PASS" if wall <= TARGET_S else "MISS") + f" (<= {TARGET_S} s)" if target else "-"
        print(f"{name:28} {wall:8.3f} {cpu:7.3f} {wall / floor:8.1f}  {verdict}")


if __name__ == "__main__":
    main()
