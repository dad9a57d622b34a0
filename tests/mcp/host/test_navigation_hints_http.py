"""Tool hints survive search: navigation entries carry ``readOnlyHint``/``destructiveHint``, so write
confirmation decides on the real hints for tools behind a search transform — over real HTTP.

* the ``serve --openapi`` app (:func:`build_openapi_app`): a GitHub ``GET`` runs unasked through the
  consumer with confirmation on and no callback; a ``DELETE`` is refused before anything is sent;
* the lab behind search (what ``agent-connector serve`` runs): ``search_evidence`` is read-only;
* hints that change between searches move the catalog (the selection must be discovered again);
* ``ContractClient`` refusing a tool that hides behind search names the face that calls it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from fastmcp import Client, FastMCP
from fastmcp.server.transforms.search import RegexSearchTransform
from mcp_types import ToolAnnotations
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from agent_connector_sdk.cli.sources import load_openapi
from agent_connector_sdk.core.contracts.errors import AdmissionError
from agent_connector_sdk.core.disclosure_navigation import (
    SchemaNavigation,
    build_navigation_entry,
    summarize_tool_hints,
)
from agent_connector_sdk.core.host import ConfirmationRefused
from agent_connector_sdk.core.schema_disclosure import build_schema_disclosure
from agent_connector_sdk.demo.lab_service import ANALYST_TOKEN, lab_service_app
from agent_connector_sdk.mcp.host import CallSummary, HostOptions
from agent_connector_sdk.mcp.host.contract_client import ContractClient
from agent_connector_sdk.mcp.host.disclosure_consumer import (
    CallerScope,
    SchemaDisclosureConsumer,
    StaleSelection,
)
from agent_connector_sdk.mcp.schema_disclosure_provider import (
    describe_schema_tools,
    register_schema_resources,
)
from agent_connector_sdk.mcp.server import gated_http_app
from agent_connector_sdk.serving.openapi_app import build_openapi_app
from tests.support.http_server import serve_asgi

TIMELINE = "issues_list_events_for_timeline"


class Upstream:
    """Loopback stand-in for api.github.com that records every request it gets."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self.app = Starlette(
            routes=[Route("/{path:path}", self._handle, methods=["GET", "POST", "PUT", "PATCH", "DELETE"])]
        )

    async def _handle(self, request: Request) -> JSONResponse:
        self.requests.append((request.method, request.url.path))
        return JSONResponse([])


@pytest.fixture(scope="module")
def openapi_url() -> Iterator[tuple[str, Upstream]]:
    upstream = Upstream()
    with serve_asgi(upstream.app, path="") as base_url:
        app, _ = build_openapi_app(load_openapi(None), upstream=base_url)
        with serve_asgi(app) as url:
            yield url, upstream


def test_entries_carry_only_real_boolean_hints_and_the_model_is_strict() -> None:
    assert summarize_tool_hints(None) is None
    assert summarize_tool_hints({}) is None
    assert summarize_tool_hints({"title": "T", "readOnlyHint": "true", "destructiveHint": 1}) is None
    assert summarize_tool_hints({"readOnlyHint": True, "openWorldHint": False, "title": "T"}) == {
        "readOnlyHint": True,
        "openWorldHint": False,
    }
    entry = build_navigation_entry(
        name="t",
        title=None,
        description=None,
        input_schema={"type": "object"},
        output_schema=None,
        annotations={"readOnlyHint": True, "destructiveHint": False},
    )
    parsed = SchemaNavigation.model_validate(entry)
    assert parsed.annotations is not None and parsed.annotations.readOnlyHint is True
    older = {k: v for k, v in entry.items() if k != "annotations"}
    assert SchemaNavigation.model_validate(older).annotations is None
    for bad in ({"readOnlyHint": "true"}, {"readOnlyHint": True, "sneaky": 1}, [True]):
        with pytest.raises(ValueError):
            SchemaNavigation.model_validate({**entry, "annotations": bad})


async def test_an_openapi_get_runs_unasked_and_a_delete_is_refused_before_sending(
    openapi_url: tuple[str, Upstream],
) -> None:
    url, upstream = openapi_url
    upstream.requests.clear()
    client: Client[Any] = Client(url)
    consumer = SchemaDisclosureConsumer(client, scope=CallerScope("anyone", url))  # confirmation on
    async with client:
        timeline = await consumer.disclose(await consumer.select("timeline", TIMELINE))
        assert timeline.descriptor["annotations"]["readOnlyHint"] is True
        result = await consumer.call(timeline, {"owner": "octo", "repo": "hello", "issue_number": 42})
        assert result.structured_content == {"result": []}
        delete = await consumer.disclose(await consumer.select("repos_delete", "repos_delete"))
        assert delete.descriptor["annotations"]["destructiveHint"] is True
        with pytest.raises(ConfirmationRefused) as refused:
            await consumer.call(delete, {"owner": "octo", "repo": "hello"})
    assert refused.value.category == "confirmation_required"
    assert upstream.requests == [("GET", "/repos/octo/hello/issues/42/timeline")]


async def test_the_confirmation_callback_sees_the_hints_the_listing_would_show(
    openapi_url: tuple[str, Upstream],
) -> None:
    url, upstream = openapi_url
    upstream.requests.clear()
    seen: list[CallSummary] = []

    def decline(summary: CallSummary) -> bool:
        seen.append(summary)
        return False

    client: Client[Any] = Client(url)
    consumer = SchemaDisclosureConsumer(
        client, scope=CallerScope("anyone", url), options=HostOptions(confirm_write=decline)
    )
    async with client:
        delete = await consumer.disclose(await consumer.select("repos_delete", "repos_delete"))
        with pytest.raises(ConfirmationRefused):
            await consumer.call(delete, {"owner": "octo", "repo": "hello"})
    (summary,) = seen
    assert summary.tool == "repos_delete"
    assert summary.annotations == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": True,
    }
    assert upstream.requests == []


async def test_the_lab_behind_search_marks_search_evidence_read_only() -> None:
    app = await anyio.to_thread.run_sync(lab_service_app)  # it builds on its own event loop
    with serve_asgi(app) as url:
        client: Client[Any] = Client(url, auth=ANALYST_TOKEN)
        consumer = SchemaDisclosureConsumer(client, scope=CallerScope("analyst", url))
        async with client:
            tool = await consumer.disclose(await consumer.select("evidence", "search_evidence"))
            result = await consumer.call(tool, {"query": "latency", "limit": 2})
            assert isinstance(result.structured_content, list)
    assert tool.descriptor["annotations"]["readOnlyHint"] is True  # ran unasked: confirmation is on


def _add_lookup(server: FastMCP[Any], *, read_only: bool) -> None:
    @server.tool(annotations=ToolAnnotations(readOnlyHint=read_only))
    def lookup(key: str) -> dict[str, str]:
        return {"key": key}


async def _disclosures(server: FastMCP[Any]) -> dict[str, Any]:
    async with Client(server) as probe:
        (tool,) = await probe.list_tools()
    return {
        tool.name: build_schema_disclosure(
            operation=tool.name,
            alias=tool.name,
            source=b"hints",
            input_schema=tool.input_schema,
            output_schema=tool.output_schema,
        )
    }


async def test_hints_that_change_between_searches_move_the_catalog() -> None:
    server: FastMCP[Any] = FastMCP("hints")
    _add_lookup(server, read_only=True)
    disclosures = await _disclosures(server)
    search = RegexSearchTransform(search_result_serializer=describe_schema_tools)
    server.add_transform(search)
    register_schema_resources(server, search, disclosures)
    with serve_asgi(gated_http_app(server, stateless_http=True)) as url:
        client: Client[Any] = Client(url)
        consumer = SchemaDisclosureConsumer(client, scope=CallerScope("h", url))
        async with client:
            tool = await consumer.disclose(await consumer.select("lookup", "lookup"))
            assert (await consumer.call(tool, {"key": "k"})).structured_content == {"key": "k"}
            # Same schemas (same digests), hints now say "may write": the old selection is stale.
            server.local_provider.remove_tool("lookup")
            _add_lookup(server, read_only=False)
            (entry,) = await consumer.discover("lookup")
            assert entry.annotations is not None and entry.annotations.readOnlyHint is False
            assert entry.schema_sha256 == tool.manifest.schema_sha256
            with pytest.raises(StaleSelection) as stale:
                await consumer.call(tool, {"key": "k"})
            assert stale.value.category == "catalog_changed"
            again = await consumer.disclose(await consumer.select("lookup", "lookup"))
            with pytest.raises(ConfirmationRefused) as refused:
                await consumer.call(again, {"key": "k"})
    assert refused.value.category == "confirmation_required"


async def test_contract_client_points_to_the_consumer_for_a_tool_behind_search(
    openapi_url: tuple[str, Upstream],
) -> None:
    url, _ = openapi_url
    async with ContractClient(Client(url)) as host:
        await host.discover_tools()
        with pytest.raises(AdmissionError) as refused:
            await host.call(TIMELINE, {"owner": "o", "repo": "r", "issue_number": 1})
    assert refused.value.category == "not_admitted"
    assert f"tool {TIMELINE!r} was not admitted by discovery" in str(refused.value)
    assert "SchemaDisclosureConsumer" in str(refused.value)


async def test_a_tool_missing_from_a_server_without_search_gets_no_search_hint() -> None:
    server: FastMCP[Any] = FastMCP("plain")
    _add_lookup(server, read_only=True)
    async with ContractClient(Client(server)) as host:
        await host.discover_tools()
        with pytest.raises(AdmissionError) as refused:
            await host.call("missing", {})
    assert "SchemaDisclosureConsumer" not in str(refused.value)
