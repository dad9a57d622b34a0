"""A gateway child that lists one unrepresentable descriptor stays up: that tool is rejected at Admit
and the child's other tools are published and callable (over Streamable HTTP and over stdio)."""

from __future__ import annotations

import sys
import time
import unicodedata

import pytest

from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig
from tests.support.gateway import call, search
from tests.support.hostile_server import hostile_app
from tests.support.http_server import serve_asgi


@pytest.mark.parametrize(
    ("transport", "mode"),
    [("http", "surrogate"), ("http", "nonfinite"), ("stdio", "deep_schema-150"), ("stdio", "surrogate")],
)
def test_a_child_with_one_bad_descriptor_stays_up_with_that_tool_rejected(transport: str, mode: str) -> None:
    with serve_asgi(hostile_app(), path="") as base:
        if transport == "http":
            spec = ChildSpec("odd", url=f"{base}/{mode}/mcp")
        else:
            spec = ChildSpec("odd", command=(sys.executable, "-m", "tests.support.hostile_server", mode))
        gateway = Gateway(GatewayConfig(children=(spec,), connect_timeout=60))  # a hang guard
        with serve_asgi(gateway.http_app()) as url:
            names = [entry["name"] for entry in search(url, "odd_")]
            assert "odd_clean" in names and "odd_clean_too" in names
            assert not [name for name in names if name.startswith("odd_") and "clean" not in name]
            result = call(url, "odd_clean", {"q": "x"})
    assert result.get("isError") is not True, result


def test_a_stdio_childs_stderr_reaches_the_gateways_stderr_sanitized_and_prefixed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    spec = ChildSpec("odd", command=(sys.executable, "-m", "tests.support.hostile_server", "noisy"))
    gateway = Gateway(GatewayConfig(children=(spec,), connect_timeout=60))  # a hang guard
    with serve_asgi(gateway.http_app()) as url:
        for _ in range(3):
            call(url, "odd_clean", {"q": "x"})
        child = gateway.children["odd"]
        deadline = time.monotonic() + 5
        while child.stderr_line is None and time.monotonic() < deadline:
            time.sleep(0.02)
    err = capsys.readouterr().err
    noise = [line for line in err.splitlines() if "noise" in line or "more" in line]
    assert noise and all(line.startswith("[child odd] ") for line in noise)
    bad = [c for c in err if c != "\n" and (unicodedata.category(c) in ("Cc", "Cs") or c in "\u202e\u2066")]
    assert not bad, [hex(ord(c)) for c in bad[:5]]
