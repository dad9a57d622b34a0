"""Execute gate over HTTP: ``Mcp-Param-*`` header parity for *every* tool a FastMCP server can run.

A thin, pure-ASGI adapter around ``contracts.headers.validate_parameter_headers``.
Why it exists: the ``mcp`` SDK validates these headers against a schema cache that FastMCP 4.2 fills
from ``tools/list``; a tool hidden by a search transform is never listed, so a mismatched header reaches
it with HTTP 200. This gate looks the *current* tool up by name through ``FastMCP.get_tool`` (the same
resolution ``tools/call`` uses: transforms delegate hidden names downstream, component auth applies) and
refuses disagreement with HTTP 400 and JSON-RPC ``-32020``. A call through a search transform's
``call_tool`` proxy is checked against the *proxied* tool and ``arguments.arguments``.

When the server also has the in-resolution gate (``install_header_gate``, which ``gated_http_app``
installs), 2026-07-28 calls are checked there — on the tool FastMCP resolves to run, with no second
lookup — and pass this layer unbuffered; it then checks only handshake-era calls, whose transports would
not answer the refusal with HTTP 400. Standalone (no in-resolution gate) it checks every call itself.

Everything it does not own it passes through untouched, so the server still produces its own answers:
non-POST traffic, unparsable or batch bodies, notifications (no JSON-RPC response body, ever), other
methods, unknown tools and legacy-protocol requests that carry no ``Mcp-Param-*`` header. The body is
read once, bounded, and replayed to the app. Audit events name headers and categories, never values.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from typing import Any, Final, cast

from fastmcp import FastMCP
from fastmcp.server.dependencies import extract_version_spec
from fastmcp.tools import Tool
from fastmcp.utilities.versions import VersionSpec
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from agent_connector_sdk.mcp.contracts.errors import HEADER_MISMATCH_CODE, AdmissionError, HeaderMismatch
from agent_connector_sdk.mcp.contracts.headers import MCP_PARAM_HEADER_PREFIX, validate_parameter_headers

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "RESOLUTION_GATE_MARK",
    "AuditSink",
    "HeaderParityMiddleware",
    "parameter_header_refusal",
    "proxy_tool_names",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
AuditSink = Callable[[dict[str, Any]], None]

DEFAULT_MAX_BODY_BYTES: Final = 4 * 1024 * 1024
"""Largest request body the gate buffers; a larger POST is refused (HTTP 413) rather than let through
unchecked, because an unchecked call is exactly what this gate exists to prevent."""

_PARAM_PREFIX: Final = MCP_PARAM_HEADER_PREFIX.lower()
_PROTOCOL_VERSION_HEADER: Final = b"mcp-protocol-version"

RESOLUTION_GATE_MARK: Final = "_agent_connector_sdk_header_gate"
"""Attribute set on a ``FastMCP`` server whose tool resolution enforces header parity (`.header_gate`)."""
_logger = logging.getLogger(__name__)


def _log_audit(event: dict[str, Any]) -> None:
    # json.dumps escapes control characters, so tool names cannot forge log lines. Events hold no values.
    level = logging.INFO if event.get("event") == "parameter_headers_refused" else logging.DEBUG
    if _logger.isEnabledFor(level):  # the dump costs more than the check itself; skip it when unread
        _logger.log(level, "header parity %s", json.dumps(event, sort_keys=True))


class _Refusal(Exception):
    def __init__(self, status: int, payload: dict[str, Any]) -> None:
        super().__init__(status)
        self.status = status
        self.payload = payload


class HeaderParityMiddleware:
    """ASGI middleware: ``HeaderParityMiddleware(app, server, *, max_body_bytes=..., audit=...)``.

    ``app`` is the ASGI app to protect (normally ``server.http_app(...)`` or the inner app of a Starlette
    middleware stack) and ``server`` the :class:`fastmcp.FastMCP` whose tools it serves. Install it
    *inside* authentication (e.g. ``server.http_app(middleware=[Middleware(HeaderParityMiddleware,
    server=server)])``) so tool lookup sees the caller's token, as the real call does; on a server with
    ``auth`` the gate refuses to run outside it (HTTP 500) rather than miss scope-protected tools, and
    leaves unauthenticated requests to the server's 401. Without ``auth`` wrapping the whole app works
    too. ``audit`` receives one event per checked call (default: the module logger); events carry names
    and categories only.
    """

    def __init__(
        self,
        app: ASGIApp,
        server: FastMCP[Any],
        *,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        audit: AuditSink | None = None,
    ) -> None:
        self.app = app
        self.server = server
        self.max_body_bytes = max_body_bytes
        self.audit: AuditSink = audit if audit is not None else _log_audit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        if self.server.auth is not None:
            user = scope.get("user")
            if user is None:
                # Installed outside authentication: a lookup without the caller's token would miss every
                # scope-protected tool and wave its calls through. Fail closed on the misconfiguration.
                _logger.error("header parity gate installed outside authentication; refusing requests")
                await _send_json(send, 500, _jsonrpc_error(None, -32603, "Server misconfigured"))
                return
            if not getattr(user, "is_authenticated", False):
                await self.app(scope, receive, send)  # the server answers 401 before any tool runs
                return
        if getattr(self.server, RESOLUTION_GATE_MARK, False) and _routes_to_modern_transport(scope):
            # The server checks 2026-07-28 calls itself, inside its own tool resolution (see
            # `.header_gate`), and that transport answers its -32020 with HTTP 400: nothing left to do
            # here, so the body is neither buffered nor parsed twice.
            await self.app(scope, receive, send)
            return
        headers = [
            (bytes(k).decode("latin-1"), bytes(v).decode("latin-1")) for k, v in scope.get("headers", [])
        ]
        try:
            body = await self._read_body(headers, receive)
        except _Refusal as refusal:
            await _send_json(send, refusal.status, refusal.payload)
            return
        if body is None:  # the client went away while sending; nobody is left to answer
            return
        try:
            await self._check(body, headers)
        except _Refusal as refusal:
            await _send_json(send, refusal.status, refusal.payload)
            return
        await self.app(scope, _replay(body, receive), send)

    async def _read_body(self, headers: list[tuple[str, str]], receive: Receive) -> bytes | None:
        for name, value in headers:
            if (
                name.lower() == "content-length"
                and value.strip().isdigit()
                and int(value) > self.max_body_bytes
            ):
                raise _Refusal(413, _jsonrpc_error(None, -32600, "Request body too large"))
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message.get("type") == "http.disconnect":
                return None
            chunk = bytes(message.get("body", b""))
            size += len(chunk)
            if size > self.max_body_bytes:
                raise _Refusal(413, _jsonrpc_error(None, -32600, "Request body too large"))
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _check(self, body: bytes, headers: list[tuple[str, str]]) -> None:
        """Raise :class:`_Refusal` when a ``tools/call`` request's headers disagree with its body."""
        request = _tools_call_request(body)
        if request is None or not _gate_applies(headers):
            return
        request_id, params = request
        name = params.get("name")
        arguments = params.get("arguments") if params.get("arguments") is not None else {}
        if not isinstance(name, str) or not isinstance(arguments, Mapping):
            return  # the server answers malformed params itself
        version = _version(params)
        tool = await self._lookup(name, version)
        if tool is None:
            return  # unknown (or not visible to this caller): the server answers its own error
        self._validate(request_id, tool, arguments, headers)
        if name in self._proxy_names():
            target = arguments.get("name")
            inner = arguments.get("arguments") if arguments.get("arguments") is not None else {}
            if not isinstance(target, str) or not isinstance(inner, Mapping) or target in self._proxy_names():
                return  # the proxy refuses these itself
            proxied = await self._lookup(target, None)
            if proxied is not None:
                self._validate(request_id, proxied, inner, headers)

    def _validate(
        self, request_id: Any, tool: Tool, arguments: Mapping[str, Any], headers: list[tuple[str, str]]
    ) -> None:
        refusal = parameter_header_refusal(tool, arguments, headers, self.audit)
        if refusal is not None:
            message, data = refusal
            raise _Refusal(400, _jsonrpc_error(request_id, HEADER_MISMATCH_CODE, message, data))

    async def _lookup(self, name: str, version: VersionSpec | None) -> Tool | None:
        try:
            return await self.server.get_tool(name, version)
        except Exception:
            # A lookup that fails (e.g. a provider error) is not a verdict on the headers: the server
            # will fail the same lookup for the real call and answer with its own error.
            _logger.debug("header parity: tool lookup failed", exc_info=True)
            return None

    def _proxy_names(self) -> set[str]:
        return proxy_tool_names(self.server)


def proxy_tool_names(server: FastMCP[Any]) -> set[str]:
    """Names of the ``call_tool`` proxies of ``server``'s search transforms (server-level only)."""
    # FastMCP exposes no public accessor for a search transform's proxy tool name; read it defensively
    # from server-level transforms (mounted servers' transforms are not searched).
    names: set[str] = set()
    for transform in server.transforms:
        proxy = getattr(transform, "_call_tool_name", None)
        if isinstance(proxy, str):
            names.add(proxy)
    return names


def parameter_header_refusal(
    tool: Tool, arguments: Mapping[str, Any], headers: Iterable[tuple[str, str]], audit: AuditSink
) -> tuple[str, dict[str, Any]] | None:
    """``(message, data)`` of the -32020 refusal when ``headers`` disagree with ``arguments`` for ``tool``.

    ``None`` means the headers agree. ``data`` is ``{tool, header, category}`` (names only); every audit
    event of the check goes to ``audit``. Shared by this ASGI gate and the in-resolution gate
    (:mod:`.header_gate`), so both answer byte-for-byte alike.
    """
    descriptor = {"name": tool.name, "inputSchema": tool.parameters}
    events: list[dict[str, Any]] = []
    try:
        validate_parameter_headers(descriptor, arguments, headers, events)
    except HeaderMismatch as refusal:
        return refusal.message, {"tool": tool.name, "header": refusal.header, "category": refusal.category}
    except AdmissionError as refusal:
        # Fail closed: the tool's own annotations are invalid, so no header can be checked against
        # them (conforming clients drop such a tool; only a non-conforming caller gets here).
        return refusal.message, {"tool": tool.name, "header": None, "category": refusal.category}
    finally:
        for event in events:
            audit(event)
    return None


def _tools_call_request(body: bytes) -> tuple[Any, Mapping[str, Any]] | None:
    """``(id, params)`` of a single JSON-RPC ``tools/call`` *request*, else ``None`` (pass through)."""
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(decoded, dict) or "id" not in decoded or decoded.get("method") != "tools/call":
        return None  # batches, notifications and other methods are the server's business
    request_id = decoded["id"]
    if request_id is None or isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None  # an invalid id: the server answers -32600 with id null
    params = decoded.get("params")
    if not isinstance(params, dict):
        return None
    return request_id, cast(Mapping[str, Any], params)


def _gate_applies(headers: Iterable[tuple[str, str]]) -> bool:
    # Mcp-Param headers exist from 2026-07-28 on; an older protocol's call is checked only when it carries
    # one anyway (an intermediary may route on it, so it must still agree with the body).
    for name, value in headers:
        folded = name.lower()
        if folded.startswith(_PARAM_PREFIX) or (
            folded == "mcp-protocol-version" and value in MODERN_PROTOCOL_VERSIONS
        ):
            return True
    return False


def _routes_to_modern_transport(scope: Scope) -> bool:
    """Whether ``mcp``'s session manager hands this request to its 2026-07-28 single-exchange transport.

    Mirrors ``StreamableHTTPSessionManager``'s routing: the first ``mcp-protocol-version`` header (ASGI
    names are lowercase), present and not a handshake-era version. That transport maps a handler's
    -32020 to HTTP 400; the legacy ones do not, so their calls stay checked at this layer.
    """
    for name, value in scope.get("headers", []):
        if name == _PROTOCOL_VERSION_HEADER:
            return bytes(value).decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS
    return False


def _version(params: Mapping[str, Any]) -> VersionSpec | None:
    meta = params.get("_meta")
    spec = extract_version_spec(dict(meta)) if isinstance(meta, Mapping) else None
    return VersionSpec(eq=spec) if spec else None


def _jsonrpc_error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


async def _send_json(send: Send, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload, separators=(",", ":")).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that yields the buffered body once, then defers to the real one (disconnects)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
