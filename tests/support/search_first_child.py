"""Search-first children for the on-demand federation tests, each its own process.

    python -m tests.support.search_first_child MODE [COUNT]

prints ``url http://127.0.0.1:PORT/mcp`` once serving. Modes:

* ``slow``: 20 tools behind a regex search that takes 3 s per search;
* ``many``: COUNT tools (default 12,000) behind a regex search (50 results at most);
* ``liar``: a search that ignores its pattern and invents names: every answer is 20 entries named
  ``ghost_N`` (N always new) pointing at a real tool's disclosure, one real tool whose digest does not
  match its bytes, and one honest tool;
* ``dual``: lists a tool ``dual`` (output ``n: integer``) and its search also answers a hidden ``dual``.
"""

from __future__ import annotations

import asyncio
import itertools
import socket
import sys
from collections.abc import Sequence
from typing import Any

import uvicorn
from fastmcp import FastMCP
from fastmcp.server.context import Context
from fastmcp.server.transforms.search import RegexSearchTransform
from fastmcp.tools.base import Tool, ToolResult
from pydantic import Field

from agent_connector_sdk.mcp.schema_disclosure_provider import (
    DisclosureOrigin,
    describe_schema_tools,
    register_schema_resources,
)

SOURCE_SHA256 = "0" * 64


class EchoTool(Tool):
    result: dict[str, Any] = Field(default_factory=dict)

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(structured_content=self.result)


def tool(name: str, *, output: dict[str, Any] | None = None, result: dict[str, Any] | None = None) -> Tool:
    return EchoTool(
        name=name,
        description=f"The {name.replace('_', ' ')} operation.",
        parameters={"type": "object", "properties": {"id": {"type": "string"}}},
        output_schema=output or {"type": "object", "properties": {"ok": {"type": "boolean"}}},
        result=result if result is not None else {"ok": True},
        annotations=None,
    )


class SlowSearch(RegexSearchTransform):
    async def _search(self, tools: Sequence[Tool], query: str) -> Sequence[Tool]:
        await asyncio.sleep(3.0)
        return await super()._search(tools, query)


class DualSearch(RegexSearchTransform):
    """Pinned tools are searchable too: ``dual`` is both listed and found by search."""

    async def _get_visible_tools(self, ctx: Context) -> Sequence[Tool]:
        return list(await self.get_tool_catalog(ctx))


_invented = itertools.count()


class LyingSearch(RegexSearchTransform):
    """Ignores the pattern: every search answers every tool (and the serializer adds its inventions)."""

    async def _search(self, tools: Sequence[Tool], query: str) -> Sequence[Tool]:
        return list(tools)


def _lying_serializer(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    honest = describe_schema_tools(tools)
    if not honest:
        return honest
    template = honest[0]
    ghosts = [{**template, "name": f"ghost_{next(_invented)}"} for _ in range(20)]
    wrong = {**honest[-1], "schema_sha256": "f" * 64}
    return [*ghosts, wrong, honest[0]]


def build(mode: str, count: int) -> FastMCP[Any]:
    server: FastMCP[Any] = FastMCP(f"search-first-{mode}")
    tools: list[Tool]
    search: RegexSearchTransform
    if mode == "slow":
        tools = [tool(f"slow_op_{i:02d}") for i in range(20)]
        search = SlowSearch(search_result_serializer=describe_schema_tools, max_results=50)
    elif mode == "many":
        tools = [tool(f"op_{i:05d}") for i in range(count)]
        search = RegexSearchTransform(search_result_serializer=describe_schema_tools, max_results=50)
    elif mode == "liar":
        tools = [tool(f"real_{i}") for i in range(3)]
        search = LyingSearch(search_result_serializer=_lying_serializer, max_results=50)
    elif mode == "dual":
        strict = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
        tools = [tool("dual", output=strict, result={"n": "not-an-int"}), tool("other")]
        search = DualSearch(search_result_serializer=describe_schema_tools, always_visible=["dual"])
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    for item in tools:
        server.add_tool(item)
    server.add_transform(search)
    register_schema_resources(
        server,
        search,
        {t.name: DisclosureOrigin(operation=f"op/{t.name}", source_sha256=SOURCE_SHA256) for t in tools},
        frozen_schemas=True,
    )
    return server


def main(argv: list[str]) -> None:
    mode = argv[0]
    count = int(argv[1]) if len(argv) > 1 else 12_000
    app = build(mode, count).http_app(stateless_http=True)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)

    async def run() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            if task.done():
                await task
                return
            await asyncio.sleep(0.02)
        print(f"url http://127.0.0.1:{port}/mcp", flush=True)
        await task

    asyncio.run(run())


if __name__ == "__main__":
    main(sys.argv[1:])
