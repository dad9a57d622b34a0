"""The serving process: a socket bound *before* anything is announced, one-line logging, uvicorn.

Binding first means a bad port or a port in use is one line and exit 2, and the announced address is
the real one (``--port 0`` shows the port the OS picked). Routine client errors are logged as one line
each (no tracebacks): see :func:`one_line_logging`. ``serve``, ``gateway`` and ``review --demo`` run
their apps through here.
"""

from __future__ import annotations

import asyncio
import errno
import gc
import ipaddress
import logging
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final, TextIO

from agent_connector_sdk.sanitize import sanitize_text
from agent_connector_sdk.serving.errors import ServingError

__all__ = [
    "DEFAULT_READ_TIMEOUT_SECONDS",
    "ONE_LINE_LOGGERS",
    "SERVE_LOGGER",
    "THIRD_PARTY_FLOOR",
    "bind_socket",
    "built_to_last",
    "header_deadline_protocol",
    "is_loopback",
    "one_line_logging",
    "open_bind_refusal",
    "run_server",
]

SERVE_LOGGER: Final = "agent_connector_sdk.cli.serve"
"""The logger of ``serve``'s own start-up lines (operations left out, how disclosure reads resolve):
the name operators' log lines and filters have always carried, kept when the code moved here."""
_OWN_LOGGER: Final = "agent_connector_sdk"
ONE_LINE_LOGGERS: Final = (
    "uvicorn",
    "uvicorn.error",
    "uvicorn.access",
    "fastmcp",
    "mcp",
    "httpx2",
    "httpcore2",
    _OWN_LOGGER,
)
"""The loggers :func:`one_line_logging` configures (handler, level, no propagation): what a caller
that must restore the logging state afterwards saves first."""
THIRD_PARTY_FLOOR: Final = logging.WARNING
"""Records of other libraries' loggers below this level are dropped at every configured level: their
debug and info lines print tool arguments, upstream URLs (with path parameters) and raw headers."""
_LOG_LINE_LIMIT: Final = 4_000
"""Characters of one log line (escapes counted) before the sanitizer cuts it and says how much it cut."""


def open_bind_refusal(
    host: str, *, lab: bool, unauthenticated: bool, insecure_open_bind: bool, openapi: bool
) -> str | None:
    """Why ``serve`` must not bind ``host`` as asked (``None``: it may): public demo tokens, or no
    authentication, on a non-loopback host. Pure, so the command says it before the server stack loads."""
    if lab and not unauthenticated and not is_loopback(host):
        return (
            f"refusing to bind {host}: the lab's demo tokens are public; use a loopback --host "
            "(or --no-auth with --insecure-open-bind)"
        )
    if insecure_open_bind and not unauthenticated:
        return "--insecure-open-bind only applies to a server without authentication"
    if unauthenticated and not is_loopback(host) and not insecure_open_bind:
        # As the gateway: an open bind without authentication serves every tool to anyone who can reach
        # it, and FastMCP's Host/Origin check only guards loopback binds.
        return (
            f"refusing to bind {host} without authentication: "
            + ("pass --auth-config FILE (see docs/gateway.md), " if openapi else "")
            + "use a loopback --host, or pass --insecure-open-bind to serve anyone who can reach it"
        )
    return None


def is_loopback(host: str) -> bool:
    """Whether ``host`` only ever reaches this machine (``localhost`` or a loopback address)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port``; every failure is one :class:`ServingError` line
    (``usage`` for the options, ``cannot_bind`` for what the system refused)."""
    if not 0 <= port <= 65535:
        raise ServingError(f"--port must be between 0 and 65535 (got {port})")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror:
        raise ServingError(f"--host {host}: not an address or a name this machine can resolve") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            raise ServingError(
                f"port {port} on {host} is already in use (pick another with --port, or 0)",
                category="cannot_bind",
            ) from None
        if error.errno in (errno.EACCES, errno.EPERM):
            raise ServingError(
                f"not allowed to bind port {port} on {host} (ports below 1024 need privileges)",
                category="cannot_bind",
            ) from None
        if error.errno == errno.EADDRNOTAVAIL:
            raise ServingError(
                f"--host {host}: not an address of this machine", category="cannot_bind"
            ) from None
        raise ServingError(
            f"cannot bind {host}:{port}: {error.strerror or type(error).__name__}", category="cannot_bind"
        ) from None
    return sock


class _OneLine(logging.Formatter):
    """``LEVEL logger: message`` and, for an exception, only its type: a routine client error (a bad
    request, a refused header, a tool's own failure) is one line, not a traceback. The line goes through
    the one sanitizer (control characters, ESC and bidi controls escaped; capped), so no logged text —
    an operationId, an upstream's words — can drive a terminal, reorder it or forge a line."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"{record.levelname.lower()} {record.name}: {record.getMessage()}"
        if record.exc_info and record.exc_info[0] is not None:
            line += f" ({record.exc_info[0].__name__})"
        line = " ".join(line.split())  # no embedded newlines either
        return sanitize_text(line, _LOG_LINE_LIMIT)


class _ThirdPartyFloor(logging.Filter):
    """Drop other libraries' records below :data:`THIRD_PARTY_FLOOR` (whatever level was asked for)."""

    def filter(self, record: logging.LogRecord) -> bool:
        own = record.name == _OWN_LOGGER or record.name.startswith(_OWN_LOGGER + ".")
        return own or record.levelno >= THIRD_PARTY_FLOOR


def one_line_logging(stream: TextIO | None = None, level: int = logging.WARNING) -> None:
    """Send the server's loggers (and the libraries' it uses) to ``stream`` as escaped single lines.

    ``level`` applies to this SDK's loggers; the libraries' own records below WARNING never print
    (:class:`_ThirdPartyFloor`), because FastMCP's debug lines carry argument values.
    """
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(_OneLine())
    handler.addFilter(_ThirdPartyFloor())
    for name in ONE_LINE_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.propagate = False
        logger.setLevel(level)


@contextmanager
def built_to_last() -> Iterator[None]:
    """Build the served app with CPython's cyclic garbage collector paused, then freeze what was built.

    A start-up allocates millions of objects that live as long as the process (GitHub's description:
    the parsed 73 MB document, 1,223 tools and their schemas). With the collector on, every few hundred
    allocations it re-traverses that growing young heap: ~30 % of the parse and the build, 1.5-2 s of a
    GitHub ``serve`` start-up. Paused, nothing is traversed; :func:`gc.freeze` then moves everything
    allocated so far into the permanent generation, so no later collection (while serving) walks the
    catalog either. What it costs: garbage *cycles* made during the build are never reclaimed — a few
    hundred objects at GitHub size (reference counting still frees everything else as usual). The
    collector is back on (as it was) when the block ends, also on an error."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        gc.freeze()
    finally:
        if was_enabled:
            gc.enable()


DEFAULT_READ_TIMEOUT_SECONDS: Final = 10.0
"""How long a connection may take to send a request's headers (and, in the gates, its body)."""


def header_deadline_protocol(header_timeout_seconds: float) -> type[Any]:
    """uvicorn's h11 protocol with a deadline on request headers: a connection that has not sent a
    complete request head within ``header_timeout_seconds`` of connecting (or of its previous answer)
    is closed. uvicorn has no such timeout of its own (its keep-alive timer stops at the first byte),
    so 400 connections dribbling headers would otherwise be held open indefinitely. The body has its
    own deadline in the gates (the entry, ``mcp.server.entry``)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderDeadlineH11(H11Protocol):
        _header_deadline: asyncio.TimerHandle | None = None
        _awaiting_after: object = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm_header_deadline()

        def _arm_header_deadline(self) -> None:
            self._awaiting_after = self.cycle  # the request whose successor's head is awaited
            self._header_deadline = self.loop.call_later(header_timeout_seconds, self._head_too_slow)

        def _disarm_header_deadline(self) -> None:
            deadline = self._header_deadline
            if deadline is not None:
                deadline.cancel()
                self._header_deadline = None

        def handle_events(self) -> None:
            super().handle_events()
            if self.cycle is not self._awaiting_after:  # a complete request head arrived
                self._disarm_header_deadline()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._disarm_header_deadline()
                self._arm_header_deadline()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_header_deadline()
            super().connection_lost(exc)

        def _head_too_slow(self) -> None:
            self._header_deadline = None
            if self.cycle is self._awaiting_after and not self.transport.is_closing():
                self.transport.close()

    return HeaderDeadlineH11


_M_MMAP_THRESHOLD: Final = -3  # glibc mallopt parameter
_MMAP_THRESHOLD_BYTES: Final = 128 * 1024


def _return_large_buffers_to_the_os() -> bool:
    """Pin glibc's mmap threshold at 128 KiB, so every large buffer (a request body, its copies) lives in
    its own mapping and goes back to the OS when freed. glibc otherwise raises the threshold after the
    first large free (up to 32 MiB) and serves later large buffers from the heap, which it keeps: six
    concurrent 3.3 MB bodies, even refused, left the server ~50 MiB larger for good. ``False`` (and no
    change) on a libc without ``mallopt``."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_BYTES))
    except (OSError, AttributeError):
        return False


def run_server(
    app: Any,
    sock: socket.socket,
    announce: Callable[[str], None],
    *,
    read_timeout_seconds: float = DEFAULT_READ_TIMEOUT_SECONDS,
    graceful_shutdown_seconds: int | None = None,
) -> None:
    """Serve ``app`` on the bound ``sock``; ``announce(url)`` runs once uvicorn has started.

    uvicorn never rewrites the peer address from ``X-Forwarded-For`` here (``proxy_headers=False``):
    the gates decide which proxies to believe (``--trusted-proxies``), so a caller cannot pick its own
    rate-limit identity. Request heads must arrive within ``read_timeout_seconds``. On SIGTERM/Ctrl-C
    requests in flight get ``graceful_shutdown_seconds`` to finish (``None``: as long as they take).
    """
    import uvicorn

    _return_large_buffers_to_the_os()
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host

    class AnnouncingServer(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.started:
                announce(f"http://{shown}:{port}/mcp")

    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        log_config=None,
        proxy_headers=False,
        http=header_deadline_protocol(read_timeout_seconds),
        timeout_keep_alive=5,
        timeout_graceful_shutdown=graceful_shutdown_seconds,
    )
    AnnouncingServer(config).run(sockets=[sock])
