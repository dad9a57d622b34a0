"""An OpenAPI tool's failures inside its published contract, over real HTTP (issue 29).

The output schema of every operation tool covers its failures: an upstream 4xx/5xx is an ``isError``
result whose ``structuredContent`` conforms (with the upstream's status, and — only with
``upstream_errors="echo"`` — the body when it has the shape the document declares for that status);
never a protocol error, never a made-up value. An operation reaching an unresolvable ``$ref`` is not
served at all. An upstream answer larger than ``max_upstream_bytes`` is a typed error result naming
the bound, read no further than the bound (also when it is compressed).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import zlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fastmcp import Client
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from agent_connector_sdk.connectors import OpenAPISource, build_openapi_server
from agent_connector_sdk.core.contracts import validate_tool_result
from agent_connector_sdk.mcp.server import gated_http_app
from agent_connector_sdk.serving.openapi_app import build_openapi_app
from tests.support.http_server import serve_asgi
from tests.support.raw_http import raw_post

ERROR = {"type": "object", "properties": {"code": {"type": "integer"}, "detail": {"type": "string"}}}
PET = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
    "required": ["id", "name"],
}


def _json(schema: dict[str, Any], description: str = "d") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


DOCUMENT: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "pets", "version": "1"},
    "paths": {
        "/pets/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "get": {
                "operationId": "getPet",
                "responses": {
                    "200": _json({"$ref": "#/components/schemas/Pet"}),
                    "404": {"$ref": "#/components/responses/NotFound"},
                },
            },
        },
        "/pets": {
            "get": {
                "operationId": "listPets",
                "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer"}}],
                "responses": {"200": _json({"type": "array", "items": {"$ref": "#/components/schemas/Pet"}})},
            },
            "post": {
                "operationId": "addPet",
                "requestBody": {
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Gone"}}}
                },
                "responses": {"200": _json({"$ref": "#/components/schemas/Pet"})},
            },
        },
    },
    "components": {
        "schemas": {"Pet": PET, "Error": ERROR},
        "responses": {"NotFound": _json({"$ref": "#/components/schemas/Error"}, "no such pet")},
    },
}


class Upstream:
    """Records every request; answers what ``answer`` says (status, body bytes, headers, or a stream)."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.encodings: list[str | None] = []
        self.answer: dict[str, Any] = {}
        self.streamed = 0
        self.app = Starlette(routes=[Route("/{path:path}", self._handle, methods=["GET", "POST"])])

    async def _handle(self, request: Request) -> Response:
        self.requests.append(f"{request.method} {request.url.path}")
        self.encodings.append(request.headers.get("accept-encoding"))
        answer = self.answer
        if "stream" in answer:
            return StreamingResponse(self._stream(answer["stream"]), media_type="application/json")
        return Response(
            answer.get("body", b'{"id": "p1", "name": "Rex"}'),
            status_code=answer.get("status", 200),
            headers=answer.get("headers", {}),
            media_type="application/json",
        )

    async def _stream(self, total: int) -> AsyncIterator[bytes]:
        chunk = b" " * 65_536
        yield b'{"pad": "'
        for _ in range(total // len(chunk)):
            self.streamed += len(chunk)
            yield chunk
            await asyncio.sleep(0.001)  # a real network's pace: a reader that stops is noticed
        yield b'"}'


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[Upstream, str]]:
    fake = Upstream()
    with serve_asgi(fake.app, path="") as base:
        yield fake, base


@pytest.fixture
def fake(upstream: tuple[Upstream, str]) -> Upstream:
    upstream[0].requests.clear()
    upstream[0].answer = {}
    upstream[0].streamed = 0
    upstream[0].encodings.clear()
    return upstream[0]


def _app(base: str, **options: Any) -> Any:
    built = build_openapi_server(DOCUMENT, base_url=base, **options)
    return gated_http_app(built.server, stateless_http=True, json_response=True)


def _call(url: str, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The call's result and the listed descriptor of ``name`` (what the result must conform to)."""
    response = raw_post(url, "tools/call", {"name": name, "arguments": arguments})
    assert response.status_code == 200, response.text
    message = response.json()
    assert "result" in message, message  # never a protocol error
    tools = raw_post(url, "tools/list", {}).json()["result"]["tools"]
    return message["result"], next(t for t in tools if t["name"] == name)


def test_an_upstream_404_is_an_error_result_that_conforms_with_its_status(
    upstream: tuple[Upstream, str], fake: Upstream
) -> None:
    fake.answer = {"status": 404, "body": b'{"code": 404, "detail": "no pet secret-42"}'}
    with serve_asgi(_app(upstream[1])) as url:
        result, descriptor = _call(url, "getPet", {"id": "p1"})
    assert result["isError"] is True
    validate_tool_result(descriptor, result)
    text = "upstream_error: the upstream API answered HTTP 404 to tool 'getPet'"
    assert result["structuredContent"] == {
        "error": {"category": "upstream_error", "message": text, "status": 404}
    }
    assert result["content"][0]["text"] == text
    assert "secret-42" not in json.dumps(result)  # generic mode: the body stays in the log
    # The published schema says what a failure looks like, including the document's error body shape.
    failure = descriptor["outputSchema"]["anyOf"][1]["properties"]["error"]
    assert failure["required"] == ["category", "message"]
    assert failure["properties"]["body"]["properties"]["code"] == {"type": "integer"}
    assert fake.requests == ["GET /pets/p1"]


def test_echo_carries_the_body_only_when_it_has_the_declared_shape(
    upstream: tuple[Upstream, str], fake: Upstream
) -> None:
    with serve_asgi(_app(upstream[1], upstream_errors="echo")) as url:
        fake.answer = {"status": 404, "body": b'{"code": 404, "detail": "no such pet"}'}
        declared, descriptor = _call(url, "getPet", {"id": "p1"})
        fake.answer = {"status": 404, "body": b'{"code": "not-an-integer"}'}
        undeclared, _ = _call(url, "getPet", {"id": "p1"})
        fake.answer = {"status": 500, "body": b"<html>oops</html>"}
        server_error, _ = _call(url, "getPet", {"id": "p1"})
    for result in (declared, undeclared, server_error):
        assert result["isError"] is True
        validate_tool_result(descriptor, result)
    assert declared["structuredContent"]["error"]["body"] == {"code": 404, "detail": "no such pet"}
    assert declared["structuredContent"]["error"]["status"] == 404
    # A body of another shape is not passed off as the declared one (its excerpt is in the text only).
    assert "body" not in undeclared["structuredContent"]["error"]
    assert "not-an-integer" in undeclared["content"][0]["text"]
    assert server_error["structuredContent"]["error"]["status"] == 500
    assert "body" not in server_error["structuredContent"]["error"]


def test_a_wrapped_result_and_its_failure_both_conform_and_fastmcp_still_unwraps(
    upstream: tuple[Upstream, str], fake: Upstream
) -> None:
    with serve_asgi(_app(upstream[1])) as url:
        fake.answer = {"body": b'[{"id": "p1", "name": "Rex"}]'}
        success, descriptor = _call(url, "listPets", {})
        fake.answer = {"status": 503, "body": b"{}"}
        failure, _ = _call(url, "listPets", {})
    validate_tool_result(descriptor, success)
    validate_tool_result(descriptor, failure)
    assert success["structuredContent"] == {"result": [{"id": "p1", "name": "Rex"}]}
    assert failure["structuredContent"]["error"]["status"] == 503


async def test_fastmcps_own_client_reads_the_success_value(
    upstream: tuple[Upstream, str], fake: Upstream
) -> None:
    fake.answer = {"body": b'[{"id": "p1", "name": "Rex"}]'}
    built = build_openapi_server(DOCUMENT, base_url=upstream[1])
    async with Client(built.server) as client:
        listed = await client.call_tool("listPets", {})
        fake.answer = {"body": b'{"id": "p1", "name": "Rex"}'}
        single = await client.call_tool("getPet", {"id": "p1"})
    await built.aclose()
    # The wrapper is still unwrapped (FastMCP builds its own objects from the schema).
    assert [(pet.id, pet.name) for pet in listed.data] == [("p1", "Rex")]
    assert single.structured_content == {"id": "p1", "name": "Rex"} and single.is_error is False


def test_refused_arguments_are_a_conforming_failure_and_reach_nobody(
    upstream: tuple[Upstream, str], fake: Upstream
) -> None:
    with serve_asgi(_app(upstream[1])) as url:
        result, descriptor = _call(url, "listPets", {"limit": "ten"})
    assert result["isError"] is True
    validate_tool_result(descriptor, result)
    failure = result["structuredContent"]["error"]
    assert failure["category"] == "invalid_arguments" and "status" not in failure
    assert fake.requests == []


def test_an_operation_with_an_unresolvable_ref_is_not_served(
    upstream: tuple[Upstream, str], fake: Upstream
) -> None:
    built = build_openapi_server(DOCUMENT, base_url=upstream[1])
    assert built.refused == {"addPet": "$ref #/components/schemas/Gone resolves to nothing in the document"}
    with serve_asgi(gated_http_app(built.server, stateless_http=True, json_response=True)) as url:
        names = [t["name"] for t in raw_post(url, "tools/list", {}).json()["result"]["tools"]]
        call = raw_post(url, "tools/call", {"name": "addPet", "arguments": {}}).json()
    assert sorted(names) == ["getPet", "listPets"]
    assert call["error"]["code"] == -32602
    assert fake.requests == []


def _vm_hwm_kib() -> int | None:
    """Peak RSS since the last reset, or ``None`` where the kernel cannot reset it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return None
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return None


BOUND = 1_000_000


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param({"body": b'{"pad": "' + b" " * 3_000_000 + b'"}'}, id="content-length"),
        pytest.param({"stream": 50_000_000}, id="chunked-50MB"),
        pytest.param(
            {
                "body": gzip.compress(b'{"pad": "' + b" " * 50_000_000 + b'"}'),
                "headers": {"content-encoding": "gzip"},
            },
            id="gzip-50MB",
        ),
        pytest.param(
            {
                "body": zlib.compress(b"[" + b"0," * 5_000_000 + b"0]"),
                "headers": {"content-encoding": "deflate"},
            },
            id="deflate-10MB",
        ),
    ],
)
def test_an_answer_over_the_bound_is_a_typed_failure_read_no_further(
    upstream: tuple[Upstream, str], fake: Upstream, answer: dict[str, Any]
) -> None:
    fake.answer = answer
    with serve_asgi(_app(upstream[1], max_upstream_bytes=BOUND)) as url:
        before = _vm_hwm_kib()
        result, descriptor = _call(url, "listPets", {})
        after = _vm_hwm_kib() if before is not None else None
    assert result["isError"] is True
    validate_tool_result(descriptor, result)
    failure = result["structuredContent"]["error"]
    assert failure["category"] == "upstream_too_large" and "status" not in failure
    assert "1,000,000 bytes" in failure["message"] and "'listPets'" in failure["message"]
    assert len(json.dumps(result)) < 2_000
    if "stream" in answer:
        assert fake.streamed < 20_000_000  # the server stopped reading; the upstream stopped sending
    if before is not None and after is not None:
        assert after - before < 40_000, f"peak RSS grew by {after - before} KiB"


def test_an_answer_within_the_bound_and_an_unbounded_encoding(
    upstream: tuple[Upstream, str], fake: Upstream
) -> None:
    # The operator's client would accept brotli; a bounded call asks only for what it can decode bounded.
    client = httpx2.AsyncClient(base_url=upstream[1], headers={"accept-encoding": "br, gzip"})
    built = build_openapi_server(DOCUMENT, client=client, max_upstream_bytes=BOUND)
    with serve_asgi(gated_http_app(built.server, stateless_http=True, json_response=True)) as url:
        fake.answer = {
            "body": gzip.compress(b'[{"id": "p1", "name": "Rex"}]'),
            "headers": {"content-encoding": "gzip"},
        }
        fitting, descriptor = _call(url, "listPets", {})
        fake.answer = {"body": b"\x00" * 10, "headers": {"content-encoding": "br"}}
        unknown, _ = _call(url, "listPets", {})
    assert fitting["isError"] is False
    assert fitting["structuredContent"] == {"result": [{"id": "p1", "name": "Rex"}]}
    assert unknown["isError"] is True
    validate_tool_result(descriptor, unknown)
    assert unknown["structuredContent"]["error"]["category"] == "upstream_too_large"
    assert "encoding" in unknown["structuredContent"]["error"]["message"]
    assert fake.encodings == ["gzip, deflate", "gzip, deflate"]


def test_serve_builds_the_same_contract_behind_search(upstream: tuple[Upstream, str], fake: Upstream) -> None:
    source = OpenAPISource(raw=json.dumps(DOCUMENT).encode(), document=DOCUMENT)
    app, tools = build_openapi_app(source, upstream=upstream[1], max_upstream_bytes=BOUND)
    assert tools == 2  # addPet left out
    fake.answer = {"status": 404, "body": b"{}"}
    with serve_asgi(app) as url:
        call = {"name": "call_tool", "arguments": {"name": "getPet", "arguments": {"id": "p1"}}}
        result = raw_post(url, "tools/call", call).json()["result"]
        fake.answer = {"stream": 5_000_000}
        too_large = raw_post(url, "tools/call", call).json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["status"] == 404
    assert too_large["structuredContent"]["error"]["category"] == "upstream_too_large"


def test_the_bound_must_be_positive() -> None:
    for bad in (0, -1, 1.5):
        with pytest.raises(ValueError, match="max_upstream_bytes"):
            build_openapi_server(DOCUMENT, base_url="http://127.0.0.1:9", max_upstream_bytes=bad)  # type: ignore[arg-type]


def _assert_upstream_contract(result: dict[str, Any], tool: str, pointer: str, keyword: str) -> None:
    assert result["isError"] is True
    failure = result["structuredContent"]["error"]
    assert failure["category"] == "upstream_contract"
    text = (
        f"upstream_contract: the upstream's answer to tool {tool!r} breaks its declared response schema "
        f"at {pointer!r} (keyword {keyword!r})"
    )
    assert failure["message"] == text
    assert result["content"][0]["text"] == text


def test_an_upstream_answer_breaking_its_response_schema_is_an_upstream_contract_result(
    upstream: tuple[Upstream, str], fake: Upstream
) -> None:
    # A real upstream answers 200 with a body the document's response schema refuses: the call failed
    # (a conforming isError result naming the pointer and the keyword), never a JSON-RPC -32603.
    with serve_asgi(_app(upstream[1])) as url:
        fake.answer = {"body": b'{"id": "p1", "name": 7, "secret": "zz-upstream-value"}'}
        mistyped, descriptor = _call(url, "getPet", {"id": "p1"})
        fake.answer = {"body": b'{"id": "p1"}'}
        incomplete, _ = _call(url, "getPet", {"id": "p1"})
        fake.answer = {"body": b'[{"id": "p1", "name": "Rex"}, {"id": 2, "name": "Fido"}]'}
        wrapped, wrapped_descriptor = _call(url, "listPets", {})
    validate_tool_result(descriptor, mistyped)
    validate_tool_result(descriptor, incomplete)
    validate_tool_result(wrapped_descriptor, wrapped)
    _assert_upstream_contract(mistyped, "getPet", "/name", "type")
    _assert_upstream_contract(incomplete, "getPet", "/name", "required")  # where the member is missing
    _assert_upstream_contract(wrapped, "listPets", "/result/1/id", "type")
    assert "zz-upstream-value" not in json.dumps(mistyped)  # names only, never the upstream's values


def test_serve_answers_an_upstream_contract_break_as_the_same_result(
    upstream: tuple[Upstream, str], fake: Upstream
) -> None:
    source = OpenAPISource(raw=json.dumps(DOCUMENT).encode(), document=DOCUMENT)
    app, _ = build_openapi_app(source, upstream=upstream[1], max_upstream_bytes=BOUND)
    fake.answer = {"body": b'{"id": "p1", "name": 7}'}
    with serve_asgi(app) as url:
        call = {"name": "call_tool", "arguments": {"name": "getPet", "arguments": {"id": "p1"}}}
        message = raw_post(url, "tools/call", call).json()
    assert "result" in message, message  # not the JSON-RPC -32603 it used to be
    _assert_upstream_contract(message["result"], "getPet", "/name", "type")
