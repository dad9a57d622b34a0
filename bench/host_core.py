"""What the host core's bookkeeping costs per call, next to the bare gate functions, in one run.

Run: ``python -m bench.host_core``. Both sides run the same gates on the same tool, arguments and
result, in process (no network, so only the core's own cost shows): the *bare* side calls the contract
functions directly (``validate_arguments``, the JSON-data check, ``parameter_headers``,
``validate_tool_result``); the *core* side runs ``HostCore.invoke`` + ``HostCore.consume`` (admission
lookup, the issued-call set, audit events into a bounded sink). Timings are medians of interleaved
rounds; printed: both, their ratio, and the bookkeeping per call against the target (≤ 50 µs, under
1 % of a local Streamable HTTP round trip, which ``bench.contract_overhead`` measures at ~6 ms).

A second table shows that the cost of a call does not grow with the catalog: the same call with 10 and
2,000 admitted tools.
"""

from __future__ import annotations

import statistics
import timeit
from typing import Any

from agent_connector_sdk.audit import BoundedAuditSink
from agent_connector_sdk.core.contracts import parameter_headers, validate_arguments, validate_tool_result
from agent_connector_sdk.core.host import HostCore, HostOptions, require_json_data

REPEATS = 7
ROUNDS = 5
CALLS = 2000
TARGET_OVERHEAD = 50e-6
"""Seconds per call. A local Streamable HTTP round trip costs ~6 ms (``bench.contract_overhead``)."""
ROUTE: dict[str, Any] = {
    "name": "route_shipment",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "express": {"type": "boolean", "x-mcp-header": "Express"},
        },
        "required": ["region"],
    },
    "outputSchema": {
        "type": "object",
        "properties": {"region": {"type": "string"}, "carrier": {"type": "string"}},
        "required": ["region", "carrier"],
    },
}
ARGUMENTS = {"region": "Zürich west", "priority": 2, "express": True}
RESULT = {
    "content": [{"type": "text", "text": '{"region":"Zürich west","carrier":"lab-post"}'}],
    "structuredContent": {"region": "Zürich west", "carrier": "lab-post"},
}


def _catalog(size: int) -> list[dict[str, Any]]:
    return [ROUTE] + [
        {"name": f"tool_{index}", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}}
        for index in range(size - 1)
    ]


def bare_calls() -> None:
    for _ in range(CALLS):
        validate_arguments(ROUTE, ARGUMENTS)
        arguments = dict(ARGUMENTS)
        require_json_data(arguments)
        parameter_headers(ROUTE, arguments)
        validate_tool_result(ROUTE, RESULT)


def core_calls(core: HostCore) -> None:
    tool = core.listed_tool("route_shipment")
    for _ in range(CALLS):
        core.consume(core.invoke(tool, ARGUMENTS), RESULT)


def best(fn: Any) -> float:
    return min(timeit.repeat(fn, number=1, repeat=REPEATS)) / CALLS


def main() -> None:
    small, large = (
        HostCore(HostOptions(audit=BoundedAuditSink())),
        HostCore(HostOptions(audit=BoundedAuditSink())),
    )
    small.admit_listing(_catalog(10), pages=1)
    large.admit_listing(_catalog(2000), pages=1)
    bare_calls()  # warm the validator caches for both sides
    core_calls(small)
    bare_times, small_times, large_times = [], [], []
    for _ in range(ROUNDS):  # interleaved, so machine noise hits every side alike
        bare_times.append(best(bare_calls))
        small_times.append(best(lambda: core_calls(small)))
        large_times.append(best(lambda: core_calls(large)))
    bare, core_small, core_large = (statistics.median(t) for t in (bare_times, small_times, large_times))
    overhead = core_small - bare
    print(f"host core per call, in process (median of {ROUNDS} rounds of best-of-{REPEATS}, {CALLS} calls)")
    print(f"  bare gate functions   {bare * 1e6:7.1f} µs")
    print(f"  HostCore, 10 tools    {core_small * 1e6:7.1f} µs   ratio core/bare {core_small / bare:5.3f}")
    scale = core_large / core_small
    print(f"  HostCore, 2000 tools  {core_large * 1e6:7.1f} µs   ratio 2000/10 {scale:5.3f}")
    verdict = "meets" if overhead <= TARGET_OVERHEAD else "misses"
    print(
        f"  bookkeeping +{overhead * 1e6:.1f} µs per call: {verdict} the target "
        f"(≤ {TARGET_OVERHEAD * 1e6:.0f} µs, under 1 % of a local HTTP round trip)"
    )


if __name__ == "__main__":
    main()
