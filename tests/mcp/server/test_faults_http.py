"""Faults over real HTTP: the upstream API down, slow or answering garbage, and a client that goes away
mid-call. Every failure reaches the caller as a conforming ``isError`` result with useful text (never a
500, never the upstream's raw body), and nothing is left running afterwards."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
import uvicorn
from fastmcp.server.transforms.search import RegexSearchTransform

from agent_connector_sdk.connectors import build_openapi_server, load_github_extract
from agent_connector_sdk.core.contracts import validate_tool_result
from agent_connector_sdk.mcp.server import ServerGates
from tests.support.http_server import serve_asgi
from tests.support.raw_http import META, RecordingUpstream, capture_logs, raw_post

TIMELINE = "issues_list_events_for_timeline"
ARGUMENTS = {"owner": "o", "repo": "r", "issue_number": 1}


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _gated_github(base_url: str, *, timeout: float = 30.0) -> Any:
    built = build_openapi_server(load_github_extract().document, base_url=base_url, timeout=timeout)
    return ServerGates().http_app(built.server, stateless_http=True, json_response=True), built


def _descriptor(url: str, name: str) -> dict[str, Any]:
    listing = raw_post(url, "tools/list", {}).json()["result"]["tools"]
    return next(tool for tool in listing if tool["name"] == name)


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[RecordingUpstream, str]]:
    fake = RecordingUpstream()
    with serve_asgi(fake.app, path="") as base_url:
        yield fake, base_url


def _call_and_check(url: str) -> dict[str, Any]:
    response = raw_post(url, "tools/call", {"name": TIMELINE, "arguments": ARGUMENTS})
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    assert result["isError"] is True
    validate_tool_result(_descriptor(url, TIMELINE), result)  # conforms to the published contract
    return result


def _call_with_upstream_in(
    upstream: tuple[RecordingUpstream, str], mode: str, **gated: Any
) -> dict[str, Any]:
    """One checked call against the gated GitHub connector while the fake upstream misbehaves in ``mode``
    (restored to ``ok`` afterwards, so the module-scoped upstream serves the next test normally)."""
    fake, base = upstream
    fake.mode = mode
    try:
        app, _ = _gated_github(base, **gated)
        with serve_asgi(app) as url:
            return _call_and_check(url)
    finally:
        fake.mode = "ok"


def test_upstream_down_is_a_conforming_error_result() -> None:
    app, _ = _gated_github(f"http://127.0.0.1:{_closed_port()}")
    with capture_logs() as logs, serve_asgi(app) as url:
        result = _call_and_check(url)
    assert result["content"][0]["text"].startswith(f"Error calling tool '{TIMELINE}'")
    assert "Exception in ASGI application" not in logs.text()


def test_upstream_timeout_is_a_conforming_error_result_that_says_so(
    upstream: tuple[RecordingUpstream, str],
) -> None:
    upstream[0].delay = 3.0
    result = _call_with_upstream_in(upstream, "slow", timeout=0.3)
    assert "timed out" in result["content"][0]["text"]


def test_upstream_garbage_is_a_conforming_error_result_without_the_garbage(
    upstream: tuple[RecordingUpstream, str],
) -> None:
    result = _call_with_upstream_in(upstream, "garbage")
    assert "produced no structured result" in result["content"][0]["text"]
    assert "upstream-garbage-marker" not in json.dumps(result)


def test_upstream_binary_garbage_is_a_conforming_error_result(
    upstream: tuple[RecordingUpstream, str],
) -> None:
    result = _call_with_upstream_in(upstream, "binary")
    # FastMCP's JSON decoding fails on the bytes themselves; its masked error text names the tool.
    assert result["content"][0]["text"].startswith(f"Error calling tool '{TIMELINE}'")


def test_upstream_error_status_is_a_conforming_error_result(upstream: tuple[RecordingUpstream, str]) -> None:
    result = _call_with_upstream_in(upstream, "error")
    assert result["content"][0]["text"].startswith("upstream_error: the upstream API answered HTTP 500")


@asynccontextmanager
async def _serve_here(app: Any) -> AsyncIterator[str]:
    """uvicorn on this test's own event loop, so the test can see every task the server runs."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        await serving


async def _settle(baseline: int, deadline: float = 10.0) -> int:
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    while True:
        count = len(asyncio.all_tasks())
        if count <= baseline or loop.time() > end:
            return count
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("json_response", [True, False], ids=["JSON response", "SSE response"])
async def test_a_client_cancelled_mid_call_leaves_no_task_behind(
    upstream: tuple[RecordingUpstream, str], json_response: bool
) -> None:
    fake, base = upstream
    built = build_openapi_server(load_github_extract().document, base_url=base)
    built.server.add_transform(RegexSearchTransform())
    app = ServerGates().http_app(built.server, stateless_http=True, json_response=json_response)
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "call_tool",
                "arguments": {"name": TIMELINE, "arguments": ARGUMENTS},
                "_meta": META,
            },
        }
    ).encode()
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "call_tool",
    }
    fake.mode, fake.delay = "slow", 1.5
    try:
        with capture_logs() as logs:
            async with _serve_here(app) as url, httpx2.AsyncClient(timeout=30) as http:
                # A completed call first, so lazily started server tasks are part of the baseline.
                fake.mode = "ok"
                assert (await http.post(url, content=body, headers=headers)).status_code == 200
                baseline = len(asyncio.all_tasks())
                fake.mode = "slow"
                for _ in range(3):
                    with pytest.raises(TimeoutError):
                        await asyncio.wait_for(http.post(url, content=body, headers=headers), timeout=0.3)
                await asyncio.sleep(fake.delay + 0.5)  # let the upstream answer the abandoned calls
                remaining = await _settle(baseline)
                fake.mode = "ok"
                after = await http.post(url, content=body, headers=headers)
        assert after.status_code == 200
        assert remaining <= baseline, [task.get_coro() for task in asyncio.all_tasks()]
        assert "Exception in ASGI application" not in logs.text()
        assert logs.tracebacks() == []
    finally:
        fake.mode = "ok"
        await built.aclose()
