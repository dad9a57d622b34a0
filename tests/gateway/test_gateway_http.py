"""The gateway over real Streamable HTTP and stdio: children admitted, namespaced, searched, disclosed,
called through the host core; the misbehaving child's rejections and broken results never pass."""

from __future__ import annotations

import concurrent.futures
import json
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from agent_connector_sdk.audit import BoundedAuditSink
from agent_connector_sdk.core.schema_disclosure import canonical_json_bytes
from agent_connector_sdk.core.schema_disclosure.encoding import sha256_hex
from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig
from agent_connector_sdk.mcp.server import gated_http_app
from tests.support.gateway import call, rpc, search
from tests.support.gateway_children import Misbehaving, recording, weather_server
from tests.support.http_server import serve_asgi

STDIO = ChildSpec("files", command=(sys.executable, "-m", "tests.support.gateway_children", "stdio"))


class Stack:
    def __init__(self, url: str, gateway: Gateway, weather_log: list[dict[str, str]], bad: Misbehaving):
        self.url = url
        self.gateway = gateway
        self.weather_log = weather_log
        self.bad = bad


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    weather_log: list[dict[str, str]] = []
    bad = Misbehaving()
    weather_app = recording(gated_http_app(weather_server(), stateless_http=True), weather_log)
    with (
        serve_asgi(weather_app) as weather_url,
        serve_asgi(bad.server().streamable_http_app(stateless_http=True)) as bad_url,
    ):
        config = GatewayConfig(
            children=(ChildSpec("weather", url=weather_url), ChildSpec("bad", url=bad_url), STDIO),
            # Hang guards: the stdio child's start-up and first answers take seconds on a busy machine.
            call_timeout=30,
            connect_timeout=60,
        )
        gateway = Gateway(config, audit=BoundedAuditSink(), health_detail=True)
        with serve_asgi(gateway.http_app()) as url:
            yield Stack(url, gateway, weather_log, bad)


def test_every_child_is_up_and_namespaced(stack: Stack) -> None:
    names = {entry["name"] for entry in search(stack.url, "forecast|route|listing|morph|ok")}
    assert {"weather_forecast", "weather_route", "files_forecast", "files_route"} <= names
    assert {"bad_listing", "bad_morph", "bad_ok"} <= names
    assert {h.name: h.state for h in stack.gateway.health()} == {"weather": "up", "bad": "up", "files": "up"}


def test_a_rejected_child_tool_is_neither_searchable_nor_callable(stack: Stack) -> None:
    assert search(stack.url, "leaky|api_key") == []
    _status, message = rpc(stack.url, "tools/call", {"name": "bad_leaky", "arguments": {}})
    assert "error" in message and message["error"]["code"] == -32602
    catalog = stack.gateway.children["bad"].catalog
    assert catalog is not None
    assert [(r.tool, r.category) for r in catalog.rejected] == [("leaky", "sensitive_header")]
    assert "leaky" not in stack.bad.calls


def test_empty_string_cursor_is_followed_and_the_second_page_admitted(stack: Stack) -> None:
    catalog = stack.gateway.children["bad"].catalog
    assert catalog is not None
    assert catalog.page_trace == (None, "")
    assert set(catalog.tools) == {"bad_listing", "bad_morph", "bad_ok"}
    assert catalog.descriptors == 4


def test_a_result_breaking_its_output_schema_is_a_typed_error_never_passed_through(stack: Stack) -> None:
    status, message = rpc(stack.url, "tools/call", {"name": "bad_listing", "arguments": {}})
    # No result at all: nothing the child did not produce (no placeholder), nothing it broke.
    assert status == 200 and "result" not in message
    error = message["error"]
    assert error["code"] == -32014
    assert error["data"] == {
        "tool": "bad_listing",
        "child": "bad",
        "kind": "child_contract",
        "category": "output_schema_violation",
    }
    assert error["message"].startswith("gateway refused bad_listing: output_schema_violation")
    assert "[1, 2, 3]" not in str(message) and "[1,2,3]" not in str(message)
    assert stack.bad.calls.count("listing") >= 1  # the child did run: the gateway refused what came back


def test_good_results_pass_through_http_and_stdio(stack: Stack) -> None:
    for tool in ("weather_forecast", "files_forecast"):
        result = call(stack.url, tool, {"city": "Rome"})
        assert result.get("isError") is not True
        assert result["structuredContent"] == {"city": "Rome", "celsius": 21}


def test_argument_validation_happens_at_the_gateway(stack: Stack) -> None:
    before = len(stack.weather_log)
    result = call(stack.url, "weather_forecast", {"city": 12})
    assert result["isError"] is True
    assert len(stack.weather_log) == before  # never reached the child


def _tools_calls(log: list[dict[str, str]]) -> list[dict[str, str]]:
    return [headers for headers in log if headers.get("mcp-method") == "tools/call"]


def test_param_headers_are_re_emitted_from_the_body_and_caller_credentials_never_forwarded(
    stack: Stack,
) -> None:
    before = len(_tools_calls(stack.weather_log))
    result = call(
        stack.url,
        "weather_route",
        {"region": "eu-west", "priority": 2},
        headers=[
            ("mcp-param-region", "eu-west"),
            ("authorization", "Bearer caller-secret"),
            ("cookie", "session=caller"),
            ("mcp-param-extra", "smuggled"),
        ],
    )
    assert result["structuredContent"] == {"region": "eu-west", "priority": 2}
    sent = _tools_calls(stack.weather_log)[before:]
    assert len(sent) == 1
    headers = sent[0]
    assert headers["mcp-param-region"] == "eu-west"
    assert "authorization" not in headers and "cookie" not in headers
    assert "mcp-param-extra" not in headers
    assert "caller-secret" not in str(headers)


def test_a_header_that_disagrees_with_the_body_is_refused_before_the_child(stack: Stack) -> None:
    before = len(_tools_calls(stack.weather_log))
    status, message = rpc(
        stack.url,
        "tools/call",
        {"name": "weather_route", "arguments": {"region": "eu-west"}},
        headers=[("mcp-param-region", "us-east")],
    )
    assert status == 400 and message["error"]["code"] == -32020
    assert len(_tools_calls(stack.weather_log)) == before


def test_disclosure_source_is_the_child_descriptor_bytes(stack: Stack) -> None:
    (entry,) = [e for e in search(stack.url, "forecast") if e["name"] == "weather_forecast"]
    status, message = rpc(stack.url, "resources/read", {"uri": entry["manifest_uri"]})
    assert status == 200, message

    manifest = json.loads(message["result"]["contents"][0]["text"])
    # Independently: list the child ourselves and hash the descriptor's canonical bytes.
    child_url = stack.gateway.children["weather"].spec.url
    assert child_url is not None
    _, listing = rpc(child_url, "tools/list", {})
    (descriptor,) = [t for t in listing["result"]["tools"] if t["name"] == "forecast"]
    assert manifest["source_sha256"] == sha256_hex(canonical_json_bytes(descriptor))
    assert manifest["operation"] == "weather/forecast"


def test_a_slow_child_is_refused_within_the_timeout_and_others_keep_working() -> None:
    """A gateway of its own with a short call timeout (5 s) over two in-process children: the slow call is
    refused at the timeout, not when the child's 120 s end, and the other child answers meanwhile."""
    with (
        serve_asgi(gated_http_app(weather_server(), stateless_http=True)) as weather_url,
        serve_asgi(gated_http_app(weather_server(), stateless_http=True)) as other_url,
    ):
        config = GatewayConfig(
            children=(ChildSpec("weather", url=weather_url), ChildSpec("other", url=other_url)),
            call_timeout=5,
            connect_timeout=60,
        )
        gateway = Gateway(config)
        with serve_asgi(gateway.http_app()) as url, concurrent.futures.ThreadPoolExecutor(2) as pool:
            started = time.monotonic()
            slow_call = {"name": "weather_slow", "arguments": {"seconds": 120}}
            slow = pool.submit(rpc, url, "tools/call", slow_call)
            time.sleep(0.2)
            quick = call(url, "other_forecast", {})
            # Answered while the slow call is still in flight (not after it): an order, not a speed.
            slow_pending = not slow.done()
            _status, slow_message = slow.result(timeout=120)
            slow_elapsed = time.monotonic() - started
            weather_state = gateway.children["weather"].state
    assert quick.get("isError") is not True and slow_pending
    # `slow` returns a string (output schema {"result": string}): no invented "" or {"result": ""}.
    assert "result" not in slow_message
    assert slow_message["error"]["code"] == -32012
    assert slow_message["error"]["message"].startswith("gateway refused weather_slow: child_timeout")
    # The call timeout (5 s) ended it, not the child's 120 s: a hang guard far from both.
    assert slow_elapsed < 45
    assert weather_state == "up"  # slow is not down


def test_healthz_reports_every_child(stack: Stack) -> None:
    response = httpx2.get(stack.url.removesuffix("/mcp") + "/healthz", timeout=10)
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    assert body["status"] == "ok"
    states = {child["name"]: (child["state"], child["transport"]) for child in body["children"]}
    assert states == {
        "weather": ("up", "streamable_http"),
        "bad": ("up", "streamable_http"),
        "files": ("up", "stdio"),
    }


def test_healthz_detail_shows_the_evidence_for_operators(stack: Stack) -> None:
    base = stack.url.removesuffix("/mcp")
    assert "admitted" not in httpx2.get(base + "/healthz", timeout=10).json()["children"][0]
    detail = httpx2.get(base + "/healthz?detail=1", timeout=10).json()
    bad = next(child for child in detail["children"] if child["name"] == "bad")
    assert bad["page_trace"] == [None, ""] and bad["descriptors"] == 4
    assert [tool["tool"] for tool in bad["admitted"]] == ["bad_listing", "bad_morph", "bad_ok"]
    assert [tool["child_tool"] for tool in bad["admitted"]] == ["listing", "morph", "ok"]
    assert [(r["tool"], r["category"]) for r in bad["rejected"]] == [("leaky", "sensitive_header")]
    assert bad["validated_result"] is None  # the health route never calls a tool
