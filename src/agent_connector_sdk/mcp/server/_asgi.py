"""ASGI plumbing the server's two ASGI layers share (:mod:`.asgi`, :mod:`.request_limits`).

The ASGI callable types, the one request-body limit and its refusal text (both layers answer an
oversize body alike, and alike to the ``mcp`` SDK's own limit), and :func:`replay`, which hands the
app a body a layer already buffered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

__all__ = ["DEFAULT_MAX_BODY_BYTES", "TOO_LARGE", "ASGIApp", "Message", "Receive", "Scope", "Send", "replay"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

DEFAULT_MAX_BODY_BYTES: Final = DEFAULT_MAX_REQUEST_BODY_SIZE
"""Largest request body (the ``mcp`` SDK's own limit, 4 MiB); larger POSTs get HTTP 413 + JSON-RPC
-32600 on every transport. The gates refuse rather than let an unchecked call through."""

TOO_LARGE: Final = "Request body too large"
"""The JSON-RPC message of that refusal."""


def replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that yields the buffered body once, then defers to the real one (disconnects)."""
    sent = False

    async def replaying() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replaying
