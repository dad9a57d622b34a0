"""Drift on a real catalog: the committed extract of GitHub's REST description, served by the OpenAPI
connector (FastMCP) and listed over an in-memory MCP session, then a revision of that document — one
enum widened, a method changed from GET to POST, a description extended — listed in reverse order with
every key reversed. Exactly the tools the revision touched drift, at the pointers it touched; the
reordering is silent."""

from __future__ import annotations

import copy
import json
from typing import Any

import anyio
import fastmcp

from agent_connector_sdk.connectors import load_github_extract
from agent_connector_sdk.connectors.openapi import build_openapi_server
from agent_connector_sdk.core.contracts.lock import ContractLock, compare_tools

LOCK_PATH = "/repos/{owner}/{repo}/issues/{issue_number}/lock"


def _listing(document: dict[str, Any]) -> list[dict[str, Any]]:
    async def listed() -> list[dict[str, Any]]:
        server = build_openapi_server(document, base_url="http://127.0.0.1")
        try:
            async with fastmcp.Client(server.server) as client:
                tools = await client.list_tools()
        finally:
            await server.aclose()
        return [tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in tools]

    return anyio.run(listed)


def _reversed(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _reversed(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [_reversed(item) for item in value]
    return value


def test_a_revision_of_githubs_description_drifts_exactly_where_it_changed() -> None:
    document = json.loads(load_github_extract().raw)
    approved = _listing(document)
    lock = ContractLock().with_server("github", approved)

    revised = copy.deepcopy(document)
    body = revised["paths"][LOCK_PATH]["put"]["requestBody"]["content"]["application/json"]["schema"]
    body["properties"]["lock_reason"]["enum"].append("abuse")
    revised["paths"]["/octocat"]["post"] = revised["paths"]["/octocat"].pop("get")
    revised["paths"]["/repos/{owner}/{repo}"]["delete"]["description"] += " This cannot be undone."
    listed = _reversed(_listing(revised))[::-1]  # tools and every key in reverse order: no drift by itself
    assert [tool["name"] for tool in listed] == [tool["name"] for tool in approved][::-1]
    drift = {d.tool: d for d in compare_tools(lock.server("github"), listed) if d.drifted}

    assert sorted(drift) == ["issues_lock", "meta_get_octocat", "repos_delete"]
    (reason,) = drift["issues_lock"].changes
    assert (reason.pointer, reason.severity) == ("/inputSchema/properties/lock_reason/enum", "escalation")
    assert reason.new == [*reason.old, "abuse"]
    hints = {c.pointer: (c.old, c.new, c.severity) for c in drift["meta_get_octocat"].changes}
    assert hints["/annotations/readOnlyHint"] == (True, False, "escalation")  # GET → POST: it may write now
    assert drift["meta_get_octocat"].severity == "escalation"
    (words,) = drift["repos_delete"].changes
    assert (words.pointer, words.severity) == ("/description", "compatible")
    assert [(edit.op, edit.text) for edit in words.words if edit.op != "equal"] == [
        ("insert", " This cannot be undone.")
    ]
