"""The agent-connector CLI in process (``main(argv, out=...)``); tests/cli drives it as subprocesses."""

from __future__ import annotations

import asyncio
import io
import json

import fastmcp

from agent_connector_sdk.cli import main
from agent_connector_sdk.connectors import load_github_extract
from agent_connector_sdk.demo.contract_lab import contract_lab_app
from agent_connector_sdk.mcp.host.disclosure_consumer import (
    CallerScope,
    DisclosedTool,
    SchemaDisclosureConsumer,
)
from agent_connector_sdk.serving.openapi_app import build_openapi_app
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


def test_disclose_one_operation_lists_its_fragments_and_reconstructs_them() -> None:
    """What the removed ``python -m agent_connector_sdk.core.schema_disclosure`` demo showed, for a real
    operation: the manifest and fragment URIs, each fragment's size and digest, and the reconstruction."""
    from agent_connector_sdk.cli.disclose import build_disclosures
    from agent_connector_sdk.core.schema_disclosure import read_schema_fragment

    code, text = _run("disclose", "--operation", "issues/list-events-for-timeline", "--verify")
    assert code == 0
    (disclosure,) = build_disclosures(
        load_github_extract(), operation="issues/list-events-for-timeline"
    ).disclosures.values()
    manifest = disclosure.manifest
    assert f"manifest {manifest.manifest_uri}" in text
    assert f"fragment {manifest.fragment_uri_template}" in text
    rows = [line.split() for line in text.splitlines() if line.startswith("  {index}=")]
    assert len(rows) == manifest.fragment_count == 105
    last = read_schema_fragment(disclosure, "104")
    assert rows[-1][:3] == ["{index}=104", f"{len(last.text.encode()):,}", "bytes"]
    assert rows[-1][4] == last.fragment_sha256[:16] + "…"
    assert "verified 1 of 1 reconstructed intact" in text
    # Several disclosures: the summary only, no fragment listing.
    code, text = _run("disclose")
    assert code == 0 and "{index}=" not in text


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
