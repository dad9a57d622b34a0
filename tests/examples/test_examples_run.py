"""The runnable examples run as a user runs them (``python examples/NAME.py``) and print what their
docstrings promise: ``make test`` fails when one breaks."""

from __future__ import annotations

import asyncio
import importlib.util
import io
import os
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from fastmcp import FastMCP

from agent_connector_sdk.cli import main as agent_connector
from agent_connector_sdk.mcp.server import gated_http_app
from tests.support.http_server import serve_asgi
from tests.support.raw_http import raw_post

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PYTHONUNBUFFERED": "1"}


def _example(name: str, *args: str) -> list[str]:
    return [sys.executable, str(ROOT / "examples" / f"{name}.py"), *args]


def test_a_gateway_over_two_children_serves_both_through_every_gate() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "gateway_over_two_children.py")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [
        "gateway over 2 children: weather, shipping",
        "weather_forecast -> {'city': 'Zürich', 'high_c': 21, 'sky': 'clear'}",
        "shipping_quote -> {'price': 6.9}",
    ]
    assert "Traceback" not in done.stderr


def _first_line(process: subprocess.Popen[str], timeout: float = 30) -> str:
    """The first line ``process`` prints (its URL), or a failure with what it wrote on stderr."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    if not ready:
        process.kill()
        pytest.fail(f"no line within {timeout:g} s")
    line = process.stdout.readline()
    if not line:
        _, err = process.communicate(timeout=10)
        pytest.fail(f"exited {process.returncode} before printing: {err[-2000:]}")
    return line.rstrip("\n")


@pytest.fixture(scope="module")
def gated_server_url() -> Iterator[str]:
    """``python examples/gated_server.py --port 0`` as a user starts it; its printed URL."""
    process = subprocess.Popen(
        _example("gated_server", "--port", "0"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        cwd=ROOT,
    )
    try:
        line = _first_line(process)
        match = re.fullmatch(r"serving parcel-shop \(gated\) at (http://127\.0\.0\.1:(\d+)/mcp)", line)
        assert match is not None and match[2] != "0", line  # the real port, not the 0 asked for
        yield match[1]
    finally:
        process.terminate()
        _, err = process.communicate(timeout=10)
        assert "Traceback" not in err, err[-2000:]


def test_the_host_script_admits_calls_refuses_and_confirms_against_the_gated_server(
    gated_server_url: str,
) -> None:
    started = time.monotonic()
    done = subprocess.run(
        _example("host_calls_tools", gated_server_url),
        capture_output=True,
        text=True,
        timeout=60,
        env=ENV,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [
        "connected: protocol 2026-07-28, Mcp-Param-* headers required",
        "admitted: quote",
        "admitted: book",
        "quote -> {'price': 6.9}",
        "quote with weight_kg -1 -> refused before sending (invoke, invalid_arguments)",
        "book without confirmation -> refused (confirmation_required)",
        "confirm book(region, weight_kg)? yes",
        "book -> {'booking': 'ZÜR-0020'}",
        "audit: quote ok; quote invalid_arguments; book confirmation_required; book ok",
    ]
    assert done.stderr == "" and time.monotonic() - started < 120  # a hang guard


def test_the_gated_server_enforces_its_gates_on_a_client_that_skips_them(gated_server_url: str) -> None:
    """What the host script never sends, sent raw: the server's own gates refuse it."""
    lying = raw_post(
        gated_server_url,
        "tools/call",
        {"name": "quote", "arguments": {"region": "eu-west", "weight_kg": 2}},
        headers=[("mcp-param-region", "us-east")],
    )
    assert lying.status_code == 400 and lying.json()["error"]["code"] == -32020
    invalid = raw_post(
        gated_server_url,
        "tools/call",
        {"name": "quote", "arguments": {"region": "eu-west", "weight_kg": -1}},
        headers=[("mcp-param-region", "eu-west")],
    )
    assert invalid.status_code == 200 and invalid.json()["result"]["isError"] is True
    foreign = raw_post(gated_server_url, "tools/list", {}, headers=[("host", "evil.example")])
    assert foreign.status_code == 421


def test_the_gated_server_reviews_clean_and_sends_its_header(gated_server_url: str) -> None:
    out = io.StringIO()
    argv = [
        "review",
        gated_server_url,
        "--call",
        "quote",
        "--arguments",
        '{"region": "Zürich west", "weight_kg": 2}',
    ]
    assert agent_connector(argv, out) == 0
    assert "headers sent: Mcp-Param-Region (values not shown)" in out.getvalue()
    assert (
        "summary  2 tools admitted, 0 rejected, 0 disclosure failures; 0 project-rule findings"
        in out.getvalue()
    )


def test_the_examples_say_what_is_wrong_in_one_line(gated_server_url: str) -> None:
    port = gated_server_url.split(":")[2].split("/")[0]
    busy = subprocess.run(
        _example("gated_server", "--port", port),
        capture_output=True,
        text=True,
        timeout=60,
        env=ENV,
        cwd=ROOT,
    )
    assert (busy.returncode, busy.stdout) == (1, "")
    assert busy.stderr == (
        f"gated_server: port {port} on 127.0.0.1 is already in use (pick another with --port, or 0)\n"
    )
    wrong_path = gated_server_url.removesuffix("mcp")
    unreachable = subprocess.run(
        _example("host_calls_tools", wrong_path),
        capture_output=True,
        text=True,
        timeout=60,
        env=ENV,
        cwd=ROOT,
    )
    assert unreachable.returncode == 1 and unreachable.stdout == ""
    assert unreachable.stderr == f"host_calls_tools: {wrong_path}: HTTP 404\n"


def _load_example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_host_script_prints_a_hostile_servers_names_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    """Pointed at another server, the script prints its listing only, every name through the sanitizer."""
    host_script = _load_example("host_calls_tools")
    server: FastMCP[Any] = FastMCP("hostile")

    @server.tool(name="evil\x1b[2J\u202ename")
    def evil() -> str:
        return "x"

    @server.tool(name="fine")
    def fine() -> str:
        return "x"

    with serve_asgi(gated_http_app(server, stateless_http=True)) as url:
        assert asyncio.run(host_script.run(url, None)) == 0
    assert capsys.readouterr().out.splitlines() == [
        "connected: protocol 2026-07-28, Mcp-Param-* headers required",
        "admitted: fine",
        "rejected: evil\\x1b[2J\\u202ename (malformed)",
        "not the gated example server (no quote and book to call): done after the listing",
    ]
