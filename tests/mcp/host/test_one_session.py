"""One HostSession per connection: both faces over one core, one audit trail, the search through it."""

from __future__ import annotations

import fastmcp
import pytest

from agent_connector_sdk.audit import BoundedAuditSink
from agent_connector_sdk.core.contracts.errors import AdmissionError, ContractViolation
from agent_connector_sdk.mcp.host import (
    CallerScope,
    ContractClient,
    HostOptions,
    HostSession,
    SchemaDisclosureConsumer,
)
from tests.support.host_servers import lab_behind_search


async def test_both_faces_share_one_core_and_the_search_goes_through_it() -> None:
    server = await lab_behind_search()
    sink = BoundedAuditSink()
    client = fastmcp.Client(server)
    session = HostSession(client, HostOptions(audit=sink, require_confirmation=False))
    host = ContractClient(session)
    consumer = SchemaDisclosureConsumer(session, scope=CallerScope("alice", "lab"))
    assert host.session is session and consumer.session is session
    assert host.audit is sink and consumer.audit is sink
    async with host:
        report = await host.discover_tools()
        assert set(report.admitted) == {"search_tools", "call_tool"}
        tool = await consumer.disclose(await consumer.select("route_shipment", "route_shipment"))
        routed = await consumer.call(tool, {"region": "eu-west"})
    assert routed.structured_content["region"] == "eu-west"
    events = list(sink)
    # One discovery (the consumer reuses the session's admitted search tool: no second tools/list) ...
    assert [e["event"] for e in events].count("discover") == 1
    # ... and the search is a call the core admitted, invoked and consumed (audited like any call).
    searches = [e for e in events if e.get("event") == "call" and e.get("tool") == "search_tools"]
    assert searches and all(e["outcome"] == "ok" for e in searches)
    # The disclosed tool is held by the same core the listed ones are.
    assert session.core.disclosed_tool("route_shipment", tool.manifest.schema_sha256) is not None


async def test_a_session_carries_its_options_and_a_face_refuses_a_second_set() -> None:
    session = HostSession(fastmcp.Client(await lab_behind_search()), HostOptions(profile="strict"))
    with pytest.raises(ValueError, match="already has its options"):
        ContractClient(session, HostOptions())
    with pytest.raises(ValueError, match="already has its options"):
        SchemaDisclosureConsumer(session, scope=CallerScope("a", "b"), options=HostOptions())
    assert ContractClient(session).options.profile == "strict"


async def test_a_search_tool_the_host_does_not_admit_is_never_called() -> None:
    server = await lab_behind_search()
    client = fastmcp.Client(server)
    consumer = SchemaDisclosureConsumer(
        client, scope=CallerScope("alice", "lab"), search_tool="no_such_search"
    )
    async with client:
        with pytest.raises(AdmissionError) as refused:
            await consumer.discover("route")
    assert refused.value.category == "not_admitted"


async def test_a_strict_session_rejects_the_search_result_the_default_one_reports() -> None:
    # FastMCP's search result wraps the list under "result" with a text block of the bare list: not the
    # serialization of structuredContent (a project rule): kept by default, refused when strict.
    server = await lab_behind_search()
    client = fastmcp.Client(server)
    default = SchemaDisclosureConsumer(client, scope=CallerScope("alice", "lab"))
    strict = SchemaDisclosureConsumer(
        client, scope=CallerScope("alice", "lab"), options=HostOptions(profile="strict")
    )
    async with client:
        assert await default.discover("route_shipment")
        with pytest.raises(ContractViolation) as refused:
            await strict.discover("route_shipment")
    assert refused.value.category == "missing_text_serialization"
