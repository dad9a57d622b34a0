"""Faults between selection and call: the server goes away, then comes back (a restart or a deploy).

The consumer must surface the outage as typed refusals (never a stale success); once the server answers
again and the caller reconnects its own client, the old selection stays refused (``catalog_changed``)
and re-discovery recovers: the restarted server serves the same manifest and the call goes through
every gate.
"""

from __future__ import annotations

import contextlib
import socket
from typing import Any

import anyio
import httpx2
import pytest
from fastmcp import Client

from agent_connector_sdk.core.host import TransportFailure
from agent_connector_sdk.demo.lab_service import lab_service_app
from agent_connector_sdk.mcp.host import HostOptions
from agent_connector_sdk.mcp.host.disclosure_consumer import (
    CallerScope,
    DisclosureConsumerError,
    SchemaDisclosureConsumer,
)
from tests.support.http_server import serve_asgi


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _lab() -> Any:
    return lab_service_app(demo_tokens=False)


async def test_a_server_restarted_between_selection_and_call() -> None:
    port = _free_port()
    arguments = {"query": "audit"}
    first = serve_asgi(await anyio.to_thread.run_sync(_lab), port=port)
    url = first.__enter__()
    client: Client[Any] = Client(url)
    consumer = SchemaDisclosureConsumer(
        client, scope=CallerScope("alice", url), options=HostOptions(confirm_write=lambda summary: True)
    )
    # Closing a fastmcp.Client re-raises its transport's background connection failure from the
    # outage; that is the client's own behaviour, not what is under test.
    with contextlib.suppress(httpx2.ConnectError):
        async with client:
            tool = await consumer.disclose(await consumer.select("search_evidence", "search_evidence"))
            before = await consumer.call(tool, arguments)
            first.__exit__(None, None, None)  # the server goes away after selection
            with pytest.raises(TransportFailure) as down:
                await consumer.call(tool, arguments)
            with pytest.raises(TransportFailure) as unreachable:
                await consumer.select("search_evidence", "search_evidence")
    with serve_asgi(await anyio.to_thread.run_sync(_lab), port=port):
        # The lost connection ended the caller's session; the caller reconnects its own client (the
        # consumer creates none). The old selection stays refused (the outage moved the consumer's
        # catalog generation: no stale success); re-discovery recovers end to end.
        async with client:
            with pytest.raises(DisclosureConsumerError) as old:
                await consumer.call(tool, arguments)
            fresh = await consumer.disclose(await consumer.select("search_evidence", "search_evidence"))
            after = await consumer.call(fresh, arguments)
    assert down.value.category == "transport_failure"  # the manifest re-read failed: raised as itself
    assert unreachable.value.category == "transport_failure"  # the search call's own failure family
    assert old.value.category == "catalog_changed"
    assert "audit" not in str(down.value) + str(old.value)
    assert fresh.manifest == tool.manifest  # the restarted server serves the same bound identity
    assert before.is_error is False and after.is_error is False
    assert after.structured_content == before.structured_content
