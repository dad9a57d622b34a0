"""A gateway child that lists one unrepresentable descriptor stays up: that tool is rejected at Admit
and the child's other tools are published and callable (over Streamable HTTP and over stdio)."""

from __future__ import annotations

import sys

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
        gateway = Gateway(GatewayConfig(children=(spec,)))
        with serve_asgi(gateway.http_app()) as url:
            names = [entry["name"] for entry in search(url, "odd_")]
            assert "odd_clean" in names and "odd_clean_too" in names
            assert not [name for name in names if name.startswith("odd_") and "clean" not in name]
            result = call(url, "odd_clean", {"q": "x"})
    assert result.get("isError") is not True, result
