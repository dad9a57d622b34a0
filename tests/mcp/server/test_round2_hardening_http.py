"""Issue 25 over real HTTP on 127.0.0.1, each case a test: one header rulebook per request, canonical
integer headers, duplicate credentials, bounded work per request (in-flight caps, body deadline, JSON
value bound before parsing, and the real ``serve`` process's memory under 6 concurrent 3.3 MB calls),
the header deadline of ``serve``'s uvicorn, the rate-limit identity behind a proxy, and logs that print
no argument value or control byte at any level."""

from __future__ import annotations

import io
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from agent_connector_sdk.connectors import build_openapi_server
from agent_connector_sdk.core.contracts import RateLimiter
from agent_connector_sdk.demo.contract_lab import (
    contract_lab_app,
    contract_lab_completions,
    contract_lab_server,
)
from agent_connector_sdk.demo.lab_service import ANALYST_TOKEN, OPERATOR_TOKEN, lab_service_app
from agent_connector_sdk.mcp.server import RequestBounds, gated_http_app
from agent_connector_sdk.mcp.server._entry import json_value_count
from agent_connector_sdk.serving.process import ONE_LINE_LOGGERS, one_line_logging
from tests.support.http_server import serve_asgi
from tests.support.raw_http import META

ROOT = Path(__file__).resolve().parents[3]
MODERN = "2026-07-28"


def _body(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = META) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}).encode()


def _post(url: str, body: bytes, headers: list[tuple[str, str]]) -> httpx2.Response:
    base = [("content-type", "application/json"), ("accept", "application/json, text/event-stream")]
    with httpx2.Client(timeout=30) as http:
        return http.post(url, content=body, headers=base + headers)


@pytest.fixture(scope="module")
def lab() -> Iterator[str]:
    with serve_asgi(contract_lab_app(stateless_http=True, json_response=True)) as url:
        yield url


# ------------------------------------------------------------------ one header rulebook per request
def test_a_2026_body_without_its_header_is_refused_not_downgraded(lab: str) -> None:
    # The attack: route_shipment with Mcp-Name naming another tool and no Mcp-Param-Region.
    body = _body("route_shipment", {"region": "eu-west"})
    for protocol_header in ([], [("mcp-protocol-version", "2025-11-25")]):
        response = _post(
            lab, body, [*protocol_header, ("mcp-method", "tools/call"), ("mcp-name", "list_regions")]
        )
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["code"] == -32020 and response.json()["id"] == 7
        assert error["data"] == {
            "tool": None,
            "header": "MCP-Protocol-Version",
            "category": "missing" if not protocol_header else "mismatch",
        }


def test_with_its_header_every_2026_rule_applies(lab: str) -> None:
    body = _body("route_shipment", {"region": "eu-west"})
    modern = [("mcp-protocol-version", MODERN), ("mcp-method", "tools/call")]
    wrong_name = _post(lab, body, [*modern, ("mcp-name", "list_regions"), ("mcp-param-region", "eu-west")])
    assert wrong_name.status_code == 400 and wrong_name.json()["error"]["code"] == -32020
    wrong_method = _post(
        lab,
        body,
        [("mcp-protocol-version", MODERN), ("mcp-method", "tools/list"), ("mcp-name", "route_shipment")],
    )
    assert wrong_method.status_code == 400 and wrong_method.json()["error"]["code"] == -32020
    missing_param = _post(lab, body, [*modern, ("mcp-name", "route_shipment")])
    assert missing_param.status_code == 400
    assert missing_param.json()["error"]["data"]["header"] == "Mcp-Param-Region"
    honest = _post(lab, body, [*modern, ("mcp-name", "route_shipment"), ("mcp-param-region", "eu-west")])
    assert honest.status_code == 200 and honest.json()["result"]["isError"] is False
    # A handshake-era request (no _meta version, no header) is still served as one.
    legacy = _post(lab, _body("list_regions", {}, meta=None), [])
    assert legacy.status_code == 200 and "result" in legacy.json()


@pytest.mark.parametrize(("sent", "accepted"), [("5", True), ("05", False), ("-0", False), ("+5", False)])
def test_integer_headers_in_canonical_form_only(lab: str, sent: str, accepted: bool) -> None:
    body = _body("route_shipment", {"region": "eu-west", "priority": 5 if sent != "-0" else 0})
    headers = [
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "tools/call"),
        ("mcp-name", "route_shipment"),
        ("mcp-param-region", "eu-west"),
        ("mcp-param-priority", sent),
    ]
    response = _post(lab, body, headers)
    if accepted:
        assert response.status_code == 200 and response.json()["result"]["isError"] is False
    else:
        assert response.status_code == 400
        assert response.json()["error"]["data"] == {
            "tool": "route_shipment",
            "header": "Mcp-Param-Priority",
            "category": "malformed",
        }


# ------------------------------------------------------------------------- duplicate credentials
def test_two_authorization_headers_are_a_400_whichever_comes_first() -> None:
    with serve_asgi(lab_service_app(json_response=True)) as url:
        body = _body("list_regions", {})
        modern = [
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "tools/call"),
            ("mcp-name", "list_regions"),
        ]
        for first, second in ((ANALYST_TOKEN, OPERATOR_TOKEN), (OPERATOR_TOKEN, "forged")):
            response = _post(
                url,
                body,
                [*modern, ("authorization", f"Bearer {first}"), ("authorization", f"Bearer {second}")],
            )
            assert response.status_code == 400
            assert response.json()["error"]["data"]["category"] == "duplicate_authorization"
        assert _post(url, body, [*modern, ("authorization", f"Bearer {ANALYST_TOKEN}")]).status_code == 200


# ---------------------------------------------------------------------------- bounded work per request
def _open_partial_post(url: str, *, length: int = 1000, headers: str = "") -> socket.socket:
    host, port = url.split("//")[1].split("/")[0].split(":")
    sock = socket.create_connection((host, int(port)))
    sock.sendall(
        (
            f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n{headers}\r\n"
        ).encode()
        + b'{"jsonrpc":'
    )
    return sock


def _answer(sock: socket.socket, timeout: float = 10.0) -> bytes:
    sock.settimeout(timeout)
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except TimeoutError:
        pass
    return b"".join(chunks)


def test_in_flight_caps_per_server_and_per_caller() -> None:
    bounds = RequestBounds(max_in_flight=3, max_in_flight_per_caller=2, body_timeout_seconds=30.0)
    server = contract_lab_server()
    app = gated_http_app(server, stateless_http=True, json_response=True, request_bounds=bounds)
    with serve_asgi(app) as url:
        held = [_open_partial_post(url) for _ in range(2)]  # one caller (this peer), two slow bodies
        time.sleep(0.3)
        third = _post(url, _body("list_regions", {}, meta=None), [])
        assert third.status_code == 429
        assert third.json()["error"]["data"] == {"category": "too_many_in_flight", "retryAfterMs": 1000}
        assert third.headers["retry-after"] == "1"
        for sock in held:
            sock.close()
        time.sleep(0.3)  # slots are released when the requests end
        assert _post(url, _body("list_regions", {}, meta=None), []).status_code == 200

    bounds = RequestBounds(max_in_flight=2, max_in_flight_per_caller=5, body_timeout_seconds=30.0)
    app = gated_http_app(
        contract_lab_server(), stateless_http=True, json_response=True, request_bounds=bounds
    )
    with serve_asgi(app) as url:
        held = [_open_partial_post(url) for _ in range(2)]
        time.sleep(0.3)
        busy = _post(url, _body("list_regions", {}, meta=None), [])
        assert busy.status_code == 503 and busy.json()["error"]["data"]["category"] == "server_busy"
        for sock in held:
            sock.close()


def test_a_body_that_does_not_arrive_in_time_is_a_408() -> None:
    bounds = RequestBounds(body_timeout_seconds=0.5)
    app = gated_http_app(
        contract_lab_server(), stateless_http=True, json_response=True, request_bounds=bounds
    )
    with serve_asgi(app) as url:
        sock = _open_partial_post(url)
        started = time.monotonic()
        answer = _answer(sock, timeout=60)
        sock.close()
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b'"category":"body_timeout"' in answer
    # A hang guard (the bound is 0.5 s; without it the socket waits out _answer's 60 s).
    assert time.monotonic() - started < 20


def test_many_json_values_are_refused_before_anything_parses_them(lab: str) -> None:
    arguments: dict[str, Any] = {"region": "eu-west", **{f"k{i}": 0 for i in range(60_000)}}
    body = _body("route_shipment", arguments)
    assert json_value_count(body) > 60_000
    response = _post(lab, body, [("mcp-protocol-version", MODERN), ("mcp-method", "tools/call")])
    assert response.status_code == 413
    assert response.json()["error"]["data"] == {"category": "too_many_json_values"}
    # Strings are blanked before counting: colons and commas inside values are not members.
    text_heavy = _body("route_shipment", {"region": "eu-west", "note": ":,[" * 100_000})
    assert json_value_count(text_heavy) < 50  # the envelope's own members; 300,000 if strings counted


def _rss_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


def _spawn_serve(*args: str) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    process = subprocess.Popen(
        [sys.executable, "-c", "from agent_connector_sdk.cli import main_exit; main_exit()", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert process.stdout is not None and process.stderr is not None
    line = process.stdout.readline()
    assert " at http://" in line, (line, process.stderr.read() if process.poll() is not None else "")
    return process, line.split(" at ")[-1].strip()


def test_six_concurrent_3_3_mb_calls_keep_the_real_server_within_150_mib() -> None:
    process, url = _spawn_serve("--no-auth", "--port", "0")
    try:
        modern = [
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "tools/call"),
            ("mcp-name", "route_shipment"),
        ]
        honest = _body("route_shipment", {"region": "eu-west"})
        for _ in range(20):  # warm every code path (imports, caches) before the baseline
            _post(url, honest, [*modern, ("mcp-param-region", "eu-west")])
        baseline = _rss_kib(process.pid, "VmRSS")
        Path(f"/proc/{process.pid}/clear_refs").write_text("5")  # reset the peak (VmHWM) to now
        padding = {f"extra{i:06d}": i for i in range(160_000)}
        body = _body("route_shipment", {"region": "eu-west", **padding})
        assert 3_000_000 < len(body) < 3_600_000  # the attack's 3.3 MB
        statuses: list[int] = []

        def call() -> None:
            statuses.append(_post(url, body, [*modern, ("mcp-param-region", "eu-west")]).status_code)

        threads = [threading.Thread(target=call) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        peak = _rss_kib(process.pid, "VmHWM")
        time.sleep(1.0)
        after = _rss_kib(process.pid, "VmRSS")
        assert statuses == [413] * 6
        assert (peak - baseline) / 1024 < 150, f"peak {peak - baseline} KiB over baseline"
        shown = [round(kib / 1024, 1) for kib in (baseline, peak - baseline, after - baseline)]
        print(f"RSS baseline {shown[0]} MiB, peak +{shown[1]} MiB, after +{shown[2]} MiB")
        assert (after - baseline) / 1024 < 20, f"RSS stayed {after - baseline} KiB above baseline"
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_serve_closes_a_connection_that_dribbles_its_headers() -> None:
    process, url = _spawn_serve("--no-auth", "--port", "0", "--read-timeout", "1")
    try:
        host, port = url.split("//")[1].split("/")[0].split(":")
        slow = socket.create_connection((host, int(port)))
        slow.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finishes its head
        started = time.monotonic()
        assert _answer(slow, timeout=60) == b""  # closed without an answer
        # Not before the read timeout (1 s); the upper bound is a hang guard (without the timeout the
        # head would wait out _answer's 60 s).
        assert 0.8 <= time.monotonic() - started < 20
        slow.close()
        # An ordinary request on a fresh connection is unaffected.
        assert _post(url, _body("list_regions", {}, meta=None), []).status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=20)


# ------------------------------------------------------------------ rate-limit identity behind a proxy
def _completion_app(trusted: tuple[str, ...]) -> Any:
    completions = contract_lab_completions(rate_limiter=RateLimiter(2, 60.0), trusted_proxies=trusted)
    return gated_http_app(
        contract_lab_server(), completions=completions, stateless_http=True, json_response=True
    )


def _ask(url: str, forwarded_for: str | None) -> bool:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "completion/complete",
            "params": {
                "ref": {"type": "ref/prompt", "name": "deploy_plan"},
                "argument": {"name": "environment", "value": ""},
            },
        }
    ).encode()
    headers = [("x-forwarded-for", forwarded_for)] if forwarded_for else []
    return "result" in _post(url, body, headers).json()


def test_an_untrusted_peer_is_keyed_by_its_address_whatever_it_forwards() -> None:
    with serve_asgi(_completion_app(()), proxy_headers=False) as url:
        # Alternating plain and forwarded requests used to get two windows; now it is one, the peer's.
        assert [_ask(url, None), _ask(url, "192.0.2.9"), _ask(url, None), _ask(url, "192.0.2.10")] == [
            True,
            True,
            False,
            False,
        ]


def test_behind_a_trusted_proxy_block_each_forwarded_client_has_its_own_window() -> None:
    with serve_asgi(_completion_app(("127.0.0.0/8",)), proxy_headers=False) as url:
        assert [_ask(url, "198.51.100.1") for _ in range(3)] == [True, True, False]
        assert [_ask(url, "198.51.100.2") for _ in range(3)] == [True, True, False]


def test_the_shipped_nginx_config_and_docs_use_trusted_proxies() -> None:
    docs = (ROOT / "docs" / "deploy.md").read_text()
    assert "--trusted-proxies" in docs
    nginx = (ROOT / "deploy" / "agent-connector.nginx.conf").read_text()
    assert "--trusted-proxies" in nginx and "X-Forwarded-For $remote_addr" in nginx


# ----------------------------------------------------------------------------- logs at every level
def test_no_log_level_prints_argument_values_or_control_bytes() -> None:
    secret = "tenant-secret-value-31337"

    class Upstream:
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": b"{}"})

    document = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/items/{item}": {
                "get": {
                    "operationId": "get_item",
                    "parameters": [
                        {"name": "item", "in": "path", "required": True, "schema": {"type": "string"}}
                    ],
                    "responses": {
                        "200": {"description": "ok", "content": {"application/json": {"schema": {}}}}
                    },
                }
            }
        },
    }
    stream = io.StringIO()
    saved = {
        name: (
            logging.getLogger(name).handlers[:],
            logging.getLogger(name).level,
            logging.getLogger(name).propagate,
        )
        for name in ONE_LINE_LOGGERS  # exactly the loggers one_line_logging configures
    }
    one_line_logging(stream, level=logging.DEBUG)
    try:
        with serve_asgi(Upstream(), path="") as base:
            built = build_openapi_server(document, base_url=base)
            with serve_asgi(gated_http_app(built.server, stateless_http=True, json_response=True)) as url:
                for item in (secret, f"{secret}\x1b[31m\nFORGED"):
                    response = _post(
                        url,
                        _body("get_item", {"item": item}),
                        [
                            ("mcp-protocol-version", MODERN),
                            ("mcp-method", "tools/call"),
                            ("mcp-name", "get_item"),
                        ],
                    )
                    assert response.status_code == 200
                _post(
                    url,
                    _body("no\x1bsuch", {"item": secret}),
                    [("mcp-protocol-version", MODERN), ("mcp-method", "tools/call")],
                )
    finally:
        for name, (handlers, level, propagate) in saved.items():
            logger = logging.getLogger(name)
            logger.handlers, logger.level, logger.propagate = handlers, level, propagate
    text = stream.getvalue()
    assert secret not in text
    assert "\x1b" not in text and not any(line.startswith("FORGED") for line in text.splitlines())
