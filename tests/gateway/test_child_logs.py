"""A child's log messages never reach the gateway's log: they are the child's words and may quote the
caller's argument values (``fastmcp.Client`` opts in to every child's debug logs and, by default,
writes their data into the ``fastmcp`` logger)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from fastmcp import Context, FastMCP

from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig
from agent_connector_sdk.mcp.server import gated_http_app
from tests.support.gateway import call
from tests.support.http_server import serve_asgi


def _chatty_child() -> FastMCP[Any]:
    server: FastMCP[Any] = FastMCP("chatty")

    @server.tool(annotations={"readOnlyHint": True})
    async def lookup(account: str, ctx: Context) -> dict[str, str]:
        """Look an account up (and log the value, as careless servers do)."""
        await ctx.info(f"looking up account {account}")
        await ctx.debug(f"debug detail for {account}")
        return {"status": "found"}

    return server


# The child logs through MCP's logging capability, deprecated at 2026-07-28 (SEP-2577): children still do.
@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
def test_a_childs_log_messages_never_reach_the_gateway_log(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with serve_asgi(gated_http_app(_chatty_child(), stateless_http=True)) as child_url:
        gateway = Gateway(GatewayConfig(children=(ChildSpec("chatty", url=child_url),)))
        with serve_asgi(gateway.http_app()) as url:
            result = call(url, "chatty_lookup", {"account": "acct-7731-secret"})
    assert result.get("isError") is not True, result
    assert result["structuredContent"] == {"status": "found"}
    # At the levels an operator runs with, nothing the child said is in the log; the one note is the
    # gateway's own (child and level, never the message). Below INFO, the mcp SDK's wire tracing
    # (``mcp.client.streamable_http``, DEBUG) prints whole messages of every host path, this one too.
    operator_view = [record for record in caplog.records if record.levelno >= logging.INFO]
    assert not [record for record in operator_view if "acct-7731-secret" in record.getMessage()]
    assert not [record for record in caplog.records if record.name == "fastmcp.client.from_server"]
    notes = [r.getMessage() for r in caplog.records if r.name == "agent_connector_sdk.gateway.children"]
    assert "child chatty sent a log message at info" in notes
    assert "child chatty sent a log message at debug" in notes
