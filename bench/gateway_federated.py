"""A search-first child at GitHub size behind the gateway: start-up, search, call, RSS.

Run: ``python -m bench.gateway_federated`` (from the repository root; ``--calls N``, ``--searches N``).

The child is our own ``agent-connector serve --openapi`` over GitHub's REST description (the pinned,
sha256-verified ``@octokit/openapi`` document, 1,223 operations, every one hidden behind the search
transform), calling a local recording upstream. The gateway is ``agent-connector gateway --child
gh=URL --no-auth``. Both run as their own processes, as an operator runs them, so each RSS is its own.

1. **Start-up**: from spawning the gateway to its announce line — connecting the child, enumerating its
   hidden catalog through ``search_tools`` (anchored name prefixes), reading and verifying every
   tool's disclosure, admitting each one, publishing ``gh_<tool>``. The process's own start-up (imports)
   is measured apart (``agent-connector --version``) and shown beside it.
2. **Search**: median ``search_tools`` round trip through the gateway and directly at the child.
3. **Call**: median ``tools/call`` of one federated tool through the gateway and directly at the child
   (the upstream answers at once): the gateway's per-call overhead on a federated tool.
4. **RSS** of the gateway and of the child after start-up and after the calls (Linux ``/proc``).

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

from scripts.github_openapi import load_github_description
from tests.support.http_server import serve_asgi
from tests.support.raw_http import RecordingUpstream, post_on

_ANNOUNCE = re.compile(r"at (http://\S+/mcp)")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def rss(gateway: int, child: int) -> str:
    return f"gateway {rss_mib(gateway):7.1f} MiB   child {rss_mib(child):7.1f} MiB"


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


def median_ms(http: httpx2.Client, url: str, params: dict[str, Any], runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        response = post_on(http, url, "tools/call", params)
        samples.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.text[:300]
        assert '"error"' not in response.text[:200], response.text[:300]
    return statistics.median(samples)


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

        started = time.perf_counter()
        version = [sys.executable, "-m", "agent_connector_sdk.cli", "--version"]
        subprocess.run(version, check=True, capture_output=True)
        bare = time.perf_counter() - started

        child, child_url, child_start = spawn(
            ["serve", "--openapi", str(document), "--upstream", upstream_url, "--port", "0"], 600
        )
        stack.callback(child.kill)
        gateway, gateway_url, gateway_start = spawn(
            ["gateway", "--child", f"gh={child_url}", "--port", "0", "--no-auth", "--health-detail"], 1800
        )
        stack.callback(gateway.kill)
        health = httpx2.get(gateway_url.removesuffix("/mcp") + "/healthz", timeout=30).json()
        (gh,) = health["children"]
        print(f"process start-up (agent-connector --version)   {bare:6.2f} s")
        print(f"child start-up (serve --openapi GitHub)        {child_start:6.2f} s")
        print(
            f"gateway start-up, federating the child         {gateway_start:6.2f} s   "
            f"{gh['tools']} tools published, {gh['rejected']} withheld/rejected, state {gh['state']}"
        )
        print(f"RSS after start-up    {rss(gateway.pid, child.pid)}")

        http = stack.enter_context(httpx2.Client(timeout=60))
        search = {"arguments": {"pattern": "issues_list_events"}}
        via = median_ms(http, gateway_url, {"name": "search_tools", **search}, options.searches)
        direct = median_ms(http, child_url, {"name": "search_tools", **search}, options.searches)
        print(f"search   via gateway {via:7.2f} ms   directly at the child {direct:7.2f} ms")

        arguments = {"owner": "o", "repo": "r", "issue_number": 7}
        before = len(upstream.requests)  # one upstream request per call
        tool = "issues_list_events_for_timeline"
        via = median_ms(http, gateway_url, {"name": f"gh_{tool}", "arguments": arguments}, options.calls)
        direct = median_ms(http, child_url, {"name": tool, "arguments": arguments}, options.calls)
        reached = len(upstream.requests) - before
        print(
            f"call     via gateway {via:7.2f} ms   directly at the child {direct:7.2f} ms   "
            f"overhead {via - direct:6.2f} ms ({via / direct:.2f}x); {reached} upstream requests for "
            f"{2 * options.calls} calls"
        )
        print(f"RSS after the calls   {rss(gateway.pid, child.pid)}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
