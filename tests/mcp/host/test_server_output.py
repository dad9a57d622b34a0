"""Nothing a server writes besides its answers reaches a person raw: a library user's stdio server's
stderr and a server's log notifications pass the one sanitizer (the HostSession installs it; opting
out is explicit), and the relay is capped in rate and size."""

from __future__ import annotations

import io
import logging
import sys
import time
import unicodedata
from collections.abc import Iterator

import fastmcp
import pytest
from fastmcp.client.transports.stdio import StdioTransport

from agent_connector_sdk.mcp.host import HostOptions, HostSession, StderrRecord, StderrRelay
from agent_connector_sdk.mcp.host._server_output import BURST_LINES, STDERR_TAIL_BYTES
from agent_connector_sdk.mcp.host.contract_client import ContractClient
from tests.support.cli import ROOT
from tests.support.hostile_server import hostile_app
from tests.support.http_server import serve_asgi

BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029")


def control_characters(text: str) -> list[str]:
    """What a terminal acts on: C0 (but LF), DEL, C1, bidi controls, separators, surrogates."""
    return [c for c in text if c != "\n" and (unicodedata.category(c) in ("Cc", "Cs") or c in BIDI)]


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serve_asgi(hostile_app(), path="") as url:
        yield url


async def test_a_library_users_stdio_server_stderr_and_logs_are_sanitized(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="fastmcp.client.from_server")
    transport = StdioTransport(sys.executable, ["-m", "tests.support.hostile_server", "noisy"], cwd=ROOT)
    session = HostSession(fastmcp.Client(transport, timeout=10), HostOptions(require_confirmation=False))
    relay = session.stderr_relay
    assert relay is not None
    await session.connect()
    try:
        await session.discover_tools()
        await session.call("clean", {"q": "x"})
    finally:
        await session.close()
    relay.join(5)
    err = capsys.readouterr().err
    assert "[python" in err and "noise\\x1b[2J" in err and not control_characters(err)
    logged = [r.getMessage() for r in caplog.records if r.name == "fastmcp.client.from_server"]
    assert logged and all(not control_characters(m) for m in logged)
    assert any("\\x1b[2J" in m and "EMERGENCY" in m for m in logged)


async def test_a_servers_log_notification_over_http_reaches_the_log_handler_sanitized(
    base: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="fastmcp.client.from_server")
    client = fastmcp.Client(f"{base}/noisy/mcp", timeout=10)
    async with ContractClient(client, HostOptions(require_confirmation=False)) as host:
        await host.discover_tools()
        await host.call("clean", {"q": "x"})
    logged = [r.getMessage() for r in caplog.records if r.name == "fastmcp.client.from_server"]
    assert len(logged) == 1 and not control_characters(logged[0])
    assert "Received EMERGENCY from server (log\\x1b[2J" in logged[0] and "\\x0d\\x0afake line" in logged[0]


async def test_opting_out_is_explicit_and_hands_the_raw_data_on(base: str) -> None:
    seen: list[object] = []

    async def handler(message: object) -> None:
        seen.append(getattr(message, "data", None))

    client = fastmcp.Client(f"{base}/noisy/mcp", timeout=10, log_handler=handler)
    options = HostOptions(require_confirmation=False, sanitize_server_output=False)
    async with ContractClient(client, options) as host:
        await host.discover_tools()
        await host.call("clean", {"q": "x"})
    assert seen and isinstance(seen[0], str) and "\x1b[2J" in seen[0]  # raw, as asked


def test_the_relay_caps_line_length_rate_and_volume_and_never_blocks_the_writer() -> None:
    sink = io.StringIO()
    relay = StderrRelay("srv", sink=sink)
    started = time.monotonic()
    line = "\x1b[31mred\u202e" + "x" * 10_000 + "\n"
    for _ in range(2_000):  # 20 MB: a writer blocked on a full pipe would hang here
        relay.writer.write(line)
    relay.writer.write("last words\x07\n")
    relay.close()
    relay.join(60)
    assert time.monotonic() - started < 60  # a hang guard: a blocked writer never returns
    out = sink.getvalue()
    assert not control_characters(out)
    lines = out.splitlines()
    assert all(entry.startswith("[srv] ") and len(entry) < 700 for entry in lines)
    assert len(lines) <= BURST_LINES + 5  # the burst, then counts of what was dropped
    assert "bytes of stderr: the rest is dropped" in out and "lines dropped" in out
    assert relay.last_line == "last words\\x07"


def test_the_stderr_record_keeps_a_bounded_tail_of_a_300_mb_flood_and_never_blocks_the_server() -> None:
    """A real process writes 300 MB of stderr into the record and exits: it is never blocked (the
    pipe is drained), nothing goes to disk (the record is a pipe), and only the tail is kept."""
    import os
    import stat
    import subprocess

    record = StderrRecord("flood")
    assert stat.S_ISFIFO(os.fstat(record.writer.fileno()).st_mode)  # a pipe: no file grows anywhere
    writer = (
        "import sys\n"
        "block = ('noise\\x1b[2J' + 'n' * 1014 + '\\n') * 1024\n"
        "for _ in range(300): sys.stderr.write(block)\n"
        "sys.stderr.write('fatal: out of luck\\n')\n"
    )
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-c", writer], stderr=record.writer, stdin=subprocess.DEVNULL)
    record.close()  # the child holds its own copy
    assert process.wait(timeout=90) == 0
    record.join(30)
    assert time.monotonic() - started < 90  # a hang guard: a blocked writer never exits
    assert record.total_bytes == 300 * (1 << 20) + len("fatal: out of luck\n")
    tail = record.tail()
    assert len(tail) == STDERR_TAIL_BYTES and tail.endswith(b"fatal: out of luck\n")
