"""Child generations and failures over real HTTP: a schema that changes mid-run, a child that dies and
comes back, per-child credentials from the environment."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx2
import pytest
from fastmcp.exceptions import ToolError

from agent_connector_sdk.audit import BoundedAuditSink
from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig
from agent_connector_sdk.mcp.server import gated_http_app
from tests.support.gateway import call, rpc, search, wait_for
from tests.support.gateway_children import Misbehaving, recording, weather_server
from tests.support.http_server import serve_asgi


def _entry(url: str, name: str) -> dict[str, object]:
    (entry,) = [e for e in search(url, name) if e["name"] == name]
    return entry


def _read(url: str, uri: str) -> dict[str, object]:
    _, message = rpc(url, "resources/read", {"uri": uri})
    return message


@pytest.fixture
def bad() -> Iterator[tuple[Misbehaving, str]]:
    child = Misbehaving()
    with serve_asgi(child.server().streamable_http_app(stateless_http=True)) as url:
        yield child, url


def test_a_schema_that_changes_mid_run_moves_the_generation_and_stales_old_uris(
    bad: tuple[Misbehaving, str],
) -> None:
    child, child_url = bad
    audit = BoundedAuditSink()
    gateway = Gateway(
        GatewayConfig(children=(ChildSpec("bad", url=child_url),), refresh=0.3, relist_interval=0.3),
        audit=audit,
    )
    with serve_asgi(gateway.http_app()) as url:
        before = _entry(url, "bad_morph")
        before_ok = _entry(url, "bad_ok")
        old_manifest = json.loads(_read(url, str(before["manifest_uri"]))["result"]["contents"][0]["text"])  # type: ignore[index]
        assert call(url, "bad_morph", {"a": "x"})["content"][0]["text"] == "morph v1"

        child.version = 2
        wait_for(lambda: gateway.children["bad"].health().generation == 1, what="generation 1")

        refused = _read(url, str(before["manifest_uri"]))
        assert refused["error"]["code"] == -32602  # type: ignore[index]
        after = _entry(url, "bad_morph")
        assert after["schema_sha256"] != before["schema_sha256"]
        new_manifest = json.loads(_read(url, str(after["manifest_uri"]))["result"]["contents"][0]["text"])  # type: ignore[index]
        assert new_manifest["source_sha256"] != old_manifest["source_sha256"]
        # The gateway validates against the new schema (b is now required) before the child sees it.
        calls_before = len(child.calls)
        stale_call = call(url, "bad_morph", {"a": "x"})
        assert stale_call["isError"] is True and len(child.calls) == calls_before
        assert call(url, "bad_morph", {"a": "x", "b": 1})["content"][0]["text"] == "morph v2"
        # Unchanged tools keep their identity.
        assert _entry(url, "bad_ok") == before_ok
    moves = [e for e in audit.events() if e.get("event") == "generation"]
    assert [(e["generation"], e["changed"]) for e in moves] == [(0, 0), (1, 1)]


async def test_a_tool_object_from_an_old_generation_is_refused(bad: tuple[Misbehaving, str]) -> None:
    child, child_url = bad
    async with Gateway(GatewayConfig(children=(ChildSpec("bad", url=child_url),))) as gateway:
        old = gateway.tool("bad_morph")
        assert old is not None
        child.version = 2
        catalog = await gateway.children["bad"].relist()
        assert catalog.generation == 1
        assert gateway.tool("bad_morph") is not old
        with pytest.raises(ToolError, match="gateway refused bad_morph: tool_changed"):
            await old.run({"a": "x"})
        unchanged = await gateway.children["bad"].relist()
        assert unchanged.generation == 1  # an identical re-list does not move it


def test_a_child_that_dies_is_refused_at_once_others_keep_working_and_it_comes_back(
    bad: tuple[Misbehaving, str],
) -> None:
    _, bad_url = bad
    weather = serve_asgi(gated_http_app(weather_server(), stateless_http=True))
    weather_url = weather.__enter__()
    port = int(weather_url.rsplit(":", 1)[1].split("/")[0])
    config = GatewayConfig(
        children=(ChildSpec("weather", url=weather_url), ChildSpec("bad", url=bad_url)),
        call_timeout=60,
        max_backoff=0.5,
    )
    gateway = Gateway(config)
    with serve_asgi(gateway.http_app()) as url:
        assert call(url, "weather_forecast", {})["structuredContent"]["celsius"] == 21
        weather.__exit__(None, None, None)  # the child dies

        started = time.monotonic()
        _, first = rpc(url, "tools/call", {"name": "weather_forecast", "arguments": {}})
        # A JSON-RPC error, never an isError result with made-up structuredContent ({"city": "", ...}).
        assert "result" not in first
        assert first["error"]["code"] == -32011
        assert first["error"]["data"]["category"] == "transport_failure"
        assert first["error"]["message"].startswith("gateway refused weather_forecast: transport_failure")
        # At once, not at the call timeout (60 s): a hang guard far from both.
        assert time.monotonic() - started < 20
        wait_for(lambda: gateway.children["weather"].state != "up", what="weather marked down")
        _, second = rpc(url, "tools/call", {"name": "weather_forecast", "arguments": {}})
        assert second["error"]["code"] == -32011
        assert second["error"]["message"].startswith("gateway refused weather_forecast: child_unavailable")
        # Its tools stay findable; the other child keeps working.
        # (ranked: plain words find the child's related tools too, the named one first)
        assert search(url, "weather_forecast")[0]["name"] == "weather_forecast"
        assert call(url, "bad_ok", {})["content"][0]["text"] == "ok v1"
        health = httpx2.get(url.removesuffix("/mcp") + "/healthz?detail=1", timeout=10).json()
        assert "admitted" not in health["children"][0]  # detail is off unless the operator turns it on
        assert health["status"] == "degraded"
        assert {c["name"]: c["state"] for c in health["children"]} == {"weather": "down", "bad": "up"}

        # It comes back on the same port: the supervisor reconnects (backoff capped at 0.5 s).
        with serve_asgi(gated_http_app(weather_server(), stateless_http=True), port=port):
            wait_for(lambda: gateway.children["weather"].state == "up", what="weather reconnected")
            assert call(url, "weather_forecast", {})["structuredContent"]["celsius"] == 21
            assert gateway.children["weather"].health().generation == 0  # same catalog, same generation


def test_per_child_credentials_come_from_the_environment_and_are_never_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log: list[dict[str, str]] = []
    audit = BoundedAuditSink()
    app = recording(gated_http_app(weather_server(), stateless_http=True), log)
    with serve_asgi(app) as child_url:
        spec = ChildSpec("weather", url=child_url, headers_env={"Authorization": "GW_WEATHER_AUTH"})
        environ = {"GW_WEATHER_AUTH": "Bearer child-secret-7"}
        gateway = Gateway(GatewayConfig(children=(spec,)), environ=environ, audit=audit)
        with caplog.at_level("DEBUG"), serve_asgi(gateway.http_app()) as url:
            call(url, "weather_forecast", {}, headers=[("authorization", "Bearer caller-secret-9")])
    assert log and all(headers.get("authorization") == "Bearer child-secret-7" for headers in log)
    everything = caplog.text + repr(audit.events()) + repr(spec)
    assert "child-secret-7" not in everything and "caller-secret-9" not in everything


def test_list_changed_from_a_child_re_lists_it_at_once() -> None:
    with serve_asgi(gated_http_app(weather_server(), stateless_http=True)) as child_url:
        config = GatewayConfig(
            children=(ChildSpec("weather", url=child_url),), refresh=3600, relist_interval=0.5
        )
        gateway = Gateway(config)
        with serve_asgi(gateway.http_app()) as url:
            assert search(url, "extra") == []
            assert call(url, "weather_grow", {})["content"][0]["text"] == "grown"
            wait_for(lambda: gateway.tool("weather_extra") is not None, timeout=10, what="re-list")
            assert gateway.children["weather"].health().generation == 1
            assert [e["name"] for e in search(url, "extra")] == ["weather_extra"]
            assert call(url, "weather_extra", {})["structuredContent"] == {"result": "extra"}
