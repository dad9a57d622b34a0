"""End to end on the committed GitHub extract, over real HTTP on loopback.

OpenAPI extract -> FastMCP server (search transform + disclosure resources) under uvicorn; a consumer
searches, selects ``issues/list-events-for-timeline`` (the largest operation), reconstructs its schemas
over HTTP and makes a validated call that reaches a local fake upstream.
"""

from __future__ import annotations

# Write confirmation (on by default) is opted out in this module: these tests exercise other gates;
# tests/mcp/host/test_write_confirmation.py covers confirmation itself.
import hashlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest
from fastmcp import Client
from fastmcp.server.transforms.search import RegexSearchTransform
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from agent_connector_sdk.connectors import (
    build_openapi_server,
    build_tool_disclosures,
    list_operation_tools,
    load_github_extract,
)
from agent_connector_sdk.core.contracts.errors import ArgumentError, ContractViolation
from agent_connector_sdk.mcp.host import HostOptions
from agent_connector_sdk.mcp.host.disclosure_consumer import (
    CallerScope,
    SchemaDisclosureConsumer,
)
from agent_connector_sdk.mcp.schema_disclosure_provider import (
    describe_schema_tools,
    register_schema_resources,
)
from tests.support.http_server import serve_asgi

TIMELINE_OPERATION = "issues/list-events-for-timeline"
TIMELINE_ALIAS = "issues_list_events_for_timeline"
LOCKED_EVENT = {
    "id": 1,
    "node_id": "LOE_1",
    "url": "http://127.0.0.1/events/1",
    "actor": None,
    "event": "locked",
    "commit_id": None,
    "commit_url": None,
    "created_at": "2026-01-01T00:00:00Z",
    "performed_via_github_app": None,
    "lock_reason": "resolved",
}


class FakeGitHub:
    """Loopback stand-in for api.github.com: records requests, answers with ``self.timeline``."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.timeline: Any = [LOCKED_EVENT]
        self.app = Starlette(routes=[Route("/{path:path}", self._handle, methods=["GET"])])

    async def _handle(self, request: Request) -> JSONResponse:
        self.requests.append((request.method, request.url.path, dict(request.query_params)))
        return JSONResponse(self.timeline)


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[FakeGitHub, str]]:
    fake = FakeGitHub()
    with serve_asgi(fake.app, path="") as base_url:
        yield fake, base_url


@pytest.fixture
async def github_mcp(upstream: tuple[FakeGitHub, str]) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    fake, base_url = upstream
    fake.requests.clear()
    fake.timeline = [LOCKED_EVENT]
    source = load_github_extract().raw
    # No pooled keep-alive connections: the tools run on the uvicorn thread's loop, and a pooled
    # connection could not be closed from this test's loop once that thread has stopped.
    http = httpx2.AsyncClient(base_url=base_url, limits=httpx2.Limits(max_keepalive_connections=0))
    built = build_openapi_server(json.loads(source), client=http)
    wire = {tool.alias: tool for tool in await list_operation_tools(built)}
    disclosures = await build_tool_disclosures(built, source)
    search = RegexSearchTransform(search_result_serializer=describe_schema_tools)
    built.server.add_transform(search)
    register_schema_resources(built.server, search, disclosures)
    try:
        with serve_asgi(built.server.http_app(stateless_http=True)) as url:
            yield (
                url,
                {
                    "wire": wire[TIMELINE_ALIAS],
                    "source_sha256": hashlib.sha256(source).hexdigest(),
                    "disclosures": disclosures,
                },
            )
    finally:
        await http.aclose()


async def test_timeline_is_reconstructed_over_http_and_called_against_the_fake_upstream(
    github_mcp: tuple[str, dict[str, Any]], upstream: tuple[FakeGitHub, str]
) -> None:
    url, expected = github_mcp
    fake, _ = upstream
    client: Client[Any] = Client(url)
    consumer = SchemaDisclosureConsumer(
        client, scope=CallerScope("anyone", url), options=HostOptions(require_confirmation=False)
    )
    async with client:
        entries = await consumer.discover("timeline")
        assert TIMELINE_ALIAS in [entry.name for entry in entries]
        assert all("inputSchema" not in entry.model_dump() for entry in entries)
        disclosed = await consumer.disclose(await consumer.select("list_events_for_timeline", TIMELINE_ALIAS))
        assert disclosed.manifest.operation == TIMELINE_OPERATION
        assert disclosed.manifest.source_sha256 == expected["source_sha256"]
        assert disclosed.manifest.fragment_count > 10
        assert disclosed.input_schema == expected["wire"].input_schema
        assert disclosed.output_schema == expected["wire"].output_schema
        result = await consumer.call(
            disclosed, {"owner": "octo", "repo": "hello", "issue_number": 42, "per_page": 5}
        )
        assert result.structured_content == {"result": [LOCKED_EVENT]}
        assert fake.requests == [("GET", "/repos/octo/hello/issues/42/timeline", {"per_page": "5"})]

        # Invalid arguments never leave the host; an upstream answer that breaks the schema is rejected.
        with pytest.raises(ArgumentError) as refused:
            await consumer.call(disclosed, {"owner": "octo", "repo": "hello", "issue_number": "42"})
        assert refused.value.category == "invalid_arguments"
        assert len(fake.requests) == 1
        fake.timeline = ["not an event"]
        with pytest.raises(ContractViolation) as rejected:
            await consumer.call(disclosed, {"owner": "octo", "repo": "hello", "issue_number": 42})
        assert rejected.value.category == "output_schema_violation"
        assert rejected.value.path.startswith("/structuredContent/result/0")


async def test_every_extract_operation_is_served_for_its_current_wire_schemas(
    github_mcp: tuple[str, dict[str, Any]],
) -> None:
    url, expected = github_mcp
    disclosures = expected["disclosures"]
    assert len(disclosures) == 10
    async with Client(url) as client:
        for alias, disclosure in disclosures.items():
            result = await client.session.read_resource(disclosure.manifest.manifest_uri)
            (content,) = result.contents
            assert json.loads(getattr(content, "text", "")) == disclosure.manifest.model_dump(mode="json"), (
                alias
            )
