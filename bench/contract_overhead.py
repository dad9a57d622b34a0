"""Gate overhead per ``tools/call`` over real HTTP, plus the header codec comparison, in one run.

Run: ``python -m bench.contract_overhead`` (from the repository root; ``--pairs N`` to change the sample).

Two copies of the same contract-lab FastMCP server run side by side, each in its own process under
uvicorn on 127.0.0.1: one plain (``server.http_app``), one through ``gated_http_app`` (header parity,
output self-check, cursor guard). One client process calls both, alternating call by call, so machine
noise hits both sides alike. Two measures, per tool:

* **wall time** per round trip (median, and 10 % trimmed mean) as the client sees it;
* **server CPU time** per call: user+system CPU the server process spent over the whole run (its own
  ``time.process_time``, asked over a pipe), divided by the calls it served. On a loaded machine this
  is far steadier than wall time, and it is exactly what the gates add. The run is split into blocks
  and the median of the per-block CPU ratios is printed too, so one noisy burst moves one block only.

The ratios gated/plain are printed with the target (≤ 1.05). Then the host-side ``ContractClient.call``
against a plain ``fastmcp.Client`` call on the gated server (wall time), then H2's
``bench.contract_codec`` (our codec vs ``mcp.shared.inbound``; target: ≥ 1.0).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
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

from agent_connector_sdk.mcp.host import HostOptions  # noqa: E402
from agent_connector_sdk.mcp.host.contract_client import ContractClient  # noqa: E402

WARMUP_CALLS = 100
BLOCKS = 5
TARGET = 1.05
CASES: dict[str, dict[str, Any]] = {
    # exercises the header gate (three Mcp-Param headers) and the output check (object schema)
    "route_shipment": {"region": "eu-west", "priority": 2, "express": True},
    # no headers; array output schema
    "list_regions": {},
}

Call = Callable[[], Awaitable[Any]]


# ------------------------------------------------------------------------------- server processes
def _serve(kind: str, ports: Any, cpu_channel: Any) -> None:
    """Child process: build the lab (plain or gated), serve it on an ephemeral port, report the port;
    answer each message on ``cpu_channel`` with this process's CPU seconds (all threads, ns clock)."""
    import uvicorn

    from agent_connector_sdk.demo.contract_lab import contract_lab_server
    from agent_connector_sdk.mcp.server import gated_http_app

    server = contract_lab_server()
    if kind == "gated":
        app = gated_http_app(server, stateless_http=True)
    elif kind == "output-check-only":
        from agent_connector_sdk.mcp.server import OutputSelfCheck
        from agent_connector_sdk.mcp.server._resolution import install_resolution

        server.add_middleware(OutputSelfCheck())
        install_resolution(server, None, arguments=False)  # only records the resolved tool for the check
        app = server.http_app(stateless_http=True)
    elif kind == "header-gate-only":
        from starlette.middleware import Middleware

        from agent_connector_sdk.mcp.server import GatedEntry, HeaderParityGate
        from agent_connector_sdk.mcp.server._resolution import install_resolution

        resolution = install_resolution(server, HeaderParityGate())
        gate = Middleware(GatedEntry, server=server, resolution=resolution)
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

    def answer_cpu_probes() -> None:
        while True:
            cpu_channel.recv()
            cpu_channel.send(time.process_time())

    threading.Thread(target=answer_cpu_probes, daemon=True).start()
    thread.join()


CpuProbe = Callable[[], float]
"""User+system CPU seconds of one server process so far (``time.process_time`` there: nanosecond clock,
where ``/proc/<pid>/stat`` ticks are 10 ms — too coarse for per-block ratios)."""


@contextmanager
def served(kind: str) -> Iterator[tuple[str, CpuProbe]]:
    context = multiprocessing.get_context("spawn")
    ports = context.Queue()
    parent_end, child_end = context.Pipe()
    process = context.Process(target=_serve, args=(kind, ports, child_end), daemon=True)
    process.start()

    def cpu() -> float:
        parent_end.send(None)
        return float(parent_end.recv())

    try:
        port = ports.get(timeout=60)
        yield f"http://127.0.0.1:{port}/mcp", cpu
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


async def in_blocks(
    left: Call, right: Call, pairs: int, probes: tuple[CpuProbe, CpuProbe]
) -> tuple[list[float], list[float], list[float]]:
    """``interleaved`` in ``BLOCKS`` consecutive blocks, plus each block's server CPU ratio right/left.

    One burst of machine noise (another process, a GC pause) then moves one block's ratio, not the
    whole estimate: the median block ratio is printed next to the whole-run ratio.
    """
    lefts: list[float] = []
    rights: list[float] = []
    ratios: list[float] = []
    size = max(1, pairs // BLOCKS)
    done = 0
    while done < pairs:
        count = min(size, pairs - done)
        before = (probes[0](), probes[1]())
        block_left, block_right = await interleaved(left, right, count)
        after = (probes[0](), probes[1]())
        lefts += block_left
        rights += block_right
        done += count
        if after[0] > before[0]:
            ratios.append((after[1] - before[1]) / (after[0] - before[0]))
    return lefts, rights, ratios


def trimmed_mean(values: list[float]) -> float:
    ordered = sorted(values)
    cut = len(ordered) // 10
    return statistics.fmean(ordered[cut : len(ordered) - cut])


def verdict(ratio: float) -> str:
    return f"{100 * (ratio - 1):+5.1f} % ({'meets' if ratio <= TARGET else 'misses'} the ≤ +5 % target)"


async def gate_overhead(pairs: int) -> None:
    with served("plain") as (plain_url, plain_cpu_probe), served("gated") as (gated_url, gated_cpu_probe):
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
                cpu_before = (plain_cpu_probe(), gated_cpu_probe())
                plain_times, gated_times, block_ratios = await in_blocks(
                    call_plain, call_gated, pairs, (plain_cpu_probe, gated_cpu_probe)
                )
                cpu_after = (plain_cpu_probe(), gated_cpu_probe())
                wall_ratio = statistics.median(gated_times) / statistics.median(plain_times)
                print(f"  {tool}")
                print(
                    f"    wall/call   plain {statistics.median(plain_times) * 1e3:6.3f} ms"
                    f"  gated {statistics.median(gated_times) * 1e3:6.3f} ms"
                    f"  ratio(median) {wall_ratio:5.3f}"
                    f"  ratio(trimmed mean) {trimmed_mean(gated_times) / trimmed_mean(plain_times):5.3f}"
                )
                plain_cpu = (cpu_after[0] - cpu_before[0]) / pairs
                gated_cpu = (cpu_after[1] - cpu_before[1]) / pairs
                cpu_ratio = gated_cpu / plain_cpu
                print(
                    f"    server CPU  plain {plain_cpu * 1e6:6.0f} µs  gated {gated_cpu * 1e6:6.0f} µs"
                    f"  ratio {cpu_ratio:5.3f}  (+{(gated_cpu - plain_cpu) * 1e6:.0f} µs per call)"
                )
                if block_ratios:
                    print(
                        f"    server CPU ratio per block of {pairs // BLOCKS} pairs: median"
                        f" {statistics.median(block_ratios):5.3f} (min {min(block_ratios):5.3f},"
                        f" max {max(block_ratios):5.3f})"
                    )
                print(f"    overhead: wall (median) {verdict(wall_ratio)}; server CPU {verdict(cpu_ratio)}")

        async with (
            fastmcp.Client(gated_url) as raw,
            # Confirmation is the host's UI, not gate overhead: opted out so both sides send the same call.
            ContractClient(
                fastmcp.Client(gated_url), options=HostOptions(require_confirmation=False)
            ) as contract,
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
    """Server CPU per call of each gate alone, per tool, against the plain server (median block ratio)."""
    print(f"attribution (server CPU per call, {pairs} calls per side)")
    for kind in ("output-check-only", "header-gate-only", "gated"):
        with served("plain") as (plain_url, plain_cpu_probe), served(kind) as (other_url, other_cpu_probe):
            async with fastmcp.Client(plain_url) as plain, fastmcp.Client(other_url) as other:
                await plain.list_tools()
                await other.list_tools()
                for tool, arguments in CASES.items():
                    call_plain: Call = lambda c=plain, t=tool, a=arguments: c.call_tool_mcp(t, a)  # noqa: E731
                    call_other: Call = lambda c=other, t=tool, a=arguments: c.call_tool_mcp(t, a)  # noqa: E731
                    for _ in range(WARMUP_CALLS):
                        await call_plain()
                        await call_other()
                    before = (plain_cpu_probe(), other_cpu_probe())
                    _, _, block_ratios = await in_blocks(
                        call_plain, call_other, pairs, (plain_cpu_probe, other_cpu_probe)
                    )
                    after = (plain_cpu_probe(), other_cpu_probe())
                    plain_cpu = (after[0] - before[0]) / pairs
                    other_cpu = (after[1] - before[1]) / pairs
                    print(
                        f"  {kind:<18} {tool:<15} plain {plain_cpu * 1e6:5.0f} µs"
                        f"  with {other_cpu * 1e6:5.0f} µs"
                        f"  (+{(other_cpu - plain_cpu) * 1e6:3.0f} µs)  ratio {other_cpu / plain_cpu:5.3f},"
                        f" per-block median {statistics.median(block_ratios):5.3f}"
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
