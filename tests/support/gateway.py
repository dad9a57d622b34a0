"""Helpers of the gateway tests: raw JSON-RPC over HTTP (JSON or SSE answers) and polling."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx2

from tests.support.raw_http import raw_post


def rpc(
    url: str, method: str, params: dict[str, Any], *, headers: list[tuple[str, str]] | None = None
) -> tuple[int, dict[str, Any]]:
    """One raw 2026-07-28 POST; the HTTP status and the JSON-RPC message (from JSON or SSE)."""
    response = raw_post(url, method, params, headers=headers)
    return response.status_code, parse_message(response)


def parse_message(response: httpx2.Response) -> dict[str, Any]:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                message = json.loads(line[5:])
                if "id" in message:
                    return dict(message)
        raise AssertionError("no JSON-RPC response in the event stream")
    return dict(response.json())


def call(url: str, tool: str, arguments: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """``tools/call`` result (asserts there is one)."""
    status, message = rpc(url, "tools/call", {"name": tool, "arguments": arguments}, **kwargs)
    assert status == 200 and "result" in message, (status, message)
    return dict(message["result"])


def search(url: str, pattern: str) -> list[dict[str, Any]]:
    result = call(url, "search_tools", {"pattern": pattern})
    found = result["structuredContent"]["result"]
    return list(found) if isinstance(found, list) else []  # a str: the note of a search that abstained


def wait_for(predicate: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
