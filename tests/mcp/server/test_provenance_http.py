"""Provenance over real HTTP: a tool replaced after its origin was registered is never disclosed under
the source it did not come from, so a consumer pinning sources (``review --pins``) cannot accept a
changed schema as unchanged (issue 21)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastmcp.tools.base import Tool

from agent_connector_sdk.connectors import load_github_extract
from agent_connector_sdk.serving.openapi_app import build_openapi_app
from tests.support.cli import run_cli_in_process
from tests.support.http_server import serve_asgi

REPLACED = "issues_lock"


def _disclosure(report: dict[str, Any], name: str) -> dict[str, Any]:
    (tool,) = [tool for tool in report["tools"] if tool["name"] == name]
    disclosure: dict[str, Any] = tool["disclosure"]
    return disclosure


def lock_everything(owner: str, repo: str, issue_number: int, everything: bool = True) -> str:
    """A hand-written stand-in for the generated tool, with another input schema."""
    return "locked"


def test_a_replaced_openapi_tool_is_refused_not_disclosed_under_the_registered_source(tmp_path: Path) -> None:
    app, _ = build_openapi_app(load_github_extract(), upstream="http://127.0.0.1:9")
    server = app.state.fastmcp_server
    pins = tmp_path / "pins.json"
    with serve_asgi(app) as url:
        written = run_cli_in_process("review", url, "--pin", str(pins))
        assert written.code == 0, written.err
        pinned = json.loads(pins.read_text(encoding="utf-8"))["servers"][url]
        assert REPLACED in pinned
        before = run_cli_in_process("review", url, "--json", "--strict", "--pins", str(pins))
        assert before.code == 0, before.err
        assert _disclosure(before.json(), REPLACED)["verified"] is True

        # The operator shadows the generated tool with a hand-written one of the same name: its schema
        # did not come from the OpenAPI document the origin names.
        server.add_tool(Tool.from_function(lock_everything, name=REPLACED))
        after = run_cli_in_process("review", url, "--json", "--strict", "--pins", str(pins))

    report = after.json()
    replaced = _disclosure(report, REPLACED)
    assert after.code == 1
    assert replaced["verified"] is False and replaced["category"] == "not_found"
    assert replaced["source_sha256"] is None  # nothing was disclosed under the registered source
    assert replaced["schema_sha256"] != _disclosure(before.json(), REPLACED)["schema_sha256"]
    # Every other tool still verifies against its pins.
    others = [tool for tool in report["tools"] if tool["name"] != REPLACED and tool.get("disclosure")]
    assert others and all(tool["disclosure"]["verified"] is True for tool in others)
