"""A search-first child at GitHub size behind the gateway, side by side with a listed-only gateway.

Run: ``python -m bench.gateway_federated`` (from the repository root; ``--calls N``, ``--searches N``).

The search-first child is our own ``agent-connector serve --openapi`` over GitHub's REST description
(the pinned, sha256-verified ``@octokit/openapi`` document, 1,223 operations, every one hidden behind
the search transform), calling a local recording upstream. A small listed child (the tests' weather
server, served in this process: it lists its tools) stands for the operator's other, healthy children.
Two gateways run side by side in one run, each its own process as an operator runs
them (so each RSS is its own):

* **listed-only**: ``gateway --child small=URL``;
* **federated**: ``gateway --child small=URL --child gh=URL``.

1. **Time to /healthz 200**: from spawning each gateway to its first 200 on ``/healthz`` (target: the
   federated gateway within the listed-only one's + 1 s).
2. **Time to the first search result from the child**: from spawning the federated gateway to the first
   ``search_tools`` through it that answers a ``gh_`` tool (target: <= 10 s).
3. **Search**: the first search of a pattern through the gateway (the child's entries verified: their
   disclosures read), then the warm median, and the same search directly at the child (target: warm
   <= 1.3x the child's).
4. **Call**: median ``tools/call`` of one federated tool through the gateway vs directly at the child
   (target: <= 1.3x).
5. **RSS** of the listed-only and the federated gateway after the searches and calls (Linux ``/proc``).

Beside the wall times of 3 and 4, the CPU each process spent per request (Linux ``/proc``): the
gateway's and the child's for a request through the gateway, the child's for the same request made to
it directly. On a machine shared with other load the wall times move with that load; CPU time moves
much less, so ``(gateway + child) / child directly`` says what the gateway costs on top of the child
when the machine is loaded (the wall-time ratio on an idle machine also pays the extra HTTP hop).

The machine may be shared: numbers are noisy, compare ratios.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx2

from agent_connector_sdk.mcp.server import gated_http_app
from scripts.github_openapi import load_github_description
from tests.support.gateway_children import weather_server
from tests.support.http_server import serve_asgi
from tests.support.raw_http import RecordingUpstream, post_on

_ANNOUNCE = re.compile(r"at (http://\S+/mcp)")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used (Linux ``/proc``): unlike wall time, not moved much
    by the other load on a shared machine."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_ms_per_run(pids: list[int], run: Any, runs: int) -> tuple[float, list[float]]:
    """``run()`` ``runs`` times: its median wall milliseconds and each process's CPU ms per run."""
    before = [cpu_seconds(pid) for pid in pids]
    median = statistics.median(run() for _ in range(runs))
    return median, [(cpu_seconds(pid) - b) * 1000 / runs for pid, b in zip(pids, before, strict=True)]


def spawn(args: list[str], timeout: float) -> tuple[subprocess.Popen[str], str, float]:
    """Start ``agent-connector ARGS``; its URL (from the announce line) and seconds until announced."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_connector_sdk.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    deadline = started + timeout
    while time.perf_counter() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        match = _ANNOUNCE.search(line)
        if match:
            return process, match.group(1), time.perf_counter() - started
    process.kill()
    raise RuntimeError(f"agent-connector {args[0]} did not announce within {timeout:g} s")


def spawn_gateway(children: list[str], timeout: float) -> tuple[subprocess.Popen[str], str, float]:
    """A gateway process and the seconds from its spawn to the first 200 on ``/healthz``."""
    args = [arg for child in children for arg in ("--child", child)]
    started = time.perf_counter()
    process, url, _ = spawn(["gateway", *args, "--port", "0", "--no-auth"], timeout)
    health = url.removesuffix("/mcp") + "/healthz"
    while time.perf_counter() < started + timeout:
        try:
            if httpx2.get(health, timeout=5).status_code == 200:
                return process, url, time.perf_counter() - started
        except httpx2.HTTPError:
            pass
        time.sleep(0.02)
    process.kill()
    raise RuntimeError("the gateway's /healthz never answered 200")


def timed_ms(http: httpx2.Client, url: str, params: dict[str, Any]) -> tuple[float, str]:
    started = time.perf_counter()
    response = post_on(http, url, "tools/call", params)
    elapsed = (time.perf_counter() - started) * 1000
    assert response.status_code == 200, response.text[:300]
    assert '"error"' not in response.text[:200], response.text[:300]
    return elapsed, response.text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--searches", type=int, default=20)
    options = parser.parse_args()

    description = load_github_description()
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        document = folder / "api.github.com.deref.json"
        document.write_bytes(description.raw)
        del description
        upstream = RecordingUpstream()
        upstream_url = stack.enter_context(serve_asgi(upstream.app, path=""))

        child, child_url, child_start = spawn(
            ["serve", "--openapi", str(document), "--upstream", upstream_url, "--port", "0"], 600
        )
        stack.callback(child.kill)
        small_url = stack.enter_context(serve_asgi(gated_http_app(weather_server(), stateless_http=True)))
        print(f"child start-up (serve --openapi GitHub, 1,223 operations)   {child_start:6.2f} s (setup)")

        listed, _, listed_health = spawn_gateway([f"small={small_url}"], 120)
        stack.callback(listed.kill)
        started = time.perf_counter()
        gateway, gateway_url, federated_health = spawn_gateway([f"small={small_url}", f"gh={child_url}"], 120)
        stack.callback(gateway.kill)
        http = stack.enter_context(httpx2.Client(timeout=60))
        pattern = "issues_list_events"
        first_result = None
        while time.perf_counter() < started + 120:
            _, text = timed_ms(http, gateway_url, {"name": "search_tools", "arguments": {"pattern": pattern}})
            if "gh_issues_list_events" in text:
                first_result = time.perf_counter() - started
                break
            time.sleep(0.05)
        print(
            f"time to /healthz 200   listed-only {listed_health:6.2f} s   with the GitHub child "
            f"{federated_health:6.2f} s   (+{federated_health - listed_health:.2f} s; target +1 s)"
        )
        shown = "never (120 s)" if first_result is None else f"{first_result:6.2f} s"
        print(f"time to the first search result from the child   {shown}   (target <= 10 s)")

        fresh = "pulls_list_review"  # never searched yet: its entries are verified on this search
        first, _ = timed_ms(http, gateway_url, {"name": "search_tools", "arguments": {"pattern": fresh}})
        search = {"name": "search_tools", "arguments": {"pattern": fresh}}
        pids = [gateway.pid, child.pid]
        warm, (warm_gateway_cpu, warm_child_cpu) = cpu_ms_per_run(
            pids, lambda: timed_ms(http, gateway_url, search)[0], options.searches
        )
        direct, (_, direct_child_cpu) = cpu_ms_per_run(
            pids, lambda: timed_ms(http, child_url, search)[0], options.searches
        )
        print(
            f"search   first via gateway {first:8.2f} ms   warm via gateway {warm:7.2f} ms   "
            f"directly at the child {direct:7.2f} ms   warm {warm / direct:.2f}x (target <= 1.3x)"
        )
        print(
            f"         CPU per warm search: gateway {warm_gateway_cpu:6.2f} ms + child "
            f"{warm_child_cpu:6.2f} ms"
            f"   vs child directly {direct_child_cpu:6.2f} ms   "
            f"{(warm_gateway_cpu + warm_child_cpu) / direct_child_cpu:.2f}x"
        )

        arguments = {"owner": "o", "repo": "r", "issue_number": 7}
        before = len(upstream.requests)  # one upstream request per call
        tool = "issues_list_events_for_timeline"
        via_call = {"name": f"gh_{tool}", "arguments": arguments}
        direct_call = {"name": tool, "arguments": arguments}
        via, (via_gateway_cpu, via_child_cpu) = cpu_ms_per_run(
            pids, lambda: timed_ms(http, gateway_url, via_call)[0], options.calls
        )
        direct, (_, direct_child_cpu) = cpu_ms_per_run(
            pids, lambda: timed_ms(http, child_url, direct_call)[0], options.calls
        )
        reached = len(upstream.requests) - before
        print(
            f"call     via gateway {via:7.2f} ms   directly at the child {direct:7.2f} ms   "
            f"{via / direct:.2f}x (target <= 1.3x); {reached} upstream requests for {2 * options.calls} calls"
        )
        print(
            f"         CPU per call: gateway {via_gateway_cpu:6.2f} ms + child {via_child_cpu:6.2f} ms   "
            f"vs child directly {direct_child_cpu:6.2f} ms   "
            f"{(via_gateway_cpu + via_child_cpu) / direct_child_cpu:.2f}x"
        )
        print(
            f"RSS      listed-only gateway {rss_mib(listed.pid):7.1f} MiB   federated gateway "
            f"{rss_mib(gateway.pid):7.1f} MiB   child {rss_mib(child.pid):7.1f} MiB"
        )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
