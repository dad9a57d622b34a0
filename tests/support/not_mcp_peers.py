"""Real processes that are not MCP servers, for the "say what it is" tests: Python's own web server, a
raw TCP port that speaks another protocol, a stdio program that prints "hello world", and a port where
nothing listens. Each runs in its own process on 127.0.0.1 and is stopped on the way out."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

# A line-based service that is not HTTP: it reads what it is sent, answers a mail server's greeting,
# and closes (as an SMTP or a database port would answer an HTTP request).
_RAW_TCP = """
import socket, sys
server = socket.create_server(("127.0.0.1", 0))
print(server.getsockname()[1], flush=True)
while True:
    conn, _ = server.accept()
    conn.settimeout(5)
    try:
        conn.recv(4096)
    except OSError:
        pass
    conn.sendall(b"220 mail.example ESMTP ready\\r\\n")
    conn.close()
"""

HELLO_WORLD = "import time; print('hello world', flush=True); time.sleep(600)"
"""A stdio "server" that writes one line of text on stdout and then waits (``python -c`` it)."""


def _started(argv: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True
    )


def _stop(process: subprocess.Popen[str]) -> None:
    process.kill()
    process.wait(timeout=30)
    if process.stdout is not None:
        process.stdout.close()


@contextmanager
def python_http_server() -> Iterator[int]:
    """``python -m http.server`` on an ephemeral port (it answers a POST with a 501 HTML page)."""
    process = _started([sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"])
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # "Serving HTTP on 127.0.0.1 port N (http://...) ..."
        yield int(line.split(" port ")[1].split()[0])
    finally:
        _stop(process)


@contextmanager
def raw_tcp_listener() -> Iterator[int]:
    """A TCP port whose service is not HTTP (it greets like a mail server)."""
    process = _started([sys.executable, "-c", _RAW_TCP])
    try:
        assert process.stdout is not None
        yield int(process.stdout.readline())
    finally:
        _stop(process)


def refused_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound once for its number, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
