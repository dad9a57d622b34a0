"""Shutdown ends the gateway and every child within seconds, whatever the children are doing: a stdio
child that is stopped (SIGSTOP) with a call in flight, an HTTP child that disappears meanwhile.

In-process: the gateway's app under real uvicorn, shut down the way SIGTERM and Ctrl-C do it
(uvicorn's signal handler sets ``should_exit``; the CLI passes ``shutdown_grace`` as uvicorn's
graceful-shutdown timeout). A CLI subprocess would spend most of the test's budget starting up."""

from __future__ import annotations

import concurrent.futures
import os
import signal
import sys
import time
from pathlib import Path

from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig
from agent_connector_sdk.mcp.server import gated_http_app
from tests.support.http_server import serve_asgi
from tests.support.operator_children import operator_server
from tests.support.processes import children_running
from tests.support.raw_http import raw_post

STDIO_OPS = (sys.executable, "-m", "tests.support.operator_children", "stdio")


def _alive(pid: int) -> bool:
    """Running or stopped (a zombie waiting to be reaped has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_shutdown_ends_a_stopped_child_with_a_call_in_flight_while_another_disappears() -> None:
    before = children_running(b"tests.support.operator_children")
    pool = concurrent.futures.ThreadPoolExecutor(1)
    stdio_child: int | None = None
    try:
        with serve_asgi(gated_http_app(operator_server("web"), stateless_http=True)) as web_url:
            config = GatewayConfig(
                children=(ChildSpec("ops", command=STDIO_OPS), ChildSpec("web", url=web_url)),
                call_timeout=300,
                connect_timeout=60,  # a hang guard: a stdio child's start-up is seconds on a busy machine
                shutdown_grace=1,
            )
            gateway = Gateway(config)
            with serve_asgi(gateway.http_app(), timeout_graceful_shutdown=config.shutdown_grace) as url:
                (stdio_child,) = children_running(b"tests.support.operator_children") - before
                call = {"name": "ops_nap", "arguments": {"seconds": 120}}
                in_flight = pool.submit(raw_post, url, "tools/call", call)
                time.sleep(0.3)
                os.kill(stdio_child, signal.SIGSTOP)
                assert gateway.children["web"].state == "up"
                started = time.monotonic()
            # Leaving the block is SIGTERM's should_exit, and the server thread has been joined.
            elapsed = time.monotonic() - started
        # The HTTP child is gone too (stopped right after the gateway).
        # Quiet: 1 s for the call in flight, at most ~4 s to end the stopped child. A hang guard (6x) far
        # below the nap (120 s) that would end it otherwise.
        assert elapsed < 35, elapsed
        assert all(child.state == "closed" and child.session is None for child in gateway.children.values())
        deadline = time.monotonic() + 20
        while _alive(stdio_child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(stdio_child), "the stopped stdio child outlived the gateway"
        # The call in flight ended with the gateway (an answer or a closed connection), never hung.
        concurrent.futures.wait([in_flight], timeout=30)
        assert in_flight.done()
    finally:
        if stdio_child is not None and _alive(stdio_child):
            os.kill(stdio_child, signal.SIGKILL)
        pool.shutdown(wait=False)


async def test_stop_ends_a_supervisor_reconnecting_to_a_child_that_disappeared() -> None:
    with serve_asgi(gated_http_app(operator_server("web"), stateless_http=True)) as web_url:
        gateway = Gateway(GatewayConfig(children=(ChildSpec("web", url=web_url),), max_backoff=0.5))
        await gateway.start()
    # The child is gone; the supervisor notices at its next call or re-list and keeps reconnecting.
    child = gateway.children["web"]
    child.mark_down("transport_failure", child.session)
    started = time.monotonic()
    await gateway.stop()
    assert time.monotonic() - started < 20  # a hang guard: the reconnect loop would never end
    assert child.state == "closed"
