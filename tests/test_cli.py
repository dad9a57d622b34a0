"""The agent-connector CLI in process (``main(argv, out=...)``); tests/cli drives it as subprocesses."""

from __future__ import annotations

import asyncio
import io
import json

import fastmcp

from agent_connector_sdk.cli import main
from agent_connector_sdk.cli.serve import build_openapi_app
from agent_connector_sdk.connectors.sources import load_github_extract
from agent_connector_sdk.demo.contract_lab import contract_lab_app
from agent_connector_sdk.mcp.host.disclosure_consumer import (
    CallerScope,
    DisclosedTool,
    SchemaDisclosureConsumer,
)
from tests.support.http_server import serve_asgi


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


def test_disclose_in_process_json_for_one_operation_by_operation_id() -> None:
    code, text = _run("disclose", "--operation", "issues/list-events-for-timeline", "--json", "--verify")
    assert code == 0
    (entry,) = json.loads(text)["disclosures"]
    assert entry["verified"] is True
    assert entry["manifest"]["alias"] == "issues_list_events_for_timeline"
    assert entry["manifest"]["fragment_count"] == 105


def test_review_in_process_reports_rejections_with_categories() -> None:
    with serve_asgi(contract_lab_app()) as url:
        code, text = _run("review", url, "--strict")
    assert code == 1
    assert "fetch_report" in text and "sensitive_header" in text
    assert "route_shipment" in text


def test_served_app_discloses_the_largest_operation_over_http() -> None:
    app, count = build_openapi_app(load_github_extract(), upstream="http://127.0.0.1:9")
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
