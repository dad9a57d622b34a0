"""What an operator is told and can rely on, with real children: a child that hangs is marked degraded
(health, last error, one log line) and recovers; a child storming ``tools/list_changed`` costs a few
re-lists, not one per notification or per call; a missing credential variable is named."""

from __future__ import annotations

import concurrent.futures
import sys
import time

import httpx2
import pytest

from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig, GatewayError, check_credentials
from agent_connector_sdk.mcp.server import gated_http_app
from tests.support.gateway import call, rpc, wait_for
from tests.support.gateway_log import gateway_log
from tests.support.http_server import serve_asgi
from tests.support.operator_children import operator_server

STDIO_OPS = (sys.executable, "-m", "tests.support.operator_children", "stdio")


def test_consecutive_timeouts_mark_a_child_degraded_until_it_answers_again() -> None:
    with (
        gateway_log() as log,
        serve_asgi(gated_http_app(operator_server(), stateless_http=True)) as child_url,
    ):
        config = GatewayConfig(children=(ChildSpec("ops", url=child_url),), call_timeout=0.4, degrade_after=2)
        gateway = Gateway(config)
        with serve_asgi(gateway.http_app()) as url:
            health_url = url.removesuffix("/mcp") + "/healthz"
            nap = {"name": "ops_nap", "arguments": {"seconds": 1.5}}
            _status, first = rpc(url, "tools/call", nap)
            assert first["error"]["data"]["category"] == "child_timeout"
            assert httpx2.get(health_url, timeout=10).json()["children"][0]["state"] == "up"  # one is chance
            _status, second = rpc(url, "tools/call", nap)
            assert second["error"]["data"]["category"] == "child_timeout"
            health = httpx2.get(health_url, timeout=10)
            assert health.status_code == 200
            body = health.json()
            assert body["status"] == "degraded"
            assert body["children"][0]["state"] == "degraded"
            assert body["children"][0]["last_error"] == "child_timeout"
            assert len(log.matching("child ops degraded")) == 1
            assert "2 consecutive calls" in log.matching("child ops degraded")[0]
            # Calls still go through; the first answer restores the child.
            assert call(url, "ops_ping", {})["content"][0]["text"] == "pong"
            body = httpx2.get(health_url, timeout=10).json()
            assert body["status"] == "ok"
            assert body["children"][0] | {"state": "up", "last_error": None} == body["children"][0]
            assert len(log.matching("child ops recovered")) == 1
    assert log.matching("child ops up: 4 tools, 0 rejected, generation 0")
    # Names and categories only: no argument value (1.5) ever reached the log.
    assert not [line for line in log.lines if "1.5" in line]


def test_a_list_changed_storm_costs_a_few_relists_not_one_per_notification_or_call() -> None:
    config = GatewayConfig(
        children=(ChildSpec("ops", command=STDIO_OPS),),
        relist_interval=1.0,
        refresh=3600,
        call_timeout=5,
        connect_timeout=60,  # a hang guard: a stdio child's start-up is seconds on a busy machine
    )
    gateway = Gateway(config)
    with serve_asgi(gateway.http_app()) as url:
        child = gateway.children["ops"]
        assert call(url, "ops_lists", {})["structuredContent"] == {"count": 1}
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            storm = pool.submit(call, url, "ops_storm", {"seconds": 2.5, "rate": 250})
            calls = 0
            while not storm.done():  # calls during the storm do not re-list either
                assert call(url, "ops_ping", {})["content"][0]["text"] == "pong"
                calls += 1
            sent = int(storm.result()["content"][0]["text"].removeprefix("sent "))
        time.sleep(1.3)  # the trailing re-list of the storm's last notifications
        elapsed = time.monotonic() - started
        lists = call(url, "ops_lists", {})["structuredContent"]["count"] - 1
        # The storm happened and calls ran during it (how many is the machine's speed, not the gateway's).
        assert calls >= 2 and sent >= 50
        # At most one re-list per relist_interval (1 s) while it lasts, and at least one: coalesced,
        # never dropped.
        assert 1 <= lists <= elapsed / config.relist_interval + 1, (lists, elapsed)
        assert child.relists == lists
        assert child.state == "up" and child.health().generation == 0  # the catalog never changed


def test_a_missing_credential_variable_is_named_before_anything_starts() -> None:
    spec = ChildSpec("weather", url="http://127.0.0.1:9/mcp", headers_env={"Authorization": "WEATHER_TOKEN"})
    config = GatewayConfig(children=(spec,))
    with pytest.raises(GatewayError) as refused:
        check_credentials(config, environ={})
    assert refused.value.category == "invalid_config"
    assert "WEATHER_TOKEN" in refused.value.message and "weather" in refused.value.message
    check_credentials(config, environ={"WEATHER_TOKEN": "Bearer x"})  # set: accepted


async def test_a_child_whose_variable_is_missing_is_down_with_the_name_in_its_reason() -> None:
    spec = ChildSpec("weather", url="http://127.0.0.1:9/mcp", headers_env={"Authorization": "WEATHER_TOKEN"})
    gateway = Gateway(GatewayConfig(children=(spec,)), environ={})
    with gateway_log() as log:
        await gateway.start(supervise=False)
        await gateway.stop()
    child = gateway.children["weather"]
    assert child.last_error == "invalid_config"
    assert child.reason is not None and "WEATHER_TOKEN" in child.reason
    (line,) = log.matching("child weather down:")
    assert "WEATHER_TOKEN" in line and line.endswith("(invalid_config)")


def test_a_child_that_dies_and_comes_back_is_one_down_line_and_one_reconnected_line() -> None:
    child = serve_asgi(gated_http_app(operator_server(), stateless_http=True))
    child_url = child.__enter__()
    port = int(child_url.rsplit(":", 1)[1].split("/")[0])
    gateway = Gateway(GatewayConfig(children=(ChildSpec("ops", url=child_url),), max_backoff=0.5))
    with gateway_log() as log, serve_asgi(gateway.http_app()) as url:
        assert call(url, "ops_ping", {})["content"][0]["text"] == "pong"
        child.__exit__(None, None, None)  # the child dies
        rpc(url, "tools/call", {"name": "ops_ping", "arguments": {}})
        wait_for(lambda: gateway.children["ops"].state == "down", what="ops marked down")
        time.sleep(1.5)  # several reconnect attempts fail meanwhile
        with serve_asgi(gated_http_app(operator_server(), stateless_http=True), port=port):
            wait_for(lambda: bool(log.matching("child ops reconnected")), what="ops reconnected")
            assert call(url, "ops_ping", {})["content"][0]["text"] == "pong"
    downs = log.matching("child ops down:")
    # One line per reason (the call saw the connection close; reconnecting saw it refused), not one
    # line per backoff step: several reconnects failed meanwhile.
    assert len(downs) == len(set(downs)) <= 2, downs
    assert len([line for line in downs if "connection refused" in line]) == 1, downs
    assert all(line.startswith(f"child ops down: {child_url}: ") for line in downs)
    assert all(line.endswith("(transport_failure)") for line in downs)
    assert gateway.children["ops"].reconnects >= 1
    assert log.matching("child ops reconnected: 4 tools, 0 rejected, generation 0, revision 2026-07-28")
