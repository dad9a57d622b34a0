"""The output self-check on interim ``InputRequiredResult``s (SEP-2322): a tool may ask for input only in
a shape the protocol allows and only for capabilities the caller declared; anything else is withheld as
a JSON-RPC -32603 error naming the category, never sent."""

from __future__ import annotations

from typing import Any

import fastmcp
import mcp_types
import pytest
from fastmcp import FastMCP
from mcp.shared.exceptions import MCPError

from agent_connector_sdk.mcp.server import ServerGates

ELICIT = mcp_types.ElicitRequest(
    params=mcp_types.ElicitRequestFormParams(
        message="Name?", requested_schema={"type": "object", "properties": {"name": {"type": "string"}}}
    )
)


def _server() -> FastMCP:
    server = FastMCP("interim results")

    @server.tool(output_schema=None)
    def ask_by_elicitation(ctx: fastmcp.Context) -> Any:
        if ctx.input_responses:
            return "thanks"
        return mcp_types.InputRequiredResult(input_requests={"name": ELICIT})

    @server.tool(output_schema=None)
    def state_only(ctx: fastmcp.Context) -> Any:
        return "done" if ctx.request_state else mcp_types.InputRequiredResult(request_state="step-1")

    ServerGates().install(server)
    return server


async def _accept(message: str, response_type: Any, params: Any, context: Any) -> dict[str, Any]:
    return {"name": "Ada"}


async def test_an_undeclared_capability_is_never_asked_for() -> None:
    # No elicitation handler: the client declares no elicitation capability.
    async with fastmcp.Client(_server()) as client:
        with pytest.raises(MCPError) as withheld:
            await client.call_tool_mcp("ask_by_elicitation", {})
    assert withheld.value.error.code == mcp_types.INTERNAL_ERROR
    assert withheld.value.error.data == {
        "tool": "ask_by_elicitation",
        "category": "undeclared_client_capability",
        "path": "/inputRequests/name",
    }


async def test_a_declared_capability_is_asked_and_the_call_completes() -> None:
    async with fastmcp.Client(_server(), elicitation_handler=_accept) as client:
        result = await client.call_tool_mcp("ask_by_elicitation", {})
    assert result.content[0].text == "thanks"


async def test_state_only_rounds_pass_the_gate() -> None:
    async with fastmcp.Client(_server()) as client:
        result = await client.call_tool_mcp("state_only", {})
    assert result.content[0].text == "done"
