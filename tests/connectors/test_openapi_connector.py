"""The OpenAPI connector on the committed GitHub extract: names, wire schemas, upstream calls, disclosures."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Iterator
from typing import Any

import fastmcp
import httpx2
import pytest
from fastmcp.server.transforms.search import RegexSearchTransform
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agent_connector_sdk.connectors import (
    OpenAPIToolsMissing,
    build_openapi_server,
    build_tool_disclosures,
    list_operation_tools,
    openapi_operation_tools,
)
from agent_connector_sdk.connectors._sources import GITHUB_EXTRACT_PATH
from agent_connector_sdk.core.schema_disclosure import SourceDigest, reconstruct_schema
from tests.support.http_server import serve_asgi

EXTRACT = GITHUB_EXTRACT_PATH
TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
TIMELINE = "issues/list-events-for-timeline"


@pytest.fixture(scope="module")
def extract_bytes() -> bytes:
    return EXTRACT.read_bytes()


@pytest.fixture(scope="module")
def document(extract_bytes: bytes) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(extract_bytes)
    return loaded


def _operation_ids(document: dict[str, Any]) -> set[str]:
    return {
        operation["operationId"]
        for item in document["paths"].values()
        for method, operation in item.items()
        if method in {"get", "put", "post", "delete", "patch"}
    }


class FakeGitHub:
    """A local stand-in for api.github.com that records what the tools send it."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.app = Starlette(routes=[Route("/{path:path}", self._handle, methods=["GET", "PUT", "DELETE"])])

    async def _handle(self, request: Request) -> Response:
        body = await request.body()
        self.requests.append(
            {
                "method": request.method,
                "path": request.url.path,
                "query": dict(request.query_params),
                "headers": dict(request.headers),
                "json": json.loads(body) if body else None,
            }
        )
        if request.url.path.endswith("/timeline"):
            return JSONResponse([{"event": "labeled", "id": 1, "node_id": "LE_1"}])
        return Response(status_code=204)


@pytest.fixture
def upstream() -> Iterator[tuple[FakeGitHub, str]]:
    fake = FakeGitHub()
    with serve_asgi(fake.app, path="") as base_url:
        yield fake, base_url


async def test_aliases_are_the_names_fastmcp_registers(document: dict[str, Any]) -> None:
    built = build_openapi_server(document, base_url="http://127.0.0.1:9")
    async with fastmcp.Client(built.server) as session:
        listed = {tool.name for tool in await session.list_tools()}
    assert set(built.operations) == listed
    assert set(built.operations.values()) == _operation_ids(document)
    assert built.operations["issues_list_events_for_timeline"] == TIMELINE
    assert built.routes["issues_list_events_for_timeline"] == (
        "GET",
        "/repos/{owner}/{repo}/issues/{issue_number}/timeline",
    )
    assert all(TOOL_NAME.fullmatch(alias) for alias in built.operations)


async def test_schemas_are_exactly_what_tools_list_shows_over_http(document: dict[str, Any]) -> None:
    built = build_openapi_server(document, base_url="http://127.0.0.1:9")
    ours = {tool.alias: tool for tool in await list_operation_tools(built)}
    with serve_asgi(built.server.http_app(stateless_http=True)) as url:
        async with fastmcp.Client(url) as session:
            wire = {tool.name: tool for tool in await session.list_tools()}
    assert set(ours) == set(wire)
    for alias, tool in ours.items():
        assert tool.input_schema == wire[alias].input_schema, alias
        assert tool.output_schema == wire[alias].output_schema, alias


async def test_input_schema_has_parameters_and_body_output_schema_has_the_2xx_json(
    document: dict[str, Any],
) -> None:
    tools = {tool.operation: tool for tool in await openapi_operation_tools(document)}
    timeline = tools[TIMELINE]
    assert set(timeline.input_schema["properties"]) >= {"owner", "repo", "issue_number", "per_page", "page"}
    assert set(timeline.input_schema["required"]) == {"owner", "repo", "issue_number"}
    # The 200 response is a JSON array; FastMCP wraps non-object results under "result".
    assert timeline.output_schema is not None
    assert timeline.output_schema["properties"]["result"]["type"] == "array"
    assert timeline.output_schema["x-fastmcp-wrap-result"] is True
    comment = tools["issues/create-comment"]
    assert "body" in comment.input_schema["properties"]  # from the JSON request body
    assert comment.method == "POST"
    assert tools["repos/delete"].output_schema is None  # 204 No Content: nothing to validate


async def test_tool_calls_reach_the_configured_base_url(
    document: dict[str, Any], upstream: tuple[FakeGitHub, str]
) -> None:
    fake, base_url = upstream
    built = build_openapi_server(document, base_url=base_url)
    try:
        async with fastmcp.Client(built.server) as session:
            result = await session.call_tool(
                "issues_list_events_for_timeline",
                {"owner": "octo", "repo": "hello", "issue_number": 42, "per_page": 5},
            )
            locked = await session.call_tool(
                "issues_lock",
                {"owner": "octo", "repo": "hello", "issue_number": 42, "lock_reason": "resolved"},
            )
    finally:
        await built.aclose()
    assert result.structured_content == {"result": [{"event": "labeled", "id": 1, "node_id": "LE_1"}]}
    assert not locked.is_error
    timeline_request, lock_request = fake.requests
    assert timeline_request["method"] == "GET"
    assert timeline_request["path"] == "/repos/octo/hello/issues/42/timeline"
    assert timeline_request["query"]["per_page"] == "5"
    assert lock_request["method"] == "PUT"
    assert lock_request["path"] == "/repos/octo/hello/issues/42/lock"
    assert lock_request["json"] == {"lock_reason": "resolved"}  # the request body, not the path arguments


async def test_a_callers_client_is_used_and_left_open(
    document: dict[str, Any], upstream: tuple[FakeGitHub, str]
) -> None:
    fake, base_url = upstream
    async with httpx2.AsyncClient(base_url=base_url, headers={"x-test-client": "mine"}) as client:
        built = build_openapi_server(document, client=client)
        assert built.http_client is client
        # Two sessions in a row: a FastMCP-owned client would be closed after the first lifespan.
        for _ in range(2):
            async with fastmcp.Client(built.server) as session:
                await session.call_tool("repos_delete", {"owner": "octo", "repo": "gone"})
        await built.aclose()
        assert not client.is_closed
    assert [r["method"] for r in fake.requests] == ["DELETE", "DELETE"]
    assert all(r["headers"]["x-test-client"] == "mine" for r in fake.requests)


async def test_an_owned_client_survives_several_sessions(document: dict[str, Any]) -> None:
    built = build_openapi_server(document, base_url="http://127.0.0.1:9")
    first = await list_operation_tools(built)
    second = await list_operation_tools(built)
    assert first == second
    await built.aclose()
    assert built.http_client.is_closed


async def test_disclosures_cover_every_tool_and_reconstruct_its_wire_schemas(
    document: dict[str, Any], extract_bytes: bytes
) -> None:
    built = build_openapi_server(document, base_url="http://127.0.0.1:9")
    tools = {tool.alias: tool for tool in await list_operation_tools(built)}
    disclosures = await build_tool_disclosures(built, extract_bytes)
    assert set(disclosures) == set(tools)
    source_sha256 = hashlib.sha256(extract_bytes).hexdigest()
    for alias, disclosure in disclosures.items():
        manifest = disclosure.manifest
        assert manifest.alias == alias
        assert manifest.operation == built.operations[alias]
        assert manifest.source_sha256 == source_sha256
        assert reconstruct_schema(manifest, disclosure.fragments) == {
            "inputSchema": tools[alias].input_schema,
            "outputSchema": tools[alias].output_schema,
        }
    # A precomputed digest gives the same disclosures as the bytes.
    assert await build_tool_disclosures(built, SourceDigest.of(extract_bytes)) == disclosures


async def test_listing_after_a_search_transform_is_refused(document: dict[str, Any]) -> None:
    built = build_openapi_server(document, base_url="http://127.0.0.1:9")
    built.server.add_transform(RegexSearchTransform())
    with pytest.raises(OpenAPIToolsMissing):
        await list_operation_tools(built)


def test_base_url_and_client_are_exclusive_and_a_server_url_is_needed(document: dict[str, Any]) -> None:
    client = httpx2.AsyncClient()
    with pytest.raises(ValueError, match="either client or base_url"):
        build_openapi_server(document, base_url="http://127.0.0.1:9", client=client)
    without_servers = {key: value for key, value in document.items() if key != "servers"}
    with pytest.raises(ValueError, match="servers"):
        build_openapi_server(without_servers)
    templated = {**document, "servers": [{"url": "https://{host}/api"}]}
    with pytest.raises(ValueError, match="servers"):
        build_openapi_server(templated)
    # The document's own server URL is the default upstream.
    assert str(build_openapi_server(document).http_client.base_url) == "https://api.github.com"


def test_a_document_the_parser_refuses_is_one_typed_error_without_its_values(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from agent_connector_sdk.connectors import InvalidOpenAPIDocument

    value = "a-value-only-the-document-has"
    bad = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/x": {
                "get": {
                    "operationId": "getX",
                    "parameters": [
                        {
                            "name": "q",
                            "in": "query",
                            "example": value,
                            "schema": {"type": "integer", "minimum": 0, "maxLength": -5},
                        }
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    caplog.set_level(logging.DEBUG)
    with pytest.raises(InvalidOpenAPIDocument) as refused:
        build_openapi_server(bad, base_url="http://127.0.0.1:9")
    assert refused.value.category == "invalid_document"
    assert isinstance(refused.value, ValueError)
    message = str(refused.value)
    assert message.startswith("invalid OpenAPI document at paths./x.get.parameters[0].")
    assert "maxLength" in message and value not in message and "errors.pydantic.dev" not in message
    # FastMCP's parser logs the whole pydantic error (values included) at ERROR: not while we build.
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert all(value not in r.getMessage() for r in caplog.records)
    assert logging.getLogger("fastmcp.utilities.openapi.parser").filters == []  # the filter is removed
