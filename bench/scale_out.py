"""Benchmark: gated ``tools/call`` and disclosure reads on one replica vs two replicas behind nginx.

    python -m bench.scale_out [--requests N] [--concurrency N] [--rounds N] [--load-processes N]

Every replica is its own process (``python -m bench.scale_out --replica ...``: the contract lab with the
gates, a search transform, disclosure resources and ``build_replica_app``), so replicas do not share an
interpreter; the state store is a real ``redis-server`` and the balancer a real nginx running the
shipped ``deploy/agent-connector.nginx.conf``. Four set-ups, all started once and measured interleaved
round by round in one run:

1. one replica, embedded state, direct                 (the single-process baseline)
2. one replica, Redis state, direct                    (the cost of the shared catalog read)
3. one replica, Redis state, behind nginx              (the cost of the balancer hop)
4. two replicas, Redis state, behind nginx             (scale-out)

Operations: ``tools/call route_shipment`` with its ``Mcp-Param-Region`` header (header parity,
argument and output checks all run), and ``resources/read`` of its disclosure manifest (re-authorized
and re-hashed on every read). Each request's answer is checked; errors are counted (expected: 0).
Load comes from ``--load-processes`` client processes, each keeping ``--concurrency`` requests in flight.
Printed: requests per second (best round), p50/p99 latency over all rounds, errors, the replicas' CPU
time per request (summed over the set-up's replica processes, read from ``/proc``; on a shared, busy
machine this is the steadier number: capacity ≈ cores available to replicas / CPU per request), and
the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2

from tests.support.services import SHIPPED_REPLICAS, free_port, nginx_balancer, redis_server

# Load processes import only httpx2: the protocol constants are repeated here rather than imported from
# the replica module (which pulls in FastMCP and would slow every load process's start).
PROTOCOL_VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench-scale-out", "version": "0"},
}
REGION = "ap-south"  # routes to the default pool (all replicas) in the shipped nginx config
OPERATIONS = ("tools/call", "disclosure read")


# ----------------------------------------------------------------------------------------- replica
def _run_replica(port: int, state: str, replica_id: str) -> None:
    import uvicorn

    from tests.support.replica import lab_replica

    app, _ = lab_replica(None if state == "memory" else state, replica_id=replica_id, limit=10**6)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux ``/proc``)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def replica_process(state: str, replica_id: str) -> Iterator[tuple[str, int]]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.scale_out", "--replica", str(port), state, replica_id],
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"replica {replica_id} exited with {process.returncode}")
            try:
                if httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx2.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"replica {replica_id} did not start")
            time.sleep(0.1)
        yield f"127.0.0.1:{port}", process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _manifest_uri() -> str:
    from agent_connector_sdk.demo.contract_lab import contract_lab_server
    from tests.support.replica import _lab_disclosures, lab_manifest_uri

    return lab_manifest_uri(_lab_disclosures(contract_lab_server()), "route_shipment")


# -------------------------------------------------------------------------------------------- load
def _request(operation: str, manifest: str) -> tuple[bytes, list[tuple[str, str]]]:
    if operation == "tools/call":
        method, params = "tools/call", {"name": "route_shipment", "arguments": {"region": REGION}}
        extra = [("mcp-name", "route_shipment"), ("mcp-param-region", REGION)]
    else:
        method, params = "resources/read", {"uri": manifest}
        extra = [("mcp-name", manifest)]
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
    headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", PROTOCOL_VERSION),
        ("mcp-method", method),
        ("authorization", "Bearer analyst-token"),
        *extra,
    ]
    return json.dumps(body).encode(), headers


def _answer_ok(operation: str, response: httpx2.Response, manifest: str) -> bool:
    if response.status_code != 200:
        return False
    result = response.json().get("result")
    if not isinstance(result, dict):
        return False
    if operation == "tools/call":
        return result.get("isError") is False and result["structuredContent"]["region"] == REGION
    return bool(result.get("contents")) and result["contents"][0]["uri"] == manifest


async def _load(url: str, operation: str, manifest: str, requests: int, concurrency: int) -> dict[str, Any]:
    body, headers = _request(operation, manifest)
    latencies: list[float] = []
    errors = 0
    remaining = requests
    limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx2.AsyncClient(limits=limits, timeout=30.0) as client:
        # Warm the connections (not timed).
        await asyncio.gather(*(client.post(url, content=body, headers=headers) for _ in range(concurrency)))

        async def worker() -> None:
            nonlocal remaining, errors
            while remaining > 0:
                remaining -= 1
                started = time.perf_counter()
                try:
                    response = await client.post(url, content=body, headers=headers)
                    ok = _answer_ok(operation, response, manifest)
                except httpx2.HTTPError:
                    ok = False
                latencies.append(time.perf_counter() - started)
                errors += not ok

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    return {"elapsed": elapsed, "latencies": latencies, "errors": errors}


def _run_load(argv: list[str]) -> None:
    url, operation, manifest, requests, concurrency = argv
    print(json.dumps(asyncio.run(_load(url, operation, manifest, int(requests), int(concurrency)))))


def measure(url: str, operation: str, manifest: str, requests: int, concurrency: int, processes: int) -> Any:
    """Run ``processes`` load processes at once against ``url``; their wall time is the slowest one's."""
    share = max(1, requests // processes)
    launched = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.scale_out",
                "--load",
                url,
                operation,
                manifest,
                str(share),
                str(concurrency),
            ],
            stdout=subprocess.PIPE,
        )
        for _ in range(processes)
    ]
    outputs = [json.loads(p.communicate()[0]) for p in launched]
    return {
        "elapsed": max(o["elapsed"] for o in outputs),
        "requests": share * processes,
        "latencies": [x for o in outputs for x in o["latencies"]],
        "errors": sum(o["errors"] for o in outputs),
    }


@dataclass
class Series:
    label: str
    url: str
    pids: list[int]
    cpu_ms: dict[str, list[float]] = field(default_factory=lambda: {op: [] for op in OPERATIONS})
    rates: dict[str, list[float]] = field(default_factory=lambda: {op: [] for op in OPERATIONS})
    latencies: dict[str, list[float]] = field(default_factory=lambda: {op: [] for op in OPERATIONS})
    errors: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OPERATIONS, 0))


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--requests", type=int, default=1200, help="requests per set-up, operation and round")
    parser.add_argument("--concurrency", type=int, default=8, help="in-flight requests per load process")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--load-processes", type=int, default=2)
    args = parser.parse_args()
    manifest = _manifest_uri()
    with ExitStack() as stack:
        redis = stack.enter_context(redis_server())
        from tests.support.replica import initialize_catalog

        initialize_catalog(redis.url, prefix="agent-connector")  # the operator's one-time `state init`
        embedded, embedded_pid = stack.enter_context(replica_process("memory", "embedded"))
        first, first_pid = stack.enter_context(replica_process(redis.url, "replica-1"))
        second, second_pid = stack.enter_context(replica_process(redis.url, "replica-2"))
        one = stack.enter_context(nginx_balancer({SHIPPED_REPLICAS[0]: first, SHIPPED_REPLICAS[1]: first}))
        two = stack.enter_context(nginx_balancer({SHIPPED_REPLICAS[0]: first, SHIPPED_REPLICAS[1]: second}))
        series = [
            Series("1 replica, embedded state, direct", f"http://{embedded}/mcp", [embedded_pid]),
            Series("1 replica, Redis state, direct", f"http://{first}/mcp", [first_pid]),
            Series("1 replica, Redis state, via nginx", f"{one}/mcp", [first_pid]),
            Series("2 replicas, Redis state, via nginx", f"{two}/mcp", [first_pid, second_pid]),
        ]
        for _ in range(args.rounds):
            for operation in OPERATIONS:
                for s in series:
                    before = sum(cpu_seconds(pid) for pid in s.pids)
                    run = measure(
                        s.url, operation, manifest, args.requests, args.concurrency, args.load_processes
                    )
                    spent = sum(cpu_seconds(pid) for pid in s.pids) - before
                    # Includes the untimed warm-up requests (one per connection per load process).
                    total = run["requests"] + args.concurrency * args.load_processes
                    s.cpu_ms[operation].append(spent * 1000 / total)
                    s.rates[operation].append(run["requests"] / run["elapsed"])
                    s.latencies[operation].extend(run["latencies"])
                    s.errors[operation] += run["errors"]
    load = os.getloadavg()
    print(
        f"{os.cpu_count()} CPUs (load average {load[0]:.1f}); {args.load_processes} load processes x "
        f"{args.concurrency} in flight; {args.requests} requests per set-up/operation/round, "
        f"{args.rounds} rounds (best round's rate; latency over all rounds)"
    )
    print(
        f"{'set-up':<38} {'operation':<16} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}"
        f" {'replica CPU ms/req':>19}"
    )
    for s in series:
        for operation in OPERATIONS:
            lat = s.latencies[operation]
            print(
                f"{s.label:<38} {operation:<16} {max(s.rates[operation]):>8.0f} "
                f"{_percentile(lat, 0.50) * 1000:>8.2f} {_percentile(lat, 0.99) * 1000:>8.2f} "
                f"{s.errors[operation]:>7} {min(s.cpu_ms[operation]):>19.2f}"
            )
    for operation in OPERATIONS:
        best = {s.label: max(s.rates[operation]) for s in series}
        base, redis_direct, one_nginx, two_nginx = (best[s.label] for s in series)
        print(
            f"{operation}: 2 replicas / 1 replica (both via nginx) = {two_nginx / one_nginx:.2f}x; "
            f"2 replicas via nginx / 1 replica direct = {two_nginx / redis_direct:.2f}x; "
            f"Redis state / embedded (1 replica, direct) = {redis_direct / base:.2f}x"
        )
    if any(s.errors[op] for s in series for op in OPERATIONS):
        sys.exit(1)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--replica":
        _run_replica(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    elif len(sys.argv) > 1 and sys.argv[1] == "--load":
        _run_load(sys.argv[2:])
    else:
        main()
