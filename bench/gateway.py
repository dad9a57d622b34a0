"""The gateway's cost, measured on the app ``agent-connector gateway`` builds, in one run.

Run: ``python -m bench.gateway`` (from the repository root; ``--calls N``, ``--tools N`` per child).

1. **Overhead per call**: one child (a gated FastMCP server over Streamable HTTP on 127.0.0.1) called
   directly and through the gateway, alternating call by call with the same kind of client (raw
   2026-07-28 POSTs on one keep-alive connection), median wall time each. Target: gateway ≤ 1.2 ×
   direct + 2 ms (the gateway adds one hop: its own gates, the host core's Invoke/Consume toward the
   child, and the child's round trip).
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
import json
import statistics
import sys
import time
from contextlib import ExitStack
from typing import Any

import httpx2
from fastmcp import FastMCP
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
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
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


def overhead(calls: int) -> tuple[float, float]:
    with ExitStack() as stack:
        child = stack.enter_context(serve_asgi(gated_http_app(_child("one", 1), stateless_http=True)))
        gateway = Gateway(GatewayConfig(children=(ChildSpec("one", url=child),)))
        front = stack.enter_context(serve_asgi(gateway.http_app()))
        http = stack.enter_context(httpx2.Client(timeout=30))
        direct_args = {"name": "echo", "arguments": {"text": "x"}}
        gateway_args = {"name": "one_echo", "arguments": {"text": "x"}}
        for _ in range(20):  # warm both paths (connections, caches, compiled validators)
            _post(http, child, "tools/call", direct_args)
            _post(http, front, "tools/call", gateway_args)
        direct: list[float] = []
        through: list[float] = []
        for _ in range(calls):
            direct.append(_timed(lambda: _post(http, child, "tools/call", direct_args)))
            through.append(_timed(lambda: _post(http, front, "tools/call", gateway_args)))
        return statistics.median(direct), statistics.median(through)


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
    options = parser.parse_args(argv)
    direct, through = overhead(options.calls)
    target = 1.2 * direct + 0.002
    verdict = "ok" if through <= target else "MISSED"
    print(
        f"call overhead   direct {direct * 1e3:7.2f} ms   via gateway {through * 1e3:7.2f} ms   "
        f"ratio {through / direct:4.2f}x   target <= 1.2x + 2 ms = {target * 1e3:.2f} ms: {verdict}",
        flush=True,
    )
    _, ours, theirs, _ = startup_and_search(options.tools, options.searches)
    print(
        f"search          gateway {ours * 1e3:7.2f} ms   plain FastMCP transform {theirs * 1e3:7.2f} ms   "
        f"speed-up {theirs / ours:5.1f}x"
    )
    print("(one shared, loaded machine: compare ratios, not absolute times)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
