"""Shared helpers of the server tests: raw 2026-07-28 POSTs (the one builder of a raw request's body,
``_meta`` and routing headers), the contract lab's test bearer tokens, a log capture that also sees
uvicorn's own error logger, and a local upstream API that records what reaches it."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypedDict, Unpack, cast

import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agent_connector_sdk.demo.contract_lab import PRODUCTION_SCOPE

PROTOCOL_VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"},
}
LAB_TOKENS = {
    "analyst-token": {"client_id": "analyst", "scopes": ["read"]},
    "operator-token": {"client_id": "operator", "scopes": ["read", PRODUCTION_SCOPE]},
}
"""Bearer tokens for the contract lab behind FastMCP's ``StaticTokenVerifier``."""
NAME_KEYS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


class PostOptions(TypedDict, total=False):
    """The optional keywords of :func:`post_on` (and so of :func:`raw_post`)."""

    headers: Sequence[tuple[str, str | bytes]] | None
    name_header: str | bytes | None
    request_id: int | None
    content: bytes | None
    meta: dict[str, Any] | None


def raw_post(
    url: str, method: str, params: dict[str, Any], **options: Unpack[PostOptions]
) -> httpx2.Response:
    """:func:`post_on` on a fresh connection (a refused request may close its connection)."""
    with httpx2.Client(timeout=30) as http:
        return post_on(http, url, method, params, **options)


def post_on(
    http: httpx2.Client,
    url: str,
    method: str,
    params: dict[str, Any],
    *,
    headers: Sequence[tuple[str, str | bytes]] | None = None,
    name_header: str | bytes | None = None,
    request_id: int | None = 1,
    content: bytes | None = None,
    meta: dict[str, Any] | None = None,
) -> httpx2.Response:
    """One raw 2026-07-28 POST on ``http`` with the routing headers a conforming client sends (then
    ``headers``): ``Mcp-Name`` is ``name_header``, else the name or URI in ``params``. ``request_id``
    ``None`` makes it a notification; ``meta`` replaces entries of :data:`META` (e.g. the client
    capabilities); ``content`` replaces the JSON-RPC body."""
    envelope = {**META, **(meta or {})}
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": {**params, "_meta": envelope}}
    if request_id is not None:
        message["id"] = request_id
    routing: list[tuple[str, str | bytes]] = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", PROTOCOL_VERSION),
        ("mcp-method", method),
    ]
    key = NAME_KEYS.get(method)
    if name_header is not None:
        routing.append(("mcp-name", name_header))
    elif key is not None and key in params:
        routing.append(("mcp-name", params[key]))
    body = content if content is not None else json.dumps(message).encode()
    pairs = mixed_headers([*routing, *(headers or [])])
    return http.post(url, content=body, headers=httpx2.Headers(pairs))


def mixed_headers(pairs: Sequence[tuple[str | bytes, str | bytes]]) -> list[tuple[str, str]]:
    """httpx encodes each header name and value on its own, str or bytes (raw bytes are how a test sends
    octets no str would encode to); its annotation only admits uniform pairs, so the pairs are cast, not
    changed."""
    return cast(list[tuple[str, str]], list(pairs))


class LogCapture(logging.Handler):
    """Every record of the root logger and of uvicorn's (non-propagating) loggers, formatted."""

    LOGGERS = ("", "uvicorn", "uvicorn.error", "fastmcp")

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def text(self) -> str:
        lines = []
        for record in self.records:
            lines.append(record.getMessage())
            if record.exc_info:
                lines.append("Traceback " + repr(record.exc_info[1]))
        return "\n".join(lines)

    def tracebacks(self) -> list[logging.LogRecord]:
        return [r for r in self.records if r.exc_info or "Traceback" in r.getMessage()]


@contextmanager
def capture_logs(level: int = logging.INFO) -> Iterator[LogCapture]:
    capture = LogCapture()
    touched = []
    for name in LogCapture.LOGGERS:
        logger = logging.getLogger(name)
        touched.append((logger, logger.level))
        logger.addHandler(capture)
        logger.setLevel(min(level, logger.level) if logger.level else level)
    try:
        yield capture
    finally:
        for logger, previous in touched:
            logger.removeHandler(capture)
            logger.setLevel(previous)


class RecordingUpstream:
    """A local API that records every request; ``mode`` picks its behaviour per test.

    ``ok`` answers a JSON array; ``error`` a 500 with a 20 KB body; ``garbage`` a 200 that is not JSON
    for a JSON operation, ``binary`` one that is not even text; ``slow`` sleeps ``delay`` seconds first.
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.mode = "ok"
        self.delay = 5.0
        self.app = Starlette(
            routes=[Route("/{path:path}", self._handle, methods=["GET", "PUT", "POST", "DELETE", "PATCH"])]
        )

    async def _handle(self, request: Request) -> Response:
        body = await request.body()
        self.requests.append(
            {
                "method": request.method,
                "path": request.url.path,
                "headers": dict(request.headers),
                "body": body,
            }
        )
        if self.mode == "slow":
            await asyncio.sleep(self.delay)
        if self.mode == "error":
            return Response("E" * 20_000, status_code=500, media_type="text/plain")
        if self.mode == "garbage":
            return Response(
                b"<html>not json, upstream-garbage-marker", status_code=200, media_type="application/json"
            )
        if self.mode == "binary":
            return Response(b"\x00\xff\x00\xfe binary", status_code=200, media_type="application/json")
        if request.method == "PUT":
            return Response(status_code=204)
        return JSONResponse([{"event": "labeled", "id": 1, "node_id": "LE_1"}])
