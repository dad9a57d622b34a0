"""A failing tool's isError result still conforms, also for FastMCP's wrapped ``-> str`` tools."""

from __future__ import annotations

from typing import Any

import pytest
from fastmcp import Client, FastMCP
from fastmcp.exceptions import ToolError

from agent_connector_sdk.core.contracts import validate_tool_result
from agent_connector_sdk.mcp.server import ServerGates, first_conforming_placeholder

WRAPPED_STRING = {
    "type": "object",
    "properties": {"result": {"type": "string"}},
    "required": ["result"],
    "x-fastmcp-wrap-result": True,
}


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "array"}, []),
        ({"type": "integer", "minimum": 0}, 0),
        (WRAPPED_STRING, {"result": ""}),
        (
            {
                "type": "object",
                "properties": {
                    "n": {"type": "integer"},
                    "ok": {"type": "boolean"},
                    "tags": {"type": "array"},
                },
                "required": ["n", "ok", "tags"],
            },
            {"n": 0, "ok": False, "tags": []},
        ),
    ],
)
def test_placeholder_conforms(schema: dict[str, Any], expected: Any) -> None:
    assert first_conforming_placeholder("t", schema) == expected


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "minLength": 3},
        {
            "type": "object",
            "properties": {"id": {"type": "string", "format": "uuid", "minLength": 36}},
            "required": ["id"],
        },
        {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "required": ["a"],
            "additionalProperties": False,
            "minProperties": 2,
        },
    ],
)
def test_no_conforming_placeholder_is_a_lookup_error(schema: dict[str, Any]) -> None:
    with pytest.raises(LookupError):
        first_conforming_placeholder("t", schema)


async def test_failing_string_tool_returns_a_conforming_error_result() -> None:
    server: FastMCP[Any] = FastMCP("placeholder")

    @server.tool
    def describe(region: str) -> str:
        raise ToolError("upstream unavailable")

    ServerGates().install(server)
    async with Client(server) as client:
        (listed,) = [t for t in await client.list_tools() if t.name == "describe"]
        raw = await client.call_tool_mcp("describe", {"region": "eu"})
    assert raw.is_error is True
    assert raw.structured_content == {"result": ""}
    descriptor = listed.model_dump(by_alias=True, mode="json", exclude_none=True)
    validate_tool_result(descriptor, raw.model_dump(by_alias=True, mode="json", exclude_none=True))
    texts = [block.text for block in raw.content if block.type == "text"]
    assert "upstream unavailable" in texts
