"""Execute gate over HTTP: one ``Mcp-Param-*`` parity checker with two entry points.

Why it exists: the ``mcp`` SDK validates these headers against a schema cache that FastMCP 4.2 fills
from ``tools/list``; a tool hidden by a search transform is never listed, so a mismatched header reaches
it with HTTP 200. :class:`HeaderParityGate` checks *every* tool a FastMCP server can run and refuses
disagreement with HTTP 400 and JSON-RPC ``-32020`` (``data = {tool, header, category}``, names only).

One checker (:meth:`HeaderParityGate.check`: one tool lookup rule, one proxy rule, one audit event per
request), reached from two entry points:

* **tool resolution** (:meth:`HeaderParityGate.install`, see :mod:`.header_gate`) — inside FastMCP's own
  ``get_tool``, on the tool that is about to run, as this caller resolves it (no second lookup). This is
  where 2026-07-28 calls are checked: that transport maps the -32020 to HTTP 400.
* **ASGI** (:class:`HeaderParityMiddleware`) — for calls routed to the handshake-era transports, whose
  answer to a handler's -32020 would be HTTP 200: the body is buffered (bounded) and checked before the
  app sees it. On a server without the resolution entry it checks every call itself. It also answers,
  for every POST, what the ``mcp`` SDK would otherwise crash or answer in plain text on: an
  ``Mcp-Name`` the SDK's decoder raises on (HTTP 400, -32020, instead of a 500), an oversize body
  (HTTP 413 with a JSON-RPC error on both transports), a client that disconnects mid-body (nothing to
  answer, nothing logged as an application error).

The two entry points coordinate per request, never through state on the server: a request the ASGI entry
checked carries ``request.state.agent_connector_sdk_header_parity`` (Starlette's per-request state), and
the resolution entry skips it — so every call is checked exactly once and yields one audit event.

Proxies: a call to a search transform's ``call_tool`` proxy is checked against the *proxy's* schema and
then the *proxied* tool with ``arguments.arguments`` (a proxy calling a proxy is the proxy's own
refusal). Everything the gate does not own passes through untouched: non-POST traffic, unparsable or
batch bodies, notifications, other methods, unknown tools, and handshake-era requests without any
``Mcp-Param-*`` header. Audit events name headers and categories, never values.
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
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.inbound import decode_header_value as sdk_decode_header_value
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from starlette.requests import ClientDisconnect

from agent_connector_sdk.audit import AuditEvent, AuditSink, BoundedAuditSink
from agent_connector_sdk.mcp import compat
from agent_connector_sdk.mcp.contracts.errors import HEADER_MISMATCH_CODE, AdmissionError, HeaderMismatch
from agent_connector_sdk.mcp.contracts.headers import MCP_PARAM_HEADER_PREFIX, validate_parameter_headers

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "AuditSink",
    "AuditTarget",
    "HeaderParityGate",
    "HeaderParityMiddleware",
    "HeaderRefusal",
    "as_audit_sink",
    "parameter_header_refusal",
    "proxy_tool_names",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
AuditTarget = AuditSink
"""Any :class:`~agent_connector_sdk.audit.AuditSink`: a callable taking each event (a
``BoundedAuditSink``, a logger function, ``events.append``)."""

DEFAULT_MAX_BODY_BYTES: Final = DEFAULT_MAX_REQUEST_BODY_SIZE
"""Largest request body (the ``mcp`` SDK's own limit, 4 MiB); larger POSTs get HTTP 413 + JSON-RPC
-32600 on every transport. The gate refuses rather than let an unchecked call through."""

REQUEST_STATE_KEY: Final = "agent_connector_sdk_header_parity"
"""``request.state`` key set on a request the ASGI entry checked (the resolution entry then skips it)."""

_PARAM_PREFIX: Final = MCP_PARAM_HEADER_PREFIX.lower()
_PARAM_PREFIX_BYTES: Final = _PARAM_PREFIX.encode("ascii")
_PROTOCOL_VERSION_HEADER: Final = b"mcp-protocol-version"
_NAME_HEADER: Final = b"mcp-name"
_TOO_LARGE: Final = "Request body too large"

_logger = logging.getLogger(__name__)

HeaderRefusal = tuple[str, dict[str, Any]]
"""``(message, data)`` of a -32020 refusal; ``data`` is ``{tool, header, category}`` (names only)."""


class _LoggingAuditSink:
    """Default sink: a bounded in-memory record plus the ``header_parity`` logger (JSON, so no name in
    an event can forge a log line)."""

    def __init__(self) -> None:
        self.recent = BoundedAuditSink()

    def __call__(self, event: AuditEvent, /) -> None:
        self.recent(event)
        level = logging.INFO if event.get("event") == "parameter_headers_refused" else logging.DEBUG
        if _logger.isEnabledFor(level):  # the dump costs more than the check itself; skip it when unread
            _logger.log(level, "header parity %s", json.dumps(dict(event), sort_keys=True))


def as_audit_sink(target: AuditTarget | None) -> AuditSink:
    """``target`` as an ``AuditSink`` (``None``: a bounded record plus the module logger)."""
    return _LoggingAuditSink() if target is None else target


def proxy_tool_names(server: FastMCP[Any]) -> frozenset[str]:
    """Names of the ``call_tool`` proxies of ``server``'s search transforms (server-level only)."""
    names = (compat.search_proxy_tool_name(transform) for transform in server.transforms)
    return frozenset(name for name in names if name is not None)


def parameter_header_refusal(
    tool: Tool,
    arguments: Mapping[str, Any],
    headers: Iterable[tuple[str, str]],
    audit: AuditTarget | list[dict[str, Any]],
) -> HeaderRefusal | None:
    """The -32020 refusal when ``headers`` disagree with ``arguments`` for ``tool``, else ``None``.

    The pure verdict of one tool (``contracts.headers.validate_parameter_headers``); its one audit event
    goes to ``audit``. :meth:`HeaderParityGate.check` combines the verdicts of a request into one event.
    """
    descriptor = {"name": tool.name, "inputSchema": tool.parameters}
    events: list[dict[str, Any]] = []
    refusal: HeaderRefusal | None = None
    try:
        validate_parameter_headers(descriptor, arguments, headers, events)
    except HeaderMismatch as mismatch:
        refusal = (
            mismatch.message,
            {"tool": tool.name, "header": mismatch.header, "category": mismatch.category},
        )
    except AdmissionError as invalid:
        # Fail closed: the tool's own annotations are invalid, so no header can be checked against
        # them (conforming clients drop such a tool; only a non-conforming caller gets here).
        refusal = invalid.message, {"tool": tool.name, "header": None, "category": invalid.category}
    if isinstance(audit, list):
        audit.extend(events)
    else:
        sink = as_audit_sink(audit)
        for event in events:
            sink(event)
    return refusal


Lookup = Callable[[str, VersionSpec | None], Awaitable[Tool | None]]


class HeaderParityGate:
    """The one header-parity checker and its two entry points (see the module docstring).

    ``audit`` receives one event per checked request (default: a bounded record, ``.audit.recent``, plus
    the module logger). ``max_body_bytes`` bounds what the ASGI entry buffers.
    """

    def __init__(
        self, *, audit: AuditTarget | None = None, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    ) -> None:
        self.audit: AuditSink = as_audit_sink(audit)
        self.max_body_bytes = max_body_bytes

    # -- the checker ---------------------------------------------------------------------------------
    async def check(
        self,
        server: FastMCP[Any],
        tool: Tool,
        arguments: Mapping[str, Any],
        headers: list[tuple[str, str]],
        lookup: Lookup,
    ) -> HeaderRefusal | None:
        """Check one ``tools/call`` of ``tool`` (and, through a search proxy, its target); emit one event.

        ``lookup`` resolves a proxied target exactly as the proxy's own ``call_tool`` will.
        """
        events: list[dict[str, Any]] = []
        refusal = parameter_header_refusal(tool, arguments, headers, events)
        if refusal is None and tool.name in proxy_tool_names(server):
            target = arguments.get("name")
            inner = arguments.get("arguments") if arguments.get("arguments") is not None else {}
            if (
                isinstance(target, str)
                and isinstance(inner, Mapping)
                and target not in proxy_tool_names(server)
            ):
                proxied = await lookup(target, None)
                if proxied is not None:
                    refusal = parameter_header_refusal(proxied, inner, headers, events)
                    events[-1] = {**events[-1], "via": tool.name}
        if events:
            self.audit(events[-1])  # the verdict that decided: one event per request
        return refusal

    # -- entry point 1: FastMCP tool resolution --------------------------------------------------------
    def install(self, server: FastMCP[Any]) -> None:
        """Check 2026-07-28 (and any ASGI-unchecked) calls inside ``server``'s tool resolution.

        Idempotent: a server whose resolution already runs a header gate is left as it is.
        """
        from agent_connector_sdk.mcp.server.header_gate import install_resolution_gate

        install_resolution_gate(server, self)

    # -- entry point 2: ASGI ---------------------------------------------------------------------------
    def middleware(self, app: ASGIApp, server: FastMCP[Any]) -> HeaderParityMiddleware:
        """The ASGI entry point wrapping ``app`` (install it inside authentication; see below)."""
        return HeaderParityMiddleware(app, server, gate=self)


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
    requests to the server's 401. ``gate`` shares one checker with the resolution entry; without it the
    middleware builds its own from ``max_body_bytes`` and ``audit``.
    """

    def __init__(
        self,
        app: ASGIApp,
        server: FastMCP[Any],
        *,
        gate: HeaderParityGate | None = None,
        max_body_bytes: int | None = None,
        audit: AuditTarget | None = None,
    ) -> None:
        self.app = app
        self.server = server
        if gate is None:
            gate = HeaderParityGate(
                audit=audit,
                max_body_bytes=max_body_bytes if max_body_bytes is not None else DEFAULT_MAX_BODY_BYTES,
            )
        self.gate = gate
        self.max_body_bytes = max_body_bytes if max_body_bytes is not None else gate.max_body_bytes

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
                compat.installed_tool_resolution(self.server), _resolution_entry_type()
            ):
                # The server checks 2026-07-28 calls inside its own tool resolution, and that transport
                # answers -32020 with HTTP 400: the body is neither buffered nor parsed here.
                await self._pass_through(scope, receive, send)
                return
            body = await self._read_body(receive)
            if body is None:  # the client went away while sending; nobody is left to answer
                return
            headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in raw_headers]
            checked = await self._check(body, headers)
        except _Refusal as refusal:
            await _send_json(send, refusal.status, refusal.payload)
            return
        if checked:
            scope.setdefault("state", {})[REQUEST_STATE_KEY] = True
        await self._pass_through(scope, _replay(body, receive), send)

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
                raise _Refusal(413, _jsonrpc_error(None, -32600, _TOO_LARGE))
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _check(self, body: bytes, headers: list[tuple[str, str]]) -> bool:
        """Whether the gate checked this request; raises :class:`_Refusal` on a disagreement."""
        request = _tools_call_request(body)
        if request is None or not _gate_applies(headers):
            return False
        request_id, params = request
        name = params.get("name")
        arguments = params.get("arguments") if params.get("arguments") is not None else {}
        if not isinstance(name, str) or not isinstance(arguments, Mapping):
            return False  # the server answers malformed params itself
        tool = await self._lookup(name, _version(params))
        if tool is None:
            return False  # unknown (or not visible to this caller): the server answers its own error
        refusal = await self.gate.check(self.server, tool, arguments, headers, self._lookup)
        if refusal is not None:
            message, data = refusal
            raise _Refusal(400, _jsonrpc_error(request_id, HEADER_MISMATCH_CODE, message, data))
        return True

    async def _lookup(self, name: str, version: VersionSpec | None) -> Tool | None:
        try:
            return await self.server.get_tool(name, version)
        except Exception:
            # A lookup that fails (e.g. a provider error) is not a verdict on the headers: the server
            # will fail the same lookup for the real call and answer with its own error.
            _logger.debug("header parity: tool lookup failed", exc_info=True)
            return None


def _resolution_entry_type() -> type:
    from agent_connector_sdk.mcp.server.header_gate import ResolutionGate

    return ResolutionGate


def _refuse_oversize_declaration(raw_headers: list[tuple[bytes, bytes]], limit: int) -> None:
    for name, value in raw_headers:
        if name.lower() == b"content-length" and value.strip().isdigit() and int(value) > limit:
            raise _Refusal(413, _jsonrpc_error(None, -32600, _TOO_LARGE))


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


def _request_id(body: bytes) -> Any:
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        return None
    request_id = decoded.get("id") if isinstance(decoded, dict) else None
    return request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None


def gate_applies(headers: Iterable[tuple[str, str]]) -> bool:
    """Whether a call with these headers is subject to parity: Mcp-Param headers exist from 2026-07-28
    on; an older protocol's call is checked only when it carries one anyway (an intermediary may route
    on it, so it must still agree with the body)."""
    for name, value in headers:
        folded = name.lower()
        if folded.startswith(_PARAM_PREFIX) or (
            folded == "mcp-protocol-version" and value in MODERN_PROTOCOL_VERSIONS
        ):
            return True
    return False


_gate_applies = gate_applies


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
            await _send_json(send, 413, _jsonrpc_error(None, -32600, _TOO_LARGE))
            return
        if replacing:
            return  # the replaced plain-text body
        await send(message)

    return sending


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
