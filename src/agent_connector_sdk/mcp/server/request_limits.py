"""Bounded work per request: the ASGI layer in front of the gates that decides whether a POST is read at all.

``RequestLimits`` runs first among the app's own middleware (after FastMCP's Host/Origin guard and
authentication, before the header gate and the transport). For every HTTP request it:

* refuses **duplicate credentials** — two ``Authorization`` headers are HTTP 400 (``-32600``): the
  authentication layer would silently use the first, so which identity a request carries would depend
  on header order;

and for every ``POST``:

* caps **requests in flight** — at most ``max_in_flight`` on this server (HTTP 503) and
  ``max_in_flight_per_caller`` per caller (HTTP 429; the caller is the verified token's client, else the
  peer address), counted from before the body is read until the answer is sent, so slow senders and
  slow tools alike hold a slot, and a burst cannot hold more memory than the caps allow;
* reads the body **within a deadline** (``body_timeout_seconds`` for the whole body; HTTP 408) and
  **within a size** (``max_body_bytes``; HTTP 413);
* bounds the **JSON work** before anything parses the body into Python objects: the number of object
  members plus array elements (``max_json_values``; HTTP 413), counted on the bytes with the strings
  blanked out (one regular-expression pass in C, no objects built) — 160,000 keys in 3.3 MB would
  otherwise become a dict of 160,000 entries in each of several layers before any gate can refuse it.

Refusals are JSON-RPC errors (``id`` null: the body is not parsed) with ``data.category`` naming the
limit; a throttle adds ``retryAfterMs`` and ``Retry-After``. The body, once read, is replayed to the
app unchanged. Nothing is logged with a value: refusals are logged at INFO with the category only.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Final

from agent_connector_sdk.mcp.server._asgi import (
    DEFAULT_MAX_BODY_BYTES,
    TOO_LARGE,
    ASGIApp,
    Receive,
    Scope,
    Send,
    replay,
)
from agent_connector_sdk.mcp.server.completion import network_caller_key, trusted_networks

__all__ = [
    "DEFAULT_BODY_TIMEOUT_SECONDS",
    "DEFAULT_MAX_IN_FLIGHT",
    "DEFAULT_MAX_IN_FLIGHT_PER_CALLER",
    "DEFAULT_MAX_JSON_VALUES",
    "RequestBounds",
    "RequestLimits",
    "json_value_count",
]

_logger = logging.getLogger(__name__)

DEFAULT_MAX_IN_FLIGHT: Final = 64
DEFAULT_MAX_IN_FLIGHT_PER_CALLER: Final = 8
DEFAULT_BODY_TIMEOUT_SECONDS: Final = 10.0
DEFAULT_MAX_JSON_VALUES: Final = 50_000
"""Object members plus array elements one request may carry (a real tool call has a few hundred)."""

# A JSON string literal (escapes included); blanking these leaves only structure, numbers and literals.
_STRING: Final = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def json_value_count(body: bytes) -> int:
    """Object members plus array elements in the JSON text ``body`` (an upper bound for non-JSON input).

    Outside strings every ``:`` separates a member from its key and every ``,`` separates two members
    or elements; ``[`` opens an array whose first element has no comma before it. Counting those on
    the string-blanked bytes bounds the objects a parser would build without building any.
    """
    skeleton = _STRING.sub(b'""', body)
    return skeleton.count(b":") + skeleton.count(b",") + skeleton.count(b"[")


class _Refusal(Exception):
    def __init__(
        self, status: int, code: int, message: str, category: str, retry_after_ms: int | None = None
    ):
        super().__init__(message)
        self.status = status
        self.code = code
        self.category = category
        self.retry_after_ms = retry_after_ms


@dataclass(frozen=True)
class RequestBounds:
    """The per-request bounds :class:`RequestLimits` enforces (see the module docstring)."""

    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    max_in_flight_per_caller: int = DEFAULT_MAX_IN_FLIGHT_PER_CALLER
    body_timeout_seconds: float = DEFAULT_BODY_TIMEOUT_SECONDS
    max_json_values: int = DEFAULT_MAX_JSON_VALUES
    trusted_proxies: tuple[str, ...] = ()
    """Addresses or CIDR blocks whose ``X-Forwarded-For`` names the caller (as for completion)."""

    def __post_init__(self) -> None:
        trusted_networks(self.trusted_proxies)  # ValueError for a bad address or block
        for name in ("max_in_flight", "max_in_flight_per_caller", "max_json_values"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer")
        if isinstance(self.body_timeout_seconds, bool) or not self.body_timeout_seconds > 0:
            raise ValueError("body_timeout_seconds must be positive")


class RequestLimits:
    """ASGI middleware: ``RequestLimits(app, bounds=RequestBounds(...), max_body_bytes=...)`` (module doc)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        bounds: RequestBounds | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        rate_limit_code: int = -32010,
    ) -> None:
        if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int) or max_body_bytes < 1:
            raise ValueError("max_body_bytes must be a positive integer")
        bounds = bounds if bounds is not None else RequestBounds()
        self.app = app
        self.bounds = bounds
        self.max_in_flight = bounds.max_in_flight
        self.max_in_flight_per_caller = bounds.max_in_flight_per_caller
        self.body_timeout_seconds = bounds.body_timeout_seconds
        self.max_body_bytes = max_body_bytes
        self.max_json_values = bounds.max_json_values
        self.rate_limit_code = rate_limit_code
        self._networks = trusted_networks(bounds.trusted_proxies)
        self._in_flight = 0
        # Only callers with a request in flight have an entry (removed at zero): bounded by max_in_flight.
        self._per_caller: Counter[str] = Counter()

    @property
    def in_flight(self) -> int:
        """Requests holding a slot now."""
        return self._in_flight

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        authorizations = sum(
            1 for name, _ in scope.get("headers", []) if bytes(name).lower() == b"authorization"
        )
        if authorizations > 1:
            await _refuse(
                send, _Refusal(400, -32600, "duplicate Authorization header", "duplicate_authorization")
            )
            return
        if scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        declared = next(
            (bytes(v) for k, v in scope.get("headers", []) if bytes(k).lower() == b"content-length"), b""
        )
        if declared.strip().isdigit() and int(declared) > self.max_body_bytes:
            await _refuse(send, _Refusal(413, -32600, TOO_LARGE, "body_too_large"))
            return
        caller = _caller(scope, self._networks)
        try:
            self._acquire(caller)
        except _Refusal as refusal:
            await _refuse(send, refusal)
            return
        try:
            try:
                body = await self._read_body(receive)
            except _Refusal as refusal:
                await _refuse(send, refusal)
                return
            if body is None:
                return  # the client went away mid-body: nobody is left to answer
            await self.app(scope, replay(body, receive), send)
        finally:
            self._release(caller)

    def _acquire(self, caller: str) -> None:
        if self._in_flight >= self.max_in_flight:
            raise _Refusal(
                503, self.rate_limit_code, "server busy: too many requests in flight", "server_busy", 1000
            )
        if self._per_caller[caller] >= self.max_in_flight_per_caller:
            raise _Refusal(
                429,
                self.rate_limit_code,
                "too many requests in flight for this caller",
                "too_many_in_flight",
                1000,
            )
        self._in_flight += 1
        self._per_caller[caller] += 1

    def _release(self, caller: str) -> None:
        self._in_flight -= 1
        self._per_caller[caller] -= 1
        if self._per_caller[caller] <= 0:
            del self._per_caller[caller]

    async def _read_body(self, receive: Receive) -> bytes | None:
        try:
            async with asyncio.timeout(self.body_timeout_seconds):
                chunks: list[bytes] = []
                size = 0
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return None
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > self.max_body_bytes:
                        raise _Refusal(413, -32600, TOO_LARGE, "body_too_large")
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            raise _Refusal(
                408,
                -32600,
                f"request body not received within {self.body_timeout_seconds:g} s",
                "body_timeout",
            ) from None
        body = b"".join(chunks)
        if json_value_count(body) > self.max_json_values:
            raise _Refusal(
                413,
                -32600,
                f"request carries more than {self.max_json_values} JSON values (members and elements)",
                "too_many_json_values",
            )
        return body


def _caller(scope: Scope, networks: frozenset[Any]) -> str:
    """The in-flight identity, by :func:`.completion.caller_key`'s rule: the verified token's client (and
    subject), else the peer address (the forwarded client only from a trusted proxy)."""
    user = scope.get("user")
    token = getattr(user, "access_token", None)
    client_id = getattr(token, "client_id", None)
    if isinstance(client_id, str) and getattr(user, "is_authenticated", False):
        subject = getattr(token, "subject", None) or (getattr(token, "claims", None) or {}).get("sub")
        return f"client:{client_id}" + (f"/sub:{subject}" if isinstance(subject, str) else "")
    client = scope.get("client")
    headers = [(bytes(k).lower(), bytes(v).decode("latin-1")) for k, v in scope.get("headers", [])]
    forwarded = any(name in (b"x-forwarded-for", b"forwarded") for name, _ in headers)
    chain = [value for name, value in headers if name == b"x-forwarded-for"]
    return network_caller_key(client[0] if client else None, forwarded, chain, networks)


async def _refuse(send: Send, refusal: _Refusal) -> None:
    _logger.info("request refused before parsing: %s (HTTP %d)", refusal.category, refusal.status)
    data: dict[str, Any] = {"category": refusal.category}
    error: dict[str, Any] = {"code": refusal.code, "message": str(refusal), "data": data}
    if refusal.category == "body_too_large":
        del error["data"]  # answered exactly as the header gate and the mcp SDK's limit answer it
    headers = [(b"content-type", b"application/json")]
    if refusal.retry_after_ms is not None:
        data["retryAfterMs"] = refusal.retry_after_ms
        headers.append((b"retry-after", str(max(1, refusal.retry_after_ms // 1000)).encode()))
    payload = {"jsonrpc": "2.0", "id": None, "error": error}
    body = json.dumps(payload, separators=(",", ":")).encode()
    headers.append((b"content-length", str(len(body)).encode()))
    if refusal.status in (408, 413):
        headers.append((b"connection", b"close"))  # the rest of the body is not read
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
