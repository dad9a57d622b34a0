"""Ranked search on every surface we ship, over real Streamable HTTP on 127.0.0.1: ``serve --openapi``
(two callers with different scopes), the contract lab, the gateway, and the provider module in process.

Each surface: the search tool is annotated read-only, a result's text content is ONE copy of the result
(the JSON of its structured content, no second block), a natural-language request is ranked, a regex
keeps its matches reachable, and nothing relevant means no entries and a one-line note. Per caller: a
tool hidden from a caller never shows in, nor shapes, what that caller's search returns — the result
equals that of a server which never had the tool.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastmcp import Client, FastMCP
from fastmcp.server.auth.providers.jwt import RSAKeyPair

from agent_connector_sdk.connectors import load_github_extract, load_openapi_source
from agent_connector_sdk.demo.lab_service import ANALYST_TOKEN, lab_service_app
from agent_connector_sdk.gateway import AuthSettings, ChildSpec, Gateway, GatewayConfig
from agent_connector_sdk.mcp.schema_disclosure_provider import RankedSearchTransform, describe_schema_tools
from agent_connector_sdk.mcp.server import gated_http_app
from agent_connector_sdk.mcp.server._ranked_search import NO_MATCH_NOTE
from agent_connector_sdk.serving.openapi_app import build_openapi_app
from tests.support.gateway import rpc
from tests.support.gateway_children import weather_server
from tests.support.http_server import serve_asgi

ISSUER = "https://issuer.test/"
AUDIENCE = "github-tools"
REQUESTS = (
    "delete a repository",
    "remove this repo for good",
    "lock the conversation on an issue",
    "show the profile of a user",
    "wise words",
    "^repos_|zen",
    "repos_delete",
)


def _headers(token: str | None) -> list[tuple[str, str]]:
    return [] if token is None else [("authorization", f"Bearer {token}")]


def _search(url: str, pattern: str, token: str | None = None) -> dict[str, Any]:
    status, message = rpc(
        url,
        "tools/call",
        {"name": "search_tools", "arguments": {"pattern": pattern}},
        headers=_headers(token),
    )
    assert status == 200 and "result" in message, message
    return dict(message["result"])


def _names(result: dict[str, Any]) -> list[str]:
    found = result["structuredContent"]["result"]
    return [entry["name"] for entry in found] if isinstance(found, list) else []


def _assert_one_copy(result: dict[str, Any]) -> None:
    (block,) = result["content"]  # exactly one text block
    assert block["type"] == "text"
    assert json.loads(block["text"]) == result["structuredContent"]


def _search_tool_annotations(url: str, token: str | None = None) -> dict[str, Any]:
    tools: list[dict[str, Any]] = []
    params: dict[str, Any] = {}
    for _ in range(20):  # the lab pages its listing
        _, message = rpc(url, "tools/list", params, headers=_headers(token))
        tools.extend(message["result"]["tools"])
        cursor = message["result"].get("nextCursor")
        if cursor is None:
            break
        params = {"cursor": cursor}
    (search,) = [tool for tool in tools if tool["name"] == "search_tools"]
    return dict(search.get("annotations") or {})


# ---------------------------------------------------------------- serve --openapi, two callers


@pytest.fixture(scope="module")
def key() -> RSAKeyPair:
    return RSAKeyPair.generate()


@pytest.fixture(scope="module")
def openapi_urls(key: RSAKeyPair) -> Iterator[tuple[str, str]]:
    """(the served extract with ``repos_delete`` behind a scope, the extract without that operation)."""
    auth = AuthSettings(
        issuer=ISSUER,
        audience=AUDIENCE,
        public_key_pem=key.public_key,
        require={"repos_delete": ("repo:admin",)},
    )
    guarded, _ = build_openapi_app(load_github_extract(), upstream="http://127.0.0.1:9", auth=auth)
    document = copy.deepcopy(load_github_extract().document)
    for item in document["paths"].values():
        for method, operation in list(item.items()):
            if isinstance(operation, dict) and operation.get("operationId") == "repos/delete":
                del item[method]
    open_auth = AuthSettings(issuer=ISSUER, audience=AUDIENCE, public_key_pem=key.public_key, require={})
    without, _ = build_openapi_app(
        load_openapi_source(json.dumps(document).encode()), upstream="http://127.0.0.1:9", auth=open_auth
    )
    with serve_asgi(guarded) as guarded_url, serve_asgi(without) as without_url:
        yield guarded_url, without_url


def test_a_hidden_tool_never_shapes_another_callers_results(
    openapi_urls: tuple[str, str], key: RSAKeyPair
) -> None:
    guarded_url, without_url = openapi_urls
    admin = key.create_token(issuer=ISSUER, audience=AUDIENCE, scopes=["repo:admin"])
    plain = key.create_token(issuer=ISSUER, audience=AUDIENCE, scopes=[])
    assert _names(_search(guarded_url, "delete a repository", admin))[0] == "repos_delete"
    for request in REQUESTS:
        seen = _search(guarded_url, request, plain)
        assert "repos_delete" not in _names(seen)
        # Same entries, same order, same count, same text as a server that never had the tool: the
        # hidden tool took no part in the index (no idf, no length average, no count).
        reference = _search(without_url, request, plain)
        assert seen["structuredContent"] == reference["structuredContent"], request
        assert seen["content"] == reference["content"]


def test_serve_openapi_search_is_ranked_one_copy_and_read_only(
    openapi_urls: tuple[str, str], key: RSAKeyPair
) -> None:
    guarded_url, _ = openapi_urls
    token = key.create_token(issuer=ISSUER, audience=AUDIENCE, scopes=["repo:admin"])
    assert _search_tool_annotations(guarded_url, token)["readOnlyHint"] is True
    result = _search(guarded_url, "put a label on an issue", token)
    _assert_one_copy(result)
    assert _names(result)[0] == "issues_add_labels"
    # A regex: every tool it matches, ranked by the words it names.
    assert set(_names(_search(guarded_url, "^meta_", token))) == {
        "meta_root",
        "meta_get_octocat",
        "meta_get_zen",
    }
    nothing = _search(guarded_url, "book a table for two at an Italian restaurant", token)
    _assert_one_copy(nothing)
    assert nothing["structuredContent"] == {"result": NO_MATCH_NOTE}


# ---------------------------------------------------------------- the lab and the gateway


def test_the_lab_search_is_ranked_one_copy_and_read_only() -> None:
    with serve_asgi(lab_service_app(json_response=True)) as url:
        assert _search_tool_annotations(url, ANALYST_TOKEN)["readOnlyHint"] is True
        result = _search(url, "look for evidence", ANALYST_TOKEN)
        _assert_one_copy(result)
        assert _names(result)[0] == "search_evidence"
        _assert_one_copy(_search(url, "zzzz qqqq", ANALYST_TOKEN))


def test_the_gateway_search_is_ranked_one_copy_and_read_only() -> None:
    with serve_asgi(gated_http_app(weather_server(), stateless_http=True)) as child_url:
        gateway = Gateway(GatewayConfig(children=(ChildSpec(name="weather", url=child_url),)))
        with serve_asgi(gateway.http_app()) as url:
            assert _search_tool_annotations(url)["readOnlyHint"] is True
            result = _search(url, "will it rain tomorrow in Lyon, what is the forecast", None)
            _assert_one_copy(result)  # the gateway used to send the same entries twice
            assert _names(result)[0] == "weather_forecast"
            nothing = _search(url, "translate this letter into German")
            _assert_one_copy(nothing)
            assert _names(nothing) == []


# ---------------------------------------------------------------- the provider module, in process


def test_the_provider_option_in_process() -> None:
    server: FastMCP[Any] = FastMCP("provider")

    @server.tool
    def geocode_address(address: str) -> dict[str, float]:
        """Turn a street address into coordinates (latitude and longitude)."""
        return {"lat": 0.0, "lon": 0.0}

    @server.tool
    def search_clinical_trials(condition: str) -> list[str]:
        """Search clinical trials by condition; each site carries its geocode."""
        return []

    search = RankedSearchTransform(search_result_serializer=describe_schema_tools)
    server.add_transform(search)

    async def run() -> None:
        async with Client(server) as client:
            (tool,) = [t for t in await client.list_tools() if t.name == "search_tools"]
            assert tool.annotations is not None and tool.annotations.readOnlyHint is True
            assert "regex" in (tool.description or "") and "plain words" in (tool.description or "")
            result = await client.call_tool("search_tools", {"pattern": "geocode"})
            assert [entry["name"] for entry in result.data] == ["geocode_address", "search_clinical_trials"]
            assert len(result.content) == 1
            request = await client.call_tool(
                "search_tools", {"pattern": "where is 10 Downing Street, lat/long"}
            )
            assert request.data[0]["name"] == "geocode_address"
            nothing = await client.call_tool("search_tools", {"pattern": "what is the capital of France"})
            assert nothing.data == NO_MATCH_NOTE and len(nothing.content) == 1

    asyncio.run(run())
