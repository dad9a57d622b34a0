"""``review`` says what it found when the address is not an MCP server, in one line, exit 2, and
decides the cheap cases before the host stack loads.

Every case runs the real command in a fresh interpreter against a real process (Python's
``http.server``, a raw TCP service, a stdio program printing "hello world", a port where nothing
listens). Each asserts the line, the exit code and that the command ends (the subprocess timeout is a
generous hang guard; how fast it ends is measured by ``bench/review_failfast.py``, not here). The
import probe asserts by module list that the pre-flight's verdicts load neither ``mcp`` nor
``fastmcp`` (nor pydantic under them).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from agent_connector_sdk.review import ServerUnavailable
from tests.support.cli import run_cli
from tests.support.not_mcp_peers import HELLO_WORLD, python_http_server, raw_tcp_listener, refused_port

HANG_GUARD = 120.0  # seconds; the review's own --timeout is 600 where waiting for it would show


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


def test_python_http_server_is_an_html_page_not_an_mcp_endpoint() -> None:
    with python_http_server() as port:
        url = f"http://127.0.0.1:{port}/mcp"
        run = run_cli("review", "--timeout", "600", url, timeout=HANG_GUARD)
    assert run.code == 2
    assert _one_line(run.err) == (
        f"agent-connector: {url} answered HTTP 501 with an HTML page, not an MCP endpoint ('Error response')"
    )


def test_a_raw_tcp_port_is_not_an_http_server() -> None:
    with raw_tcp_listener() as port:
        url = f"http://127.0.0.1:{port}/mcp"
        run = run_cli("review", "--timeout", "600", url, timeout=HANG_GUARD)
    assert run.code == 2
    assert _one_line(run.err) == (
        f"agent-connector: {url}: not an HTTP server (it sent '220 mail.example ESMTP ready')"
    )


def test_https_to_a_plain_http_port_says_try_http() -> None:
    with python_http_server() as port:
        run = run_cli("review", "--timeout", "600", f"https://127.0.0.1:{port}/mcp", timeout=HANG_GUARD)
    assert run.code == 2
    assert _one_line(run.err) == (
        f"agent-connector: https://127.0.0.1:{port}/mcp: plain HTTP: try http://127.0.0.1:{port}/mcp"
    )


def test_a_stdio_program_printing_hello_world_is_named_not_timed_out() -> None:
    """--timeout 600 with a 120 s hang guard: the line comes from what the program wrote, not from
    waiting for the answer."""
    run = run_cli("review", "--timeout", "600", "--", sys.executable, "-c", HELLO_WORLD, timeout=HANG_GUARD)
    command = shlex.join([sys.executable, "-c", HELLO_WORLD])
    assert run.code == 2
    assert _one_line(run.err) == (
        f"agent-connector: {command}: the program wrote non-JSON to stdout: 'hello world'"
    )


def test_a_missing_program_cannot_start() -> None:
    run = run_cli("review", "--", "no-such-mcp-server-xyz", "--port", "1", timeout=HANG_GUARD)
    assert run.code == 2
    assert _one_line(run.err) == (
        "agent-connector: cannot start no-such-mcp-server-xyz --port 1: program not found "
        "(is it installed and on PATH?)"
    )


def test_a_refused_port_says_nothing_listens() -> None:
    url = f"http://127.0.0.1:{refused_port()}/mcp"
    run = run_cli("review", url, timeout=HANG_GUARD)
    assert run.code == 2
    assert _one_line(run.err) == f"agent-connector: connection refused: nothing is listening at {url}"


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://[::1/mcp", "a malformed URL (Invalid IPv6 URL)"),
        ("http://127.0.0.1:99999/mcp", "a malformed URL (Port out of range 0-65535)"),
        ("http://127.0.0.1:port/mcp", "a malformed URL (Port could not be cast to integer value as 'port')"),
    ],
)
def test_a_malformed_url_is_a_usage_error(url: str, why: str) -> None:
    run = run_cli("review", url, timeout=HANG_GUARD)
    assert run.code == 2
    assert _one_line(run.err) == f"agent-connector: {json.dumps(url)} is {why}"


# ------------------------------------------------------------------------------ what loads first
# What the pre-flight's verdicts must not load: the host stack and what it stands on.
HOST_STACK = frozenset({"mcp", "mcp_types", "fastmcp", "httpx2", "anyio", "pydantic", "jsonschema"})

_PROBE = """
import io, json, sys
from agent_connector_sdk.cli import main
code = main(json.loads(sys.argv[1]), out=io.StringIO())
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _loaded_after(argv: list[str], cwd: Path) -> tuple[int, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(argv)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=HANG_GUARD,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["code"], {name.split(".")[0] for name in result["modules"]}


def test_the_preflight_verdicts_load_no_host_stack(tmp_path: Path) -> None:
    with python_http_server() as web, raw_tcp_listener() as raw:
        cases = [
            ["review", f"http://127.0.0.1:{refused_port()}/mcp"],
            ["review", "--", "no-such-mcp-server-xyz"],
            ["review", "http://[::1/mcp"],
            ["review", f"http://127.0.0.1:{web}/mcp"],
            ["review", f"https://127.0.0.1:{web}/mcp"],
            ["review", f"http://127.0.0.1:{raw}/mcp"],
        ]
        for argv in cases:
            code, loaded = _loaded_after(argv, tmp_path)
            assert code == 2, argv
            assert sorted(loaded & HOST_STACK) == [], f"{argv} loaded {sorted(loaded & HOST_STACK)}"


def test_the_probe_sees_a_review_that_gets_past_the_preflight_load_the_stack(tmp_path: Path) -> None:
    """The check above can fail: a stdio program that exists gets past the pre-flight, and the full
    review (here of "hello world") loads the host stack."""
    code, loaded = _loaded_after(["review", "--", sys.executable, "-c", HELLO_WORLD], tmp_path)
    assert code == 2
    assert {"mcp", "fastmcp"} <= loaded


# --------------------------------------------------------- the full review names the same cases
def _full_review_refusal(kind: str, address: str) -> ServerUnavailable:
    """``review_server`` itself (no pre-flight): what the review says when the pre-flight could not
    decide, e.g. with credentials, or under ``--mcp-config``."""
    from agent_connector_sdk.review.live import ReviewOptions, quiet_sdk_loggers, review_server
    from agent_connector_sdk.review.report import Target

    target = Target(kind=kind, address=address)

    async def review() -> None:
        with anyio.fail_after(HANG_GUARD):
            await review_server(target, ReviewOptions(timeout=600))

    with quiet_sdk_loggers(), pytest.raises(ServerUnavailable) as refused:
        anyio.run(review)
    return refused.value


def test_the_full_review_gives_the_same_sentences_and_typed_reasons() -> None:
    with python_http_server() as web, raw_tcp_listener() as raw:
        cases = {
            f"http://127.0.0.1:{web}/mcp": "html_page",
            f"https://127.0.0.1:{web}/mcp": "plain_http",
            f"http://127.0.0.1:{raw}/mcp": "not_http",
            f"http://127.0.0.1:{refused_port()}/mcp": "refused",
        }
        for url, reason in cases.items():
            refusal = _full_review_refusal("http", url)
            assert refusal.reason == reason, (url, refusal)
            assert run_cli("review", url, timeout=HANG_GUARD).err.strip() == f"agent-connector: {refusal}"
    hello = shlex.join([sys.executable, "-c", HELLO_WORLD])
    refusal = _full_review_refusal("stdio", hello)
    assert refusal.reason == "non_json_output"
    assert str(refusal) == f"{hello}: the program wrote non-JSON to stdout: 'hello world'"
    missing = _full_review_refusal("stdio", "no-such-mcp-server-xyz")
    assert missing.reason == "program_not_found" and str(missing) == (
        "cannot start no-such-mcp-server-xyz: program not found (is it installed and on PATH?)"
    )
