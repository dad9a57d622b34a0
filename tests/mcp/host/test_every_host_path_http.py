"""Every host path runs the one host core: the same Admit verdict, over real Streamable HTTP.

The contract lab's ``fetch_report`` mirrors its ``api_token`` into ``Mcp-Param-Api-Token``; the host's
admission rejects it as ``sensitive_header``. Through ``ContractClient`` (tools/list) and through the
disclosure consumer (search + disclosure reads) alike, it must never be called, and no request may
carry that header. A recorder captures every raw HTTP request the server received.
"""

from __future__ import annotations

# Write confirmation (on by default) is opted out in this module: these tests exercise other gates;
# tests/mcp/host/test_write_confirmation.py covers confirmation itself.
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import fastmcp
import pytest

from agent_connector_sdk.audit import BoundedAuditSink
from agent_connector_sdk.core.contracts.errors import AdmissionError
from agent_connector_sdk.demo.contract_lab import contract_lab_app
from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.mcp.host import HostOptions, Profile
from agent_connector_sdk.mcp.host.contract_client import ContractClient
from agent_connector_sdk.mcp.host.disclosure_consumer import (
    CallerScope,
    DisclosedTool,
    SchemaDisclosureConsumer,
    StaleSelection,
)
from agent_connector_sdk.mcp.server import gated_http_app
from tests.support.audit import recorded
from tests.support.host_servers import lab_behind_search
from tests.support.http_server import serve_asgi

Log = list[tuple[str, list[tuple[str, str]], bytes]]


def _recording(app: Any, log: Log) -> Any:
    """ASGI wrapper recording each HTTP request's method header, raw headers and body."""

    async def recorder(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = [(bytes(k).decode("latin-1"), bytes(v).decode("latin-1")) for k, v in scope["headers"]]
        chunks: list[bytes] = []

        async def replay() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    log.append((dict(headers).get("mcp-method", ""), headers, b"".join(chunks)))
            return message

        await app(scope, replay, send)

    return recorder


def _tool_calls(log: Log) -> list[tuple[str, list[tuple[str, str]]]]:
    calls = []
    for method, headers, body in log:
        if method == "tools/call":
            calls.append((json.loads(body)["params"]["name"], headers))
    return calls


def _sent_header(log: Log, name: str) -> bool:
    return any(header == name for _, headers, _ in log for header, _ in headers)


@pytest.fixture
def plain_lab() -> Iterator[tuple[str, Log]]:
    log: Log = []
    with serve_asgi(_recording(contract_lab_app(stateless_http=True), log)) as url:
        yield url, log


@asynccontextmanager
async def _searchable_lab() -> AsyncIterator[tuple[str, Log]]:
    log: Log = []
    app = gated_http_app(await lab_behind_search(), stateless_http=True)
    with serve_asgi(_recording(app, log)) as url:
        yield url, log


async def test_contract_client_never_calls_a_tool_admission_rejected(plain_lab: tuple[str, Log]) -> None:
    url, log = plain_lab
    async with ContractClient(fastmcp.Client(url), options=HostOptions(require_confirmation=False)) as host:
        await host.discover_tools()
        assert {r["tool"]: r["category"] for r in host.rejections}["fetch_report"] == "sensitive_header"
        with pytest.raises(AdmissionError) as refused:
            await host.call("fetch_report", {"report_id": "r1", "api_token": "s3cr3t"})
        routed = await host.call("route_shipment", {"region": "eu-west"})
    assert refused.value.category == "not_admitted" and refused.value.gate == "admit"
    assert routed.structured_content["region"] == "eu-west"
    assert [name for name, _ in _tool_calls(log)] == ["route_shipment"]
    assert not _sent_header(log, "mcp-param-api-token")


async def test_consumer_refuses_a_disclosed_tool_admission_rejects_before_any_call() -> None:
    async with _searchable_lab() as (url, log):
        client: fastmcp.Client[Any] = fastmcp.Client(url)
        consumer = SchemaDisclosureConsumer(
            client, scope=CallerScope("alice", url), options=HostOptions(require_confirmation=False)
        )
        async with client:
            selection = await consumer.select("fetch_report", "fetch_report")
            with pytest.raises(AdmissionError) as refused:
                await consumer.disclose(selection)
            # The reads happened (verification is not admission); a hand-built DisclosedTool for the
            # verified manifest is still not callable: the host core never admitted it.
            manifest_read = [body for method, _, body in log if method == "resources/read"]
            assert manifest_read
            admitted = await consumer.disclose(await consumer.select("route_shipment", "route_shipment"))
            forged = DisclosedTool(
                selection=selection,
                manifest=admitted.manifest.model_copy(update={"alias": "fetch_report"}),
                input_schema={"type": "object"},
                output_schema=None,
                bytes_read=0,
            )
            with pytest.raises(StaleSelection) as forged_refused:
                await consumer.call(forged, {"report_id": "r1", "api_token": "s3cr3t"})
            assert forged_refused.value.category == "not_disclosed"
            result = await consumer.call(admitted, {"region": "Zürich west", "priority": 2})
    assert refused.value.category == "sensitive_header"
    assert refused.value.gate == "admit" and refused.value.where == "admit"
    assert isinstance(refused.value, AgentConnectorError)
    assert result.structured_content["region"] == "Zürich west"
    assert [name for name, _ in _tool_calls(log) if name != "search_tools"] == ["route_shipment"]
    assert not _sent_header(log, "mcp-param-api-token")
    ((_, route_headers),) = [call for call in _tool_calls(log) if call[0] == "route_shipment"]
    assert ("mcp-param-region", "=?base64?WsO8cmljaCB3ZXN0?=") in [
        (name, value) for name, value in route_headers if name.startswith("mcp-param-")
    ]
    events = recorded(consumer.audit).events()
    assert {"event": "admit", "tool": "fetch_report", "outcome": "sensitive_header"} in events
    assert "Zürich" not in json.dumps(events, ensure_ascii=False)


async def test_consumer_uses_the_hosts_admission_policy() -> None:
    # nested_route's header sits under a nested object: strict admission rejects, spec accepts —
    # the same verdicts ContractClient reaches for the same policy.
    async with _searchable_lab() as (url, _):
        cases: tuple[tuple[Profile, bool], ...] = (("strict", False), ("default", True))
        for profile, admitted in cases:
            client: fastmcp.Client[Any] = fastmcp.Client(url)
            consumer = SchemaDisclosureConsumer(
                client,
                scope=CallerScope("alice", url),
                options=HostOptions(profile=profile, require_confirmation=False),
            )
            async with client:
                selection = await consumer.select("nested_route", "nested_route")
                if admitted:
                    tool = await consumer.disclose(selection)
                    assert (await consumer.call(tool, {"target": {"zone": "z1"}})).structured_content
                else:
                    with pytest.raises(AdmissionError) as refused:
                        await consumer.disclose(selection)
                    assert refused.value.category == "invalid_header_annotation"


async def test_audit_is_bounded_on_every_path(plain_lab: tuple[str, Log]) -> None:
    url, _ = plain_lab
    sink = BoundedAuditSink(maxlen=5)
    async with ContractClient(
        fastmcp.Client(url), options=HostOptions(audit=sink, require_confirmation=False)
    ) as host:
        await host.discover_tools()
        for index in range(10):
            await host.call("route_shipment", {"region": f"r{index}"})
    # Each call records its header event and its outcome: 1 connect + 1 discover + 20 > 5.
    assert len(sink) == 5 and sink.dropped == 22 - 5
    assert sink[-1] == {"event": "call", "tool": "route_shipment", "outcome": "ok"}
    assert host.audit is sink
