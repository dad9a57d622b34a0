"""The library names what answered when it is not an MCP server: ``HostSession.connect`` raises
``NotMcpServer`` with ``found`` (and the peer's first words, sanitized) against the same real processes
the reviewer's pre-flight meets (``tests/cli/test_review_failfast.py``): Python's ``http.server``, a raw
TCP service, ``https://`` to a plain-HTTP port, a stdio program printing "hello world". The clients'
timeouts are 600 s and each case runs under a 120 s hang guard: the answer comes from what the peer
said, not from waiting."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import fastmcp
import pytest
from fastmcp.client.transports.stdio import StdioTransport

from agent_connector_sdk.core.host import TransportFailure
from agent_connector_sdk.mcp import compat
from agent_connector_sdk.mcp.host import HostOptions, HostSession, NotMcpServer
from agent_connector_sdk.mcp.host._wire import StdioLineCap
from tests.support.not_mcp_peers import HELLO_WORLD, python_http_server, raw_tcp_listener, refused_port

HANG_GUARD = 120.0
PATIENT = 600.0  # the client's own timeout: far beyond the hang guard


async def _connect_failure(client: fastmcp.Client[Any]) -> BaseException:
    session = HostSession(client, HostOptions())
    with anyio.fail_after(HANG_GUARD):
        try:
            await session.connect()
        except Exception as error:
            return error
    await session.close()
    raise AssertionError("connected to something that is not an MCP server")


async def test_python_http_server_is_an_html_page() -> None:
    with python_http_server() as port:
        failure = await _connect_failure(fastmcp.Client(f"http://127.0.0.1:{port}/mcp", timeout=PATIENT))
    assert isinstance(failure, NotMcpServer)
    assert (failure.category, failure.found, failure.status) == ("not_mcp", "html_page", 501)
    assert failure.sample == "Error response"  # the page's <title>, not its doctype
    assert str(failure) == "not an MCP server: an HTML page, not an MCP endpoint"


async def test_a_raw_tcp_service_is_not_http() -> None:
    with raw_tcp_listener() as port:
        failure = await _connect_failure(fastmcp.Client(f"http://127.0.0.1:{port}/mcp", timeout=PATIENT))
    assert isinstance(failure, NotMcpServer)
    assert (failure.found, failure.sample) == ("not_http", "220 mail.example ESMTP ready")
    assert "220" not in str(failure)  # the peer's words are an attribute, never the message


async def test_https_to_a_plain_http_port_is_plain_http() -> None:
    with python_http_server() as port:
        failure = await _connect_failure(fastmcp.Client(f"https://127.0.0.1:{port}/mcp", timeout=PATIENT))
    assert isinstance(failure, NotMcpServer)
    assert failure.found == "plain_http"
    assert str(failure) == "not an MCP server: plain HTTP: try http://"


async def test_a_stdio_program_printing_hello_world_is_named_at_its_line() -> None:
    transport = StdioTransport(sys.executable, ["-c", HELLO_WORLD], keep_alive=False)
    failure = await _connect_failure(fastmcp.Client(transport, timeout=PATIENT))
    assert isinstance(failure, NotMcpServer)
    assert (failure.found, failure.sample) == ("non_json_output", "hello world")


async def test_a_refused_port_stays_a_transport_failure() -> None:
    """Nothing answered, so there is nothing to name: the probe after the failed connect decides
    nothing and the transport failure stands."""
    failure = await _connect_failure(
        fastmcp.Client(f"http://127.0.0.1:{refused_port()}/mcp", timeout=PATIENT)
    )
    assert isinstance(failure, TransportFailure) and not isinstance(failure, NotMcpServer)


# ------------------------------------------------------------------- the stdout line-start check
class _Chunks:
    """A stdout that hands out the given chunks, then ends."""

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = list(chunks)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._chunks:
            raise anyio.EndOfStream
        return self._chunks.pop(0)


async def _read_all(chunks: list[bytes]) -> StdioLineCap:
    cap = StdioLineCap(1_000_000)
    stdout = compat.CappedStdout(_Chunks(chunks), cap)
    try:
        while True:
            await stdout.receive()
    except anyio.EndOfStream:
        pass
    return cap


@pytest.mark.parametrize(
    "chunks",
    [
        [b'{"jsonrpc": "2.0"}\n', b'{"jsonrpc": "2.0"}\n'],
        [b'\n\n  {"a": 1}\n', b"\r\n"],  # blank lines are no message
        [b'{"a": "text with', b' a newline later"}\n{"b": 2}\n'],  # a message split across reads
        [b"   ", b'  {"a": 1}\n'],  # a line's first byte arriving in a later read
    ],
)
async def test_json_lines_pass(chunks: list[bytes]) -> None:
    cap = await _read_all(chunks)
    assert cap.non_json is None


@pytest.mark.parametrize(
    ("chunks", "sample"),
    [
        ([b"hello world\n"], "hello world"),
        ([b'{"a": 1}\n', b"Server started on stdio\r\n"], "Server started on stdio"),
        ([b'{"a": 1}\n  ', b"  warning: deprecated\n"], "warning: deprecated"),
    ],
)
async def test_a_line_that_does_not_start_a_json_message_ends_the_stream(
    chunks: list[bytes], sample: str
) -> None:
    cap = StdioLineCap(1_000_000)
    stdout = compat.CappedStdout(_Chunks(chunks), cap)
    with pytest.raises(compat.StdioNotJson):
        for _ in range(len(chunks) + 1):
            await stdout.receive()
    assert cap.non_json == sample
    with pytest.raises(compat.StdioNotJson):  # sticky: the session ends, nothing more is read
        await stdout.receive()
