"""``agent-connector review`` over real Streamable HTTP, driven through its entry function (exit code,
stdout and stderr as a user sees them; tests/cli/test_commands.py and others keep real processes)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from agent_connector_sdk.demo.contract_lab import EVIDENCE, contract_lab_app
from agent_connector_sdk.demo.lab_service import ANALYST_TOKEN, OPERATOR_TOKEN, lab_service_app
from tests.support.cli import assert_one_line_error, non_mcp_server, review_call, run_cli_in_process
from tests.support.http_server import serve_asgi

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "schemas" / "review-report.schema.json").read_text(
        encoding="utf-8"
    )
)


def _tool(report: dict[str, Any], name: str) -> dict[str, Any]:
    matches: list[dict[str, Any]] = [t for t in report["tools"] if t["name"] == name]
    (tool,) = matches
    return tool


def _valid(report: dict[str, Any]) -> dict[str, Any]:
    errors = list(Draft202012Validator(SCHEMA).iter_errors(report))
    assert not errors, errors[0].message
    return report


def test_plain_server_unsafe_descriptor_array_output_and_empty_cursor() -> None:
    with serve_asgi(contract_lab_app(empty_cursor_pages=True)) as url:
        run = run_cli_in_process(
            "review", url, "--json", "--call", "route_shipment", "--arguments", '{"region": "Zürich west"}'
        )
        strict = run_cli_in_process("review", url, "--strict")
    assert run.code == 0, run.err
    report = _valid(run.json())
    assert report["page_trace"] == [None, "", "page-3"]  # "" is a cursor, not the end
    assert report["search"] is None and report["header_gates"] == "applicable"
    rejected = _tool(report, "fetch_report")
    assert rejected["admission"]["decision"] == "rejected"
    assert rejected["admission"]["category"] == "sensitive_header"
    assert rejected["descriptor"]["inputSchema"]["properties"]["api_token"]["x-mcp-header"] == "Api-Token"
    assert _tool(report, "list_regions")["output_kind"] == "array"
    assert _tool(report, "content_gallery")["output_kind"] == "none"
    (region,) = [
        r for r in _tool(report, "route_shipment")["headers"]["rules"] if r["header"] == "Mcp-Param-Region"
    ]
    encodings = {sample["value"]: (sample["encoding"], sample["wire"]) for sample in region["samples"]}
    assert encodings["eu-central"] == ("plain", "eu-central")
    assert encodings["Zürich west"] == ("base64", "=?base64?WsO8cmljaCB3ZXN0?=")
    (priority,) = [r for r in _tool(report, "route_shipment")["headers"]["rules"] if r["type"] == "integer"]
    assert {
        "value": 9007199254740992,
        "wire": None,
        "encoding": "refused",
        "category": "out_of_range",
    } in priority["samples"]
    call = report["call"]
    assert call["outcome"] == "validated" and call["headers_sent"] == ["Mcp-Param-Region"]
    assert call["structured_content"]["region"] == "Zürich west"
    assert "fetch_report" in report["summary"]["rejected"]
    # Human output and --strict: a rejection is a finding.
    assert strict.code == 1
    assert '(first) → "" → "page-3"' in strict.out
    assert "sensitive_header" in strict.out


def test_behind_search_tools_found_disclosed_admitted_and_called() -> None:
    with serve_asgi(lab_service_app()) as url:
        operator = review_call(
            url,
            "search_evidence",
            {"query": "contract payroll audit", "region": "Zürich west"},
            token=OPERATOR_TOKEN,
        )
        query = {"query": "contract payroll audit"}
        analyst = review_call(url, "search_evidence", query, token=ANALYST_TOKEN)
        refused = review_call(url, "search_evidence", {"query": "x", "limit": 500}, token=ANALYST_TOKEN)
        no_token = run_cli_in_process("review", url)
        by_header = run_cli_in_process(
            "review", url, "--json", "--header", f"Authorization: Bearer {OPERATOR_TOKEN}"
        )
    assert operator.code == 0, operator.err
    report = _valid(operator.json())
    assert report["search"]["tool"] == "search_tools" and report["search"]["entries"] == 5
    hidden = {t["name"]: t for t in report["tools"] if t["found"] == "search"}
    assert set(hidden) == {
        "inventory_snapshot",
        "flaky_search",
        "nested_route",
        "search_evidence",
        "content_gallery",
    }
    for tool in hidden.values():
        assert tool["disclosure"]["verified"] is True
        assert tool["disclosure"]["manifest_uri"].startswith(f"schema-disclosure://tools/{tool['name']}/")
    # The default profile: the nested x-mcp-header (allowed by the spec since 2026-06-17) is admitted
    # with a project-rule finding; `review --strict` rejects it (invalid_header_annotation).
    nested = hidden["nested_route"]
    assert nested["admission"]["decision"] == "admitted"
    assert [(f["rule"], f["category"]) for f in nested["findings"]] == [
        ("header-placement", "invalid_header_annotation")
    ]
    assert report["profile"] == "default" and report["summary"]["project_findings"] >= 1
    evidence = hidden["search_evidence"]
    assert evidence["output_kind"] == "array" and evidence["admission"]["decision"] == "admitted"
    assert evidence["descriptor"]["inputSchema"]["additionalProperties"] is False
    call = report["call"]
    assert call["outcome"] == "validated" and call["headers_sent"] == ["Mcp-Param-Region"]
    assert call["content_types"][0] == "text" and set(call["content_types"][1:]) == {"resource_link"}
    restricted = {item.uri for item in EVIDENCE if item.restricted}
    assert restricted & {item["uri"] for item in call["structured_content"]}
    assert restricted <= set(report["completion"]["values"])
    # The analyst never sees restricted URIs: not in the tool's output, not in completion.
    seen = analyst.json()
    assert not restricted & {item["uri"] for item in seen["call"]["structured_content"]}
    assert not restricted & set(seen["completion"]["values"])
    assert seen["completion"]["total"] == len(EVIDENCE) - len(restricted)
    # A bound crossed is refused before sending, at the Invoke step.
    assert refused.json()["call"]["outcome"] == "refused"
    assert refused.json()["call"]["category"] == "invalid_arguments"
    assert_one_line_error(no_token, "HTTP 401", "--token")
    assert by_header.code == 0 and by_header.json()["search"]["entries"] == 5


@pytest.mark.parametrize(
    ("kind", "says"),
    [("html", "not an MCP endpoint"), ("json", "not JSON-RPC"), ("404", "wrong path")],
)
def test_non_mcp_http_server_is_one_line(kind: str, says: str) -> None:
    with non_mcp_server(kind) as url:
        assert_one_line_error(run_cli_in_process("review", url), says)


def test_silent_server_times_out_and_refused_port_says_so() -> None:
    with non_mcp_server("silent") as url:
        assert_one_line_error(run_cli_in_process("review", url, "--timeout", "1"), "timed out after 1 s")
    assert_one_line_error(run_cli_in_process("review", "http://127.0.0.1:9/mcp"), "connection refused")


def test_stdio_server_reports_header_gates_not_applicable() -> None:
    run = run_cli_in_process(
        "review",
        "--json",
        "--call",
        "route_shipment",
        "--arguments",
        '{"region": "Zürich west"}',
        "--",
        sys.executable,
        "tests/support/plain_server.py",
    )
    assert run.code == 0, run.err
    report = _valid(run.json())
    assert report["target"]["kind"] == "stdio" and report["header_gates"] == "not_applicable"
    assert report["page_trace"] == [None, "", "page-3"]
    assert all(t["headers"]["applicable"] is False for t in report["tools"])
    assert report["call"]["outcome"] == "validated" and report["call"]["headers_sent"] == []


def test_review_demo_makes_one_disclosed_admitted_validated_call() -> None:
    run = run_cli_in_process("review", "--demo", "--json")
    assert run.code == 0, run.err
    report = _valid(run.json())
    assert report["target"]["address"].startswith("http://127.0.0.1:")
    assert report["call"]["tool"] == "search_evidence" and report["call"]["outcome"] == "validated"
    assert _tool(report, "search_evidence")["disclosure"]["verified"] is True


def test_pin_file_is_written_and_enforced(tmp_path: Path) -> None:
    pins = tmp_path / "pins.json"
    tampered = tmp_path / "tampered.json"
    with serve_asgi(lab_service_app()) as url:
        written = run_cli_in_process("review", url, "--token", OPERATOR_TOKEN, "--pin", str(pins))
        assert written.code == 0, written.err
        document = json.loads(pins.read_text(encoding="utf-8"))
        assert document["version"] == 1 and set(document["servers"]) == {url}
        pinned = document["servers"][url]
        assert set(pinned) >= {"search_evidence", "content_gallery"}
        assert all(len(digests) == 1 and len(digests[0]) == 64 for digests in pinned.values())
        # The same server against its own pins: every disclosure still verifies.
        same = run_cli_in_process(
            "review", url, "--json", "--strict", "--token", OPERATOR_TOKEN, "--pins", str(pins)
        )
        assert _tool(_valid(same.json()), "search_evidence")["disclosure"]["verified"] is True
        # An upstream change, simulated by pins for another source: refused before any fragment is read.
        offered = pinned["search_evidence"][0]
        document["servers"][url]["search_evidence"] = ["0" * 64]
        tampered.write_text(json.dumps(document), encoding="utf-8")
        changed = run_cli_in_process(
            "review", url, "--json", "--strict", "--token", OPERATOR_TOKEN, "--pins", str(tampered)
        )
        bad = run_cli_in_process("review", url, "--pins", str(tmp_path / "missing.json"))
    check = _tool(_valid(changed.json()), "search_evidence")["disclosure"]
    assert changed.code == 1
    assert check["verified"] is False and check["category"] == "source_not_pinned"
    assert check["source_sha256"] == offered and "0" * 64 in check["reason"]
    assert check["bytes_read"] is None
    assert_one_line_error(bad)
