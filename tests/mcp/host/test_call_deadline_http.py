"""A single ``tools/call`` is bounded in time too (``HostBounds.deadline_s``), over real HTTP.

A server that accepts a call and never answers would otherwise hold the host for as long as the
transport's read timeout allows; the deadline refuses it as ``BoundExceeded`` (naming ``deadline_s``),
audited as ``bound_exceeded``, and the session stays usable for the next call.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import fastmcp
import pytest
from fastmcp import FastMCP

from agent_connector_sdk.audit import BoundedAuditSink
from agent_connector_sdk.core.host.bounds import BoundExceeded
from agent_connector_sdk.mcp.host import HostBounds, HostOptions
from agent_connector_sdk.mcp.host.contract_client import ContractClient
from tests.support.http_server import serve_asgi


def _server() -> FastMCP[Any]:
    server: FastMCP[Any] = FastMCP("slow")

    @server.tool(annotations={"readOnlyHint": True})
    async def stall(seconds: float) -> str:
        await anyio.sleep(seconds)
        return "done"

    return server


async def test_a_call_past_the_deadline_is_refused_and_the_session_goes_on() -> None:
    audit = BoundedAuditSink()
    options = HostOptions(bounds=HostBounds(deadline_s=1.0), audit=audit)
    with serve_asgi(_server().http_app(stateless_http=True)) as url:
        async with ContractClient(fastmcp.Client(url), options) as host:
            await host.discover_tools()
            started = time.monotonic()
            with pytest.raises(BoundExceeded) as late:
                await host.call("stall", {"seconds": 300})
            assert time.monotonic() - started < 30  # a hang guard: the deadline is 1 s, the stall 300 s
            assert late.value.bound == "deadline_s" and "stall" in str(late.value)
            assert any(e.get("outcome") == "bound_exceeded" and e.get("tool") == "stall" for e in audit)
            quick = await host.call("stall", {"seconds": 0})
            assert quick.structured_content == {"result": "done"}
