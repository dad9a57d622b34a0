"""Cheap checks of an MCP server's address with the standard library only: is anything there, and is
it what an MCP host can talk to?

The host stack (``mcp``, ``fastmcp``, pydantic) costs seconds of CPU to import; a refused port, a
mistyped program name or a web server at the address can be told in milliseconds. So the reviewer
runs these checks before it imports anything else (and the host session runs :func:`probe_http` after a
failed connect, to say what answered): every check is bounded in time (``timeout`` per step, name
resolution included), reads at most :data:`HEAD_BYTES` of an answer, and decides only what is
unambiguous — anything else is :data:`None`, "go on and ask the real client".

What :func:`probe_http` sends: nothing over TLS (the certificate is not checked here, so nothing is
sent through it), and over plain HTTP one ``POST`` of a ``server/discover`` request — the request an
MCP host sends first anyway, read-only by the spec — without any credentials of the caller. What it
reads is the answer's form (a status line, a content type), never its content.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import SplitResult, urlsplit

from agent_connector_sdk.core.host import SAMPLE_LIMIT, PeerKind
from agent_connector_sdk.sanitize import sanitize_text

__all__ = [
    "HEAD_BYTES",
    "HttpProbe",
    "ProgramCheck",
    "check_program",
    "check_url",
    "html_title",
    "probe_http",
]

HEAD_BYTES: Final = 8 * 1024
"""The most of an answer a probe reads (the status line, the headers and the start of a page)."""

_PROBE_REVISION: Final = "2026-07-28"  # only the answer's form is read; any revision would do

Unreachable = Literal["refused", "unresolvable", "unreachable"]


@dataclass(frozen=True, slots=True)
class HttpProbe:
    """What a probe of an ``http(s)://`` address decided: ``unreachable`` (nothing answers there:
    ``refused``, ``unresolvable`` — the name does not resolve — or ``unreachable`` — no route), or
    ``found`` (it answers, and it is not an MCP server: what it is, with ``sample`` and ``status``),
    or neither (it may well be one: ask the real client)."""

    unreachable: Unreachable | None = None
    found: PeerKind | None = None
    sample: str | None = None
    status: int | None = None


_UNDECIDED: Final = HttpProbe()


def check_url(url: str) -> str | None:
    """Why ``url`` cannot be an MCP server's address (``None`` when it can): not http(s), no host, a
    port that is not a number in 1-65535, brackets that do not close. The words name the part."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        return f"a malformed URL ({error})"
    if parts.scheme.lower() not in ("http", "https"):
        return "not an http(s) URL"
    if not parts.hostname:
        return "a URL without a host"
    if port == 0:
        return "a URL with port 0"
    return None


def probe_http(url: str, *, timeout: float, credentials: bool = False) -> HttpProbe:
    """Connect to ``url`` and, when it answers, say whether it is something other than an MCP server.

    ``timeout`` bounds each step (resolving, connecting, the TLS handshake, the answer). An
    ``https://`` address whose TLS handshake fails is asked again in plain HTTP: an HTTP answer there
    is ``plain_http``. A plain ``http://`` address is sent one ``server/discover`` POST: an answer
    that is not HTTP is ``not_http``; an HTML page is ``html_page`` when the status says the address
    is a page or does not take a POST at all (2xx, 405, 501) — with ``credentials`` (the caller has a
    token or headers this probe does not send) only 405 and 501, since a login page may stand in
    front of a server the credentials would open.
    """
    if check_url(url) is not None:
        return _UNDECIDED
    parts = urlsplit(url)
    tls = parts.scheme.lower() == "https"
    address = _resolve(parts, tls, timeout)
    if isinstance(address, str):
        return HttpProbe(unreachable="unresolvable") if address == "unresolvable" else _UNDECIDED
    connected = _connect(address, timeout)
    if not isinstance(connected, socket.socket):
        return HttpProbe(unreachable=connected) if connected is not None else _UNDECIDED
    if tls:
        return _probe_tls(connected, parts, address, timeout)
    with connected:
        return _read_form(_exchange(connected, parts, timeout), credentials=credentials)


def _resolve(parts: SplitResult, tls: bool, timeout: float) -> tuple[int, tuple[str, int]] | str:
    """``(family, sockaddr)`` of the address, or ``"unresolvable"`` / ``"slow"`` (name resolution has
    no timeout of its own: it runs in a daemon thread that is waited for ``timeout`` at most)."""
    host = parts.hostname or ""
    port = parts.port or (443 if tls else 80)
    found: list[tuple[int, tuple[str, int]] | str] = []

    def resolve() -> None:
        try:
            info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            family, sockaddr = info[0][0], info[0][4]
            found.append((int(family), (str(sockaddr[0]), int(sockaddr[1]))))
        except (socket.gaierror, UnicodeError, IndexError):
            found.append("unresolvable")
        except OSError:
            found.append("slow")

    worker = threading.Thread(target=resolve, name="preflight-resolve", daemon=True)
    worker.start()
    worker.join(timeout)
    return found[0] if found else "slow"


def _connect(address: tuple[int, tuple[str, int]], timeout: float) -> socket.socket | Unreachable | None:
    family, sockaddr = address
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(sockaddr)
    except ConnectionRefusedError:
        sock.close()
        return "refused"
    except OSError as error:
        sock.close()
        if error.errno in (_errno("ENETUNREACH"), _errno("EHOSTUNREACH")):
            return "unreachable"
        return None  # timed out, or anything else: not ours to decide
    return sock


def _errno(name: str) -> int:
    import errno

    return int(getattr(errno, name, -1))


def _probe_tls(
    sock: socket.socket, parts: SplitResult, address: tuple[int, tuple[str, int]], timeout: float
) -> HttpProbe:
    import ssl

    # Only "does it speak TLS at all" is asked: no certificate is checked, so nothing is sent through it.
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    # The socket's timeout bounds each read; the watchdog bounds the whole handshake (a peer
    # trickling records one by one cannot stretch it).
    watchdog = threading.Timer(timeout, _shut, (sock,))
    watchdog.daemon = True
    watchdog.start()
    try:
        with context.wrap_socket(sock, server_hostname=parts.hostname):
            pass
        return _UNDECIDED
    except ssl.SSLError:
        pass
    except OSError:
        return _UNDECIDED  # reset or timed out mid-handshake: not ours to decide
    finally:
        watchdog.cancel()
        sock.close()
    # No TLS: does it answer plain HTTP? Asked without credentials (they were meant for TLS).
    plain = _connect(address, timeout)
    if not isinstance(plain, socket.socket):
        return _UNDECIDED
    with plain:
        head = _exchange(plain, parts, timeout, with_query=False)  # a query may hold a token: not in clear
    if head.startswith(b"HTTP/"):
        return HttpProbe(found="plain_http")
    return _read_form(head, credentials=True)  # neither TLS nor HTTP: `not_http`, when it said anything


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed: the handshake ended first
        sock.shutdown(socket.SHUT_RDWR)


def _exchange(sock: socket.socket, parts: SplitResult, timeout: float, *, with_query: bool = True) -> bytes:
    """Send one ``server/discover`` POST and read the start of the answer (``b""`` when none came),
    within ``timeout`` in all (a peer trickling bytes cannot stretch it)."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "server/discover",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": _PROBE_REVISION,
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        },
        separators=(",", ":"),
    ).encode()
    path = parts.path or "/"
    if parts.query and with_query:
        path += f"?{parts.query}"
    host = parts.netloc.rpartition("@")[2]  # never the userinfo
    request = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {_PROBE_REVISION}\r\nMcp-Method: server/discover\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode("ascii", "replace")
    deadline = time.monotonic() + timeout
    sock.settimeout(timeout)
    head = bytearray()
    try:
        sock.sendall(request + body)
        while len(head) < HEAD_BYTES:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            sock.settimeout(left)
            chunk = sock.recv(HEAD_BYTES - len(head))
            if not chunk:
                break
            head += chunk
            if b"</title>" in head.lower() or (not head.startswith(b"HTTP/") and b"\n" in head):
                break
            if head.startswith(b"HTTP/") and b"\r\n\r\n" in head and not _is_html(bytes(head)):
                break
    except OSError:
        pass  # a reset or a timeout: what came so far decides, or nothing does
    return bytes(head)


def _is_html(head: bytes) -> bool:
    headers = head.split(b"\r\n\r\n", 1)[0].lower()
    return any(line.startswith(b"content-type:") and b"text/html" in line for line in headers.split(b"\r\n"))


def _read_form(head: bytes, *, credentials: bool) -> HttpProbe:
    if not head:
        return _UNDECIDED  # closed or silent: could be anything
    if not head.startswith(b"HTTP/"):
        first = head.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
        return HttpProbe(found="not_http", sample=sanitize_text(first, SAMPLE_LIMIT) if first else None)
    status_line = head.split(b"\r\n", 1)[0].split()
    status = int(status_line[1]) if len(status_line) > 1 and status_line[1].isdigit() else None
    if status is None or not _is_html(head):
        return _UNDECIDED
    page_status = status in (405, 501) or (not credentials and 200 <= status < 300)
    if page_status:
        return HttpProbe(found="html_page", status=status, sample=html_title(head))
    return _UNDECIDED


def html_title(page: bytes) -> str | None:
    """The ``<title>`` of an HTML page's start, sanitized and cut, or ``None``."""
    lower = page.lower()
    start = lower.find(b"<title>")
    end = lower.find(b"</title>", start + 1)
    if start < 0 or end < 0:
        return None
    words = " ".join(page[start + len(b"<title>") : end].decode("utf-8", "replace").split())
    return sanitize_text(words, SAMPLE_LIMIT) if words else None


ProgramCheck = Literal["not_found", "not_executable"]


def check_program(program: str, *, path: str | None = None, cwd: str | None = None) -> ProgramCheck | None:
    """Whether a stdio server's program can be started: ``not_found`` (no such file, or no such name
    on ``path``), ``not_executable``, or ``None`` (it can). ``path`` is the ``PATH`` the server is
    started with (default: this process's); a name with a ``/`` is a file, relative to ``cwd``."""
    if os.sep in program or (os.altsep is not None and os.altsep in program):
        file = program if cwd is None or os.path.isabs(program) else os.path.join(cwd, program)
        if not os.path.isfile(file):
            return "not_found"
        return None if os.access(file, os.X_OK) else "not_executable"
    import shutil

    search = path if path is not None else os.environ.get("PATH", os.defpath)
    if shutil.which(program, path=search) is not None:
        return None
    for folder in search.split(os.pathsep):
        if folder and os.path.isfile(os.path.join(folder, program)):
            return "not_executable"
    return "not_found"
