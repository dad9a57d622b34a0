"""Load and soak on loopback: 50 concurrent clients, a fixed request mix, two identical rounds.

Run: ``python -m bench.load`` (``--clients N --iterations N --max-seconds S``; ``--json`` for a machine-
readable summary, which ``scripts/reliability_report.py`` uses).

A child process serves, on 127.0.0.1 only, under uvicorn:

* the **GitHub connector**: the embedded extract's operations as tools behind a ``RegexSearchTransform``
  with schema disclosure resources and the contract gates (what ``agent-connector serve`` assembles),
  calling a local fake upstream in the same process;
* the **contract lab** through ``gated_http_app``.

Each client runs, per iteration, the same fixed mix of raw 2026-07-28 requests (httpx2): a search, a
manifest read, a fragment read, a gated call through the search proxy (GitHub), a gated call with three
``Mcp-Param-*`` headers and a plain call (lab). Every answer is checked: HTTP 200 and the expected
result shape; anything else counts as an error (must be 0). Bounded in both count and time: each round
is ``clients × iterations`` iterations and stops early at ``--max-seconds``.

Printed per round: requests, errors, p50/p99 latency, and the server process's RSS before round 1 and
after each round (a bounded server's RSS after round 2 stays near round 1's).

``--adversarial`` puts the GitHub connector behind FastMCP's JWT verifier (a key made at start-up; the
honest clients carry a valid token) and runs the honest mix twice: a clean round, then the same round
while a separate attacker process sends what round three of the attacks sent, all without valid
credentials: slow bodies (``--slow-senders``, default 200, each from its own 127.0.0.x address,
dribbling a body that never completes, reconnecting when answered), one-string bodies (4 workers
posting a 3.9 MB body that is one JSON string) and bad tokens (4 workers posting ordinary calls with
a forged JWT). The honest clients' requests, error rate and p50/p99 are printed side by side, with
what the attackers were answered.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # allow `python bench/load.py` as well as `-m`
    sys.path.insert(0, str(ROOT))

import httpx2  # noqa: E402

PROTOCOL_VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench-load", "version": "0"},
}
TIMELINE = "issues_list_events_for_timeline"
JWT_ISSUER = "https://bench.invalid/"
JWT_AUDIENCE = "bench-load"
MIX = ("search", "manifest", "fragment", "github_call", "lab_headers", "lab_plain")


# ------------------------------------------------------------------------------------ server side
def _serve(ready: Any, probe: bool = False, adversarial: bool = False) -> None:
    """Child process: the fake upstream, the GitHub connector and the lab, each on its own port. With
    ``probe``, it answers each ``"probe"`` on the pipe with what grew since the previous one (live
    objects by type, allocated bytes by line: allocations are traced from the first probe on)."""
    import threading

    import uvicorn
    from fastmcp.server.transforms.search import RegexSearchTransform
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from agent_connector_sdk.connectors import (
        build_openapi_server,
        build_tool_disclosures,
        load_github_extract,
    )
    from agent_connector_sdk.core.contracts import RateLimiter
    from agent_connector_sdk.core.schema_disclosure import SourceDigest
    from agent_connector_sdk.demo.contract_lab import contract_lab_app
    from agent_connector_sdk.mcp.schema_disclosure_provider import (
        describe_schema_tools,
        register_schema_resources,
    )
    from agent_connector_sdk.mcp.server import RequestBounds, ServerGates, cache_tool_catalog

    async def upstream_handler(request: Any) -> JSONResponse:
        return JSONResponse([{"event": "labeled", "id": 1, "node_id": "LE_1"}])

    upstream = Starlette(routes=[Route("/{path:path}", upstream_handler, methods=["GET", "PUT", "POST"])])

    def start(app: Any) -> int:
        server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", lifespan="on")
        )
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.02)
        return int(server.servers[0].sockets[0].getsockname()[1])

    upstream_port = start(upstream)
    source = load_github_extract()
    built = build_openapi_server(source.document, base_url=f"http://127.0.0.1:{upstream_port}")
    disclosures = asyncio.run(build_tool_disclosures(built, SourceDigest.of(source.raw)))
    search = RegexSearchTransform(search_result_serializer=describe_schema_tools)
    built.server.add_transform(search)
    register_schema_resources(built.server, search, disclosures)
    cache_tool_catalog(built.server, search)  # as `serve` does: nothing edits these tools in place
    # The load clients stand for many callers but all come from 127.0.0.1 without a token: the
    # per-caller in-flight cap (which would key them all as one peer) is lifted; the server-wide one stays.
    bounds = RequestBounds(max_in_flight_per_caller=RequestBounds().max_in_flight)
    token = None
    if adversarial:  # the GitHub connector behind a real JWT verifier; honest clients hold a token
        import logging

        from fastmcp.server.auth.providers.jwt import RSAKeyPair

        logging.getLogger("fastmcp").setLevel(logging.WARNING)  # one INFO line per refused attacker

        from agent_connector_sdk.gateway import AuthSettings

        key = RSAKeyPair.generate()
        settings = AuthSettings(issuer=JWT_ISSUER, audience=JWT_AUDIENCE, public_key_pem=key.public_key)
        built.server.auth = settings.verifier()
        token = key.create_token(issuer=JWT_ISSUER, audience=JWT_AUDIENCE, expires_in_seconds=3600)
    gates = ServerGates(request_bounds=bounds)
    github_app = gates.http_app(built.server, stateless_http=True, json_response=True)
    lab_app = contract_lab_app(
        stateless_http=True, json_response=True, rate_limiter=RateLimiter(10**6, 1.0), request_bounds=bounds
    )
    ready.send((start(github_app), start(lab_app), token))
    previous: tuple[Any, dict[str, int]] | None = None
    while True:  # parent terminates us
        if ready.recv() == "probe":
            import tracemalloc

            if not tracemalloc.is_tracing():  # from the first probe on (tracing start-up takes minutes)
                tracemalloc.start(8)
            current = _heap_census()
            ready.send(_heap_growth(previous, current) if previous is not None else [])
            previous = current


def _heap_census() -> tuple[Any, dict[str, int]]:
    """A tracemalloc snapshot and live objects counted by type, after a full collection."""
    import gc
    import tracemalloc

    gc.collect()
    counts: dict[str, int] = {}
    for obj in gc.get_objects():
        name = type(obj).__qualname__
        counts[name] = counts.get(name, 0) + 1
    snapshot = tracemalloc.take_snapshot().filter_traces(
        [
            tracemalloc.Filter(False, tracemalloc.__file__),
            tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
        ]
    )
    return snapshot, counts


def _heap_growth(before: tuple[Any, dict[str, int]], after: tuple[Any, dict[str, int]]) -> list[str]:
    lines = []
    grown = sorted(
        ((after[1].get(name, 0) - count, name) for name, count in {**after[1], **before[1]}.items()),
        reverse=True,
    )
    lines.append(
        "live objects grown: " + ", ".join(f"{name} +{delta}" for delta, name in grown[:12] if delta > 0)
    )
    for stat in after[0].compare_to(before[0], "traceback")[:8]:
        if stat.size_diff <= 0:
            continue
        frames = [
            f"{frame.filename.rsplit('site-packages/', 1)[-1]}:{frame.lineno}" for frame in stat.traceback
        ]
        lines.append(
            f"{stat.size_diff / 1024:+.0f} KiB in {stat.count_diff:+d} blocks: "
            + " <- ".join(frames[-6:][::-1])
        )
    return lines


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


# ------------------------------------------------------------------------------------ client side
class Round:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors: dict[str, int] = {}

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


class UnexpectedStatus(Exception):
    """An HTTP status other than 200 (the error kind names it: ``search:HTTP503``)."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.kind = f"HTTP{status}"


class UnexpectedAnswer(Exception):
    """A 200 whose JSON-RPC answer is an error or an ``isError`` result."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.kind = what.replace(" ", "")


async def _post(
    http: httpx2.AsyncClient, url: str, method: str, params: dict[str, Any], extra: list[tuple[str, str]]
) -> dict[str, Any] | None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}})
    headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", PROTOCOL_VERSION),
        ("mcp-method", method),
        *extra,
    ]
    response = await http.post(url, content=body.encode(), headers=headers)
    if response.status_code != 200:
        raise UnexpectedStatus(response.status_code)
    decoded: dict[str, Any] = response.json()
    result: dict[str, Any] | None = decoded.get("result")
    if result is None or result.get("isError"):
        raise UnexpectedAnswer("isError" if result else f"error {decoded.get('error', {}).get('code')}")
    return result


async def _one(kind: str, http: httpx2.AsyncClient, github: str, lab: str, state: dict[str, Any]) -> bool:
    auth = state.get("authorization", [])
    if kind == "search":
        result = await _post(
            http,
            github,
            "tools/call",
            {"name": "search_tools", "arguments": {"pattern": "timeline"}},
            [("mcp-name", "search_tools"), *auth],
        )
        if result is None or result.get("isError"):
            return False
        entries = result["structuredContent"]["result"]
        entry = next(e for e in entries if e["name"] == TIMELINE)
        state["manifest_uri"] = entry["manifest_uri"]
        return True
    if kind == "manifest":
        uri = state["manifest_uri"]
        result = await _post(http, github, "resources/read", {"uri": uri}, [("mcp-name", uri), *auth])
        if result is None:
            return False
        manifest = json.loads(result["contents"][0]["text"])
        state["fragment_uri"] = manifest["fragment_uri_template"].replace(
            "{index}", str(manifest["fragment_count"] - 1)
        )
        return True
    if kind == "fragment":
        uri = state["fragment_uri"]
        result = await _post(http, github, "resources/read", {"uri": uri}, [("mcp-name", uri), *auth])
        return result is not None and bool(result["contents"][0]["text"])
    if kind == "github_call":
        arguments: dict[str, Any] = {
            "name": TIMELINE,
            "arguments": {"owner": "octo", "repo": "hello", "issue_number": 42},
        }
        result = await _post(
            http,
            github,
            "tools/call",
            {"name": "call_tool", "arguments": arguments},
            [("mcp-name", "call_tool"), *auth],
        )
        return result is not None and result.get("isError") is False
    if kind == "lab_headers":
        arguments = {"region": "Zürich west", "priority": 2, "express": True}
        extra = [
            ("mcp-name", "route_shipment"),
            ("mcp-param-region", "=?base64?WsO8cmljaCB3ZXN0?="),
            ("mcp-param-priority", "2"),
            ("mcp-param-express", "true"),
        ]
        result = await _post(
            http, lab, "tools/call", {"name": "route_shipment", "arguments": arguments}, extra
        )
        return result is not None and result.get("isError") is False
    result = await _post(
        http, lab, "tools/call", {"name": "list_regions", "arguments": {}}, [("mcp-name", "list_regions")]
    )
    return result is not None and result.get("isError") is False


async def _client(
    github: str, lab: str, iterations: int, deadline: float, into: Round, token: str | None
) -> None:
    state: dict[str, Any] = {"authorization": [("authorization", f"Bearer {token}")] if token else []}
    async with httpx2.AsyncClient(timeout=60) as http:
        for _ in range(iterations):
            if time.monotonic() > deadline:
                return
            for kind in MIX:
                started = time.perf_counter()
                try:
                    ok = await _one(kind, http, github, lab, state)
                except (UnexpectedStatus, UnexpectedAnswer) as error:
                    ok = False
                    kind = f"{kind}:{error.kind}"
                except (httpx2.HTTPError, KeyError, ValueError, StopIteration, TypeError) as error:
                    ok = False
                    kind = f"{kind}:{type(error).__name__}"
                into.latencies.append(time.perf_counter() - started)
                if not ok:
                    into.error(kind)
                    return  # later steps of this mix depend on this one


async def _round(
    github: str, lab: str, clients: int, iterations: int, max_seconds: float, token: str | None = None
) -> tuple[Round, float]:
    into = Round()
    started = time.monotonic()
    deadline = started + max_seconds
    await asyncio.gather(*(_client(github, lab, iterations, deadline, into, token) for _ in range(clients)))
    return into, time.monotonic() - started


# ---------------------------------------------------------------------------------------- attackers
ONE_STRING_BYTES = 3_900_000
FORGED_TOKEN = (  # a well-formed RS256 JWT whose signature no key of the server's made
    "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4IiwiaXNzIjoiaHR0cHM6Ly9iZW5jaC5pbnZhbGlkLyIsImF1ZCI6ImJlbmNoLWxvYWQi"
    "LCJleHAiOjQxMDI0NDQ4MDB9." + "A" * 342
)


def _attack(url: str, slow_senders: int, stop: Any, results: Any) -> None:
    """Attacker process: slow bodies, one-string bodies and bad tokens until ``stop`` is set; sends
    back ``{kind: {status: count}}`` (status 0: the connection failed or was closed unanswered)."""
    tallies: dict[str, dict[int, int]] = {"slow body": {}, "one-string body": {}, "bad token": {}}

    def tally(kind: str, status: int) -> None:
        tallies[kind][status] = tallies[kind].get(status, 0) + 1

    host, port = url.split("//")[1].split("/")[0].split(":")

    async def slow(source: str) -> None:
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Length: 1000000\r\n\r\n"
        ).encode()
        while not stop.is_set():
            try:
                reader, writer = await asyncio.open_connection(host, int(port), local_addr=(source, 0))
            except OSError:
                tally("slow body", 0)
                await asyncio.sleep(0.5)
                continue
            try:
                writer.write(head + b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":')
                answer = asyncio.ensure_future(reader.readline())
                while not stop.is_set() and not answer.done():
                    writer.write(b" ")
                    await asyncio.sleep(0.5)
                line = answer.result() if answer.done() else b""
                answer.cancel()
                tally("slow body", int(line.split()[1]) if line.startswith(b"HTTP/1.1 ") else 0)
            except (OSError, ValueError, IndexError):
                tally("slow body", 0)
            finally:
                writer.close()

    async def poster(kind: str, body: bytes, headers: dict[str, str]) -> None:
        async with httpx2.AsyncClient(timeout=30) as http:
            while not stop.is_set():
                try:
                    response = await http.post(url, content=body, headers=headers)
                    tally(kind, response.status_code)
                except httpx2.HTTPError:
                    tally(kind, 0)

    async def main() -> None:
        routing = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": PROTOCOL_VERSION,
            "mcp-method": "tools/call",
            "mcp-name": "search_tools",
        }
        call = {"name": "search_tools", "arguments": {"pattern": "timeline"}, "_meta": META}
        ordinary = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}).encode()
        one_string = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_tools",'
        one_string += b'"arguments":{"pattern":"' + b"a" * ONE_STRING_BYTES + b'"}}}'
        tasks = [slow(f"127.0.0.{2 + index % 250}") for index in range(slow_senders)]
        tasks += [poster("one-string body", one_string, routing) for _ in range(4)]
        forged = {**routing, "authorization": f"Bearer {FORGED_TOKEN}"}
        tasks += [poster("bad token", ordinary, forged) for _ in range(4)]
        await asyncio.gather(*tasks)

    asyncio.run(main())
    results.send(tallies)


def _percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def run(
    clients: int,
    iterations: int,
    max_seconds: float,
    rounds: int = 2,
    probe: bool = False,
    adversarial: bool = False,
    slow_senders: int = 200,
) -> dict[str, Any]:
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=True)
    process = context.Process(target=_serve, args=(send, probe, adversarial), daemon=True)
    process.start()
    try:
        if not receive.poll(120):
            raise RuntimeError("bench servers did not start")
        github_port, lab_port, token = receive.recv()
        github, lab = f"http://127.0.0.1:{github_port}/mcp", f"http://127.0.0.1:{lab_port}/mcp"
        assert process.pid is not None
        summary: dict[str, Any] = {
            "clients": clients,
            "iterations": iterations,
            "mix": list(MIX),
            "rounds": [],
        }
        summary["rss_kib_before"] = _rss_kib(process.pid)
        if adversarial:
            rounds = 2  # clean, then under attack
        for number in range(1, rounds + 1):
            attacker = None
            if adversarial and number == 2:
                stop, (results, results_in) = context.Event(), context.Pipe(duplex=False)
                attacker = context.Process(target=_attack, args=(github, slow_senders, stop, results_in))
                attacker.start()
                time.sleep(3.0)  # every attacker connected and sending before the honest round starts
            into, elapsed = asyncio.run(_round(github, lab, clients, iterations, max_seconds, token))
            if attacker is not None:
                stop.set()
                summary["attackers"] = results.recv() if results.poll(30) else {}
                attacker.join(10)
            if probe:
                receive.send("probe")
                for line in receive.recv():
                    print(f"  after round {number}: {line}", flush=True)
            summary["rounds"].append(
                {
                    "round": number,
                    "requests": len(into.latencies),
                    "errors": sum(into.errors.values()),
                    "error_kinds": into.errors,
                    "seconds": round(elapsed, 2),
                    "p50_ms": round(_percentile(into.latencies, 0.50) * 1000, 1),
                    "p99_ms": round(_percentile(into.latencies, 0.99) * 1000, 1),
                    "mean_ms": round(statistics.fmean(into.latencies) * 1000, 1) if into.latencies else None,
                    "rss_kib_after": _rss_kib(process.pid),
                }
            )
        return summary
    finally:
        process.terminate()
        process.join(10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--iterations", type=int, default=4, help="mixes per client per round")
    parser.add_argument("--max-seconds", type=float, default=300.0, help="time cap per round")
    parser.add_argument("--rounds", type=int, default=2, help="identical rounds (RSS is read after each)")
    parser.add_argument(
        "--probe", action="store_true", help="trace the server's heap: print what grew between rounds (slow)"
    )
    parser.add_argument(
        "--adversarial",
        action="store_true",
        help="a clean round, then one under attack (slow bodies, one-string bodies, bad tokens)",
    )
    parser.add_argument("--slow-senders", type=int, default=200, help="--adversarial: slow-body connections")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    summary = run(
        args.clients,
        args.iterations,
        args.max_seconds,
        args.rounds,
        args.probe,
        args.adversarial,
        args.slow_senders,
    )
    if args.json:
        print(json.dumps(summary, indent=2))
    elif args.adversarial:
        _print_side_by_side(args.clients, summary)
    else:
        print(
            f"{args.clients} concurrent clients x {args.iterations} iterations of {len(MIX)} requests: "
            f"{', '.join(MIX)} (loopback, uvicorn, {args.rounds} identical rounds)"
        )
        print(f"server RSS before: {summary['rss_kib_before'] / 1024:.1f} MiB")
        for entry in summary["rounds"]:
            print(
                f"round {entry['round']}: {entry['requests']} requests in {entry['seconds']} s, "
                f"errors {entry['errors']} {entry['error_kinds'] or ''}, p50 {entry['p50_ms']} ms, "
                f"p99 {entry['p99_ms']} ms, server RSS after {entry['rss_kib_after'] / 1024:.1f} MiB"
            )
    if args.adversarial:  # clean: no error at all; under attack: at least 90 % of honest requests served
        clean, attacked = summary["rounds"]
        return 1 if clean["errors"] or attacked["errors"] > 0.1 * max(1, attacked["requests"]) else 0
    return 1 if any(entry["errors"] for entry in summary["rounds"]) else 0


def _print_side_by_side(clients: int, summary: dict[str, Any]) -> None:
    clean, attacked = summary["rounds"]
    print(f"{clients} honest clients (valid JWT on the GitHub connector), the same mix twice:")
    print(f"{'':28}{'clean':>14}{'under attack':>16}")
    for label, key in (("requests", "requests"), ("p50 ms", "p50_ms"), ("p99 ms", "p99_ms")):
        print(f"{label:28}{clean[key]:>14}{attacked[key]:>16}")
    rates = [
        f"{entry['errors']} ({100 * entry['errors'] / max(1, entry['requests']):.1f} %)"
        for entry in (clean, attacked)
    ]
    print(f"{'errors':28}{rates[0]:>14}{rates[1]:>16}")
    rss = [f"{entry['rss_kib_after'] / 1024:.1f} MiB" for entry in (clean, attacked)]
    print(f"{'server RSS after':28}{rss[0]:>14}{rss[1]:>16}")
    for kind, statuses in summary.get("attackers", {}).items():
        shown = ", ".join(f"{count} × {status or 'closed'}" for status, count in sorted(statuses.items()))
        print(f"attackers, {kind}: {shown or 'none answered'}")


if __name__ == "__main__":
    sys.exit(main())
