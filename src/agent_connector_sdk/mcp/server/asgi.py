"""The ASGI entry of the Execute gate: :class:`HeaderParityMiddleware`, innermost in ``server.http_app``.

The resolution hook (:mod:`.resolution`) checks 2026-07-28 calls inside FastMCP's tool resolution,
where that transport maps a -32020 to HTTP 400. The handshake-era transports would answer the same
refusal with HTTP 200, so their calls are checked here, before the app sees them: the body is buffered
(bounded), parsed, the tool looked up as this caller sees it and checked with the one checker
(:class:`.parity.HeaderParityGate`); the request then carries its :class:`._record.CallRecord`
marked "headers checked", so resolution does not check it again (one verdict, one audit event). On a
server without the resolution hook this entry checks every call itself.

A header-annotated argument whose body value is not of its annotated type (e.g. ``region: 5`` for a
string, sent with ``Mcp-Param-Region: 5``) is not a header verdict: when the server validates
arguments, the request goes on unmarked and resolution answers it as invalid arguments.

It also answers, for every POST, what the ``mcp`` SDK would otherwise crash or answer in plain text on:
an ``Mcp-Name`` the SDK's decoder raises on (HTTP 400, -32020, instead of a 500), an oversize body
(HTTP 413 with a JSON-RPC error on both transports), a client that disconnects mid-body (nothing to
answer, nothing logged as an application error). Everything else passes through untouched: non-POST
traffic, unparsable or batch bodies, notifications, other methods, unknown tools, and handshake-era
requests without any ``Mcp-Param-*`` header.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any, Final, cast

from fastmcp import FastMCP
from fastmcp.server.dependencies import extract_version_spec
from fastmcp.tools import Tool
from fastmcp.utilities.versions import VersionSpec
from mcp.shared.inbound import decode_header_value as sdk_decode_header_value
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import ClientDisconnect

from agent_connector_sdk.audit import AuditSink
from agent_connector_sdk.mcp import compat
from agent_connector_sdk.mcp.contracts.errors import HEADER_MISMATCH_CODE
from agent_connector_sdk.mcp.server._asgi import (
    DEFAULT_MAX_BODY_BYTES,
    TOO_LARGE,
    ASGIApp,
    Message,
    Receive,
    Scope,
    Send,
    replay,
)
from agent_connector_sdk.mcp.server._record import mark_headers_checked
from agent_connector_sdk.mcp.server.parity import (
    HeaderParityGate,
    gate_applies,
    search_proxy_name,
    unwrap_proxy,
)
from agent_connector_sdk.mcp.server.resolution import ResolutionGate, mistyped_header_argument

__all__ = ["HeaderParityMiddleware"]

_PROTOCOL_VERSION_HEADER: Final = b"mcp-protocol-version"
_META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
_NAME_HEADER: Final = b"mcp-name"

_logger = logging.getLogger(__name__)


class _Refusal(Exception):
    def __init__(self, status: int, payload: dict[str, Any]) -> None:
        super().__init__(status)
        self.status = status
        self.payload = payload


class HeaderParityMiddleware:
    """ASGI entry point: ``HeaderParityMiddleware(app, server, *, gate=None, max_body_bytes=..., audit=...)``.

    ``app`` is the ASGI app to protect (normally the inner app of ``server.http_app(...)``'s middleware
    stack) and ``server`` the :class:`fastmcp.FastMCP` whose tools it serves. Install it *inside*
    authentication (``server.http_app(middleware=[Middleware(HeaderParityMiddleware, server=server)])``)
    so tool lookup sees the caller's token, as the real call does; on a server with ``auth`` it refuses
    to run outside it (HTTP 500) rather than miss scope-protected tools, and leaves unauthenticated
    requests to the server's 401. ``gate`` shares one checker with the resolution hook (so the two emit
    to one audit sink); without it the middleware builds its own with ``audit``. ``max_body_bytes``
    bounds what it buffers (default :data:`._asgi.DEFAULT_MAX_BODY_BYTES`, the ``mcp`` SDK's own 4 MiB).
    """

    def __init__(
        self,
        app: ASGIApp,
        server: FastMCP[Any],
        *,
        gate: HeaderParityGate | None = None,
        max_body_bytes: int | None = None,
        audit: AuditSink | None = None,
    ) -> None:
        self.app = app
        self.server = server
        self.gate = gate if gate is not None else HeaderParityGate(audit=audit)
        self.max_body_bytes = max_body_bytes if max_body_bytes is not None else DEFAULT_MAX_BODY_BYTES

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
        raw_headers: list[tuple[bytes, bytes]] = [(bytes(k), bytes(v)) for k, v in scope.get("headers", [])]
        try:
            _refuse_oversize_declaration(raw_headers, self.max_body_bytes)
            if _undecodable_name(raw_headers):
                body = await self._read_body(receive)
                if body is None:
                    return
                raise _Refusal(
                    400,
                    _jsonrpc_error(
                        _request_id(body),
                        HEADER_MISMATCH_CODE,
                        "Mcp-Name header is not a decodable header value",
                        {"tool": None, "header": "Mcp-Name", "category": "malformed"},
                    ),
                )
            if _routes_to_modern_transport(raw_headers) and isinstance(
                compat.installed_tool_resolution(self.server), ResolutionGate
            ):
                # The server checks 2026-07-28 calls inside its own tool resolution, and that transport
                # answers -32020 with HTTP 400: the body is neither buffered nor parsed here.
                await self._pass_through(scope, receive, send)
                return
            body = await self._read_body(receive)
            if body is None:  # the client went away while sending; nobody is left to answer
                return
            decoded = _decoded(body)
            _refuse_revision_downgrade(decoded, raw_headers)
            headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in raw_headers]
            checked = await self._check(decoded, headers)
        except _Refusal as refusal:
            await _send_json(send, refusal.status, refusal.payload)
            return
        if checked:
            mark_headers_checked(scope)
        await self._pass_through(scope, replay(body, receive), send)

    async def _pass_through(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Run the app, answering its plain-text 413 as JSON-RPC and a mid-body disconnect quietly."""
        try:
            await self.app(scope, receive, _json_413(send))
        except ClientDisconnect:
            _logger.debug("client disconnected before sending the whole request body")

    async def _read_body(self, receive: Receive) -> bytes | None:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message.get("type") == "http.disconnect":
                return None
            chunk = bytes(message.get("body", b""))
            size += len(chunk)
            if size > self.max_body_bytes:
                raise _Refusal(413, _jsonrpc_error(None, -32600, TOO_LARGE))
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _check(self, decoded: Any, headers: list[tuple[str, str]]) -> bool:
        """Whether the gate checked this request; raises :class:`_Refusal` on a disagreement."""
        request = _tools_call_request(decoded)
        if request is None or not gate_applies(headers):
            return False
        request_id, params = request
        name = params.get("name")
        arguments = params.get("arguments") if params.get("arguments") is not None else {}
        if not isinstance(name, str) or not isinstance(arguments, Mapping):
            return False  # the server answers malformed params itself
        tool = await self._lookup(name, _version(params))
        if tool is None:
            return False  # unknown (or not visible to this caller): the server answers its own error
        proxy_call = unwrap_proxy(self.server, name, arguments)
        proxied: tuple[Tool, Mapping[str, Any]] | None = None
        if proxy_call is not None:
            found = await self._lookup(proxy_call[0], None)  # what the proxy's call_tool resolves
            proxied = (found, proxy_call[1]) if found is not None else None
        if self._mistyped(tool, arguments, proxied):
            # As in resolution: a body value not of its annotated type is answered there as invalid
            # arguments, not here as -32020 (the request stays unmarked and the tool never runs).
            return False
        refusal = self.gate.check(
            tool, arguments, headers, proxied, proxy_name=search_proxy_name(self.server)
        )
        if refusal is None:
            return True
        message, data = refusal
        raise _Refusal(400, _jsonrpc_error(request_id, HEADER_MISMATCH_CODE, message, data))

    def _mistyped(
        self, tool: Tool, arguments: Mapping[str, Any], proxied: tuple[Tool, Mapping[str, Any]] | None
    ) -> bool:
        """Whether the resolution hook will refuse a mistyped header-annotated argument of this call."""
        resolution = compat.installed_tool_resolution(self.server)
        if not isinstance(resolution, ResolutionGate) or not resolution.arguments:
            return False
        if mistyped_header_argument(tool, arguments) is not None:
            return True
        return proxied is not None and mistyped_header_argument(*proxied) is not None

    async def _lookup(self, name: str, version: VersionSpec | None) -> Tool | None:
        try:
            return await self.server.get_tool(name, version)
        except Exception:
            # A lookup that fails (e.g. a provider error) is not a verdict on the headers: the server
            # will fail the same lookup for the real call and answer with its own error.
            _logger.debug("header parity: tool lookup failed", exc_info=True)
            return None


def _refuse_oversize_declaration(raw_headers: list[tuple[bytes, bytes]], limit: int) -> None:
    for name, value in raw_headers:
        if name.lower() == b"content-length" and value.strip().isdigit() and int(value) > limit:
            raise _Refusal(413, _jsonrpc_error(None, -32600, TOO_LARGE))


def _undecodable_name(raw_headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether the ``mcp`` SDK's own ``Mcp-Name`` decoding would raise (it must return ``None``).

    ``mcp.shared.inbound.decode_header_value`` raises ``ValueError`` for a ``=?base64?…?=`` payload
    with non-ASCII characters (mcp 2.3.0); its request classification does not catch it, so the
    server would answer 500. This asks the SDK's decoder itself, so the rule cannot drift from it.
    """
    for name, value in raw_headers:
        if name.lower() == _NAME_HEADER:
            try:
                sdk_decode_header_value(value.decode("latin-1"))
            except ValueError:
                return True
    return False


_UNPARSABLE: Final = object()


def _decoded(body: bytes) -> Any:
    """The body's JSON (parsed once per request), or :data:`_UNPARSABLE` (the server answers -32700)."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return _UNPARSABLE


def _refuse_revision_downgrade(decoded: Any, raw_headers: Iterable[tuple[bytes, bytes]]) -> None:
    """One header rulebook per request: a request is 2026-07-28 when its header *or* its body says so.

    A body whose ``_meta`` names a protocol version — a key only 2026-07-28 requests carry — must carry
    the same version in its ``MCP-Protocol-Version`` header. Without it (or with a handshake-era one) it
    is a 2026-07-28 request routed around its header: served by the handshake-era transport it would
    skip every 2026-07-28 header rule (``Mcp-Name``/``Mcp-Method`` consistency, the missing-``Mcp-Param``
    rule), and an intermediary routing on those headers would send it to the wrong place. Refused with
    HTTP 400 and -32020 (``data.header`` = ``MCP-Protocol-Version``): the header is required and must
    equal the body's version.
    """
    messages = decoded if isinstance(decoded, list) else [decoded]
    for message in messages:
        params = message.get("params") if isinstance(message, dict) else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        if not isinstance(meta, dict) or _META_PROTOCOL_VERSION not in meta:
            continue
        sent = next((value for name, value in raw_headers if name == _PROTOCOL_VERSION_HEADER), None)
        if sent is not None and sent.decode("latin-1") == meta[_META_PROTOCOL_VERSION]:
            continue  # header and body agree (this entry also serves apps without the resolution hook)
        category = "missing" if sent is None else "mismatch"
        request_id = message.get("id") if isinstance(message, dict) else None
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            request_id = None
        raise _Refusal(
            400,
            _jsonrpc_error(
                request_id,
                HEADER_MISMATCH_CODE,
                "MCP-Protocol-Version header is missing although the request's _meta names a protocol version"
                if sent is None
                else "MCP-Protocol-Version header does not match the protocol version in the request's _meta",
                {"tool": None, "header": "MCP-Protocol-Version", "category": category},
            ),
        )


def _tools_call_request(decoded: Any) -> tuple[Any, Mapping[str, Any]] | None:
    """``(id, params)`` of a single JSON-RPC ``tools/call`` *request*, else ``None`` (pass through)."""
    if not isinstance(decoded, dict) or "id" not in decoded or decoded.get("method") != "tools/call":
        return None  # batches, notifications and other methods are the server's business
    request_id = decoded["id"]
    if request_id is None or isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None  # an invalid id: the server answers -32600 with id null
    params = decoded.get("params")
    if not isinstance(params, dict):
        return None
    return request_id, cast(Mapping[str, Any], params)


def _request_id(body: bytes) -> Any:
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        return None
    request_id = decoded.get("id") if isinstance(decoded, dict) else None
    return request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None


def _routes_to_modern_transport(raw_headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether ``mcp``'s session manager hands this request to its 2026-07-28 single-exchange transport.

    Mirrors ``StreamableHTTPSessionManager``'s routing: the first ``mcp-protocol-version`` header (ASGI
    names are lowercase), present and not a handshake-era version. That transport maps a handler's
    -32020 to HTTP 400; the legacy ones do not, so their calls are checked at the ASGI entry.
    """
    for name, value in raw_headers:
        if name == _PROTOCOL_VERSION_HEADER:
            return value.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS
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


def _json_body(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()


async def _send_json(send: Send, status: int, payload: dict[str, Any]) -> None:
    body = _json_body(payload)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _json_413(send: Send) -> Send:
    """A ``send`` that turns the inner app's plain-text 413 (the ``mcp`` SDK's body limit) into the
    same JSON-RPC answer the gate gives, so every route answers an oversize body alike."""
    replacing = False

    async def sending(message: Message) -> None:
        nonlocal replacing
        if message.get("type") == "http.response.start" and message.get("status") == 413:
            replacing = True
            await _send_json(send, 413, _jsonrpc_error(None, -32600, TOO_LARGE))
            return
        if replacing:
            return  # the replaced plain-text body
        await send(message)

    return sending
