"""Gate overhead per ``tools/call`` over real HTTP, plus the header codec comparison, in one run.

Run: ``python -m bench.contract_overhead`` (from the repository root; ``--pairs N`` to change the sample).

Two copies of the same contract-lab FastMCP server run side by side, each in its own process under
uvicorn on 127.0.0.1: one plain (``server.http_app``), one through ``gated_http_app`` (header parity,
output self-check, cursor guard). One client process calls both, alternating call by call, so machine
noise hits both sides alike. Two measures, per tool:

* **wall time** per round trip (median, and 10 % trimmed mean) as the client sees it;
* **server CPU time** per call: user+system CPU the server process spent over the whole run (read from
  ``/proc``), divided by the calls it served. On a loaded machine this is far steadier than wall time,
  and it is exactly what the gates add.

The ratios gated/plain are printed with the target (≤ 1.05). Then the host-side ``ContractClient.call``
against a plain ``fastmcp.Client`` call on the gated server (wall time), then H2's
``bench.contract_codec`` (our codec vs ``mcp.shared.inbound``; target: ≥ 1.0).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # allow `python bench/contract_overhead.py` as well as `-m`
    sys.path.insert(0, str(ROOT))

import fastmcp  # noqa: E402

from agent_connector_sdk.mcp.client import ContractClient  # noqa: E402

WARMUP_CALLS = 100
TARGET = 1.05
CASES: dict[str, dict[str, Any]] = {
    # exercises the header gate (three Mcp-Param headers) and the output check (object schema)
    "route_shipment": {"region": "eu-west", "priority": 2, "express": True},
    # no headers; array output schema
    "list_regions": {},
}

Call = Callable[[], Awaitable[Any]]


# ------------------------------------------------------------------------------- server processes
def _serve(kind: str, ports: Any) -> None:
    """Child process: build the lab (plain or gated), serve it on an ephemeral port, report the port."""
    import uvicorn

    from agent_connector_sdk.demo.contract_lab import contract_lab_server
    from agent_connector_sdk.mcp.server import gated_http_app

    server = contract_lab_server()
    if kind == "gated":
        app = gated_http_app(server, stateless_http=True)
    elif kind == "output-check-only":
        from agent_connector_sdk.mcp.server.app import install_gates

        install_gates(server)
        app = server.http_app(stateless_http=True)
    elif kind == "header-gate-only":
        from starlette.middleware import Middleware

        from agent_connector_sdk.mcp.server.header_parity import HeaderParityMiddleware

        gate = Middleware(HeaderParityMiddleware, server=server)
        app = server.http_app(stateless_http=True, middleware=[gate])
    else:
        app = server.http_app(stateless_http=True)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    runner = uvicorn.Server(config)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    while not runner.started:
        time.sleep(0.02)
    ports.put(runner.servers[0].sockets[0].getsockname()[1])
    thread.join()


def _cpu_seconds(pid: int) -> float | None:
    """User+system CPU seconds of ``pid`` (Linux ``/proc``), or ``None`` where unavailable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def served(kind: str) -> Iterator[tuple[str, int]]:
    context = multiprocessing.get_context("spawn")
    ports = context.Queue()
    process = context.Process(target=_serve, args=(kind, ports), daemon=True)
    process.start()
    try:
        port = ports.get(timeout=60)
        assert process.pid is not None
        yield f"http://127.0.0.1:{port}/mcp", process.pid
    finally:
        process.terminate()
        process.join(timeout=10)


# ------------------------------------------------------------------------------------ measurement
async def timed(call: Call) -> float:
    started = time.perf_counter()
    await call()
    return time.perf_counter() - started


async def interleaved(left: Call, right: Call, pairs: int) -> tuple[list[float], list[float]]:
    """Per-call seconds of each side, alternating call by call (and which side goes first per pair)."""
    lefts: list[float] = []
    rights: list[float] = []
    for index in range(pairs):
        if index % 2 == 0:
            lefts.append(await timed(left))
            rights.append(await timed(right))
        else:
            rights.append(await timed(right))
            lefts.append(await timed(left))
    return lefts, rights


def trimmed_mean(values: list[float]) -> float:
    ordered = sorted(values)
    cut = len(ordered) // 10
    return statistics.fmean(ordered[cut : len(ordered) - cut])


def verdict(ratio: float) -> str:
    return f"{100 * (ratio - 1):+5.1f} % ({'meets' if ratio <= TARGET else 'misses'} the ≤ +5 % target)"


async def gate_overhead(pairs: int) -> None:
    with served("plain") as (plain_url, plain_pid), served("gated") as (gated_url, gated_pid):
        async with fastmcp.Client(plain_url) as plain, fastmcp.Client(gated_url) as gated:
            # Listing lets the SDK mirror x-mcp-header arguments (spec encoding; identical to ours for
            # these plain-safe values), so both servers receive the same headers.
            await plain.list_tools()
            await gated.list_tools()
            print(f"tools/call over HTTP, servers in separate processes, {pairs} calls per side, alternating")
            for tool, arguments in CASES.items():
                call_plain: Call = lambda t=tool, a=arguments: plain.call_tool_mcp(t, a)  # noqa: E731
                call_gated: Call = lambda t=tool, a=arguments: gated.call_tool_mcp(t, a)  # noqa: E731
                for _ in range(WARMUP_CALLS):
                    await call_plain()
                    await call_gated()
                cpu_before = (_cpu_seconds(plain_pid), _cpu_seconds(gated_pid))
                plain_times, gated_times = await interleaved(call_plain, call_gated, pairs)
                cpu_after = (_cpu_seconds(plain_pid), _cpu_seconds(gated_pid))
                wall_ratio = statistics.median(gated_times) / statistics.median(plain_times)
                print(f"  {tool}")
                print(
                    f"    wall/call   plain {statistics.median(plain_times) * 1e3:6.3f} ms"
                    f"  gated {statistics.median(gated_times) * 1e3:6.3f} ms"
                    f"  ratio(median) {wall_ratio:5.3f}"
                    f"  ratio(trimmed mean) {trimmed_mean(gated_times) / trimmed_mean(plain_times):5.3f}"
                )
                if None in cpu_before or None in cpu_after:
                    print("    server CPU  unavailable (no /proc)")
                    print(f"    overhead (wall, median) {verdict(wall_ratio)}")
                    continue
                plain_cpu = (cpu_after[0] - cpu_before[0]) / pairs  # type: ignore[operator]
                gated_cpu = (cpu_after[1] - cpu_before[1]) / pairs  # type: ignore[operator]
                cpu_ratio = gated_cpu / plain_cpu
                print(
                    f"    server CPU  plain {plain_cpu * 1e6:6.0f} µs  gated {gated_cpu * 1e6:6.0f} µs"
                    f"  ratio {cpu_ratio:5.3f}  (+{(gated_cpu - plain_cpu) * 1e6:.0f} µs per call)"
                )
                print(f"    overhead: wall (median) {verdict(wall_ratio)}; server CPU {verdict(cpu_ratio)}")

        async with (
            fastmcp.Client(gated_url) as raw,
            ContractClient(fastmcp.Client(gated_url)) as contract,
        ):
            await raw.list_tools()
            await contract.discover_tools()
            tool, arguments = "route_shipment", CASES["route_shipment"]

            async def call_raw() -> Any:
                return await raw.call_tool_mcp(tool, arguments)

            async def call_contract() -> Any:
                return await contract.call(tool, arguments)

            for _ in range(WARMUP_CALLS):
                await call_raw()
                await call_contract()
            raw_times, contract_times = await interleaved(call_raw, call_contract, pairs)
            ratio = statistics.median(contract_times) / statistics.median(raw_times)
            print(f"  host gates (ContractClient.call vs fastmcp call_tool_mcp): {tool}")
            print(
                f"    wall/call   plain {statistics.median(raw_times) * 1e3:6.3f} ms"
                f"  gated {statistics.median(contract_times) * 1e3:6.3f} ms  ratio(median) {ratio:5.3f}"
                f"  ratio(trimmed mean) {trimmed_mean(contract_times) / trimmed_mean(raw_times):5.3f}"
            )


async def attribution(pairs: int) -> None:
    """Server CPU per call of each gate alone (route_shipment), against the plain server."""
    tool, arguments = "route_shipment", CASES["route_shipment"]
    print(f"attribution (server CPU per call, {tool}, {pairs} calls per side)")
    for kind in ("output-check-only", "header-gate-only", "gated"):
        with served("plain") as (plain_url, plain_pid), served(kind) as (other_url, other_pid):
            async with fastmcp.Client(plain_url) as plain, fastmcp.Client(other_url) as other:
                await plain.list_tools()
                await other.list_tools()
                call_plain: Call = lambda c=plain: c.call_tool_mcp(tool, arguments)  # noqa: E731
                call_other: Call = lambda c=other: c.call_tool_mcp(tool, arguments)  # noqa: E731
                for _ in range(WARMUP_CALLS):
                    await call_plain()
                    await call_other()
                before = (_cpu_seconds(plain_pid), _cpu_seconds(other_pid))
                await interleaved(call_plain, call_other, pairs)
                after = (_cpu_seconds(plain_pid), _cpu_seconds(other_pid))
        if None in before or None in after:
            print("  server CPU unavailable (no /proc)")
            return
        plain_cpu = (after[0] - before[0]) / pairs  # type: ignore[operator]
        other_cpu = (after[1] - before[1]) / pairs  # type: ignore[operator]
        print(
            f"  {kind:<18} plain {plain_cpu * 1e6:6.0f} µs  with {other_cpu * 1e6:6.0f} µs"
            f"  ratio {other_cpu / plain_cpu:5.3f}  (+{(other_cpu - plain_cpu) * 1e6:.0f} µs per call)"
        )


def codec_comparison() -> None:
    try:
        from bench import contract_codec
    except ImportError as missing:
        print(f"codec comparison skipped: {missing}")
        return
    print()
    contract_codec.main()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pairs", type=int, default=1000, help="calls per side and tool (default 1000)")
    parser.add_argument(
        "--attribution", action="store_true", help="also measure each server gate alone (server CPU)"
    )
    arguments = parser.parse_args()
    asyncio.run(gate_overhead(arguments.pairs))
    if arguments.attribution:
        print()
        asyncio.run(attribution(arguments.pairs))
    codec_comparison()


if __name__ == "__main__":
    main()
