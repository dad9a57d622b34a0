"""Names resolve or the tools stay closed: an ``[auth.require]`` key under a child that is down at
start-up is judged when that child first lists. A key naming no tool it lists holds every tool of that
child back (not published, not callable, not found) and is a ``/healthz`` finding; the right key puts
the late child's tool behind its scope from its first listing on — never a moment under the base scope.
``gateway --check`` with such a key under a child it cannot reach is an error that names the key."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agent_connector_sdk.cli.app import main
from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig
from tests.support.gateway import rpc, wait_for
from tests.support.gateway_auth import AUDIENCE, ISSUER, auth_settings, found, healthz, signing_key, token
from tests.support.gateway_children import Misbehaving, weather_server
from tests.support.http_server import serve_asgi
from tests.support.services import free_port


@contextmanager
def _gateway_with_a_late_child(require: dict[str, tuple[str, ...]]) -> Iterator[tuple[str, Gateway, int]]:
    """A gateway over ``weather`` (up) and ``lab`` (nothing listens on its port yet), reconnecting fast."""
    lab_port = free_port()
    auth = auth_settings(require)
    with serve_asgi(weather_server().http_app(stateless_http=True)) as weather_url:
        config = GatewayConfig(
            children=(
                ChildSpec("weather", url=weather_url),
                ChildSpec("lab", url=f"http://127.0.0.1:{lab_port}/mcp"),
            ),
            auth=auth,
            max_backoff=0.5,
            connect_timeout=5,
        )
        gateway = Gateway(config)
        with serve_asgi(gateway.http_app()) as url:
            yield url, gateway, lab_port


def test_a_require_typo_under_a_late_child_holds_its_tools_back(caplog: pytest.LogCaptureFixture) -> None:
    anyone = token()
    with (
        caplog.at_level(logging.WARNING),
        _gateway_with_a_late_child({"lab_mroph": ("lab:write",)}) as (
            url,
            gateway,
            lab_port,
        ),
    ):
        health = healthz(url)
        assert [c["state"] for c in health["children"]] == ["up", "down"]
        assert health["unmatched_requirements"] == 0 and health["held_back"] == []  # not judged yet
        assert "weather_forecast" in found(url, anyone, ".*")

        lab = Misbehaving()
        with serve_asgi(lab.server().streamable_http_app(stateless_http=True), port=lab_port):
            wait_for(lambda: gateway.children["lab"].catalog is not None, what="the late child to list")
            # Listed, but held back: nothing of lab is found, counted or callable, whatever the scopes.
            for headers in (anyone, token("lab:write")):
                assert not any(name.startswith("lab_") for name in found(url, headers, ".*"))
                for tool in ("lab_ok", "lab_morph"):
                    _, message = rpc(url, "tools/call", {"name": tool, "arguments": {}}, headers=headers)
                    assert message["error"]["code"] == -32602, message  # unknown tool
            assert lab.calls == []
            assert gateway.tool("lab_morph") is None and gateway.held == {"lab": ("lab_mroph",)}
            health = healthz(url)
            assert health["status"] == "degraded"
            assert health["unmatched_requirements"] == 1 and health["held_back"] == ["lab"]
            assert "mroph" not in str(health)  # the unauthenticated route names children, not tools
            # The other child serves on.
            _, message = rpc(url, "tools/call", {"name": "weather_forecast", "arguments": {}}, headers=anyone)
            assert message["result"]["structuredContent"]["celsius"] == 21
    assert (
        "[auth.require] lab_mroph names no tool child lab lists: its tools are held back (not published)"
        in caplog.text
    )
    assert "no longer names" not in caplog.text  # it never named anything


def test_the_right_key_for_a_late_child_guards_its_tool_from_its_first_listing() -> None:
    anyone, writer = token(), token("lab:write")
    with _gateway_with_a_late_child({"lab_morph": ("lab:write",)}) as (url, gateway, lab_port):
        lab = Misbehaving()
        with serve_asgi(lab.server().streamable_http_app(stateless_http=True), port=lab_port):
            wait_for(lambda: gateway.tool("lab_ok") is not None, what="the late child's tools")
            morph = gateway.tool("lab_morph")
            assert morph is not None and morph.auth is not None  # published guarded, never bare
            assert "lab_morph" not in found(url, anyone, ".*") and "lab_morph" in found(url, writer, ".*")
            _, denied = rpc(url, "tools/call", {"name": "lab_morph", "arguments": {}}, headers=anyone)
            assert denied["error"]["code"] == -32602
            _, allowed = rpc(url, "tools/call", {"name": "lab_morph", "arguments": {}}, headers=writer)
            assert allowed["result"]["content"][0]["text"] == "morph v1"
            _, ok = rpc(url, "tools/call", {"name": "lab_ok", "arguments": {}}, headers=anyone)
            assert ok["result"]["content"][0]["text"] == "ok v1"
            health = healthz(url)
            assert health["status"] == "ok" and health["held_back"] == []
            assert lab.calls == ["morph", "ok"]


def test_check_names_a_key_it_could_not_resolve_under_an_unreachable_child(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "issuer.pem").write_text(signing_key().public_key, encoding="ascii")
    (tmp_path / "gateway.toml").write_text(
        f"""
[auth]
issuer = "{ISSUER}"
audience = "{AUDIENCE}"
public_key_file = "issuer.pem"
[auth.require]
lab_mroph = ["lab:write"]
[children.lab]
url = "http://127.0.0.1:{free_port()}/mcp"
""",
        encoding="utf-8",
    )
    code = main(["gateway", "--config", str(tmp_path / "gateway.toml"), "--check"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "[auth.require] lab_mroph is not resolved: child lab did not list its tools" in err
