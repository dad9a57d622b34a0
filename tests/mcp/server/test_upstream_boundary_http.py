"""The OpenAPI connector's upstream boundary over real HTTP (issue 25): only a call's *arguments* become
upstream parameters — a caller's HTTP header named like a declared ``in: header`` parameter never
reaches the upstream — and an upstream error status reaches the caller as a typed ``isError`` result
with the status and a generic message; the body goes to the log (bounded, argument values replaced)
and to the caller only with ``upstream_errors="echo"`` (``serve --upstream-errors=echo``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agent_connector_sdk.connectors import OpenAPISource, build_openapi_server
from agent_connector_sdk.connectors.openapi import UpstreamError
from agent_connector_sdk.core.contracts import validate_tool_result
from agent_connector_sdk.mcp.server import ERROR_TEXT_LIMIT, gated_http_app
from agent_connector_sdk.serving.openapi_app import build_openapi_app
from tests.support.http_server import serve_asgi
from tests.support.raw_http import capture_logs, raw_post

SECRET = "SECRET_DB_PASSWORD=hunter2-upstream-only"
ARGUMENT_SECRET = "acme-tenant-value-42"


class Upstream:
    """Records every request; ``status`` != 200 answers that status with a body carrying a secret and
    an echo of the request path (as real APIs echo what they were sent)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = 200
        self.app = Starlette(routes=[Route("/{path:path}", self._handle, methods=["GET"])])

    async def _handle(self, request: Request) -> Response:
        self.requests.append({"path": request.url.path, "headers": dict(request.headers)})
        if self.status != 200:
            body = f"internal failure for {request.url.path}: {SECRET}\n\x1b[31m" + "x" * 5_000
            return Response(body, status_code=self.status, media_type="text/plain")
        return JSONResponse({"ok": True})


DOCUMENT: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "tenant api", "version": "1"},
    "paths": {
        "/items/{item}": {
            "get": {
                "operationId": "get_item",
                "parameters": [
                    {"name": "item", "in": "path", "required": True, "schema": {"type": "string"}},
                    {"name": "X-Tenant", "in": "header", "required": False, "schema": {"type": "string"}},
                ],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    }
                },
            }
        }
    },
}


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[Upstream, str]]:
    fake = Upstream()
    with serve_asgi(fake.app, path="") as base:
        yield fake, base


@pytest.fixture
def fake(upstream: tuple[Upstream, str]) -> Iterator[Upstream]:
    upstream[0].requests.clear()
    upstream[0].status = 200
    yield upstream[0]
    upstream[0].status = 200


def _serve(base: str, **options: Any) -> Any:
    built = build_openapi_server(DOCUMENT, base_url=base, **options)
    return gated_http_app(built.server, stateless_http=True, json_response=True)


def _result(response: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    return dict(response.json()["result"])


def test_a_callers_header_named_like_a_declared_parameter_never_reaches_the_upstream(
    upstream: tuple[Upstream, str], fake: Upstream
) -> None:
    with serve_asgi(_serve(upstream[1])) as url:
        # The argument is absent: the caller's own X-Tenant header (any length) must not stand in for it.
        absent = raw_post(
            url,
            "tools/call",
            {"name": "get_item", "arguments": {"item": "a"}},
            headers=[("X-Tenant", "caller-chosen-" + "t" * 5_000)],
        )
        # The argument is present: the upstream gets the argument's value, never the caller's header.
        present = raw_post(
            url,
            "tools/call",
            {"name": "get_item", "arguments": {"item": "b", "X-Tenant": "from-argument"}},
            headers=[("X-Tenant", "caller-chosen")],
        )
    assert _result(absent)["isError"] is False and _result(present)["isError"] is False
    first, second = fake.requests
    assert "x-tenant" not in first["headers"]
    assert second["headers"]["x-tenant"] == "from-argument"
    assert "caller-chosen" not in json.dumps(fake.requests)


def test_an_upstream_error_is_a_typed_result_with_the_status_and_no_body(
    upstream: tuple[Upstream, str], fake: Upstream
) -> None:
    fake.status = 500
    with capture_logs() as logs, serve_asgi(_serve(upstream[1])) as url:
        response = raw_post(url, "tools/call", {"name": "get_item", "arguments": {"item": ARGUMENT_SECRET}})
        listing = raw_post(url, "tools/list", {}).json()["result"]["tools"]
    result = _result(response)
    assert result["isError"] is True
    validate_tool_result(next(t for t in listing if t["name"] == "get_item"), result)
    text = result["content"][0]["text"]
    assert text == "upstream_error: the upstream API answered HTTP 500 to tool 'get_item'"
    assert SECRET not in json.dumps(result) and "internal failure" not in json.dumps(result)
    # The operator's log has a bounded excerpt of the body, escaped, without the argument's value.
    logged = [r.getMessage() for r in logs.records if r.getMessage().startswith("upstream error:")]
    assert len(logged) == 1 and SECRET in logged[0] and "HTTP 500" in logged[0]
    assert len(logged[0]) < 1_300 and "\x1b" not in logged[0]
    # (The upstream client's own request log names the URL; `serve` keeps that logger quiet — see
    # tests/cli/test_serve_hardening.py — so only the server's loggers are held to this here.)
    server_lines = [r.getMessage() for r in logs.records if not r.name.startswith(("httpx2", "httpcore2"))]
    assert not any(ARGUMENT_SECRET in line for line in server_lines), "an argument value reached a log line"
    assert not any("\x1b" in line for line in server_lines)


def test_the_body_reaches_the_caller_only_when_echo_is_asked_for(
    upstream: tuple[Upstream, str], fake: Upstream
) -> None:
    fake.status = 503
    with serve_asgi(_serve(upstream[1], upstream_errors="echo")) as url:
        result = _result(raw_post(url, "tools/call", {"name": "get_item", "arguments": {"item": "a"}}))
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith("upstream_error: the upstream API answered HTTP 503 to tool 'get_item': ")
    assert SECRET in text and len(text) <= ERROR_TEXT_LIMIT


def test_serve_builds_the_same_boundary_and_refuses_an_unknown_mode(
    upstream: tuple[Upstream, str], fake: Upstream
) -> None:
    source = OpenAPISource(raw=json.dumps(DOCUMENT).encode(), document=DOCUMENT)
    fake.status = 500
    for mode, leaks in (("generic", False), ("echo", True)):
        app, tools = build_openapi_app(source, upstream=upstream[1], upstream_errors=mode)  # type: ignore[arg-type]
        assert tools == 1
        with serve_asgi(app) as url:
            call = {"name": "call_tool", "arguments": {"name": "get_item", "arguments": {"item": "a"}}}
            result = _result(raw_post(url, "tools/call", call))
        assert result["isError"] is True and "HTTP 500" in result["content"][0]["text"]
        assert (SECRET in json.dumps(result)) is leaks
    with pytest.raises(ValueError, match="upstream_errors"):
        build_openapi_server(DOCUMENT, base_url=upstream[1], upstream_errors="verbose")  # type: ignore[arg-type]


def test_upstream_error_is_one_of_ours() -> None:
    error = UpstreamError("get_item", 502)
    assert error.category == "upstream_error" and error.gate == "execute" and error.status == 502
