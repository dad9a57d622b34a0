"""The gateway's cost, measured on the app ``agent-connector gateway`` builds, in one run.

Run: ``python -m bench.gateway`` (from the repository root; ``--calls N``, ``--tools N`` per child).

1. **Overhead per call**: one child (a gated FastMCP server over Streamable HTTP on 127.0.0.1) called
   directly, through the gateway, through **FastMCP's fastest proxy** and through a **floor relay**,
   alternating call by call with the same kind of client (raw 2026-07-28 POSTs on one keep-alive
   connection), median wall time each. FastMCP's fastest proxy is ``FastMCPProxy`` over **one reused,
   connected** ``fastmcp.Client`` (what ``create_proxy(connected_client)`` builds; the default,
   a fresh client session per request, is several times slower), served as FastMCP serves it. The
   floor relay is the cheapest second hop on the same stack: a gated FastMCP server whose one tool
   makes one raw ``httpx2`` POST to the child (no host core, no MCP client session). Targets, printed
   PASS/MISS: gateway <= 1.0 x the FastMCP proxy, and gateway <= floor relay + 0.7 ms. Then **where the
   milliseconds go**:
   CPU per call of each thread (bench client, front server, child) over ``--calls`` sequential calls of
   each path (Linux ``/proc``; omitted elsewhere); gateway minus relay is the host session (the MCP
   client machinery plus Invoke/Consume).
2. **Start-up with 3 children** × ``--tools`` tools each: from ``Gateway.start()`` to every child
   listed, admitted and published (connect, paginate, Admit, disclosure registration, catalog cache).
3. **Search over 3 × ``--tools`` tools** (the same index ``serve`` uses: FastMCP's
   ``RegexSearchTransform`` over the exact catalog cache): median ``search_tools`` round trip for a
   selective pattern, and for comparison the same query on one plain FastMCP server holding all the
   tools behind a plain ``RegexSearchTransform`` (no cache).

Children and gateway each run under uvicorn in a thread of this process (as the tests do); the machine
may be shared, so the numbers are noisy: compare the ratios, not the absolute times.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import ExitStack
from typing import Any

import fastmcp
import httpx2
from fastmcp import FastMCP
from fastmcp.server.providers.proxy import FastMCPProxy
from fastmcp.server.transforms.search import RegexSearchTransform
from fastmcp.tools import FunctionTool

from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig
from agent_connector_sdk.mcp.server import gated_http_app
from tests.support.http_server import serve_asgi

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}


HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
}


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def _child(name: str, tools: int) -> FastMCP[Any]:
    server: FastMCP[Any] = FastMCP(name)

    def echo(text: str = "hi") -> dict[str, str]:
        """Echo one text."""
        return {"text": text}

    server.add_tool(FunctionTool.from_function(echo))
    for index in range(tools - 1):

        def tool(query: str, limit: int = 10) -> dict[str, Any]:
            return {"query": query, "limit": limit}

        server.add_tool(
            FunctionTool.from_function(
                tool, name=f"op_{index:04d}", description=f"Operation {index} of {name}: lists records."
            )
        )
    return server


def _post(http: httpx2.Client, url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
    headers = {**HEADERS, "mcp-method": method}
    if method == "tools/call":
        headers["mcp-name"] = params["name"]
    response = http.post(url, content=json.dumps(body), headers=headers)
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:") and '"id"' in line)
    message: dict[str, Any] = json.loads(text)
    if "result" not in message:
        raise RuntimeError(f"{method} failed: {message.get('error')}")
    return message


def _timed(call: Any) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def _relay(child_url: str) -> FastMCP[Any]:
    """The floor relay: a FastMCP server whose ``one_echo`` makes one raw POST to the child and returns
    its structured result (no host core, no MCP client session, no schema judged on the way back)."""
    server: FastMCP[Any] = FastMCP("relay")
    clients: list[httpx2.AsyncClient] = []  # one keep-alive client, made on the server's own loop

    async def one_echo(text: str = "hi") -> dict[str, Any]:
        """Echo one text."""
        if not clients:
            clients.append(httpx2.AsyncClient(timeout=30))
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}, "_meta": META},
        }
        headers = {**HEADERS, "mcp-method": "tools/call", "mcp-name": "echo"}
        response = await clients[0].post(child_url, content=json.dumps(body), headers=headers)
        structured: dict[str, Any] = json.loads(response.content)["result"]["structuredContent"]
        return structured

    server.add_tool(FunctionTool.from_function(one_echo))
    return server


def _fastmcp_proxy(child_url: str) -> FastMCPProxy:
    """FastMCP's fastest proxy: every request through one ``fastmcp.Client`` connected once (in the
    server's lifespan, on the server's own loop) and reused."""
    client: fastmcp.Client[Any] = fastmcp.Client(child_url)

    @contextlib.asynccontextmanager
    async def lifespan(server: FastMCP[Any]) -> AsyncIterator[dict[str, Any]]:
        async with client:
            yield {}

    return FastMCPProxy(client_factory=lambda: client, name="fastmcp-proxy", lifespan=lifespan)


class _ThreadCpu:
    """CPU seconds of one thread of this process, from ``/proc`` (Linux); ``None`` where unreadable."""

    def __init__(self, thread: threading.Thread | None) -> None:
        self.path = None if thread is None else f"/proc/self/task/{thread.native_id}/stat"

    def __call__(self) -> float | None:
        if self.path is None:
            return time.thread_time()  # the calling (bench client) thread
        try:
            with open(self.path) as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _serve(stack: ExitStack, app: Any) -> tuple[str, _ThreadCpu]:
    """Serve ``app``; its URL and a CPU reader for the thread that serves it."""
    before = set(threading.enumerate())
    url = stack.enter_context(serve_asgi(app))
    started = [thread for thread in threading.enumerate() if thread not in before]
    return url, _ThreadCpu(started[0] if len(started) == 1 else None)


def overhead(calls: int) -> dict[str, Any]:
    with ExitStack() as stack:
        child, child_cpu = _serve(stack, gated_http_app(_child("one", 1), stateless_http=True))
        gateway = Gateway(GatewayConfig(children=(ChildSpec("one", url=child),)))
        front, front_cpu = _serve(stack, gateway.http_app())
        relay, relay_cpu = _serve(stack, gated_http_app(_relay(child), stateless_http=True))
        proxy, proxy_cpu = _serve(stack, _fastmcp_proxy(child).http_app(stateless_http=True))
        http = stack.enter_context(httpx2.Client(timeout=30))
        paths = {
            "direct": (child, {"name": "echo", "arguments": {"text": "x"}}, None),
            "gateway": (front, {"name": "one_echo", "arguments": {"text": "x"}}, front_cpu),
            "proxy": (proxy, {"name": "echo", "arguments": {"text": "x"}}, proxy_cpu),
            "relay": (relay, {"name": "one_echo", "arguments": {"text": "x"}}, relay_cpu),
        }
        for _ in range(20):  # warm every path (connections, caches, compiled validators)
            for url, args, _ in paths.values():
                _post(http, url, "tools/call", args)
        wall: dict[str, list[float]] = {name: [] for name in paths}
        for _ in range(calls):
            for name, (url, args, _) in paths.items():
                wall[name].append(_timed(lambda url=url, args=args: _post(http, url, "tools/call", args)))
        # CPU per call and thread, in rounds of 10 calls per path so a drifting machine load spreads over
        # every path alike (the /proc reads sit outside the rounds).
        client_cpu = _ThreadCpu(None)
        totals: dict[str, dict[str, float]] = {name: {} for name in paths}
        for _ in range(max(1, calls // 10)):
            for name, (url, args, server_cpu) in paths.items():
                readers = {"client": client_cpu, "front": server_cpu, "child": child_cpu}
                before = {part: None if read is None else read() for part, read in readers.items()}
                for _ in range(10):
                    _post(http, url, "tools/call", args)
                for part, read in readers.items():
                    first, last = before[part], None if read is None else read()
                    if first is not None and last is not None:
                        totals[name][part] = totals[name].get(part, 0.0) + last - first
        rounds = 10 * max(1, calls // 10)
        cpu = {name: {part: t / rounds for part, t in parts.items()} for name, parts in totals.items()}
        return {"median": {name: statistics.median(times) for name, times in wall.items()}, "cpu": cpu}


def startup_and_search(tools: int, searches: int) -> tuple[float, float, float, int]:
    with ExitStack() as stack:
        urls = [
            stack.enter_context(serve_asgi(gated_http_app(_child(name, tools), stateless_http=True)))
            for name in ("alpha", "beta", "gamma")
        ]
        config = GatewayConfig(
            children=tuple(
                ChildSpec(name, url=url) for name, url in zip(("alpha", "beta", "gamma"), urls, strict=True)
            ),
            connect_timeout=120,
        )
        gateway = Gateway(config)

        async def start() -> float:
            started = time.perf_counter()
            await gateway.start(supervise=False)
            elapsed = time.perf_counter() - started
            await gateway.stop()
            return elapsed

        startup = asyncio.run(start())
        published = len(gateway._tools)
        print(
            f"start-up        3 children x {tools} tools: {startup:6.2f} s ({published} tools published)",
            flush=True,
        )
        front = stack.enter_context(serve_asgi(Gateway(config).http_app(), startup_timeout=600))
        # The same tools on one plain FastMCP server behind a plain RegexSearchTransform (no cache).
        plain: FastMCP[Any] = FastMCP("plain")
        for name in ("alpha", "beta", "gamma"):
            for tool in asyncio.run(_child(name, tools).list_tools()):
                plain.add_tool(tool.model_copy(update={"name": f"{name}_{tool.name}"}))
        plain.add_transform(RegexSearchTransform(max_results=50))
        plain_url = stack.enter_context(serve_asgi(plain.http_app(stateless_http=True)))
        http = stack.enter_context(httpx2.Client(timeout=120))
        query = {"name": "search_tools", "arguments": {"pattern": "Operation 42 of beta"}}
        found = _post(http, front, "tools/call", query)["result"]["structuredContent"]["result"]
        assert [entry["name"] for entry in found] == ["beta_op_0042"], found
        for _ in range(3):
            _post(http, front, "tools/call", query)
            _post(http, plain_url, "tools/call", query)
        ours = [_timed(lambda: _post(http, front, "tools/call", query)) for _ in range(searches)]
        theirs = [
            _timed(lambda: _post(http, plain_url, "tools/call", query)) for _ in range(max(3, searches // 5))
        ]
        return startup, statistics.median(ours), statistics.median(theirs), published


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--searches", type=int, default=30)
    parser.add_argument("--skip-search", action="store_true", help="only the per-call overhead")
    options = parser.parse_args(argv)
    measured = overhead(options.calls)
    median = measured["median"]
    direct, through, relay = median["direct"], median["gateway"], median["relay"]
    proxy = median["proxy"]
    print(
        f"call            direct {direct * 1e3:7.2f} ms   via gateway {through * 1e3:7.2f} ms   "
        f"ratio {through / direct:4.2f}x (for reference)",
        flush=True,
    )
    print(
        f"vs FastMCP      proxy  {proxy * 1e3:7.2f} ms   via gateway {through * 1e3:7.2f} ms   "
        f"ratio {through / proxy:4.2f}x   target <= 1.0x {verdict(through <= proxy)} "
        "(FastMCPProxy over one reused connected client)",
        flush=True,
    )
    print(
        f"vs floor relay  relay  {relay * 1e3:7.2f} ms   via gateway {through * 1e3:7.2f} ms   "
        f"+{(through - relay) * 1e3:.2f} ms   target <= relay + 0.7 ms = {(relay + 0.0007) * 1e3:.2f} ms "
        f"{verdict(through <= relay + 0.0007)}",
        flush=True,
    )
    for name, spent in measured["cpu"].items():
        if spent:
            parts = "   ".join(f"{part} {seconds * 1e3:5.2f}" for part, seconds in spent.items())
            total = sum(spent.values()) * 1e3
            print(f"cpu per call    {name:<8} {parts} ms   (sum {total:5.2f} ms)", flush=True)
    if options.skip_search:
        return 0
    _, ours, theirs, _ = startup_and_search(options.tools, options.searches)
    print(
        f"search          gateway {ours * 1e3:7.2f} ms   plain FastMCP transform {theirs * 1e3:7.2f} ms   "
        f"speed-up {theirs / ours:5.1f}x"
    )
    print("(one shared, loaded machine: compare ratios, not absolute times)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
