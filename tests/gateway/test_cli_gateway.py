"""``agent-connector gateway`` as a user runs it: bad input, ``--check`` evidence, serving."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import fastmcp
import httpx2
import pytest

from agent_connector_sdk.mcp.server import gated_http_app
from tests.support.cli import ROOT, assert_one_line_error, run_cli
from tests.support.gateway_children import Misbehaving, weather_server
from tests.support.http_server import serve_asgi

STDIO_CHILD = f"files=-- {sys.executable} -m tests.support.gateway_children stdio"


@pytest.fixture(scope="module")
def children() -> Iterator[tuple[str, str]]:
    with (
        serve_asgi(gated_http_app(weather_server(), stateless_http=True)) as weather,
        serve_asgi(Misbehaving().server().streamable_http_app(stateless_http=True)) as bad,
    ):
        yield weather, bad


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ([], "at least one child"),
        (["--child", "w_x=http://127.0.0.1:9/mcp", "--no-auth"], "no '_'"),
        (["--child", "w=http://127.0.0.1:9/mcp"], "--no-auth"),
        (["--child", "w=http://127.0.0.1:9/mcp", "--no-auth", "--host", "0.0.0.0"], "without authentication"),
        (["--child", "w=http://127.0.0.1:9/mcp", "--port", "70000"], "between 0 and 65535"),
        (["--child", "w=http://127.0.0.1:9/mcp", "--json"], "only applies with --check"),
        (["--config", "/nonexistent/gateway.toml"], "/nonexistent/gateway.toml: no such file"),
    ],
)
def test_bad_input_is_one_line(args: list[str], fragment: str) -> None:
    assert_one_line_error(run_cli("gateway", *args), fragment)


def test_check_prints_each_childs_evidence(children: tuple[str, str]) -> None:
    weather, bad = children
    run = run_cli(
        "gateway", "--check", "--child", f"weather={weather}", "--child", f"bad={bad}", "--child", STDIO_CHILD
    )
    assert run.code == 0, run.err
    out = run.out
    assert f"child weather (streamable_http, 2026-07-28, server weather {fastmcp.__version__}): up" in out
    assert "validated result: weather_forecast: ok (structured content conforms; harmless)" in out
    assert 'descriptors: 4 in 2 page(s): (first), ""' in out
    assert "leaky: sensitive_header:" in out
    assert "admitted (3): bad_listing, bad_morph, bad_ok" in out
    assert f"child files (stdio, 2026-07-28, server files {fastmcp.__version__}): up" in out
    # The rejected tool and the child without a harmless tool are problems; none fails without --strict.
    assert out.splitlines()[-1] == "status: degraded (not passed; 2 problem(s))"


def test_check_json_and_a_child_that_is_down(children: tuple[str, str]) -> None:
    weather, _ = children
    run = run_cli(
        "gateway",
        "--check",
        "--json",
        "--child",
        f"weather={weather}",
        "--child",
        "gone=http://127.0.0.1:9/mcp",
    )
    assert run.code == 2
    report = run.json()
    assert report["status"] == "degraded" and report["passed"] is False
    evidence = {item["name"]: item for item in report["children"]}
    assert evidence["gone"]["state"] == "down" and evidence["gone"]["last_error"] == "transport_failure"
    assert evidence["weather"]["validated_result"] == {
        "tool": "weather_forecast",
        "source": "harmless",
        "outcome": "ok",
        "structured": True,
        "reason": None,
    }
    assert evidence["weather"]["page_trace"] == [None]


def test_serve_prints_the_real_url_after_the_children_connected(children: tuple[str, str]) -> None:
    weather, _ = children
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from agent_connector_sdk.cli import main_exit; main_exit()",
            "gateway",
            "--port",
            "0",
            "--no-auth",
            "--child",
            f"weather={weather}",
            "--child",
            "gone=http://127.0.0.1:9/mcp",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "src"), ROOT])},
        cwd=ROOT,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith(
            "serving 4 tools from 2 children (weather up, gone down) at http://127.0.0.1:"
        ), line
        url = line.split(" at ")[-1].strip()
        assert not url.endswith(":0/mcp")
        health = httpx2.get(url.removesuffix("/mcp") + "/healthz", timeout=10)
        assert health.status_code == 200 and health.json()["status"] == "degraded"
    finally:
        process.terminate()
        process.wait(timeout=20)
