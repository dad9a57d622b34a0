"""``serve --openapi --allow-duplicate-operation-ids`` with real JWTs (issue 29): an ``[auth.require]``
entry naming a reused ``operationId`` guards every tool derived from it — ``deleteThing`` and
``deleteThing_2`` alike — so a caller with only the base scope reaches neither, and nothing reaches
the upstream for them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastmcp.server.auth.providers.jwt import RSAKeyPair

from agent_connector_sdk.connectors import OpenAPISource
from agent_connector_sdk.gateway import AuthSettings
from agent_connector_sdk.serving.openapi_app import build_openapi_app
from tests.support.gateway import rpc
from tests.support.http_server import serve_asgi
from tests.support.raw_http import RecordingUpstream

ISSUER = "https://issuer.test/"
AUDIENCE = "things"
_DONE = {"responses": {"204": {"description": "done"}}}
_ID = [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]
DOCUMENT: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "things", "version": "1"},
    "paths": {
        "/things/{id}": {"delete": {**_DONE, "operationId": "deleteThing", "parameters": _ID}},
        "/archive/{id}": {"delete": {**_DONE, "operationId": "deleteThing", "parameters": _ID}},
        "/things": {"get": {**_DONE, "operationId": "listThings"}},
    },
}


@pytest.fixture(scope="module")
def key() -> RSAKeyPair:
    return RSAKeyPair.generate()


@pytest.fixture(scope="module")
def served(key: RSAKeyPair) -> Iterator[tuple[str, RecordingUpstream]]:
    upstream = RecordingUpstream()
    auth = AuthSettings(
        issuer=ISSUER, audience=AUDIENCE, public_key_pem=key.public_key, require={"deleteThing": ("admin",)}
    )
    source = OpenAPISource(raw=json.dumps(DOCUMENT).encode(), document=DOCUMENT)
    with serve_asgi(upstream.app, path="") as base:
        app, tools = build_openapi_app(source, upstream=base, auth=auth, allow_duplicate_operation_ids=True)
        assert tools == 3
        with serve_asgi(app) as url:
            yield url, upstream


def _as(key: RSAKeyPair, *scopes: str) -> list[tuple[str, str]]:
    token = key.create_token(issuer=ISSUER, audience=AUDIENCE, scopes=list(scopes))
    return [("authorization", f"Bearer {token}")]


def _call(url: str, headers: list[tuple[str, str]], name: str) -> dict[str, Any]:
    arguments = {"name": name, "arguments": {"id": "t1"}}
    return rpc(url, "tools/call", {"name": "call_tool", "arguments": arguments}, headers=headers)[1]


def test_every_tool_derived_from_a_reused_id_inherits_its_requirement(
    served: tuple[str, RecordingUpstream], key: RSAKeyPair
) -> None:
    url, upstream = served
    upstream.requests.clear()
    plain = _as(key)
    for name in ("deleteThing", "deleteThing_2"):
        denied = _call(url, plain, name)
        # Through the search proxy an out-of-scope tool is as unknown as one that does not exist.
        assert denied["result"]["isError"] is True, denied
        assert denied["result"]["content"][0]["text"] == f'Unknown tool: "{name}"'
    assert upstream.requests == []
    search = {"name": "search_tools", "arguments": {"pattern": "deleteThing"}}
    found = rpc(url, "tools/call", search, headers=plain)[1]["result"]["structuredContent"]["result"]
    # Ranked: other tools may be related to the words; the out-of-scope ones are never among them.
    names = [entry["name"] for entry in found] if isinstance(found, list) else []
    assert not any(name.startswith("deleteThing") for name in names)
    admin = _as(key, "admin")
    for name in ("deleteThing", "deleteThing_2"):
        allowed = _call(url, admin, name)
        assert allowed["result"]["isError"] is False, allowed
    assert sorted(r["path"] for r in upstream.requests) == ["/archive/t1", "/things/t1"]
