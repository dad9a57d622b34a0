"""Our host sends the inner tool's ``Mcp-Param-*`` headers on a call through a search proxy too.

The lab (``agent-connector serve``'s app) over real HTTP on 127.0.0.1, behind a log of the requests it
receives (methods and header *names*): a ``call_tool`` call of a tool the host admitted, listed
(``route_shipment``) or disclosed (``search_evidence``), crosses the same Invoke gate as a direct call
and carries the inner tool's headers, so intermediaries can route it; a tool the host never admitted
goes through with no header, as the spec asks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import fastmcp
import pytest

from agent_connector_sdk.audit import BoundedAuditSink
from agent_connector_sdk.core.contracts.errors import ArgumentError, HeaderValueError
from agent_connector_sdk.demo.lab_service import ANALYST_TOKEN, lab_service_app
from agent_connector_sdk.mcp.host import (
    CallerScope,
    ContractClient,
    HostOptions,
    HostSession,
    SchemaDisclosureConsumer,
)
from scripts.interop_search import RequestLog, Seen
from tests.support.http_server import serve_asgi


@pytest.fixture(scope="module")
def lab() -> Iterator[tuple[str, RequestLog]]:
    log = RequestLog(lab_service_app())
    with serve_asgi(log) as url:
        yield url, log


def _host(url: str, audit: BoundedAuditSink) -> tuple[ContractClient, SchemaDisclosureConsumer]:
    options = HostOptions(confirm_write=lambda summary: True, audit=audit)
    session = HostSession(fastmcp.Client(url, auth=ANALYST_TOKEN), options)
    return ContractClient(session), SchemaDisclosureConsumer(session, scope=CallerScope("analyst", url))


def _calls(log: RequestLog, mark: int) -> list[Seen]:
    return [seen for seen in log.since(mark) if seen.method == "tools/call"]


async def test_a_proxied_call_of_an_admitted_tool_carries_its_headers(lab: tuple[str, RequestLog]) -> None:
    url, log = lab
    audit = BoundedAuditSink()
    host, consumer = _host(url, audit)
    async with host:
        await host.discover_tools()
        # Listed and admitted: the inner headers ride along with the proxied call.
        mark = log.mark()
        shipment = {"region": "Zürich west", "priority": 2}
        result = await host.call("call_tool", {"name": "route_shipment", "arguments": shipment})
        assert not result.is_error
        assert _calls(log, mark) == [
            Seen("tools/call", "call_tool", ("mcp-param-priority", "mcp-param-region"))
        ]
        built = [event for event in audit if event.get("event") == "parameter_headers_built"][-1]
        assert built["proxied_tool"] == "route_shipment"
        assert built["headers"] == ["Mcp-Param-Region", "Mcp-Param-Priority"]
        assert built["base64_encoded"] == ["Mcp-Param-Region"]  # non-ASCII: wrapped, as a direct call

        # Disclosed (hidden behind search) and admitted: the same.
        await consumer.disclose(await consumer.select("evidence", "search_evidence"))
        mark = log.mark()
        evidence = {"query": "audit", "region": "eu-central"}
        result = await host.call("call_tool", {"name": "search_evidence", "arguments": evidence})
        assert not result.is_error
        assert _calls(log, mark) == [Seen("tools/call", "call_tool", ("mcp-param-region",))]

        # Never admitted by this host: nothing to build the headers from, none sent (the spec's rule).
        mark = log.mark()
        await host.call("call_tool", {"name": "flaky_search", "arguments": {"query": "q"}})
        assert _calls(log, mark) == [Seen("tools/call", "call_tool", ())]


async def test_a_proxied_call_crosses_the_inner_tools_invoke_gate(lab: tuple[str, RequestLog]) -> None:
    url, log = lab
    host, _ = _host(url, BoundedAuditSink())
    async with host:
        await host.discover_tools()
        mark = log.mark()
        with pytest.raises(ArgumentError) as invalid:  # priority is an integer in the inner schema
            await host.call(
                "call_tool", {"name": "route_shipment", "arguments": {"region": "eu", "priority": "2"}}
            )
        assert invalid.value.category == "invalid_arguments" and invalid.value.path == "/priority"
        with pytest.raises(ArgumentError):  # the inner arguments must be an object, as a direct call's
            await host.call("call_tool", {"name": "route_shipment", "arguments": ["eu"]})
        assert _calls(log, mark) == []  # refused before sending


def test_an_unrepresentable_inner_header_value_is_refused_before_sending() -> None:
    from agent_connector_sdk.core.host import HostCore

    core = HostCore(HostOptions(confirm_write=lambda summary: True))
    count = {"type": "integer", "x-mcp-header": "Count"}
    listing: list[dict[str, Any]] = [
        {
            "name": "search_tools",
            "inputSchema": {"type": "object", "properties": {"pattern": {"type": "string"}}},
        },
        {
            "name": "call_tool",
            "inputSchema": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}},
                "required": ["name"],
            },
        },
        {"name": "tally", "inputSchema": {"type": "object", "properties": {"count": count}}},
    ]
    core.admit_listing(listing, pages=1)
    proxy = core.listed_tool("call_tool")
    with pytest.raises(HeaderValueError) as refused:
        core.invoke(proxy, {"name": "tally", "arguments": {"count": 2**60}})
    assert refused.value.category == "out_of_range"
    prepared = core.invoke(proxy, {"name": "tally", "arguments": {"count": 7}})
    assert prepared.headers == {"Mcp-Param-Count": "7"}
    assert prepared.arguments == {"name": "tally", "arguments": {"count": 7}}
