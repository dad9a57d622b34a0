"""A down child's reason names where (its URL without credentials, or its command) and what happened
(connection refused, the connection closed); a stdio child's last stderr line is kept for the
operator (sanitized), never sent to a caller."""

from __future__ import annotations

import io
import sys
import time

import anyio
import pytest

from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig, GatewayError
from agent_connector_sdk.gateway._generations import ChildTool
from agent_connector_sdk.gateway._reasons import StderrTail, child_target, failure_cause
from tests.support.not_mcp_peers import HELLO_WORLD, python_http_server


def test_targets_never_show_credentials() -> None:
    spec = ChildSpec("w", url="https://user:secret@api.example:8443/mcp?token=abc#frag")
    assert child_target(spec) == "https://api.example:8443/mcp"
    assert child_target(ChildSpec("f", command=("/usr/bin/python3", "-m", "files", "--key", "k"))) == (
        "command python3 (+4 arguments)"
    )
    assert child_target(ChildSpec("f", command=("node",))) == "command node"


def test_causes_come_from_the_chain_not_from_free_text() -> None:
    try:
        try:
            raise ConnectionRefusedError(111, "Connect call failed ('10.0.0.1', 9) secret-path")
        except OSError as inner:
            raise RuntimeError("Client failed to connect: secret-text") from inner
    except RuntimeError as outer:
        assert failure_cause(outer) == "connection refused"
    assert failure_cause(TimeoutError()) == "timed out"
    assert failure_cause(ValueError("free text with a secret")) == "ValueError"


async def test_a_refused_http_child_is_down_with_its_url_and_cause_and_calls_say_so() -> None:
    spec = ChildSpec("w", url="http://user:pw@127.0.0.1:9/mcp?token=s")
    gateway = Gateway(GatewayConfig(children=(spec,), connect_timeout=5))
    await gateway.start(supervise=False)
    try:
        child = gateway.children["w"]
        assert child.state == "down"
        assert child.reason == "http://127.0.0.1:9/mcp: connection refused"
        tool = ChildTool("w", "t", "w_t", {"name": "t", "inputSchema": {"type": "object"}}, "0" * 64)
        with pytest.raises(
            GatewayError, match=r"child w is down \(http://127.0.0.1:9/mcp: connection refused\)"
        ):
            await child.call(tool, {})
    finally:
        await gateway.stop()


async def test_a_stdio_child_that_exits_is_explained_and_its_stderr_kept_for_the_operator() -> None:
    script = "import sys; sys.stderr.write('starting\\nno token in \\x1b[31mFILES_TOKEN\\n'); sys.exit(3)"
    spec = ChildSpec("files", command=(sys.executable, "-c", script))
    gateway = Gateway(GatewayConfig(children=(spec,), connect_timeout=10))
    await gateway.start(supervise=False)
    try:
        child = gateway.children["files"]
        assert child.state == "down"
        assert child.reason is not None
        assert child.reason.startswith("command python") and child.reason.endswith(": exited with status 3")
        deadline = time.monotonic() + 5
        while child.stderr_line is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert child.stderr_line == "no token in \\x1b[31mFILES_TOKEN"  # escaped, the last line
        assert "FILES_TOKEN" not in (child.reason or "")  # a caller's error never carries stderr
    finally:
        await gateway.stop()


def test_the_stderr_tail_passes_every_line_on() -> None:
    forward = io.StringIO()
    tail = StderrTail(forward)
    tail.file.write("one\n\ntwo " + "x" * 400 + "\n")
    tail.file.flush()
    deadline = time.monotonic() + 5
    while tail.last_line is None and time.monotonic() < deadline:
        time.sleep(0.01)
    tail.close()
    assert tail.last_line is not None and tail.last_line.startswith("two x") and len(tail.last_line) < 330
    # Passed on through the one sanitizer, prefixed (empty lines are not relayed).
    assert forward.getvalue().startswith("[child] one\n[child] two ")


async def test_a_child_that_is_not_an_mcp_server_is_down_saying_what_it_is() -> None:
    """A web page or a program printing text is named (the host's ``NotMcpServer``), not reported as a
    closed connection or a timeout (the connect timeout is far beyond the test's hang guard)."""
    with python_http_server() as port:
        web = ChildSpec("web", url=f"http://127.0.0.1:{port}/mcp")
        text = ChildSpec("text", command=(sys.executable, "-c", HELLO_WORLD))
        gateway = Gateway(GatewayConfig(children=(web, text), connect_timeout=600))
        with anyio.fail_after(120):
            await gateway.start(supervise=False)
        try:
            reasons = {name: child.reason for name, child in gateway.children.items()}
        finally:
            await gateway.stop()
    assert (
        reasons["web"] == f"http://127.0.0.1:{port}/mcp: not an MCP server: an HTML page, not an MCP endpoint"
    )
    assert (reasons["text"] or "").startswith("command python")
    assert (reasons["text"] or "").endswith(": not an MCP server: the program wrote non-JSON to stdout")
