"""The sans-I/O host core: the gate sequence is enforced by the values it hands out."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agent_connector_sdk.audit import BoundedAuditSink
from agent_connector_sdk.core.contracts import AdmissionPolicy
from agent_connector_sdk.core.contracts.errors import AdmissionError, ArgumentError, ContractViolation
from agent_connector_sdk.core.host._sequence import MAX_OUTSTANDING_CALLS
from agent_connector_sdk.mcp.host import (
    AdmittedTool,
    HostCore,
    HostOptions,
    PreparedCall,
    header_map,
    may_write,
)

ROUTE: dict[str, Any] = {
    "name": "route",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "target": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}},
        },
        "required": ["region"],
    },
    "outputSchema": {"type": "object", "required": ["ok"]},
}
TOKEN: dict[str, Any] = {
    "name": "fetch",
    "inputSchema": {"type": "object", "properties": {"api_token": {"type": "string", "x-mcp-header": "Tok"}}},
}
DIGEST = "0" * 64
SPEC = AdmissionPolicy(profile="spec")


def _ok_result() -> dict[str, Any]:
    return {"content": [{"type": "text", "text": '{"ok":true}'}], "structuredContent": {"ok": True}}


def test_listing_admits_invokes_and_consumes_in_sequence() -> None:
    core = HostCore(HostOptions(policy=SPEC))
    report = core.admit_listing([ROUTE, TOKEN], pages=1)
    assert list(report.admitted) == ["route"] and report.rejected[0]["category"] == "sensitive_header"
    tool = core.listed_tool("route")
    assert tool.header_map == {"region": "Mcp-Param-Region", "target.zone": "Mcp-Param-Zone"}
    call = core.invoke(tool, {"region": "eu west", "target": {"zone": "z"}})
    assert call.headers == {"Mcp-Param-Region": "=?base64?ZXUgd2VzdA==?=", "Mcp-Param-Zone": "z"}
    assert core.consume(call, _ok_result()).structured_content == {"ok": True}
    with pytest.raises(AdmissionError) as refused:
        core.listed_tool("fetch")
    assert refused.value.category == "not_admitted"


def test_a_tool_the_core_did_not_admit_cannot_be_invoked() -> None:
    core, other = HostCore(HostOptions(policy=SPEC)), HostCore(HostOptions(policy=SPEC))
    core.admit_listing([ROUTE], pages=1)
    other.admit_listing([ROUTE], pages=1)
    forged = AdmittedTool("route", TOKEN, {}, "listing")
    for tool in (forged, other.listed_tool("route"), dataclasses.replace(core.listed_tool("route"))):
        with pytest.raises(AdmissionError) as refused:
            core.invoke(tool, {"region": "x"})
        assert refused.value.category == "not_admitted"
    stale = core.listed_tool("route")
    core.admit_listing([], pages=1)  # a new discovery no longer lists it
    with pytest.raises(AdmissionError):
        core.invoke(stale, {"region": "x"})


def test_a_call_another_core_prepared_cannot_be_consumed() -> None:
    core, other = HostCore(HostOptions(policy=SPEC)), HostCore(HostOptions(policy=SPEC))
    other.admit_listing([ROUTE], pages=1)
    call = other.invoke(other.listed_tool("route"), {"region": "x"})
    with pytest.raises(AdmissionError):
        core.consume(call, _ok_result())
    with pytest.raises(AdmissionError):
        other.consume(PreparedCall(call.tool, {}, {}, call.ticket), _ok_result())  # a copy, not the call
    with pytest.raises(ContractViolation) as violation:
        other.consume(call, {"content": []})
    assert violation.value.category == "missing_structured_content"
    with pytest.raises(AdmissionError):
        other.consume(call, _ok_result())  # a call is consumed once


def test_the_core_keeps_its_own_copy_of_the_contract() -> None:
    core = HostCore(HostOptions(policy=SPEC))
    descriptor: dict[str, Any] = {
        "name": "route",
        "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
    }
    core.admit_listing([descriptor], pages=1)
    descriptor["inputSchema"]["properties"]["n"]["type"] = "string"  # the caller mutates its dict
    with pytest.raises(ArgumentError):
        core.invoke(core.listed_tool("route"), {"n": "text"})


def test_disclosed_tools_are_admitted_with_the_policy_and_bounded() -> None:
    core = HostCore(HostOptions(policy=SPEC, max_disclosed=2))
    with pytest.raises(AdmissionError) as refused:
        core.admit_disclosed(TOKEN, schema_sha256=DIGEST)
    assert refused.value.category == "sensitive_header"
    assert core.disclosed_tool("fetch", DIGEST) is None
    strict = HostCore(HostOptions(profile="strict"))  # the strict profile refuses the nested header
    with pytest.raises(AdmissionError) as nested:
        strict.admit_disclosed(ROUTE, schema_sha256=DIGEST)
    assert nested.value.category == "invalid_header_annotation"
    first = core.admit_disclosed(ROUTE, schema_sha256="1" * 64)
    core.admit_disclosed(ROUTE, schema_sha256="2" * 64)
    core.admit_disclosed(ROUTE, schema_sha256="3" * 64)
    assert core.disclosed_tool("route", "1" * 64) is None  # the least recently admitted is forgotten
    with pytest.raises(AdmissionError):
        core.invoke(first, {"region": "x"})
    assert core.invoke(core.disclosed_tool("route", "3" * 64), {"region": "x"}).headers  # type: ignore[arg-type]


def test_a_known_header_map_must_agree_with_the_schema() -> None:
    core = HostCore(HostOptions(policy=SPEC))
    known = {"region": "mcp-param-region", "target.zone": "Mcp-Param-Zone"}  # names fold case
    admitted = core.admit_disclosed(ROUTE, schema_sha256=DIGEST, known_headers=known)
    assert admitted.header_map == header_map(ROUTE)
    as_pointers = {"/region": "Mcp-Param-Region", "/target/zone": "Mcp-Param-Zone"}
    assert core.admit_disclosed(ROUTE, schema_sha256="e" * 64, known_headers=as_pointers)
    for wrong in (
        {"region": "Mcp-Param-Region"},  # one annotation missing
        {**known, "extra": "Mcp-Param-Extra"},  # one too many
        {"region": "Mcp-Param-Zone", "target.zone": "Mcp-Param-Region"},  # swapped
        {"region": "Mcp-Param-Region", "/region": "Mcp-Param-Region"},  # one argument spelled twice
        {"region": "X", "target.zone": "Mcp-Param-Zone"},
    ):
        with pytest.raises(AdmissionError) as refused:
            core.admit_disclosed(ROUTE, schema_sha256="f" * 64, known_headers=wrong)
        assert refused.value.category == "header_map_mismatch"
        assert core.disclosed_tool("route", "f" * 64) is None


def test_audit_events_are_values_free_and_bounded() -> None:
    sink = BoundedAuditSink(maxlen=3)
    core = HostCore(HostOptions(policy=SPEC, audit=sink))
    core.admit_listing([ROUTE], pages=1)
    for _ in range(5):
        core.consume(core.invoke(core.listed_tool("route"), {"region": "secret-λ"}), _ok_result())
    assert len(sink) == 3 and sink.dropped == 1 + 10 - 3
    assert "secret" not in repr(sink.events())
    with pytest.raises(ValueError):
        BoundedAuditSink(maxlen=0)


@pytest.mark.parametrize(
    ("annotations", "writes"),
    [
        (None, True),  # missing annotations: may write
        ({"readOnlyHint": True}, False),
        ({"readOnlyHint": False}, True),
        ({"readOnlyHint": True, "destructiveHint": True}, True),
        ({"destructiveHint": False}, True),  # not read-only
        ({"readOnlyHint": "true"}, True),  # not the JSON boolean
    ],
)
def test_may_write_treats_missing_hints_as_writing(annotations: Any, writes: bool) -> None:
    descriptor = {"name": "t", "inputSchema": {"type": "object"}}
    if annotations is not None:
        descriptor["annotations"] = annotations
    assert may_write(AdmittedTool("t", descriptor, {}, "listing")) is writes


def test_outstanding_calls_are_bounded_and_the_oldest_fails_closed() -> None:
    core = HostCore(HostOptions(policy=SPEC))
    core.admit_listing([ROUTE], pages=1)
    tool = core.listed_tool("route")
    calls = [core.invoke(tool, {"region": "x"}) for _ in range(MAX_OUTSTANDING_CALLS + 1)]
    with pytest.raises(AdmissionError):
        core.consume(calls[0], _ok_result())  # forgotten: never consumed with a stale contract
    assert core.consume(calls[-1], _ok_result()).structured_content == {"ok": True}
