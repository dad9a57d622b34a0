"""Error results of our gated server, over real HTTP with the real clients, at both protocol revisions.

* An ``isError`` result never carries ``structuredContent`` that violates the tool's output schema as
  advertised on that connection: the ``mcp`` 2.3 ``ClientSession`` negotiates 2025-11-25, where FastMCP
  wraps raw structured values in ``{"result": ...}``; the fastmcp client speaks 2026-07-28.
* A header-annotated argument whose body value is not of its annotated type (``region: 5`` for a string,
  which the fastmcp client sends with ``Mcp-Param-Region: 5``) is invalid arguments naming the argument,
  on both entry points (resolution for 2026-07-28, ASGI for handshake-era requests); a true header/body
  disagreement stays -32020.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Annotated, Any

import fastmcp
import httpx2
import pytest
from fastmcp import FastMCP
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel, Field

from agent_connector_sdk.core.contracts import validate_instance
from agent_connector_sdk.mcp.server import gated_http_app
from tests.support.http_server import serve_asgi
from tests.support.parity import raw_call


class Forecast(BaseModel):
    region: str
    days: int


def _server() -> FastMCP[Any]:
    server: FastMCP[Any] = FastMCP("error-results")

    @server.tool
    def route(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
        return region

    @server.tool
    def forecast(region: str, days: int) -> Forecast:
        return Forecast(region=region, days=days)

    @server.tool
    def numbers(count: int) -> list[int]:
        return list(range(count))

    return server


# (tool, invalid arguments): a wrapped `-> str`, an object model, a wrapped `-> list[int]`.
INVALID_CALLS = [("route", {}), ("forecast", {"region": "x"}), ("numbers", {"count": "many"})]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serve_asgi(gated_http_app(_server(), stateless_http=True)) as served:
        yield served


async def test_error_results_conform_for_a_2025_11_25_client(url: str) -> None:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        initialized = await session.initialize()
        assert initialized.protocol_version == "2025-11-25"
        schemas = {tool.name: tool.output_schema for tool in (await session.list_tools()).tools}
        for name, arguments in INVALID_CALLS:
            result = await session.call_tool(name, arguments)
            assert result.is_error, name
            assert result.content[0].type == "text" and "invalid arguments" in result.content[0].text
            if result.structured_content is not None:
                schema = schemas[name]
                assert schema is not None
                assert validate_instance(schema, result.structured_content) is None, (
                    name,
                    result.structured_content,
                )


async def test_error_results_conform_for_a_2026_07_28_client(url: str) -> None:
    async with fastmcp.Client(url) as client:
        schemas = {tool.name: tool.outputSchema for tool in await client.list_tools()}
        for name, arguments in INVALID_CALLS:
            result = await client.call_tool_mcp(name, arguments)
            assert result.is_error, name
            if result.structured_content is not None:
                schema = schemas[name]
                assert schema is not None
                assert validate_instance(schema, result.structured_content) is None, name


async def test_a_mistyped_header_argument_is_invalid_arguments_for_the_fastmcp_client(url: str) -> None:
    async with fastmcp.Client(url) as client:
        result = await client.call_tool_mcp("route", {"region": 5})
    assert result.is_error
    text = result.content[0].text
    assert "invalid arguments for tool 'route'" in text and "'/region'" in text and "'type'" in text


def test_a_mistyped_header_argument_is_invalid_arguments_over_raw_http(url: str) -> None:
    with httpx2.Client(timeout=30) as client:
        mistyped = raw_call(client, url, "route", {"region": 5}, [("Mcp-Param-Region", "5")])
        mismatched = raw_call(client, url, "route", {"region": "5"}, [("Mcp-Param-Region", "6")])
    assert mistyped.status_code == 200, mistyped.text
    assert "invalid arguments" in mistyped.text and "/region" in mistyped.text
    assert mismatched.status_code == 400
    assert mismatched.json()["error"]["code"] == -32020


def test_a_mistyped_header_argument_on_a_handshake_era_request_is_invalid_arguments(url: str) -> None:
    """The ASGI entry checks these requests; it leaves the mistyped argument to resolution."""
    body: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "route", "arguments": {}},
    }
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    with httpx2.Client(timeout=30) as client:
        body["params"]["arguments"] = {"region": 5}
        mistyped = client.post(url, content=json.dumps(body), headers={**headers, "Mcp-Param-Region": "5"})
        body["params"]["arguments"] = {"region": "5"}
        mismatched = client.post(url, content=json.dumps(body), headers={**headers, "Mcp-Param-Region": "6"})
    assert mistyped.status_code == 200 and "invalid arguments" in mistyped.text, mistyped.text
    assert mismatched.status_code == 400 and mismatched.json()["error"]["code"] == -32020
