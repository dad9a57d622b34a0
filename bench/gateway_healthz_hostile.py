"""``/healthz`` latency of a gateway under each hostile child, while callers' searches fan out to it.

Run: ``python -m bench.gateway_healthz_hostile`` (from the repository root; ``--probes N``).

One gateway process per case, each with one healthy listed child (the tests' weather server) and the
hostile one: a search-first child whose search takes 3 s (``slow``), one inventing names and misstating
digests (``liar``), one whose ``tools/list`` cursors cycle A→B→A (``cyclic``), and a search-first child
SIGSTOPped once the gateway has it up (``stopped``). While a thread searches through the gateway
without pause, ``/healthz`` is probed ``--probes`` times; the median and the worst latency are printed
beside the gateway's RSS (target of the issue: every answer within 2 s). Tests assert only that
``/healthz`` answers; this script says how fast. The machine may be shared: compare with ``none``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx2

from agent_connector_sdk.mcp.server import gated_http_app
from tests.gateway.test_federation_on_demand import _child, _gateway, _rss_mb, _search
from tests.support.gateway_children import weather_server
from tests.support.hostile_server import hostile_app
from tests.support.http_server import serve_asgi


@contextmanager
def hostile_child(case: str, stack: ExitStack) -> Iterator[tuple[str | None, int | None]]:
    """The hostile child's URL (``None`` for the baseline) and the pid to SIGSTOP, if any."""
    if case == "none":
        yield None, None
    elif case == "cyclic":
        base = stack.enter_context(serve_asgi(hostile_app(), path=""))
        yield f"{base}/cyclic_pages/mcp", None
    else:
        mode = {"slow": "slow", "liar": "liar", "stopped": "notes"}[case]
        process, url = stack.enter_context(_child(mode))
        try:
            yield url, process.pid if case == "stopped" else None
        finally:
            os.kill(process.pid, signal.SIGCONT)


def measure(case: str, probes: int, small: str) -> str:
    with ExitStack() as stack, hostile_child(case, stack) as (url, stop_pid):
        children = [f"small={small}"] + ([] if url is None else [f"bad={url}"])
        process, gateway = stack.enter_context(_gateway(*children))
        health = gateway.removesuffix("/mcp") + "/healthz"
        time.sleep(2.0)  # the hostile child connected (or refused) meanwhile
        if stop_pid is not None:
            os.kill(stop_pid, signal.SIGSTOP)
        done = threading.Event()

        def searching() -> None:
            round_ = 0
            while not done.is_set():
                with contextlib.suppress(Exception):  # a failed search is the child's doing: go on
                    _search(gateway, f"x{round_}")
                round_ += 1

        thread = threading.Thread(target=searching, daemon=True)
        thread.start()
        latencies = []
        with httpx2.Client(timeout=60) as http:
            for _ in range(probes):
                started = time.perf_counter()
                http.get(health)
                latencies.append(time.perf_counter() - started)
                time.sleep(0.2)
        done.set()
        thread.join(timeout=30)
        return (
            f"/healthz under {case:8s} median {statistics.median(latencies) * 1000:7.1f} ms   "
            f"worst {max(latencies) * 1000:7.1f} ms   (target <= 2000 ms)   gateway RSS "
            f"{_rss_mb(process.pid):6.1f} MiB"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--probes", type=int, default=25)
    parser.add_argument("--cases", default="none,slow,liar,cyclic,stopped")
    options = parser.parse_args()
    with serve_asgi(gated_http_app(weather_server(), stateless_http=True)) as small:
        for case in options.cases.split(","):
            print(measure(case, options.probes, small), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
