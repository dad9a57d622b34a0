"""The standard-library probe decides only what is unambiguous: its rules on answers of every form, the
URL and program checks, and its bound against a peer that trickles an answer forever."""

from __future__ import annotations

import os
import socket
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agent_connector_sdk.mcp import check_program, check_url, probe_http
from agent_connector_sdk.mcp._preflight import _read_form


def _answer(status: int, content_type: str, body: bytes = b"<html><title>T</title></html>") -> bytes:
    return f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\n\r\n".encode() + body


@pytest.mark.parametrize(
    ("head", "credentials", "found"),
    [
        (_answer(501, "text/html"), False, "html_page"),
        (_answer(405, "text/html; charset=utf-8"), True, "html_page"),
        (_answer(200, "text/html"), False, "html_page"),
        (_answer(200, "text/html"), True, None),  # a login page may stand before what the token opens
        (_answer(401, "text/html"), False, None),  # credentials may be what is wrong
        (_answer(404, "text/html"), False, None),  # the path may be what is wrong
        (_answer(200, "application/json", b"{}"), False, None),
        (_answer(400, "application/json", b"{}"), False, None),
        (b"SSH-2.0-OpenSSH_9.6\r\n", False, "not_http"),
        (b"", False, None),  # closed or silent: could be anything
    ],
)
def test_what_an_answer_decides(head: bytes, credentials: bool, found: str | None) -> None:
    assert _read_form(head, credentials=credentials).found == found


def test_a_page_is_named_by_its_title_and_a_banner_by_its_first_line_sanitized() -> None:
    assert _read_form(_answer(501, "text/html"), credentials=False).sample == "T"
    banner = _read_form(b"\x1b[2Jevil\xe2\x80\xae banner\r\nmore\r\n", credentials=False)
    assert banner.found == "not_http" and banner.sample == "\\x1b[2Jevil\\u202e banner"


@pytest.mark.parametrize(
    ("url", "wrong"),
    [
        ("http://127.0.0.1:8000/mcp", None),
        ("https://[::1]:8443/mcp", None),
        ("ftp://example.com/", "not an http(s) URL"),
        ("http:///mcp", "a URL without a host"),
        ("http://127.0.0.1:0/mcp", "a URL with port 0"),
        ("http://[::1/mcp", "a malformed URL (Invalid IPv6 URL)"),
    ],
)
def test_url_checks(url: str, wrong: str | None) -> None:
    assert check_url(url) == wrong


def test_program_checks(tmp_path: Path) -> None:
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\n")
    assert check_program(str(script)) == "not_executable"
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    assert check_program(str(script)) is None
    assert check_program("server.sh", path=str(tmp_path)) is None
    assert check_program("./server.sh", cwd=str(tmp_path)) is None
    assert check_program("no-such-mcp-server-xyz", path=os.defpath) == "not_found"
    (tmp_path / "plain").write_text("x")
    assert check_program("plain", path=str(tmp_path)) == "not_executable"


@contextmanager
def _trickling_server() -> Iterator[int]:
    """Answers an HTML page's headers, then one byte at a time, never a title, until stopped."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n")
            while not stop.wait(0.05):
                try:
                    conn.sendall(b"x")
                except OSError:
                    return

    worker = threading.Thread(target=serve, daemon=True)
    worker.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        stop.set()
        worker.join(timeout=10)
        server.close()


def test_a_trickling_answer_cannot_stretch_the_probe() -> None:
    """The probe returns (the thread ends well within the hang guard) though the answer never ends;
    what came in time decides: an HTML page at 200."""
    with _trickling_server() as port:
        outcome: list[object] = []
        probe = threading.Thread(
            target=lambda: outcome.append(probe_http(f"http://127.0.0.1:{port}/mcp", timeout=0.5)),
            daemon=True,
        )
        probe.start()
        probe.join(timeout=60)
    assert outcome, "the probe did not return"
    assert getattr(outcome[0], "found", None) == "html_page"
