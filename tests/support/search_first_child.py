"""Search-first children for the on-demand federation tests, each its own process.

    python -m tests.support.search_first_child MODE [COUNT]

prints ``url http://127.0.0.1:PORT/mcp`` once serving. Modes:

* ``slow``: 20 tools behind a regex search that takes 3 s per search;
* ``many``: COUNT tools (default 12,000): our own ``serve --openapi`` assembly over a generated OpenAPI
  document of COUNT operations (``op_00000``...), calling an upstream served by the same process;
* ``liar``: a search that ignores its pattern and invents names: every answer is 20 entries named
  ``ghost_N`` (N always new) pointing at a real tool's disclosure, one real tool whose digest does not
  match its bytes, and one honest tool;
* ``dual``: lists a tool ``dual`` (output ``n: integer``) and its search also answers a hidden ``dual``;
* ``notes``: ``read_note`` and ``delete_note`` behind FastMCP's regex search (a plain search-first child).
* ``huge``: COUNT tools (``tool_00000``...) behind FastMCP's regex search, narrowed by an index on the
  anchored name prefix the gateway's searches start with (a scan of 100,000 tools per search would spend
  the search's own one-second budget); the disclosure reads it answers are counted, and
  ``GET /reads`` tells the URIs read so far (what a resumed ``--check`` must not read again).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import itertools
import json
import re
import socket
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import uvicorn
from fastmcp import FastMCP
from fastmcp.server.context import Context
from fastmcp.server.transforms.search import RegexSearchTransform
from fastmcp.tools.base import Tool, ToolResult
from pydantic import Field

from agent_connector_sdk.mcp import compat
from agent_connector_sdk.mcp.schema_disclosure_provider import (
    DisclosureOrigin,
    describe_schema_tools,
    register_schema_resources,
)
from agent_connector_sdk.mcp.server import cache_tool_catalog

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


class IndexedSearch(RegexSearchTransform):
    """FastMCP's regex search over only the tools whose name starts with the query's literal anchored,
    case-sensitive prefix (``^(?-i:PREFIX...``, the form of the gateway's searches): the same answer as
    a scan (a match's text starts with the name), found by bisection. Other patterns scan everything."""

    _ANCHORED = re.compile(r"\^\(\?-i:((?:\\.|[^\\(\[|?*+{}^$])*)")

    def __init__(self, names: Sequence[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._names = sorted(names)

    async def _search(self, tools: Sequence[Tool], query: str) -> Sequence[Tool]:
        anchored = self._ANCHORED.match(query)
        if anchored is None:
            return await super()._search(tools, query)
        prefix = re.sub(r"\\(.)", r"\1", anchored.group(1))
        start = bisect.bisect_left(self._names, prefix)
        end = bisect.bisect_left(self._names, prefix + "\U0010ffff")
        wanted = set(self._names[start:end])
        return await super()._search([tool for tool in tools if tool.name in wanted], query)


class ReadCounter:
    """ASGI wrapper: the URI of every ``resources/read`` (a disclosure read) the child answers, told
    (as JSON) by ``GET /reads``."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.uris: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/reads":
            body = json.dumps(self.uris).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def counting() -> Any:
            message = await receive()
            if message.get("type") == "http.request" and b'"resources/read"' in message.get("body", b""):
                with contextlib.suppress(ValueError, LookupError, TypeError):
                    self.uris.append(str(json.loads(message["body"])["params"]["uri"]))
            return message

        await self.app(scope, counting, send)


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
    elif mode == "liar":
        tools = [tool(f"real_{i}") for i in range(3)]
        search = LyingSearch(search_result_serializer=_lying_serializer, max_results=50)
    elif mode == "dual":
        strict = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
        tools = [tool("dual", output=strict, result={"n": "not-an-int"}), tool("other")]
        search = DualSearch(search_result_serializer=describe_schema_tools, always_visible=["dual"])
    elif mode == "huge":
        tools = [tool(f"tool_{i:05d}") for i in range(count)]
        search = IndexedSearch(
            [t.name for t in tools], search_result_serializer=describe_schema_tools, max_results=50
        )
    elif mode == "notes":
        tools = [tool("read_note"), tool("delete_note")]
        search = RegexSearchTransform(search_result_serializer=describe_schema_tools, max_results=50)
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    compat.add_tools_in_bulk(server, tools)
    server.add_transform(search)
    cache_tool_catalog(server, search)  # as `serve` does: a search need not re-list the catalog
    with _lookups_by_name(server, tools):
        register_schema_resources(
            server,
            search,
            {t.name: DisclosureOrigin(operation=f"op/{t.name}", source_sha256=SOURCE_SHA256) for t in tools},
            frozen_schemas=True,
        )
    return server


@contextlib.contextmanager
def _lookups_by_name(server: FastMCP[Any], tools: Sequence[Tool]) -> Iterator[None]:
    """While registering: the local provider's ``get_tool`` answered from a dict of the same objects.
    Registration looks every disclosed name up, and FastMCP's local provider scans every component per
    lookup (O(N²): minutes at 100,000 tools). Serving keeps FastMCP's own lookup (and its catalog
    cache, which knows that provider type only)."""
    provider = server.local_provider
    by_name = {tool.name: tool for tool in tools}

    async def get_tool(name: str, version: Any = None) -> Tool | None:
        return by_name.get(name) if version is None else None

    provider._get_tool = get_tool  # type: ignore[method-assign]
    try:
        yield
    finally:
        del provider._get_tool


def openapi_document(count: int) -> bytes:
    """An OpenAPI 3.1 document of ``count`` GET operations ``op_NNNNN`` answering ``{"ok": true}``."""
    response = {
        "200": {
            "description": "ok",
            "content": {
                "application/json": {"schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}
            },
        }
    }
    paths = {
        f"/ops/{i}": {
            "get": {
                "operationId": f"op_{i:05d}",
                "summary": f"Operation number {i}",
                "parameters": [{"name": "id", "in": "query", "schema": {"type": "string"}}],
                "responses": response,
            }
        }
        for i in range(count)
    }
    document = {"openapi": "3.1.0", "info": {"title": "many", "version": "1"}, "paths": paths}
    return json.dumps(document).encode()


async def _upstream(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = b'{"ok": true}'
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _listening() -> tuple[socket.socket, int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock, sock.getsockname()[1]


def _warm(url: str) -> None:
    import httpx2

    from tests.support.raw_http import post_on

    params = {"name": "search_tools", "arguments": {"pattern": "^(?-i:tool_0$)"}}
    with httpx2.Client(timeout=600) as http:
        for method, body in (("tools/list", {}), ("tools/call", params)):
            post_on(http, url, method, body)


def main(argv: list[str]) -> None:
    mode = argv[0]
    count = int(argv[1]) if len(argv) > 1 else 12_000
    sock, port = _listening()
    servers: list[tuple[uvicorn.Server, socket.socket]] = []
    if mode == "many":
        from agent_connector_sdk.connectors import load_openapi_source
        from agent_connector_sdk.serving.openapi_app import build_openapi_app

        upstream_sock, upstream_port = _listening()
        servers.append((uvicorn.Server(uvicorn.Config(_upstream, log_level="warning")), upstream_sock))
        source = load_openapi_source(openapi_document(count))
        app, _ = build_openapi_app(source, upstream=f"http://127.0.0.1:{upstream_port}")
    elif mode == "huge":
        app = ReadCounter(build(mode, count).http_app(stateless_http=True))
    else:
        app = build(mode, count).http_app(stateless_http=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    servers.append((server, sock))

    async def run() -> None:
        tasks = [asyncio.create_task(item.serve(sockets=[listening])) for item, listening in servers]
        while not all(item.started for item, _ in servers):
            for task in tasks:
                if task.done():
                    await task
                    return
            await asyncio.sleep(0.02)
        if mode == "huge":
            # The first search lists the whole catalog once (then cached): done here, not in a test's
            # first request, whose client would time out on it.
            await asyncio.to_thread(_warm, f"http://127.0.0.1:{port}/mcp")
        print(f"url http://127.0.0.1:{port}/mcp", flush=True)
        await asyncio.gather(*tasks)

    asyncio.run(run())


if __name__ == "__main__":
    main(sys.argv[1:])
