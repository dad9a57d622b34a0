"""Names resolve or fail: every ``[auth.require]`` key names a child or a tool its child lists (a typo
refuses start-up and ``--check`` with the name; a key that stops matching after a re-list holds that
child's tools back, degrades the gateway and is logged), and child tools colliding with the gateway's
own tools are rejected."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fastmcp import FastMCP
from fastmcp.server.auth.providers.jwt import RSAKeyPair

from agent_connector_sdk.cli.app import main
from agent_connector_sdk.gateway import AuthSettings, ChildSpec, Gateway, GatewayConfig, GatewayError
from agent_connector_sdk.gateway._generations import RESERVED_TOOL_NAMES
from tests.support.gateway import rpc, wait_for
from tests.support.gateway_children import Misbehaving
from tests.support.http_server import serve_asgi


class Shrinking(Misbehaving):
    """The misbehaving child, which can stop listing its ``ok`` tool."""

    hide_ok = False

    def descriptors(self) -> list[Any]:
        return [tool for tool in super().descriptors() if not (self.hide_ok and tool.name == "ok")]


@pytest.fixture(scope="module")
def key() -> RSAKeyPair:
    return RSAKeyPair.generate()


def _auth(key: RSAKeyPair, require: dict[str, tuple[str, ...]]) -> AuthSettings:
    return AuthSettings(
        issuer="https://issuer.test/", audience="gw", public_key_pem=key.public_key, require=require
    )


def _colliding_children() -> tuple[FastMCP[Any], FastMCP[Any]]:
    search: FastMCP[Any] = FastMCP("search")
    call: FastMCP[Any] = FastMCP("call")

    @search.tool(name="tools")
    def tools() -> str:
        return "a child's tool"

    @search.tool(name="other")
    def other() -> str:
        return "fine"

    @call.tool(name="tool")
    def tool() -> str:
        return "a child's tool"

    return search, call


async def test_a_typo_in_auth_require_refuses_start_up_with_the_name(key: RSAKeyPair) -> None:
    bad = Misbehaving()
    with serve_asgi(bad.server().streamable_http_app(stateless_http=True)) as url:
        config = GatewayConfig(
            children=(ChildSpec("lab", url=url),),
            auth=_auth(key, {"lab_mroph": ("lab:write",), "lab": ("lab:read",)}),
        )
        gateway = Gateway(config)
        with pytest.raises(GatewayError, match=r"\[auth.require\] lab_mroph names no child"):
            await gateway.start(supervise=False)
        assert gateway.start_error is not None and gateway.start_error.category == "invalid_config"
        assert all(child.state == "closed" for child in gateway.children.values())

        # The right name, and a name of a tool admission rejected (a real name, never exposed), start.
        fixed = GatewayConfig(
            children=(ChildSpec("lab", url=url),),
            auth=_auth(key, {"lab_morph": ("lab:write",), "lab_leaky": ("lab:write",)}),
        )
        async with Gateway(fixed) as gateway:
            tool = gateway.tool("lab_morph")
            assert tool is not None and tool.auth is not None


def test_a_requirement_on_the_gateways_own_tools_is_refused_with_a_reason(key: RSAKeyPair) -> None:
    for name in sorted(RESERVED_TOOL_NAMES):
        with pytest.raises(GatewayError, match=f"{name} is the server's own tool"):
            GatewayConfig(
                children=(ChildSpec("search", url="http://127.0.0.1:9/mcp"),), auth=_auth(key, {name: ("x",)})
            )


def test_child_tools_colliding_with_the_gateways_own_are_rejected_and_the_gateways_still_answer() -> None:
    search, call = _colliding_children()
    with (
        serve_asgi(search.http_app(stateless_http=True)) as search_url,
        serve_asgi(call.http_app(stateless_http=True)) as call_url,
    ):
        gateway = Gateway(
            GatewayConfig(children=(ChildSpec("search", url=search_url), ChildSpec("call", url=call_url)))
        )
        with serve_asgi(gateway.http_app()) as url:
            rejected = {
                name: [(r.tool, r.category, r.reason) for r in child.catalog.rejected]
                for name, child in gateway.children.items()
                if child.catalog is not None
            }
            assert rejected == {
                "search": [("tools", "reserved_name", "search_tools is the gateway's own tool")],
                "call": [("tool", "reserved_name", "call_tool is the gateway's own tool")],
            }
            assert gateway.tool("search_other") is not None
            # search_tools is the gateway's search (navigation entries), never the child's tool.
            _, message = rpc(url, "tools/call", {"name": "search_tools", "arguments": {"pattern": "."}})
            names = [entry["name"] for entry in message["result"]["structuredContent"]["result"]]
            assert names == ["search_other"]


def test_check_refuses_a_typo_with_the_name(
    key: RSAKeyPair, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = Misbehaving()
    (tmp_path / "issuer.pem").write_text(key.public_key, encoding="ascii")
    with serve_asgi(bad.server().streamable_http_app(stateless_http=True)) as url:
        (tmp_path / "gateway.toml").write_text(
            f"""
[auth]
issuer = "https://issuer.test/"
audience = "gw"
public_key_file = "issuer.pem"
[auth.require]
lab_mroph = ["lab:write"]
[children.lab]
url = "{url}"
""",
            encoding="utf-8",
        )
        code = main(["gateway", "--config", str(tmp_path / "gateway.toml"), "--check"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "[auth.require] lab_mroph names no child" in err


def test_a_requirement_that_stops_matching_after_a_re_list_degrades_the_gateway(
    key: RSAKeyPair, caplog: pytest.LogCaptureFixture
) -> None:
    bad = Shrinking()
    with serve_asgi(bad.server().streamable_http_app(stateless_http=True)) as child_url:
        config = GatewayConfig(
            children=(ChildSpec("lab", url=child_url),),
            auth=_auth(key, {"lab_ok": ("lab:read",)}),
            refresh=0.3,
            relist_interval=0.3,  # the re-list under test, not the debounce (tests/gateway/test_operator.py)
        )
        gateway = Gateway(config)
        with caplog.at_level(logging.WARNING), serve_asgi(gateway.http_app()) as url:
            health = httpx2.get(url.removesuffix("/mcp") + "/healthz", timeout=10).json()
            assert health["status"] == "ok" and health["unmatched_requirements"] == 0
            bad.hide_ok = True  # the child stops listing `ok`
            wait_for(lambda: gateway.unmatched == ("lab_ok",), what="the requirement to stop matching")
            health = httpx2.get(url.removesuffix("/mcp") + "/healthz", timeout=10).json()
            assert health["status"] == "degraded" and health["unmatched_requirements"] == 1
            assert "lab_ok" not in str(health)  # the unauthenticated route names no tools
            # The tool it guarded may come back under another name: nothing of lab stays published.
            assert health["held_back"] == ["lab"] and gateway.tool("lab_morph") is None
        assert (
            "[auth.require] lab_ok no longer names a tool child lab lists: its tools are held back"
            in caplog.text
        )
