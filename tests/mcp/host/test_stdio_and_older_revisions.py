"""The host core against the servers people already run: older revisions and stdio.

* **2025-11-25** — the official ``mcp`` SDK's low-level server without ``server/discover`` (every
  server written before 2026-07-28) over real Streamable HTTP: the client falls back to the
  ``initialize`` handshake by itself, and the host reports the revision it used. Our own gated lab,
  reached by a client pinned to the handshake (``mode="legacy"``), negotiates 2025-11-25 too.
* **stdio** — the contract lab as a real subprocess (``tests/support/stdio_lab.py``): every gate still
  runs, and the header gates, which only exist on HTTP, are reported ``not_applicable``.
"""

from __future__ import annotations

# Write confirmation (on by default) is opted out in this module: these tests exercise other gates;
# tests/mcp/host/test_write_confirmation.py covers confirmation itself.
import sys
from pathlib import Path
from typing import Any

import fastmcp
import pytest
from fastmcp.client.transports import PythonStdioTransport

from agent_connector_sdk.audit import BoundedAuditSink
from agent_connector_sdk.core.contracts.errors import AdmissionError, ArgumentError, ContractViolation
from agent_connector_sdk.demo.contract_lab import contract_lab_app
from agent_connector_sdk.mcp.host import HostOptions
from agent_connector_sdk.mcp.host.contract_client import ContractClient
from agent_connector_sdk.mcp.host.disclosure_consumer import (
    CallerScope,
    SchemaDisclosureConsumer,
)
from agent_connector_sdk.mcp.server import gated_http_app
from tests.support.host_servers import handshake_era_server, lab_behind_search
from tests.support.http_server import serve_asgi

STDIO_LAB = Path(__file__).parents[2] / "support" / "stdio_lab.py"


def _stdio(*args: str) -> fastmcp.Client[Any]:
    return fastmcp.Client(PythonStdioTransport(STDIO_LAB, args=list(args), python_cmd=sys.executable))


def _header_events(sink: BoundedAuditSink) -> list[dict[str, Any]]:
    return [event for event in sink if event.get("event") == "parameter_headers_built"]


# ------------------------------------------------------------------------------- older revisions
async def test_a_server_without_server_discover_is_used_at_2025_11_25() -> None:
    with serve_asgi(handshake_era_server().streamable_http_app()) as url:
        sink = BoundedAuditSink()
        async with ContractClient(
            fastmcp.Client(url), options=HostOptions(audit=sink, require_confirmation=False)
        ) as host:
            assert host.protocol_version == "2025-11-25"
            assert host.report.discovery == "initialize"
            assert host.header_gates == "optional"  # no Mcp-Param-* obligation at this revision
            report = await host.discover_tools()
            assert list(report.admitted) == ["route"]
            assert {r["tool"]: r["category"] for r in report.rejected} == {"fetch_report": "sensitive_header"}
            result = await host.call("route", {"region": "eu west", "priority": 2})
            with pytest.raises(ArgumentError):
                await host.call("route", {"priority": 2})  # refused before sending, whatever the revision
            with pytest.raises(AdmissionError):
                await host.call("fetch_report", {"api_token": "s3cr3t"})
    assert result.structured_content == {"region": "eu west", "priority": 2}
    connect = next(event for event in sink if event["event"] == "connect")
    assert connect == {
        "event": "connect",
        "protocol_version": "2025-11-25",
        "transport": "streamable_http",
        "header_gates": "optional",
    }
    assert _header_events(sink)[-1]["header_gates"] == "optional"


async def test_the_gated_lab_reached_over_the_handshake_reports_2025_11_25() -> None:
    with serve_asgi(contract_lab_app(stateless_http=True)) as url:
        async with ContractClient(
            fastmcp.Client(url, mode="legacy"), options=HostOptions(require_confirmation=False)
        ) as legacy:
            await legacy.discover_tools()
            routed = await legacy.call("route_shipment", {"region": "Zürich west", "priority": 2})
            legacy_report = legacy.report
        async with ContractClient(
            fastmcp.Client(url), options=HostOptions(require_confirmation=False)
        ) as modern:
            modern_report = modern.report
    assert (legacy_report.protocol_version, legacy_report.header_gates) == ("2025-11-25", "optional")
    assert (modern_report.protocol_version, modern_report.header_gates) == ("2026-07-28", "required")
    assert modern_report.discovery == "server/discover"
    # The gated server checks Mcp-Param-* on older calls too; the host still sends them, correctly.
    assert routed.structured_content["region"] == "Zürich west"


# ------------------------------------------------------------------------------------------ stdio
async def test_contract_client_over_stdio_runs_every_gate_and_reports_headers_not_applicable() -> None:
    sink = BoundedAuditSink()
    strict = HostOptions(profile="strict", audit=sink, require_confirmation=False)  # the contract lab: strict
    async with ContractClient(_stdio(), options=strict) as host:
        assert host.report.transport == "stdio"
        assert host.header_gates == "not_applicable"
        report = await host.discover_tools()
        assert report.rejected and {r["tool"] for r in report.rejected} == {"fetch_report", "nested_route"}
        routed = await host.call("route_shipment", {"region": "eu west", "priority": 3})
        with pytest.raises(ArgumentError):
            await host.call("route_shipment", {"region": "eu west", "priority": "high"})
        with pytest.raises(AdmissionError):
            await host.call("fetch_report", {"report_id": "r", "api_token": "s3cr3t"})
        # This lab runs without the server's output check: the host's Consume gate catches the lie.
        with pytest.raises(ContractViolation) as lie:
            await host.call("inventory_snapshot", {})
    assert routed.structured_content["region"] == "eu west"
    assert lie.value.category == "output_schema_violation"
    (built,) = [event for event in _header_events(sink) if event["tool"] == "route_shipment"]
    assert built["header_gates"] == "not_applicable"
    assert built["headers"] == ["Mcp-Param-Region", "Mcp-Param-Priority"]  # computed, reported, not sent
    connect = next(event for event in sink if event["event"] == "connect")
    assert (connect["transport"], connect["header_gates"]) == ("stdio", "not_applicable")


async def test_consumer_over_stdio_admits_before_calling() -> None:
    client = _stdio("--search")
    consumer = SchemaDisclosureConsumer(
        client, scope=CallerScope("alice", "stdio:lab"), options=HostOptions(require_confirmation=False)
    )
    async with client:
        assert consumer.header_gates == "not_applicable"
        assert consumer.protocol_version == "2026-07-28"
        with pytest.raises(AdmissionError) as refused:
            await consumer.disclose(await consumer.select("fetch_report", "fetch_report"))
        tool = await consumer.disclose(await consumer.select("route_shipment", "route_shipment"))
        result = await consumer.call(tool, {"region": "eu west"})
    assert refused.value.category == "sensitive_header"
    assert result.structured_content["region"] == "eu west"


async def test_consumer_at_2025_11_25_admits_before_calling_and_reports_the_revision() -> None:
    with serve_asgi(gated_http_app(await lab_behind_search(), stateless_http=True)) as url:
        client: fastmcp.Client[Any] = fastmcp.Client(url, mode="legacy")
        consumer = SchemaDisclosureConsumer(
            client, scope=CallerScope("alice", url), options=HostOptions(require_confirmation=False)
        )
        async with client:
            assert (consumer.protocol_version, consumer.header_gates) == ("2025-11-25", "optional")
            with pytest.raises(AdmissionError) as refused:
                await consumer.disclose(await consumer.select("fetch_report", "fetch_report"))
            tool = await consumer.disclose(await consumer.select("route_shipment", "route_shipment"))
            result = await consumer.call(tool, {"region": "Zürich west", "express": True})
    assert refused.value.category == "sensitive_header"
    assert result.structured_content["region"] == "Zürich west"


async def test_stdio_at_2025_11_25_reports_both_facts() -> None:
    client = fastmcp.Client(PythonStdioTransport(STDIO_LAB, python_cmd=sys.executable), mode="legacy")
    async with ContractClient(client, options=HostOptions(require_confirmation=False)) as host:
        await host.discover_tools()
        routed = await host.call("route_shipment", {"region": "eu west"})
        report = host.report
    assert (report.protocol_version, report.transport, report.header_gates) == (
        "2025-11-25",
        "stdio",
        "not_applicable",
    )
    assert routed.structured_content["region"] == "eu west"
