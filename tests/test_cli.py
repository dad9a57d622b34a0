"""The agent-connector CLI: the embedded default, input errors, serve + review over real HTTP."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import fastmcp

from agent_connector_sdk.cli import build_serve_app, main
from agent_connector_sdk.connectors.github_extract import load_github_extract
from agent_connector_sdk.demo.contract_lab import contract_lab_app
from agent_connector_sdk.mcp.schema_disclosure_consumer import (
    CallerScope,
    DisclosedTool,
    SchemaDisclosureConsumer,
)
from tests.support.http_server import serve_asgi


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


def test_disclose_embedded_default_builds_and_verifies_every_tool() -> None:
    code, text = _run("disclose")
    assert code == 0
    lines = [line for line in text.splitlines() if line.endswith("verified")]
    assert len(lines) == 10
    timeline = next(line for line in lines if line.startswith("issues_list_events_for_timeline"))
    assert " 427,919 " in timeline and " 105 " in timeline
    assert "10 tools, 118 fragments" in text


def test_disclose_json_for_one_operation_by_operation_id() -> None:
    code, text = _run("disclose", "--operation", "issues/list-events-for-timeline", "--json")
    assert code == 0
    (entry,) = json.loads(text)
    assert entry["verified"] is True
    assert entry["manifest"]["alias"] == "issues_list_events_for_timeline"
    assert entry["manifest"]["fragment_count"] == 105


def test_disclose_unknown_operation_and_bad_files_exit_2(tmp_path: Path) -> None:
    assert _run("disclose", "--operation", "no/such-op")[0] == 2
    assert _run("disclose", "--openapi", str(tmp_path / "missing.json"))[0] == 2
    (tmp_path / "x.json").write_text('{"not": "openapi"}', encoding="utf-8")
    assert _run("disclose", "--openapi", str(tmp_path / "x.json"))[0] == 2
    (tmp_path / "y.json").write_text("{", encoding="utf-8")
    assert _run("disclose", "--openapi", str(tmp_path / "y.json"))[0] == 2


def test_disclose_other_openapi_file(tmp_path: Path) -> None:
    document = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9"}],
        "paths": {
            "/pets/{id}": {
                "get": {
                    "operationId": "getPet",
                    "parameters": [
                        {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    path = tmp_path / "pets.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    code, text = _run("disclose", "--openapi", str(path))
    assert code == 0
    assert "getPet" in text and "1 tools" in text


def test_review_reports_rejections_with_categories() -> None:
    with serve_asgi(contract_lab_app()) as url:
        code, text = _run("review", url)
    assert code == 1
    assert "rejected  fetch_report: sensitive_header" in text
    assert "admitted  route_shipment" in text


def test_review_unreachable_server_exits_2() -> None:
    assert _run("review", "http://127.0.0.1:9/mcp")[0] == 2


def test_served_app_discloses_the_largest_operation_over_http() -> None:
    app, count = build_serve_app(load_github_extract(), upstream="http://127.0.0.1:9")
    assert count == 10

    async def disclose(url: str) -> DisclosedTool:
        client = fastmcp.Client(url)
        consumer = SchemaDisclosureConsumer(client, scope=CallerScope("cli-test", url))
        async with client:
            selected = await consumer.select("timeline", "issues_list_events_for_timeline")
            return await consumer.disclose(selected)

    with serve_asgi(app) as url:
        disclosed = asyncio.run(disclose(url))
    assert disclosed.manifest.fragment_count == 105
    assert disclosed.input_schema["type"] == "object"
