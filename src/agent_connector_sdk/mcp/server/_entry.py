"""The one ASGI entry of a gated app: every HTTP request crosses it once, cheapest checks first.

It has two faces because FastMCP authenticates in between (its bearer-token middleware sets
``scope["user"]``; nothing here re-implements it):

**Front** — :class:`EntryFront`, in the place of FastMCP's Host/Origin guard, *before* authentication.
Header checks only, no body, no signature verification:

1. DNS-rebinding guard: FastMCP's own verdict (421 / 403) for the bound address, scheme and first
   ``Host``/``Origin`` headers, memoized (at most :data:`MAX_VERDICTS`, oldest out) — FastMCP's guard
   costs ~40 µs per request re-deriving a pure function of those four values;
2. two ``Authorization`` headers → HTTP 400 (``duplicate_authorization``): authentication would
   silently use the first, so the identity would depend on header order;
3. a declared ``Content-Length`` beyond ``max_body_bytes`` → HTTP 413.

**Entry** — :class:`GatedEntry`, after authentication, before the routes:

4. **a slot**. An authenticated caller (every caller, on a server without ``auth``) takes one from the
   main pool: ``max_in_flight`` on the server (HTTP 503) and ``max_in_flight_per_caller`` per caller
   (HTTP 429; the verified token's client, else the peer address). A request *without* valid
   credentials takes one from a separate, small pre-auth pool (``max_pre_auth_in_flight``) and is
   never buffered or parsed here: the app answers it (401 on the MCP route, at once, without reading
   the body; a public route such as an OAuth endpoint reads it through the same size and time
   bounds). So slow or unauthenticated senders can fill the pre-auth pool but never a slot an
   authenticated caller needs;
5. **the body, read once** within ``body_timeout_seconds`` for the whole body (HTTP 408) and
   ``max_body_bytes`` (HTTP 413);
6. **bounded JSON work**: :func:`json_value_count`, a linear scan that builds nothing, refuses more than
   ``max_json_values`` object members plus array elements (HTTP 413) before any parser turns them
   into Python objects;
7. **parsed once, handed to the resolution hook**, when the request needs a verdict before the app:
   a handshake-era ``tools/call`` (its transport would answer a -32020 with HTTP 200) is judged by the
   resolution hook's :meth:`~._resolution.ResolutionGate.judge_before_dispatch` (HTTP 400 on refusal).
   2026-07-28 requests are judged by the same hook during dispatch, where that transport answers
   -32020 with HTTP 400; they are not parsed here. An ``Mcp-Name`` the ``mcp`` SDK's decoder would
   crash on and a request whose body ``_meta`` names a protocol version its header does not carry are
   refused here (HTTP 400, -32020);
8. **the app**, with the body replayed; the ``mcp`` SDK's plain-text 413 is answered as the JSON-RPC
   413 above (one 413 on every route); a client that leaves mid-body gets nothing and logs nothing.

Memory: the entry holds the body once (a buffer sized by ``Content-Length``) and its scan allocates
nothing, so a request costs the entry at most 2× its body whatever its shape (measured per shape in
``tests/mcp/server/test_entry_bounds.py``). The one exception is the parse of step 7, which happens only
for a handshake-era call carrying ``Mcp-Param-*`` headers (or a ``_meta`` version): CPython stores a
string holding one astral character at 4 bytes per character, so such a body can cost ~6× (measured) —
as the ``mcp`` SDK's own parse of every request does.

Every refusal is one type, :class:`EntryRefusal`, answered by one function as a JSON-RPC error
(``data.category`` names the rule; a throttle adds ``retryAfterMs`` and ``Retry-After``). Refusals are
logged at INFO with the category only, never a value.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Final

import pydantic_core
from fastmcp import FastMCP
from fastmcp.server.http import HostOriginGuardMiddleware
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.inbound import decode_header_value as sdk_decode_header_value
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect

from agent_connector_sdk.mcp.server._completion import network_caller_key, trusted_networks
from agent_connector_sdk.mcp.server._parity import gate_applies
from agent_connector_sdk.mcp.server._refusals import CODES, EntryRefusal, answer_entry_refusal
from agent_connector_sdk.mcp.server._resolution import ResolutionGate
from agent_connector_sdk.mcp.server._telemetry import traced_request

__all__ = [
    "DEFAULT_BODY_TIMEOUT_SECONDS",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_IN_FLIGHT",
    "DEFAULT_MAX_IN_FLIGHT_PER_CALLER",
    "DEFAULT_MAX_JSON_VALUES",
    "DEFAULT_MAX_PRE_AUTH_IN_FLIGHT",
    "MAX_VERDICTS",
    "TOO_LARGE",
    "EntryFront",
    "GatedEntry",
    "RequestBounds",
    "install_entry_front",
    "json_value_count",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Named as before the file moved: operators filter logs on this name.
_logger = logging.getLogger("agent_connector_sdk.mcp.server.entry")

DEFAULT_MAX_BODY_BYTES: Final = DEFAULT_MAX_REQUEST_BODY_SIZE
"""Largest request body (the ``mcp`` SDK's own limit, 4 MiB)."""
TOO_LARGE: Final = "Request body too large"
"""The JSON-RPC message of the one 413 answer."""
DEFAULT_MAX_IN_FLIGHT: Final = 64
DEFAULT_MAX_IN_FLIGHT_PER_CALLER: Final = 8
DEFAULT_MAX_PRE_AUTH_IN_FLIGHT: Final = 16
"""Requests without valid credentials in flight at once (a pool of their own; see step 4)."""
DEFAULT_BODY_TIMEOUT_SECONDS: Final = 10.0
DEFAULT_MAX_JSON_VALUES: Final = 50_000
"""Object members plus array elements one request may carry (a real tool call has a few hundred)."""
MAX_VERDICTS: Final = 1024
"""Distinct (bound address, scheme, Host, Origin) combinations the front remembers."""

_PROTOCOL_VERSION_HEADER: Final = b"mcp-protocol-version"
_META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
_NAME_HEADER: Final = b"mcp-name"

# A JSON string, quotes included. Possessive repeats: the regular-expression engine keeps no
# backtracking state, so a 4 MB string (or 2 M escapes) is matched in one pass with no memory beyond the
# match — the plain ``"(?:[^"\\]|\\.)*"`` kept state per character (a 3.9 MB string allocated ~580 MB).
_STRING: Final = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)

_OFF_LOOP_BYTES: Final = 256 * 1024
"""Bodies above this are scanned in a worker thread, so the event loop keeps serving meanwhile."""


def json_value_count(body: bytes | bytearray, limit: int | None = None) -> int:
    """Object members plus array elements in the JSON text ``body`` — an upper bound, in linear time.

    Outside strings every ``:`` separates a member from its key and every ``,`` separates two members
    or elements; ``[`` opens an array whose first element has no comma before it. Those are counted
    with ``bytes.count`` between strings, and each string is skipped by one possessive match (no copy,
    no per-character state): memory is one match object at a time, whatever the body's shape. A JSON
    text holds at most two strings per member plus one, so ``(strings - 1) // 2`` is also a bound on
    its values; counting it keeps the Python-level loop proportional to the count, never to the body
    (a text of strings without separators is not JSON). With ``limit``, the scan stops as soon as the
    count exceeds it, so the work is bounded by ``limit`` as well as by the body.
    """
    count = strings = position = 0
    occurrences = body.count
    for string in _STRING.finditer(body):
        start, end = string.span()
        count += occurrences(b":", position, start) + occurrences(b",", position, start)
        count += occurrences(b"[", position, start)
        strings += 1
        if limit is not None and max(count, (strings - 1) // 2) > limit:
            break
        position = end
    else:
        count += occurrences(b":", position) + occurrences(b",", position) + occurrences(b"[", position)
    return max(count, (strings - 1) // 2)


def _too_large() -> EntryRefusal:
    return EntryRefusal(413, CODES["invalid_request"], TOO_LARGE, "body_too_large")


@dataclass(frozen=True)
class RequestBounds:
    """The per-request bounds the entry enforces (see the module docstring, steps 4–6)."""

    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    max_in_flight_per_caller: int = DEFAULT_MAX_IN_FLIGHT_PER_CALLER
    max_pre_auth_in_flight: int = DEFAULT_MAX_PRE_AUTH_IN_FLIGHT
    body_timeout_seconds: float = DEFAULT_BODY_TIMEOUT_SECONDS
    max_json_values: int = DEFAULT_MAX_JSON_VALUES
    trusted_proxies: tuple[str, ...] = ()
    """Addresses or CIDR blocks whose ``X-Forwarded-For`` names the caller (as for completion)."""

    def __post_init__(self) -> None:
        trusted_networks(self.trusted_proxies)  # ValueError for a bad address or block
        for name in (
            "max_in_flight",
            "max_in_flight_per_caller",
            "max_pre_auth_in_flight",
            "max_json_values",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer")
        if isinstance(self.body_timeout_seconds, bool) or not self.body_timeout_seconds > 0:
            raise ValueError("body_timeout_seconds must be positive")


class _Pool:
    """In-flight slots: at most ``limit`` at once, ``per_caller`` per caller. Only callers holding a
    slot have an entry (removed at zero), so the counter is bounded by ``limit``."""

    def __init__(self, limit: int, per_caller: int, rate_limit_code: int) -> None:
        self.limit = limit
        self.per_caller = per_caller
        self.rate_limit_code = rate_limit_code
        self.in_flight = 0
        self._callers: Counter[str] = Counter()

    def acquire(self, caller: str) -> None:
        if self.in_flight >= self.limit:
            raise EntryRefusal(
                503, self.rate_limit_code, "server busy: too many requests in flight", "server_busy",
                retry_after_ms=1000,
            )  # fmt: skip
        if self._callers[caller] >= self.per_caller:
            raise EntryRefusal(
                429, self.rate_limit_code, "too many requests in flight for this caller",
                "too_many_in_flight", retry_after_ms=1000,
            )  # fmt: skip
        self.in_flight += 1
        self._callers[caller] += 1

    def release(self, caller: str) -> None:
        self.in_flight -= 1
        self._callers[caller] -= 1
        if self._callers[caller] <= 0:
            del self._callers[caller]


class _BoundedBody:
    """The request's ``receive``, within ``max_bytes`` and one deadline for the whole body; every
    excess raises :class:`EntryRefusal` (413 / 408) from inside ``receive`` itself, so the bounds hold
    whoever reads — the entry buffering a body, or a public route reading its own."""

    def __init__(self, receive: Receive, max_bytes: int, timeout: float) -> None:
        self._receive = receive
        self._max_bytes = max_bytes
        self._timeout = timeout
        self._deadline = asyncio.get_running_loop().time() + timeout
        self._size = 0
        self.complete = False

    async def __call__(self) -> Message:
        if self.complete:
            return await self._receive()  # after the body: only the disconnect is left to wait for
        try:
            async with asyncio.timeout_at(self._deadline):
                message = await self._receive()
        except TimeoutError:
            raise EntryRefusal(
                408, -32600, f"request body not received within {self._timeout:g} s", "body_timeout"
            ) from None
        if message.get("type") == "http.request":
            self._size += len(message.get("body", b""))
            if self._size > self._max_bytes:
                raise _too_large()
            self.complete = not message.get("more_body", False)
        return message

    async def read(self, declared: int | None) -> bytearray | None:
        """The whole body, or ``None`` when the client went away before sending it. One buffer, sized
        by the declared ``Content-Length`` when there is one (never a list of chunks plus their join,
        never a growing buffer's slack): the entry holds the body once."""
        body = bytearray(declared if declared is not None and declared <= self._max_bytes else 0)
        filled = 0
        while True:
            message = await self()
            if message.get("type") == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            body[filled : filled + len(chunk)] = chunk
            filled += len(chunk)
            if self.complete:
                del body[filled:]  # a body shorter than declared (the server would refuse it anyway)
                return body


class GatedEntry:
    """The entry after authentication (module docstring, steps 4–8).

    ``GatedEntry(app, server, resolution=..., bounds=..., max_body_bytes=...)``: ``app`` is the rest of
    the app, ``server`` the FastMCP server (its ``auth`` decides whether a caller must be
    authenticated), ``resolution`` the server's installed resolution hook, which judges a handshake-era
    call's headers before the app runs. Installed by :meth:`.ServerGates.http_app` as the last of
    the app's own middleware, inside FastMCP's authentication.
    """

    def __init__(
        self,
        app: ASGIApp,
        server: FastMCP[Any],
        *,
        resolution: ResolutionGate,
        bounds: RequestBounds | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        rate_limit_code: int = CODES["rate_limited"],
    ) -> None:
        if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int) or max_body_bytes < 1:
            raise ValueError("max_body_bytes must be a positive integer")
        self.app = app
        self.server = server
        self.resolution = resolution
        self.bounds = bounds if bounds is not None else RequestBounds()
        self.max_body_bytes = max_body_bytes
        self._networks = trusted_networks(self.bounds.trusted_proxies)
        self.pool = _Pool(self.bounds.max_in_flight, self.bounds.max_in_flight_per_caller, rate_limit_code)
        self.pre_auth_pool = _Pool(
            self.bounds.max_pre_auth_in_flight,
            min(self.bounds.max_in_flight_per_caller, self.bounds.max_pre_auth_in_flight),
            rate_limit_code,
        )

    @property
    def in_flight(self) -> int:
        """Authenticated requests holding a slot now."""
        return self.pool.in_flight

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        answering = _Answering(send)
        try:
            await self._serve(scope, receive, answering)
        except EntryRefusal as refusal:
            if not answering.started:
                await refuse(send, refusal)
        except ClientDisconnect:
            _logger.debug("client disconnected before sending the whole request body")

    async def _serve(self, scope: Scope, receive: Receive, send: _Answering) -> None:
        authenticated = self._authenticated(scope)
        pool = self.pool if authenticated else self.pre_auth_pool
        caller = _caller(scope, self._networks)
        pool.acquire(caller)
        try:
            body = _BoundedBody(receive, self.max_body_bytes, self.bounds.body_timeout_seconds)
            if not authenticated:
                await self.app(scope, body, send)  # 401 at the MCP route; nothing buffered or parsed
                return
            raw = await body.read(_declared_length(scope))
            if raw is None:
                return  # the client went away mid-body: nobody is left to answer
            limit = self.bounds.max_json_values
            if len(raw) <= _OFF_LOOP_BYTES:
                values = json_value_count(raw, limit)
            else:
                values = await asyncio.to_thread(json_value_count, raw, limit)
            if values > limit:
                message = f"request carries more than {limit} JSON values (members and elements)"
                raise EntryRefusal(413, -32600, message, "too_many_json_values")
            await self._judge(scope, raw)
            await self.app(scope, _replay(raw, body), send)
        finally:
            pool.release(caller)

    def _authenticated(self, scope: Scope) -> bool:
        if self.server.auth is None:
            return True
        user = scope.get("user")
        if user is None:
            # Installed outside authentication: nobody could tell a caller from a stranger, and a tool
            # lookup without the caller's token would miss scope-protected tools. Fail closed.
            _logger.error("gated entry installed outside authentication; refusing requests")
            raise EntryRefusal(500, CODES["internal_error"], "Server misconfigured", "misconfigured")
        return bool(getattr(user, "is_authenticated", False))

    async def _judge(self, scope: Scope, raw: bytearray) -> None:
        """Step 7: the checks that need the parsed body before the app runs. The body is parsed only
        when one of them applies (an undecodable ``Mcp-Name``; on the handshake-era route, a request
        with ``Mcp-Param-*`` headers or one whose body may name a protocol version), and then once."""
        raw_headers = [(bytes(k), bytes(v)) for k, v in scope.get("headers", [])]
        undecodable = _undecodable_name(raw_headers)
        if _routes_to_modern_transport(raw_headers) and not undecodable:
            return  # judged during dispatch by the resolution hook; that transport answers 400 itself
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in raw_headers]
        if not undecodable and not gate_applies(headers) and not _may_name_a_revision(raw):
            return  # nothing here to judge: not parsed
        decoded = _decoded(raw)
        try:
            await self._judge_parsed(scope, decoded, raw_headers, headers, undecodable)
        except EntryRefusal as refusal:
            refusal.method, refusal.tool = _named_call(decoded)
            raise

    async def _judge_parsed(
        self,
        scope: Scope,
        decoded: Any,
        raw_headers: list[tuple[bytes, bytes]],
        headers: list[tuple[str, str]],
        undecodable: bool,
    ) -> None:
        if undecodable:
            raise EntryRefusal(
                400, CODES["header_mismatch"], "Mcp-Name header is not a decodable header value", "malformed",
                request_id=_request_id(decoded),
                data={"tool": None, "header": "Mcp-Name", "category": "malformed"},
            )  # fmt: skip
        _refuse_revision_downgrade(decoded, raw_headers)
        call = _tools_call_request(decoded)
        if call is None:
            return
        request_id, params = call
        refusal = await self.resolution.judge_before_dispatch(scope, params, headers)
        if refusal is not None:
            message, data = refusal
            raise EntryRefusal(
                400,
                CODES["header_mismatch"],
                message,
                str(data.get("category")),
                request_id=request_id,
                data=data,
            )


class _Answering:
    """The app's ``send``: notes whether an answer started (a refusal raised later cannot be sent)
    and answers the ``mcp`` SDK's plain-text 413 as the entry's one JSON-RPC 413."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.started = False
        self._replacing = False

    async def __call__(self, message: Message) -> None:
        if message.get("type") == "http.response.start":
            self.started = True
            if message.get("status") == 413:
                self._replacing = True
                await refuse(self._send, _too_large())
                return
        if self._replacing:
            return  # the replaced plain-text body
        await self._send(message)


def _replay(body: bytearray, bounded: _BoundedBody) -> Receive:
    """A ``receive`` that yields the buffered body once, then defers to the real one (disconnects)."""
    sent = False

    async def replaying() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await bounded()

    return replaying


def _caller(scope: Scope, networks: frozenset[Any]) -> str:
    """The in-flight identity, by :func:`.caller_key`'s rule: the verified token's client (and
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


async def refuse(send: Send, refusal: EntryRefusal) -> None:
    """Answer ``refusal`` (every entry refusal is sent here, in the translator's words)."""
    _logger.info("request refused at the entry: %s (HTTP %d)", refusal.category, refusal.status)
    headers, body = answer_entry_refusal(refusal)
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


# --- the front: before authentication -------------------------------------------------------------

_GuardKey = tuple[Any, Any, bytes | None, bytes | None]
_GuardVerdict = tuple[Message, ...] | None  # None: pass; else FastMCP's refusal, message by message


async def _guard_passed(scope: Scope, receive: Receive, send: Send) -> None:
    scope["agent_connector_guard_passed"] = True


async def _no_body() -> Message:
    return {"type": "http.disconnect"}


class EntryFront:
    """The front of the entry (module docstring, steps 1–3), before authentication.

    ``EntryFront(app, max_body_bytes=..., guard=None | {FastMCP HostOriginGuardMiddleware options})``:
    without ``guard`` the Host/Origin check is off (as ``host_origin_protection=False`` asks).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        guard: dict[str, Any] | None = None,
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self._judge = None if guard is None else HostOriginGuardMiddleware(_guard_passed, **guard)
        self._verdicts: dict[_GuardKey, _GuardVerdict] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        async with traced_request(scope) as traced:
            if traced is None:
                await self._front(scope, receive, send)
                return

            async def answering(message: Message) -> None:
                if message.get("type") == "http.response.start":
                    traced.status = int(message.get("status", 0))
                await send(message)

            await self._front(scope, receive, answering)

    async def _front(self, scope: Scope, receive: Receive, send: Send) -> None:
        host = origin = declared = None
        authorizations = 0
        for name, value in scope.get("headers", ()):
            if name == b"host" and host is None:
                host = value
            elif name == b"origin" and origin is None:
                origin = value
            elif name == b"authorization":
                authorizations += 1
            elif name == b"content-length":
                declared = value
        if self._judge is not None:
            verdict = await self._guard_verdict(
                (scope.get("server"), scope.get("scheme"), host, origin), scope
            )
            if verdict is not None:
                for message in verdict:
                    await send(message)
                return
        if authorizations > 1:
            await refuse(
                send, EntryRefusal(400, -32600, "duplicate Authorization header", "duplicate_authorization")
            )
            return
        if declared is not None and declared.strip().isdigit() and int(declared) > self.max_body_bytes:
            await refuse(send, _too_large())
            return
        await self.app(scope, receive, send)

    async def _guard_verdict(self, key: _GuardKey, scope: Scope) -> _GuardVerdict:
        if key in self._verdicts:
            return self._verdicts[key]
        assert self._judge is not None
        probe = dict(scope)
        sent: list[Message] = []

        async def capture(message: Message) -> None:
            sent.append(message)

        await self._judge(probe, _no_body, capture)
        verdict = None if probe.get("agent_connector_guard_passed") else tuple(sent)
        if len(self._verdicts) >= MAX_VERDICTS:
            del self._verdicts[next(iter(self._verdicts))]
        self._verdicts[key] = verdict
        return verdict


def install_entry_front(app: Any, *, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> bool:
    """Put :class:`EntryFront` in ``app.user_middleware`` before authentication, before the app first
    serves: in the place of FastMCP's Host/Origin guard (with its options), else right after FastMCP's
    request-context middleware (no Host check). ``True`` when it was installed."""
    middleware = getattr(app, "user_middleware", None)
    if not isinstance(middleware, list) or getattr(app, "middleware_stack", None) is not None:
        return False
    front: Any = EntryFront  # Starlette's factory protocol is stricter than ASGI
    for index, entry in enumerate(middleware):
        factory: Any = entry.cls if isinstance(entry, Middleware) else None
        if factory is HostOriginGuardMiddleware:
            guard = dict(entry.kwargs)
            middleware[index] = Middleware(front, max_body_bytes=max_body_bytes, guard=guard)
            return True
    middleware.insert(min(1, len(middleware)), Middleware(front, max_body_bytes=max_body_bytes))
    return True


# --- parsing helpers (the body is parsed at most once per request) ----------------------------------

_UNPARSABLE: Final = object()


def _decoded(body: bytearray) -> Any:
    """The body's JSON, or :data:`_UNPARSABLE` (the server answers -32700). Parsed by ``pydantic_core``
    — the parser the ``mcp`` SDK's own message models use — straight from the bytes (no decoded copy of
    the text), with its own nesting limit; non-finite numbers refused as JSON refuses them."""
    try:
        return pydantic_core.from_json(body, allow_inf_nan=False)
    except ValueError:
        return _UNPARSABLE


def _may_name_a_revision(body: bytearray) -> bool:
    """Whether the body may carry ``_meta``'s protocol-version key: its name, or any backslash escape
    (a key can be spelt with escapes: ``protocol\\u0056ersion``). A substring test, no parse."""
    return b"protocolVersion" in body or b"\\" in body


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            text = bytes(value).strip()
            return int(text) if text.isdigit() and len(text) <= 12 else None
    return None


def _request_id(decoded: Any) -> Any:
    request_id = decoded.get("id") if isinstance(decoded, dict) else None
    return request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None


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


def _refuse_revision_downgrade(decoded: Any, raw_headers: Iterable[tuple[bytes, bytes]]) -> None:
    """One header rulebook per request: a request is 2026-07-28 when its header *or* its body says so.

    A body whose ``_meta`` names a protocol version — a key only 2026-07-28 requests carry — must carry
    the same version in its ``MCP-Protocol-Version`` header. Without it (or with a handshake-era one) it
    is a 2026-07-28 request routed around its header: served by the handshake-era transport it would
    skip every 2026-07-28 header rule, and an intermediary routing on those headers would send it to
    the wrong place. Refused with HTTP 400 and -32020 (``data.header`` = ``MCP-Protocol-Version``).
    """
    messages = decoded if isinstance(decoded, list) else [decoded]
    for message in messages:
        params = message.get("params") if isinstance(message, dict) else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        if not isinstance(meta, dict) or _META_PROTOCOL_VERSION not in meta:
            continue
        sent = next((value for name, value in raw_headers if name == _PROTOCOL_VERSION_HEADER), None)
        if sent is not None and sent.decode("latin-1") == meta[_META_PROTOCOL_VERSION]:
            continue
        category = "missing" if sent is None else "mismatch"
        raise EntryRefusal(
            400,
            CODES["header_mismatch"],
            "MCP-Protocol-Version header is missing although the request's _meta names a protocol version"
            if sent is None
            else "MCP-Protocol-Version header does not match the protocol version in the request's _meta",
            category,
            request_id=_request_id(message),
            data={"tool": None, "header": "MCP-Protocol-Version", "category": category},
        )


def _named_call(decoded: Any) -> tuple[str | None, str | None]:
    """The method and tool name a single request's body names (shape-checked by the translator)."""
    if not isinstance(decoded, dict):
        return None, None
    method, params = decoded.get("method"), decoded.get("params")
    tool = params.get("name") if isinstance(params, dict) else None
    return (method if isinstance(method, str) else None), (tool if isinstance(tool, str) else None)


def _tools_call_request(decoded: Any) -> tuple[Any, Mapping[str, Any]] | None:
    """``(id, params)`` of a single JSON-RPC ``tools/call`` *request*, else ``None`` (pass through)."""
    if not isinstance(decoded, dict) or "id" not in decoded or decoded.get("method") != "tools/call":
        return None  # batches, notifications and other methods are the server's business
    request_id = decoded["id"]
    if request_id is None or isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None  # an invalid id: the server answers -32600 with id null
    params = decoded.get("params")
    return (request_id, params) if isinstance(params, dict) else None


def _routes_to_modern_transport(raw_headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether ``mcp``'s session manager hands this request to its 2026-07-28 single-exchange transport
    (mirrors its routing: the first ``mcp-protocol-version`` header, present and not handshake-era)."""
    for name, value in raw_headers:
        if name == _PROTOCOL_VERSION_HEADER:
            return value.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS
    return False
