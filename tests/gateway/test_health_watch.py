"""Health that watches: the gateway pings a quiet child, so a hung one (a stopped stdio process) is
``degraded`` with ``last_error`` set without any caller's call, and recovers when it answers again; a
single call that times out sets ``last_error`` even before ``degrade_after`` timeouts degrade it."""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import Any

import httpx2

from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig
from agent_connector_sdk.gateway._watch import PING_INTERVAL
from agent_connector_sdk.mcp.server import gated_http_app
from tests.support.gateway import rpc, wait_for
from tests.support.gateway_children import Misbehaving
from tests.support.http_server import serve_asgi
from tests.support.operator_children import operator_server
from tests.support.processes import children_running

STDIO_OPS = (sys.executable, "-m", "tests.support.operator_children", "stdio")
HANG_GUARD = 60.0
"""Seconds a wait may take before the test fails: far above ``PING_INTERVAL + call_timeout`` (5 s)."""


def _child_health(url: str, name: str) -> dict[str, Any]:
    body = httpx2.get(url.removesuffix("/mcp") + "/healthz", timeout=10).json()
    (found,) = [child for child in body["children"] if child["name"] == name]
    return dict(found)


def test_a_stopped_child_is_degraded_without_any_call_and_recovers_when_it_answers() -> None:
    marker = b"tests.support.operator_children"
    before = children_running(marker)
    stopped: int | None = None
    try:
        with serve_asgi(gated_http_app(operator_server("web"), stateless_http=True)) as web_url:
            config = GatewayConfig(
                children=(ChildSpec("ops", command=STDIO_OPS), ChildSpec("web", url=web_url)),
                call_timeout=2,
                connect_timeout=60,  # a loaded machine starts a Python child slowly; not under test
                shutdown_grace=1,
            )
            gateway = Gateway(config)
            with serve_asgi(gateway.http_app(), timeout_graceful_shutdown=1) as url:
                wait_for(lambda: gateway.children["ops"].state == "up", timeout=HANG_GUARD, what="ops up")
                (stopped,) = children_running(marker) - before
                health = _child_health(url, "ops")
                assert health["state"] == "up" and health["last_error"] is None
                ops = gateway.children["ops"]
                os.kill(stopped, signal.SIGSTOP)
                started = time.monotonic()
                wait_for(
                    lambda: _child_health(url, "ops")["state"] == "degraded",
                    timeout=HANG_GUARD,
                    what="the stopped child to show degraded",
                )
                took = time.monotonic() - started
                health = _child_health(url, "ops")
                assert health["last_error"] == "child_timeout", health
                assert ops.reason is not None and "ping" in ops.reason
                assert _child_health(url, "web")["state"] == "up"  # the other child is not affected
                # Nothing but the watcher touched it: no caller's call was ever made.
                assert ops.relists == 0 and ops.timeouts >= config.degrade_after
                print(f"degraded {took:.1f} s after SIGSTOP (ping every {PING_INTERVAL:g} s, timeout 2 s)")

                os.kill(stopped, signal.SIGCONT)
                wait_for(
                    lambda: _child_health(url, "ops")["state"] == "up",
                    timeout=HANG_GUARD,
                    what="the child to recover once it answers a ping",
                )
                assert _child_health(url, "ops")["last_error"] is None
    finally:
        if stopped is not None:
            try:
                os.kill(stopped, signal.SIGCONT)
                os.kill(stopped, signal.SIGKILL)
            except ProcessLookupError:
                pass  # ended with the gateway, as it should


def test_one_call_timeout_sets_last_error_before_the_child_is_degraded() -> None:
    with serve_asgi(gated_http_app(operator_server("web"), stateless_http=True)) as web_url:
        config = GatewayConfig(children=(ChildSpec("web", url=web_url),), call_timeout=1, degrade_after=3)
        gateway = Gateway(config)
        with serve_asgi(gateway.http_app()) as url:
            _, message = rpc(url, "tools/call", {"name": "web_nap", "arguments": {"seconds": 4}})
            assert message["error"]["data"]["category"] == "child_timeout", message
            health = _child_health(url, "web")
            assert health["state"] == "up" and health["last_error"] == "child_timeout"


def test_health_detail_is_computed_once_per_generation_not_per_request(monkeypatch: Any) -> None:
    from agent_connector_sdk.gateway import _evidence

    computed: list[str] = []
    original = _evidence.collect_evidence

    async def counting(child: Any, *, probe: bool = True) -> Any:
        computed.append(child.name)
        return await original(child, probe=probe)

    monkeypatch.setattr(_evidence, "collect_evidence", counting)
    lab = Misbehaving()
    with serve_asgi(lab.server().streamable_http_app(stateless_http=True)) as child_url:
        config = GatewayConfig(children=(ChildSpec("lab", url=child_url),), refresh=0.3, relist_interval=0.3)
        gateway = Gateway(config, health_detail=True)
        with serve_asgi(gateway.http_app()) as url:
            detail = url.removesuffix("/mcp") + "/healthz?detail=1"
            bodies = [httpx2.get(detail, timeout=10).json() for _ in range(5)]
            assert computed == ["lab"]  # five requests, one computation
            assert all(body == bodies[0] for body in bodies)
            assert bodies[0]["status"] == "ok" and bodies[0]["children"][0]["generation"] == 0
            assert {t["tool"] for t in bodies[0]["children"][0]["admitted"]} >= {"lab_morph", "lab_ok"}

            lab.version = 2  # morph's schema changes: the next re-list moves the generation
            wait_for(lambda: gateway.children["lab"].catalog.generation == 1, what="the generation to move")  # type: ignore[union-attr]
            moved = [httpx2.get(detail, timeout=10).json() for _ in range(3)]
            assert computed == ["lab", "lab"]
            assert all(body["children"][0]["generation"] == 1 for body in moved)


def test_a_quiet_http_child_answers_the_watchers_ping() -> None:
    """Over Streamable HTTP at 2026-07-28 the ping is answered too: the child is heard from without any
    call (were pings unanswered, it would be degraded instead)."""
    with serve_asgi(gated_http_app(operator_server("web"), stateless_http=True)) as web_url:
        gateway = Gateway(GatewayConfig(children=(ChildSpec("web", url=web_url),), call_timeout=5))
        gateway.ping_interval = 0.2
        with serve_asgi(gateway.http_app()):
            web = gateway.children["web"]
            connected = web.last_answer
            wait_for(lambda: web.last_answer > connected + 0.5, timeout=HANG_GUARD, what="a ping answered")
            assert web.health().state == "up" and web.last_error is None and web.relists == 0
