"""OpenAPI tools carry annotations from their HTTP method, so hosts can tell reads from writes."""

from __future__ import annotations

import fastmcp
import pytest

from agent_connector_sdk.connectors import build_openapi_server, load_github_extract
from agent_connector_sdk.connectors.openapi import http_method_annotations
from agent_connector_sdk.mcp.host import annotations_may_write


@pytest.mark.parametrize(
    ("method", "read_only", "destructive", "idempotent"),
    [
        ("get", True, False, True),
        ("HEAD", True, False, True),
        ("OPTIONS", True, False, True),
        ("DELETE", False, True, True),
        ("PUT", False, None, True),
        ("POST", False, None, None),
        ("PATCH", False, None, None),
        ("BREW", False, None, None),
    ],
)
def test_method_semantics(
    method: str, read_only: bool, destructive: bool | None, idempotent: bool | None
) -> None:
    annotations = http_method_annotations(method)
    assert annotations.read_only_hint is read_only
    assert annotations.destructive_hint is destructive
    assert annotations.idempotent_hint is idempotent
    assert annotations.open_world_hint is True


async def test_github_tools_on_the_wire_say_which_need_confirmation() -> None:
    source = load_github_extract()
    built = build_openapi_server(source.document, base_url="http://127.0.0.1")
    try:
        async with fastmcp.Client(built.server) as client:
            listed = {tool.name: tool for tool in await client.list_tools()}
    finally:
        await built.aclose()
    needs = {
        name: annotations_may_write(tool.annotations.model_dump(by_alias=True, exclude_none=True))
        for name, tool in listed.items()
        if tool.annotations is not None
    }
    assert set(needs) == set(listed)  # every operation tool is annotated
    for name, needed in needs.items():
        method = built.routes[name][0]
        assert needed is (method not in {"GET", "HEAD", "OPTIONS"}), name
    assert needs["issues_list_events_for_timeline"] is False
    assert needs["repos_delete"] is True
    assert listed["repos_delete"].annotations is not None
    assert listed["repos_delete"].annotations.destructive_hint is True
