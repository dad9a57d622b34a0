"""``gateway --check``'s enumeration of one search-first child in a process of its own, with bounds a
test picks, and this process's memory as ``/proc`` tells it:

    python -m tests.support.check_run URL [--searches N] [--seconds S] [--state redis://...]

does what ``gateway --check`` does with each child (``enumerate_all``, a progress reporter on stderr,
``start(supervise=False)``), through the public :class:`~agent_connector_sdk.gateway.Gateway`, and prints
one JSON object: the enumeration (``partial`` or null, totals, searches), the process's resident set
before connecting (``rss_before_kb``: the same gateway without the child's catalog) and its peak
(``peak_kb``, ``VmHWM``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import anyio

from agent_connector_sdk.cli.gateway import EnumerationProgress
from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig


def status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise LookupError(field)


async def run(url: str, searches: int | None, seconds: float | None, state: str | None) -> dict[str, object]:
    config = GatewayConfig(children=(ChildSpec("big", url=url),), connect_timeout=120)
    gateway = Gateway(config)
    if state is not None:
        from agent_connector_sdk.gateway import shared_disclosures

        gateway.verified.shared = shared_disclosures(state, config.children)  # as --state wires it
    child = gateway.children["big"]
    child.enumerate_all = True
    child.progress = progress = EnumerationProgress(child.name)
    if searches is not None:
        child.enumeration_searches = searches
    if seconds is not None:
        child.enumeration_seconds = seconds
    before = status_kb("VmRSS")
    try:
        await gateway.start(supervise=False)
    finally:
        progress.close()
        await gateway.stop()
    federation = child.federation
    if federation is None:
        return {"state": child.state, "reason": child.reason, "last_error": str(child.last_error)}
    return {
        "partial": federation.partial,
        "admitted_total": federation.admitted_total,
        "rejected_total": federation.rejected_total,
        "admitted_held": len(federation.admitted),
        "searches": federation.searches,
        "rss_before_kb": before,
        "peak_kb": status_kb("VmHWM"),
    }


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--searches", type=int)
    parser.add_argument("--seconds", type=float)
    parser.add_argument("--state")
    args = parser.parse_args(argv)
    outcome = anyio.run(run, args.url, args.searches, args.seconds, args.state)
    print(json.dumps(outcome), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
