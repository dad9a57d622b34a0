"""A tool that models its own failures (``ModelsItsFailures``, e.g. an OpenAPI tool's failure envelope)
supplies its ``isError`` result's ``structuredContent`` — but only a payload that conforms is sent; a
non-conforming one falls back to the payload factory, and where nothing conforms the call is a JSON-RPC
error (never a non-conforming result)."""

from __future__ import annotations

from typing import Any

import pytest
from fastmcp import Client, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools.function_tool import FunctionTool
from mcp.shared.exceptions import MCPError

from agent_connector_sdk.core.contracts import validate_tool_result
from agent_connector_sdk.mcp.server import ServerGates
from agent_connector_sdk.mcp.server._output_check import ModelsItsFailures

ENVELOPE = {
    "type": "object",
    "properties": {
        "error": {"type": "object", "properties": {"why": {"type": "string"}}, "required": ["why"]}
    },
    "required": ["error"],
    "additionalProperties": False,
}


def lookup(key: str) -> dict[str, Any]:
    raise ToolError(f"no such key: {len(key)} characters")


SEEN: list[tuple[str, str]] = []


def _server(payload: Any, output_schema: dict[str, Any]) -> FastMCP[Any]:
    class Modelled(FunctionTool):
        def failure_structured_content(self, failure: BaseException | None, category: str, text: str) -> Any:
            assert isinstance(failure, ToolError)
            SEEN.append((category, text))
            return payload

    tool = FunctionTool.from_function(lookup, output_schema=output_schema)
    tool.__class__ = Modelled
    assert isinstance(tool, ModelsItsFailures)
    server: FastMCP[Any] = FastMCP("modelled")
    server.add_tool(tool)
    ServerGates().install(server)
    return server


async def _call(server: FastMCP[Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    async with Client(server) as client:
        (listed,) = await client.list_tools()
        raw = await client.call_tool_mcp("lookup", {"key": "abc"})
    dump = {"by_alias": True, "mode": "json", "exclude_none": True}
    return listed.model_dump(**dump), raw.model_dump(**dump)


async def test_a_conforming_modelled_failure_is_sent() -> None:
    descriptor, result = await _call(
        _server({"error": {"why": "no such key"}}, {"anyOf": [ENVELOPE]} | {"type": "object"})
    )
    assert result["isError"] is True
    assert result["structuredContent"] == {"error": {"why": "no such key"}}
    assert result["content"][0]["text"] == "no such key: 3 characters"
    validate_tool_result(descriptor, result)


async def test_a_non_conforming_modelled_failure_falls_back_to_the_factory() -> None:
    # The tool offers a payload its own schema refuses: the placeholder ({} fits) is sent instead.
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    descriptor, result = await _call(_server({"n": "not an integer"}, schema))
    assert result["structuredContent"] == {}
    validate_tool_result(descriptor, result)


async def test_nothing_conforming_is_a_json_rpc_error() -> None:
    server = _server({"wrong": True}, ENVELOPE)
    async with Client(server) as client:
        with pytest.raises(MCPError, match="no error result conforms"):
            await client.call_tool_mcp("lookup", {"key": "abc"})
