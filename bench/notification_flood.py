"""What a notification flood costs the host, per notification, over real stdio and Streamable HTTP.

Run: ``python -m bench.notification_flood [N]`` (default 20,000). For each transport and each kind
(log, progress) a ``ContractClient`` calls ``clean`` on :mod:`tests.support.hostile_server` in flood
mode (``N`` notifications, then the result) and, as the baseline, in mode ``log_flood-0`` (the same
call with no flood). Printed: this process's CPU seconds for the call (the host's side; over HTTP the
server runs in this process too, so its share is included there), the extra CPU per notification, how
many were relayed and dropped, and, for scale, the CPU of ``python -c "import json"``. The issue's
case before the bound: 20,000 log notifications cost 52 s of CPU over stdio and 134 s wall over HTTP.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from typing import Any

import fastmcp
from fastmcp.client.transports.stdio import StdioTransport

from agent_connector_sdk.core.host import HostBounds, HostOptions
from agent_connector_sdk.mcp.host.contract_client import ContractClient
from tests.support.hostile_server import hostile_app
from tests.support.http_server import serve_asgi


async def _quiet(message: Any) -> None:
    return None  # relayed log lines are not printed: the bench measures the host, not a terminal


async def _call_cpu(target: Any) -> tuple[float, int, int]:
    client = fastmcp.Client(target, timeout=600, log_handler=_quiet)
    options = HostOptions(bounds=HostBounds(), require_confirmation=False)
    async with ContractClient(client, options) as host:
        await host.discover_tools()
        started = time.process_time()
        result = await host.call("clean", {"q": "x"})
        spent = time.process_time() - started
        tally = host.session.notifications.tally
    assert not result.is_error
    return spent, tally.total_received - tally.total_dropped, tally.total_dropped


def _target(base: str, transport: str, mode: str) -> Any:
    if transport == "http":
        return f"{base}/{mode}/mcp"
    return StdioTransport(sys.executable, ["-m", "tests.support.hostile_server", mode], keep_alive=False)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    wall = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import json"], check=True)
    interpreter = time.perf_counter() - wall
    print(f"python -c 'import json': {interpreter:.3f} s wall")
    print(
        f"{'transport':<10}{'kind':<10}{'N':>9}{'call CPU s':>12}{'baseline s':>12}{'µs/notif':>10}"
        f"{'relayed':>9}{'dropped':>9}"
    )
    with serve_asgi(hostile_app(), path="") as base:
        for transport in ("stdio", "http"):
            baseline, _, _ = asyncio.run(_call_cpu(_target(base, transport, "log_flood-0")))
            for kind in ("log_flood", "progress_flood"):
                spent, relayed, dropped = asyncio.run(_call_cpu(_target(base, transport, f"{kind}-{count}")))
                per = (spent - baseline) / count * 1e6
                print(
                    f"{transport:<10}{kind.split('_')[0]:<10}{count:>9,}{spent:>12.3f}{baseline:>12.3f}"
                    f"{per:>10.1f}{relayed:>9,}{dropped:>9,}"
                )


if __name__ == "__main__":
    main()
