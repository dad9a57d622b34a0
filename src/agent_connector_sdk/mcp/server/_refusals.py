"""The server side's one refusal translator (the mirror of the host's ``mcp/host/_translate.py``).

Every refusal and failure the server side sends — the entry, the gates, resolution, the output check,
completion, the gateway's relays, the contract lab — is raised as our typed error or decided by its
module, and turned into its wire form *here*: a JSON-RPC error (an ``MCPError`` the ``mcp`` SDK sends,
or, for a request the entry answers before the SDK sees it, the JSON-RPC error body itself), with its
code from the one table :data:`CODES`. A failure a tool's output schema models (the failure envelope)
is not a JSON-RPC error at all: the output check answers it as a conforming ``isError`` result.

The same place names the SERVER span of a request the entry refuses (``tools/call NAME`` when the body
names the call, not ``mcp``) and records the verdict on it (:func:`answer_entry_refusal`).

``tests/mcp/server/test_refusal_translator.py`` scans the source: no other server-side module constructs
an ``MCPError``, an ``ErrorData`` or a JSON-RPC error body.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

import mcp_types
from fastmcp.exceptions import FastMCPError
from mcp.shared.exceptions import MCPError

from agent_connector_sdk.core.contracts.errors import HEADER_MISMATCH_CODE
from agent_connector_sdk.mcp.server._telemetry import note_refusal

__all__ = [
    "CODES",
    "INVALID_CURSOR",
    "answer_entry_refusal",
    "header_mismatch",
    "internal_error",
    "invalid_cursor",
    "invalid_params",
    "rate_limited",
    "refused_span_name",
    "resource_not_found",
    "wire_error",
]

CODES: Final[Mapping[str, int]] = MappingProxyType(
    {
        # JSON-RPC's own
        "invalid_request": mcp_types.INVALID_REQUEST,  # -32600: also a body over the size bound
        "invalid_params": mcp_types.INVALID_PARAMS,  # -32602: unknown tool, bad cursor, bad completion
        "internal_error": mcp_types.INTERNAL_ERROR,  # -32603: a server bug, never the caller's fault
        # implementation-defined (-32000..-32019)
        "rate_limited": -32010,  # the default for in-flight bounds and completion (configurable)
        "child_unavailable": -32011,  # gateway: down, reconnecting, or the transport failed
        "child_timeout": -32012,  # gateway: no answer within call_timeout
        "child_error": -32013,  # gateway: the child answered a JSON-RPC error (data.childCode)
        "child_contract": -32014,  # gateway: the child's answer broke the admitted contract
        "tool_changed": -32015,  # gateway: not the tool the caller bound the call to, or it moved
        "refused": -32016,  # gateway: its host side refused the call before sending it
        # MCP 2026-07-28 (SEP-2243): the Mcp-* headers disagree with the body
        "header_mismatch": HEADER_MISMATCH_CODE,  # -32020
    }
)
"""Every JSON-RPC error code the server side sends, by name."""

INVALID_CURSOR: Final = "Invalid cursor"
"""FastMCP's own words for a cursor it did not issue (our gates and the lab answer alike)."""


def _error(code: int, message: str, data: Any = None) -> MCPError:
    return MCPError(code=code, message=message, data=data)


def invalid_params(message: str, data: Mapping[str, Any] | None = None) -> MCPError:
    return _error(CODES["invalid_params"], message, dict(data) if data is not None else None)


def invalid_cursor() -> MCPError:
    return invalid_params(INVALID_CURSOR)


def internal_error(message: str, data: Mapping[str, Any] | None = None) -> MCPError:
    return _error(CODES["internal_error"], message, dict(data) if data is not None else None)


def header_mismatch(message: str, data: Mapping[str, Any]) -> MCPError:
    """The header-parity refusal (``data = {tool, header, category}``, names only)."""
    return _error(CODES["header_mismatch"], message, dict(data))


def rate_limited(code: int, message: str, data: Mapping[str, Any]) -> MCPError:
    """A rate-limit refusal with the server's configured ``code`` (``data.retryAfterMs``)."""
    return _error(code, message, dict(data))


def wire_error(code: int, message: str, data: Mapping[str, Any]) -> MCPError:
    """A relay's refusal (the gateway's :data:`CODES` kinds), passed to the wire as it is."""
    return _error(code, message, dict(data))


class _ResourceNotFound(FastMCPError, MCPError):
    """An ``MCPError`` so FastMCP passes code, message and data to the wire unchanged; also a
    ``FastMCPError`` with a DEBUG ``log_level`` so FastMCP logs it quietly (a bare ``MCPError`` from a
    handler is logged with a full traceback at ERROR, and guessed URIs must not flood the logs)."""

    def __init__(self, uri: str) -> None:
        MCPError.__init__(self, CODES["invalid_params"], f"Resource not found: {uri!r}", {"uri": uri})
        self.log_level = logging.DEBUG


def resource_not_found(uri: str) -> MCPError:
    """Byte for byte what FastMCP answers for a URI no resource matches (``-32602``,
    ``Resource not found: '<uri>'``, ``data.uri``)."""
    return _ResourceNotFound(uri)


# --- the entry: requests answered before the mcp SDK sees them --------------------------------------


class EntryRefusal(Exception):
    """A request the entry answers itself: HTTP ``status``, JSON-RPC ``code`` and ``message``;
    ``category`` names the rule (``data.category``), ``data`` replaces that default data (e.g. the
    header verdict's ``{tool, header, category}``); ``request_id`` is the parsed id, when there is one.
    ``method`` and ``tool`` are what the parsed body names (when the entry parsed it): they name the
    request's span when no routing header does."""

    def __init__(
        self,
        status: int,
        code: int,
        message: str,
        category: str,
        *,
        request_id: Any = None,
        data: dict[str, Any] | None = None,
        retry_after_ms: int | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.category = category
        self.request_id = request_id
        self.data = data
        self.retry_after_ms = retry_after_ms
        self.method: str | None = None
        self.tool: str | None = None


_TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_METHOD: Final = re.compile(r"[a-z][A-Za-z/_-]{0,63}")


def refused_span_name(method: Any, tool: Any) -> str | None:
    """The span name of a refused request from what its body names (``tools/call NAME``, else the
    method), by the OpenTelemetry MCP conventions; ``None`` when the body names nothing of the shape
    of a method (the span then falls back to the routing headers). Never a value of another shape."""
    if not isinstance(method, str) or not _METHOD.fullmatch(method):
        return None
    if method == "tools/call" and isinstance(tool, str) and _TOOL_NAME.fullmatch(tool):
        return f"{method} {tool}"
    return method


def answer_entry_refusal(refusal: EntryRefusal) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """The HTTP headers and JSON-RPC error body answering ``refusal``; records the verdict (and the
    span's name) on the request's trace."""
    note_refusal(
        refusal.status,
        refusal.code,
        refusal.category,
        refusal.request_id,
        span_name=refused_span_name(refusal.method, refusal.tool),
        tool=refusal.tool if refusal.method == "tools/call" else None,
    )
    error: dict[str, Any] = {"code": refusal.code, "message": str(refusal)}
    headers = [(b"content-type", b"application/json")]
    if refusal.data is not None:
        error["data"] = refusal.data
    elif refusal.category != "body_too_large":  # answered exactly as the mcp SDK's own limit answers it
        error["data"] = {"category": refusal.category}
    if refusal.retry_after_ms is not None:
        error["data"]["retryAfterMs"] = refusal.retry_after_ms
        headers.append((b"retry-after", str(max(1, refusal.retry_after_ms // 1000)).encode()))
    payload = {"jsonrpc": "2.0", "id": refusal.request_id, "error": error}
    body = json.dumps(payload, separators=(",", ":")).encode()
    headers.append((b"content-length", str(len(body)).encode()))
    if refusal.status in (408, 413):
        headers.append((b"connection", b"close"))  # the rest of the body is not read
    return headers, body
