"""The host core's Invoke step and header channel, which every host path uses.

Argument screening runs in memory through ``ContractClient`` (what a caller sees); delivery of
``Mcp-Param-*`` headers is HTTP behaviour and runs over real HTTP.
"""

from __future__ import annotations

# Write confirmation (on by default) is opted out in this module: these tests exercise other gates;
# tests/mcp/host/test_write_confirmation.py covers confirmation itself.
import math
from typing import Any

import fastmcp
import pytest
from fastmcp import FastMCP
from fastmcp.server.middleware import Middleware

from agent_connector_sdk.core.contracts.errors import ArgumentError, HeaderValueError
from agent_connector_sdk.demo.contract_lab import contract_lab_app, contract_lab_server
from agent_connector_sdk.mcp.host import HostOptions, ParamHeaderChannel, prepare_invocation
from agent_connector_sdk.mcp.host.contract_client import ContractClient
from tests.support.audit import recorded
from tests.support.disclosure_servers import static_tool
from tests.support.http_server import serve_asgi

ROUTE_SHIPMENT: dict[str, Any] = {
    "name": "route_shipment",
    "inputSchema": {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        "additionalProperties": True,
    },
}


class CallCounter(Middleware):
    """Counts the tools/call requests that reached the server."""

    def __init__(self) -> None:
        self.calls = 0

    async def on_call_tool(self, context: Any, call_next: Any) -> Any:
        self.calls += 1
        return await call_next(context)


def _cyclic() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    return loop


@pytest.mark.parametrize(
    ("arguments", "path"),
    [
        ({"region": "eu-west", "extra": math.nan}, "/extra"),  # the SDK would send NaN as null
        ({"region": "eu-west", "extra": math.inf}, "/extra"),
        ({"region": "eu-west", "extra": {"secret-set"}}, "/extra"),
        ({"region": "eu-west", "extra": ("t", "u")}, "/extra"),  # would silently become an array
        ({"region": "eu-west", "extra": b"secret-bytes"}, "/extra"),
        ({"region": "eu-west", "extra": {"nested": [1, object()]}}, "/extra/nested/1"),
        ({"region": "eu-west", "extra": {1: "secret-int-key"}}, "/extra"),
        ({"region": "eu-west", "extra": _cyclic()}, None),
    ],
)
async def test_arguments_that_are_not_json_data_are_refused_before_sending(
    arguments: dict[str, Any], path: str | None
) -> None:
    server: FastMCP[Any] = FastMCP("open-arguments")
    server.add_tool(static_tool("route_shipment", ROUTE_SHIPMENT["inputSchema"], output_schema=None))
    counter = CallCounter()
    server.add_middleware(counter)
    async with ContractClient(
        fastmcp.Client(server), options=HostOptions(require_confirmation=False)
    ) as client:
        await client.discover_tools()
        assert (await client.call("route_shipment", {"region": "eu-west", "extra": [1.5, None]})).raw
        with pytest.raises(ArgumentError) as refused:
            await client.call("route_shipment", arguments)
    assert refused.value.category == "invalid_arguments"
    if path is not None:
        assert refused.value.path == path
    assert "secret" not in str(refused.value)
    assert counter.calls == 1  # only the valid call above reached the server
    last = recorded(client.audit)[-1]
    assert last == {"event": "call", "tool": "route_shipment", "outcome": "invalid_arguments"}


@pytest.mark.parametrize("arguments", [[("region", "eu-west")], "region", 42])
async def test_arguments_that_are_not_an_object_are_a_typed_refusal(arguments: Any) -> None:
    # Before: dict(arguments) turned a list of pairs into an object, and crashed on a string.
    async with ContractClient(
        fastmcp.Client(contract_lab_server()), options=HostOptions(require_confirmation=False)
    ) as client:
        await client.discover_tools()
        with pytest.raises(ArgumentError) as refused:
            await client.call("route_shipment", arguments)
    assert refused.value.category == "invalid_arguments"


def test_prepare_returns_a_copy_of_the_arguments_the_headers_and_the_event() -> None:
    arguments = {"region": "eu west", "extra": [1, 2.5, None, True, {"k": "v"}]}
    args, headers, event = prepare_invocation(ROUTE_SHIPMENT, arguments)
    assert args == arguments and args is not arguments
    assert headers == {"Mcp-Param-Region": "=?base64?ZXUgd2VzdA==?="}
    assert event["headers"] == ["Mcp-Param-Region"] and event["base64_encoded"] == ["Mcp-Param-Region"]
    channel = ParamHeaderChannel(fastmcp.Client(FastMCP("in-memory")))
    assert not channel.carries_headers  # in-memory: nothing to stamp, never refused


async def test_a_channel_created_after_connecting_refuses_headers_it_cannot_deliver() -> None:
    with serve_asgi(contract_lab_app(stateless_http=True)) as url:
        early_client: fastmcp.Client[Any] = fastmcp.Client(url)
        early = ParamHeaderChannel(early_client)
        async with early_client:
            early.require_deliverable({"Mcp-Param-Region": "eu-west"})  # our factory built its HTTP client
        late_client: fastmcp.Client[Any] = fastmcp.Client(url)
        async with late_client:
            late = ParamHeaderChannel(late_client)
            assert late.carries_headers
            late.require_deliverable({})  # nothing to deliver: nothing to refuse
            with pytest.raises(HeaderValueError) as refused:
                late.require_deliverable({"Mcp-Param-Region": "secret-region"})
            with pytest.raises(HeaderValueError), late.sending("route_shipment", {"Mcp-Param-Region": "x"}):
                pass
    assert refused.value.category == "undeliverable"
    assert "secret-region" not in str(refused.value)
