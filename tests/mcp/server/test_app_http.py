"""``gated_http_app`` over real HTTP: output self-check, authorized and rate-limited completion, cursor
hygiene, unknown tools, tool failures, notifications, header parity through the assembled app."""

from __future__ import annotations

# Write confirmation (on by default) is opted out in this module: these tests exercise other gates;
# tests/mcp/host/test_write_confirmation.py covers confirmation itself.
import json
import logging
from collections.abc import Iterator
from typing import Any

import fastmcp
import httpx2
import pytest
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.server.transforms.search import RegexSearchTransform

from agent_connector_sdk.core.contracts import RateLimiter, validate_tool_result
from agent_connector_sdk.core.host import JsonRpcError
from agent_connector_sdk.demo.contract_lab import (
    contract_lab_app,
    contract_lab_completions,
    contract_lab_server,
)
from agent_connector_sdk.mcp.host import HostOptions
from agent_connector_sdk.mcp.host.contract_client import ContractClient
from agent_connector_sdk.mcp.server import gated_http_app
from tests.support.http_server import serve_asgi
from tests.support.raw_http import LAB_TOKENS, post_on

ENVIRONMENT_PROMPT = {"type": "ref/prompt", "name": "deploy_plan"}
ENVIRONMENT_TEMPLATE = {"type": "ref/resource", "uri": "deployments://{environment}/status"}


def error_of(response: httpx2.Response) -> dict[str, Any]:
    body = response.json()
    assert "result" not in body
    return dict(body["error"])


def result_of(response: httpx2.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body = response.json()
    assert "error" not in body, body
    return dict(body["result"])


@pytest.fixture
def lab_url() -> Iterator[tuple[str, httpx2.Client]]:
    with (
        serve_asgi(contract_lab_app(stateless_http=True, json_response=True)) as url,
        httpx2.Client() as http,
    ):
        yield url, http


# ------------------------------------------------------------------------------ output self-check
def test_conforming_array_result_passes(lab_url: tuple[str, httpx2.Client]) -> None:
    url, http = lab_url
    result = result_of(post_on(http, url, "tools/call", {"name": "list_regions", "arguments": {}}))
    assert isinstance(result["structuredContent"], list)
    assert result["isError"] is False


def test_result_violating_its_own_output_schema_never_leaves_as_success(
    lab_url: tuple[str, httpx2.Client],
) -> None:
    url, http = lab_url
    response = post_on(http, url, "tools/call", {"name": "inventory_snapshot", "arguments": {}})
    error = error_of(response)
    assert error["code"] == -32603
    assert error["data"] == {
        "tool": "inventory_snapshot",
        "category": "output_schema_violation",
        "path": "/structuredContent",
    }
    assert "sku" not in response.text  # the withheld value is not echoed


def test_tool_failure_is_an_is_error_result_that_still_conforms(lab_url: tuple[str, httpx2.Client]) -> None:
    url, http = lab_url
    listing = result_of(post_on(http, url, "tools/list", {}))
    descriptor = next(tool for tool in listing["tools"] if tool["name"] == "flaky_search")
    result = result_of(
        post_on(http, url, "tools/call", {"name": "flaky_search", "arguments": {"query": "q"}})
    )
    assert result["isError"] is True
    validate_tool_result(descriptor, result)  # raises ContractViolation if it does not conform


def test_unknown_tool_is_a_jsonrpc_error(lab_url: tuple[str, httpx2.Client]) -> None:
    url, http = lab_url
    error = error_of(post_on(http, url, "tools/call", {"name": "no_such_tool", "arguments": {}}))
    assert error["code"] == -32602


def test_plain_fastmcp_answers_unknown_tool_and_failure_differently() -> None:
    """The baseline the gates change: without them FastMCP 4.2 reports an unknown tool as a tool error
    and a failing tool's isError result omits the structuredContent its schema requires."""
    app = contract_lab_server().http_app(stateless_http=True, json_response=True)
    with serve_asgi(app) as url, httpx2.Client() as http:
        unknown = result_of(post_on(http, url, "tools/call", {"name": "no_such_tool", "arguments": {}}))
        failed = result_of(
            post_on(http, url, "tools/call", {"name": "flaky_search", "arguments": {"query": "q"}})
        )
    assert unknown["isError"] is True
    assert failed["isError"] is True and "structuredContent" not in failed


# ------------------------------------------------------------------------------------------ cursors
@pytest.mark.parametrize("cursor", ["bogus", ""])
def test_cursor_the_server_never_issued_is_invalid_params(
    lab_url: tuple[str, httpx2.Client], cursor: str
) -> None:
    url, http = lab_url
    response = post_on(http, url, "tools/list", {"cursor": cursor})
    assert error_of(response)["code"] == -32602


def test_paginating_server_refuses_garbage_cursor_and_follows_its_own() -> None:
    server = contract_lab_server(list_page_size=2)  # FastMCP's own paginator and cursors
    with (
        serve_asgi(gated_http_app(server, stateless_http=True, json_response=True)) as url,
        httpx2.Client() as http,
    ):
        first = result_of(post_on(http, url, "tools/list", {}))
        second = result_of(post_on(http, url, "tools/list", {"cursor": first["nextCursor"]}))
        assert [t["name"] for t in second["tools"]] != [t["name"] for t in first["tools"]]
        assert error_of(post_on(http, url, "tools/list", {"cursor": "not-a-cursor"}))["code"] == -32602
        assert error_of(post_on(http, url, "tools/list", {"cursor": ""}))["code"] == -32602


# ------------------------------------------------------------------------------------ notifications
def test_notification_gets_no_response(lab_url: tuple[str, httpx2.Client]) -> None:
    url, http = lab_url
    cases: list[tuple[str, dict[str, Any]]] = [
        ("notifications/cancelled", {"requestId": 7}),
        ("tools/call", {"name": "list_regions", "arguments": {}}),  # a call sent without an id
    ]
    for method, params in cases:
        response = post_on(http, url, method, params, request_id=None)
        assert response.status_code == 202
        assert response.content == b""


# ------------------------------------------------------------------------------------ header parity
def test_header_parity_enforced_by_the_assembled_app(lab_url: tuple[str, httpx2.Client]) -> None:
    url, http = lab_url
    params = {"name": "route_shipment", "arguments": {"region": "Zürich"}}
    # A careless client puts the UTF-8 bytes in the header raw: gateway and origin may read different text.
    raw_unicode = post_on(http, url, "tools/call", params, headers=[("mcp-param-region", "Zürich".encode())])
    assert raw_unicode.status_code == 400 and error_of(raw_unicode)["code"] == -32020
    assert error_of(raw_unicode)["data"]["category"] == "malformed"
    missing = post_on(http, url, "tools/call", params)
    assert missing.status_code == 400 and error_of(missing)["data"]["category"] == "missing"
    good = post_on(http, url, "tools/call", params, headers=[("Mcp-Param-Region", "=?base64?WsO8cmljaA==?=")])
    assert result_of(good)["structuredContent"]["region"] == "Zürich"


def test_header_parity_covers_tools_hidden_by_a_search_transform() -> None:
    server = contract_lab_server()
    server.add_transform(RegexSearchTransform())
    app = gated_http_app(server, stateless_http=True, json_response=True)
    with serve_asgi(app) as url, httpx2.Client() as http:
        listed = [t["name"] for t in result_of(post_on(http, url, "tools/list", {}))["tools"]]
        assert "route_shipment" not in listed
        direct = post_on(
            http,
            url,
            "tools/call",
            {"name": "route_shipment", "arguments": {"region": "eu-west"}},
            headers=[("Mcp-Param-Region", "us-east")],
        )
        assert direct.status_code == 400 and error_of(direct)["code"] == -32020
        proxied = post_on(
            http,
            url,
            "tools/call",
            {
                "name": "call_tool",
                "arguments": {"name": "route_shipment", "arguments": {"region": "eu-west"}},
            },
            headers=[("Mcp-Param-Region", "us-east")],
        )
        assert proxied.status_code == 400 and error_of(proxied)["code"] == -32020
        withheld = post_on(
            http, url, "tools/call", {"name": "call_tool", "arguments": {"name": "inventory_snapshot"}}
        )
        # Through the proxy the inner violation still never arrives as a successful result: FastMCP's
        # proxy turns the inner -32603 into an isError result of `call_tool` (which has no output schema).
        assert result_of(withheld)["isError"] is True
        assert "sku" not in withheld.text


# --------------------------------------------------------------------------------------- completion
@pytest.fixture
def authed_lab() -> Iterator[str]:
    app = contract_lab_app(
        auth=StaticTokenVerifier(tokens=LAB_TOKENS),
        rate_limiter=RateLimiter(5, 60.0),
        stateless_http=True,
    )
    with serve_asgi(app) as url:
        yield url


async def _complete(url: str, token: str, ref: dict[str, Any], argument: str, value: str) -> Any:
    async with ContractClient(
        fastmcp.Client(url, auth=token), options=HostOptions(require_confirmation=False)
    ) as client:
        return await client.complete(ref, argument, value)


@pytest.mark.parametrize("ref", [ENVIRONMENT_PROMPT, ENVIRONMENT_TEMPLATE])
async def test_analyst_never_receives_production(authed_lab: str, ref: dict[str, Any]) -> None:
    analyst = await _complete(authed_lab, "analyst-token", ref, "environment", "")
    assert analyst.values == ["development", "staging"] and analyst.total == 2 and analyst.has_more is False
    narrowed = await _complete(authed_lab, "analyst-token", ref, "environment", "prod")
    assert narrowed.values == [] and narrowed.total == 0
    operator = await _complete(authed_lab, "operator-token", ref, "environment", "")
    assert operator.values == ["development", "staging", "production"] and operator.total == 3


async def test_completion_is_rate_limited_per_caller(authed_lab: str) -> None:
    async with ContractClient(
        fastmcp.Client(authed_lab, auth="analyst-token"), options=HostOptions(require_confirmation=False)
    ) as analyst:
        for _ in range(5):
            await analyst.complete(ENVIRONMENT_PROMPT, "environment", "st")
        with pytest.raises(JsonRpcError) as limited:
            await analyst.complete(ENVIRONMENT_PROMPT, "environment", "st")
    assert -32019 <= limited.value.code <= -32000
    assert limited.value.retry_after_ms is not None and 0 < limited.value.retry_after_ms <= 60_000
    # Another caller has its own window.
    operator = await _complete(authed_lab, "operator-token", ENVIRONMENT_PROMPT, "environment", "st")
    assert operator.values == ["staging"]


async def test_completion_rejects_invalid_requests(authed_lab: str) -> None:
    with pytest.raises(JsonRpcError) as refused:
        await _complete(authed_lab, "analyst-token", ENVIRONMENT_PROMPT, "environment", "x" * 5000)
    assert refused.value.code == -32602


async def test_completion_logs_hold_no_suggestion_values(
    authed_lab: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="agent_connector_sdk"):
        await _complete(authed_lab, "operator-token", ENVIRONMENT_PROMPT, "environment", "produc")
        await _complete(authed_lab, "analyst-token", ENVIRONMENT_TEMPLATE, "environment", "")
    text = caplog.text
    assert "completion answered" in text
    for value in ("production", "produc", "staging", "development"):
        assert value not in text


def test_unauthenticated_completion_is_refused(authed_lab: str) -> None:
    with httpx2.Client() as http:
        response = post_on(
            http,
            authed_lab,
            "completion/complete",
            {"ref": ENVIRONMENT_PROMPT, "argument": {"name": "environment", "value": ""}},
        )
    assert response.status_code == 401


def test_completion_values_capped_with_total_and_has_more() -> None:
    server = contract_lab_server()
    app = gated_http_app(
        server, completions=contract_lab_completions(), stateless_http=True, json_response=True
    )
    with serve_asgi(app) as url, httpx2.Client() as http:
        result = result_of(
            post_on(
                http,
                url,
                "completion/complete",
                {"ref": ENVIRONMENT_PROMPT, "argument": {"name": "service", "value": ""}},
            )
        )
    completion = result["completion"]
    assert len(completion["values"]) == 100
    assert completion["total"] == 150 and completion["hasMore"] is True


@pytest.fixture
def fallbacks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names the output check had to resolve itself (a second lookup), recorded as they happen."""
    from agent_connector_sdk.mcp.server import OutputSelfCheck

    resolved: list[str] = []
    original = OutputSelfCheck._published_tool

    async def counting(self: OutputSelfCheck, context: Any, name: str) -> Any:
        resolved.append(name)
        return await original(self, context, name)

    monkeypatch.setattr(OutputSelfCheck, "_published_tool", counting)
    return resolved


async def test_output_check_reuses_fastmcps_own_tool_resolution(fallbacks: list[str]) -> None:
    """With the resolution hook installed the check never resolves a tool a second time (it reads the
    call's record); without it (a server where only the middleware was added) it falls back to
    ``server.get_tool``. In memory here; over HTTP in the next test."""
    from agent_connector_sdk.mcp.server import OutputSelfCheck

    gated = contract_lab_server()
    gated_http_app(gated)
    middleware_only = contract_lab_server()
    middleware_only.add_middleware(OutputSelfCheck())
    for server, expected in ((gated, []), (middleware_only, ["list_regions", "flaky_search"])):
        fallbacks.clear()
        async with fastmcp.Client(server) as client:
            regions = await client.call_tool_mcp("list_regions", {})
            failed = await client.call_tool_mcp("flaky_search", {"query": "q"})
        assert not regions.is_error and failed.is_error and failed.structured_content == []
        assert fallbacks == expected


def test_output_check_reads_the_call_record_over_http_on_both_transports_and_through_search(
    fallbacks: list[str],
) -> None:
    """Over HTTP the record travels in the request's scope: a 2026-07-28 call, a handshake-era call (its
    headers checked at the ASGI entry) and a call through the search proxy (the proxied tool, resolved
    once by the hook) are all checked against the tool that ran, without a second lookup."""
    from tests.support.parity import make_server, raw_call, result_of

    legacy = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "route", "arguments": {"region": "eu"}},
    }
    base = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    app = gated_http_app(make_server(search=True), stateless_http=True, json_response=True)
    with serve_asgi(app) as url, httpx2.Client(timeout=30) as client:
        proxied = raw_call(
            client,
            url,
            "call_tool",
            {"name": "route", "arguments": {"region": "eu"}},
            [("Mcp-Param-Region", "eu")],
        )
        headers = {**base, "Mcp-Param-Region": "eu"}
        handshake_era = client.post(url, content=json.dumps(legacy), headers=headers)
        direct = raw_call(client, url, "route", {"region": "eu"}, [("Mcp-Param-Region", "eu")])
    assert result_of(direct)[0] == "eu"
    assert result_of(handshake_era)[0] == "eu"
    assert proxied.status_code == 200 and proxied.json()["result"]["isError"] is False, proxied.text
    assert fallbacks == []


def test_installing_twice_does_not_stack_gates() -> None:
    from agent_connector_sdk.mcp.compat import installed_tool_resolution
    from agent_connector_sdk.mcp.server import OutputSelfCheck
    from agent_connector_sdk.mcp.server._resolution import ResolutionGate

    server = contract_lab_server()
    transforms = len(server.transforms)
    gated_http_app(server)
    hook = installed_tool_resolution(server)
    gated_http_app(server)
    assert sum(isinstance(m, OutputSelfCheck) for m in server.middleware) == 1
    # One resolution hook, installed once (the second install wraps nothing), and no transform added.
    assert isinstance(hook, ResolutionGate) and installed_tool_resolution(server) is hook
    assert not isinstance(hook.original, ResolutionGate)
    assert len(server.transforms) == transforms


async def test_completion_for_a_prompt_the_caller_cannot_see_is_empty(authed_lab: str) -> None:
    rollback = {"type": "ref/prompt", "name": "production_rollback"}
    analyst = await _complete(authed_lab, "analyst-token", rollback, "release", "2026")
    assert analyst.values == [] and analyst.total in (0, None)
    operator = await _complete(authed_lab, "operator-token", rollback, "release", "2026.07")
    assert operator.values == ["2026.07.1", "2026.07.2"] and operator.total == 2


async def test_fastmcp_wrapped_results_get_their_compatibility_text_and_pass_the_client() -> None:
    """FastMCP wraps a ``list[int]`` return as ``{"result": [...]}`` but its text block serializes the
    unwrapped list; the check adds the serialization of the structured value instead of withholding it."""
    server: fastmcp.FastMCP[Any] = fastmcp.FastMCP("wrapped")

    @server.tool
    def numbers() -> list[int]:
        return [1, 2, 3]

    gated_http_app(server)
    async with ContractClient(
        fastmcp.Client(server), options=HostOptions(require_confirmation=False)
    ) as client:
        await client.discover_tools()
        result = await client.call("numbers", {})
    assert result.structured_content == {"result": [1, 2, 3]}
    assert [block["text"] for block in result.content] == ["[1,2,3]", '{"result":[1,2,3]}']
