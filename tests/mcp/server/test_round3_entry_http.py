"""Round three over real HTTP: nothing expensive happens before authentication, and tokens are bounded.

A FastMCP server with FastMCP's JWT verifier (the ``[auth]`` settings ``serve --openapi`` and the gateway
use, RSA keys generated and tokens signed at test time) behind the gated entry, one recording tool. Each
case asserts the status, the body's shape, what reached the tool, and (for the body attacks) the
process's peak RSS over a baseline.
"""

from __future__ import annotations

import json
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fastmcp import FastMCP
from fastmcp.server.auth.providers.jwt import RSAKeyPair
from joserfc import jwk, jwt

from agent_connector_sdk.cli import main
from agent_connector_sdk.gateway import AuthSettings
from agent_connector_sdk.mcp.server import RequestBounds, gated_http_app
from agent_connector_sdk.mcp.server._completion import UNVERIFIED_FORWARDED_KEY, network_caller_key
from agent_connector_sdk.state import RedisStateBackend
from tests.support.http_server import serve_asgi
from tests.support.raw_http import META
from tests.support.replica import initialize_catalog, lab_replica, post
from tests.support.services import redis_server

ISSUER = "https://issuer.test/"
AUDIENCE = "round-three"
MODERN = "2026-07-28"


class _Served:
    def __init__(self, url: str, key: RSAKeyPair, calls: list[int]) -> None:
        self.url = url
        self.key = key
        self.calls = calls


def _server(calls: list[int]) -> FastMCP[Any]:
    server: FastMCP[Any] = FastMCP("round-three")

    @server.tool
    def record(text: str) -> int:
        calls.append(len(text))
        return len(text)

    return server


def _app(key: RSAKeyPair, calls: list[int], **auth_options: Any) -> Any:
    settings = AuthSettings(issuer=ISSUER, audience=AUDIENCE, public_key_pem=key.public_key, **auth_options)
    server = _server(calls)
    server.auth = settings.verifier()
    bounds = RequestBounds(body_timeout_seconds=3.0)
    return gated_http_app(server, stateless_http=True, json_response=True, request_bounds=bounds)


@pytest.fixture(scope="module")
def served() -> Iterator[_Served]:
    key = RSAKeyPair.generate()
    calls: list[int] = []
    with serve_asgi(_app(key, calls)) as url:
        yield _Served(url, key, calls)


def _token(key: RSAKeyPair, **claims: Any) -> str:
    """A JWT signed now with ``key``; ``claims`` override the defaults (``None`` removes a claim)."""
    now = int(time.time())
    payload: dict[str, Any] = {"sub": "user", "iss": ISSUER, "aud": AUDIENCE, "iat": now, "exp": now + 600}
    payload.update(claims)
    payload = {name: value for name, value in payload.items() if value is not None}
    signing = jwk.import_key(key.private_key.get_secret_value(), "RSA")
    return jwt.encode({"alg": "RS256"}, payload, signing, algorithms=["RS256"])


def _call(text: str) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"record","arguments":{"text":"'
        + text.encode()
        + b'"},"_meta":'
        + json.dumps(META, separators=(",", ":")).encode()
        + b"}}"
    )


def _headers(token: str | None) -> dict[str, str]:
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "record",
    }
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return headers


def _rss_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(field)


# --------------------------------------------------------------------------- before authentication


def test_a_one_string_body_without_valid_credentials_is_answered_401_unread(served: _Served) -> None:
    """The attack's 3.9 MB single-string body (+454 MiB, then 401, before): now 401 with nothing read,
    for no token and for a forged one; RSS stays flat and the tool never runs."""
    body = _call("a" * 3_900_000)
    forged = RSAKeyPair.generate().create_token(issuer=ISSUER, audience=AUDIENCE)
    with httpx2.Client(timeout=30) as client:
        client.post(served.url, content=_call("warm"), headers=_headers(_token(served.key)))  # warm paths
        served.calls.clear()
        baseline = _rss_kib("VmRSS")
        Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) from now on
        for token in (None, forged, "not-a-jwt"):
            for _ in range(4):
                response = client.post(served.url, content=body, headers=_headers(token))
                assert response.status_code == 401, response.text[:200]
                assert response.headers["www-authenticate"].startswith("Bearer")
        peak = _rss_kib("VmHWM")
    # The test process holds the 3.9 MB body itself (and httpx a copy); the server adds nothing.
    assert (peak - baseline) / 1024 < 40, f"peak {(peak - baseline) / 1024:.1f} MiB over the baseline"
    assert served.calls == []


def _slow_sender(url: str, source: str, authorization: str | None, stop: threading.Event) -> None:
    """An unauthenticated POST from ``source`` (a 127.0.0.x address) that dribbles its body."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    try:
        sock = socket.create_connection((host, int(port)), timeout=5, source_address=(source, 0))
    except OSError:
        return
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: 1000000\r\n"
        + (f"Authorization: {authorization}\r\n" if authorization else "")
        + "\r\n"
    )
    try:
        sock.sendall(head.encode() + b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":')
        while not stop.wait(0.2):
            sock.sendall(b" ")
    except OSError:
        pass  # answered (401) and closed by the server: the sender is done
    finally:
        sock.close()


def test_200_slow_unauthenticated_senders_cannot_starve_a_token_holder(served: _Served) -> None:
    """Round three: 200 slow unauthenticated senders held all 64 slots for the body deadline; the
    operator got 503 on 34 of 57 calls. Now they never hold a slot an authenticated caller needs. The
    durations are scaled (3 s deadline, ~4 s attack); the ratio of senders to slots is the attack's."""
    stop = threading.Event()
    senders = [
        threading.Thread(
            target=_slow_sender,
            args=(served.url, f"127.0.0.{2 + index}", "Bearer forged" if index % 2 else None, stop),
            daemon=True,
        )
        for index in range(200)
    ]
    for sender in senders:
        sender.start()
    time.sleep(0.5)  # every sender connected and waiting on its body
    token = _token(served.key)
    statuses: list[int] = []
    latencies: list[float] = []
    served.calls.clear()
    with httpx2.Client(timeout=10) as client:
        deadline = time.monotonic() + 3.5
        while time.monotonic() < deadline:
            started = time.monotonic()
            response = client.post(served.url, content=_call("honest"), headers=_headers(token))
            latencies.append(time.monotonic() - started)
            statuses.append(response.status_code)
    stop.set()
    for sender in senders:
        sender.join(timeout=5)
    ok = statuses.count(200)
    assert len(statuses) >= 20, statuses
    assert ok / len(statuses) >= 0.9, f"{ok} of {len(statuses)} succeeded: {sorted(set(statuses))}"
    assert max(latencies) < 2.0, f"slowest honest call {max(latencies):.2f} s"
    print(
        f"honest calls under 200 slow senders: {ok}/{len(statuses)} ok, "
        f"p50 {statistics.median(latencies) * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms"
    )
    assert served.calls == [len("honest")] * ok  # only the token holder's calls reached the tool


# ------------------------------------------------------------------------------------------ tokens


@pytest.mark.parametrize(
    ("claims", "status"),
    [
        ({}, 200),
        ({"exp": None}, 401),  # no exp: valid forever, refused by default
        ({"exp": 1e300}, 401),  # "valid" for ever after
        ({"iat": int(time.time()) - 60, "exp": int(time.time()) + 2 * 86_400}, 401),  # lives two days
        ({"iat": None, "exp": int(time.time()) + 3600}, 200),  # no iat: the remaining lifetime counts
        ({"exp": "tomorrow"}, 401),
        ({"iat": int(time.time()) + 3600, "exp": int(time.time()) + 3900}, 401),  # issued an hour ahead
        ({"iat": int(time.time()) + 5, "exp": int(time.time()) + 600}, 200),  # within the clock leeway
    ],
)
def test_token_lifetime_rules_over_http(served: _Served, claims: dict[str, Any], status: int) -> None:
    served.calls.clear()
    token = _token(served.key, **claims)
    with httpx2.Client(timeout=30) as client:
        response = client.post(served.url, content=_call("x"), headers=_headers(token))
    assert response.status_code == status, response.text[:200]
    assert served.calls == ([1] if status == 200 else [])


def test_tokens_without_exp_and_a_shorter_lifetime_are_options() -> None:
    key = RSAKeyPair.generate()
    calls: list[int] = []
    app = _app(key, calls, accept_tokens_without_exp=True, max_token_lifetime_seconds=300)
    with serve_asgi(app) as url, httpx2.Client(timeout=30) as client:
        assert (
            client.post(url, content=_call("x"), headers=_headers(_token(key, exp=None))).status_code == 200
        )
        long_lived = _token(key, exp=int(time.time()) + 600)  # 10 minutes: over this server's 5
        assert client.post(url, content=_call("x"), headers=_headers(long_lived)).status_code == 401
    assert calls == [1]


# ------------------------------------------------------------------------------- forwarded hops


def test_non_ip_forwarded_hops_share_one_identity() -> None:
    """Behind a trusted proxy, ``X-Forwarded-For: unknown`` / names / junk minted one rate-limit
    identity each; they now share the unverified key, and one address is one identity however spelt."""
    trusted = ["10.0.0.0/8"]
    keys = {
        network_caller_key("10.0.0.1", True, [hop], trusted)
        for hop in ("unknown", "attacker-1", "attacker-2", "_hidden", "1.2.3.4.5", "::1::")
    }
    assert keys == {UNVERIFIED_FORWARDED_KEY}
    assert network_caller_key("10.0.0.1", True, ["203.0.113.9"], trusted) == "forwarded:203.0.113.9"
    assert network_caller_key("10.0.0.1", True, ["2001:DB8::1"], trusted) == network_caller_key(
        "10.0.0.1", True, ["2001:db8:0::1"], trusted
    )
    # A junk hop nearer than the proxies' own cannot hide behind a real address further out.
    assert network_caller_key("10.0.0.1", True, ["203.0.113.9, junk"], trusted) == UNVERIFIED_FORWARDED_KEY


# ------------------------------------------------------------------------------------- open binds


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["serve", "--no-auth", "--host", "0.0.0.0"], "refusing to bind 0.0.0.0 without authentication"),
        (["serve", "--host", "0.0.0.0"], "demo tokens are public"),
        (["serve", "--insecure-open-bind", "--port", "0"], "only applies to a server without authentication"),
    ],
)
def test_an_open_bind_without_auth_refuses_to_start(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err, err


def test_an_openapi_server_without_auth_config_refuses_an_open_bind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = tmp_path / "pets.json"
    document.write_text(
        json.dumps(
            {
                "openapi": "3.1.0",
                "info": {"title": "t", "version": "1"},
                "servers": [{"url": "http://127.0.0.1:9"}],
                "paths": {
                    "/a": {"get": {"operationId": "getA", "responses": {"200": {"description": "ok"}}}}
                },
            }
        ),
        encoding="utf-8",
    )
    assert main(["serve", "--openapi", str(document), "--host", "0.0.0.0", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "without authentication: pass --auth-config FILE" in err and "--insecure-open-bind" in err


def test_the_loud_opt_out_serves_and_says_so() -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", "from agent_connector_sdk.cli import main_exit; main_exit()", "serve",
         "--no-auth", "--host", "0.0.0.0", "--port", "0", "--insecure-open-bind"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None and process.stderr is not None
        line = process.stdout.readline()
        assert "serving 8 tools of the contract lab behind search at http://0.0.0.0:" in line, line
        warning = next((text for text in iter(process.stderr.readline, "") if text.startswith("WARNING")), "")
        assert warning.startswith("WARNING: no authentication on 0.0.0.0 (--insecure-open-bind)"), warning
        port = int(line.rsplit(":", 1)[1].split("/")[0])
        answer = httpx2.post(
            f"http://127.0.0.1:{port}/mcp",
            content=b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":'
            + json.dumps(META).encode()
            + b"}}",
            headers={**_headers(None), "mcp-method": "tools/list"},
            timeout=30,
        )
        assert answer.status_code == 200  # served to anyone, as the flag says
    finally:
        process.terminate()
        process.wait(timeout=20)


# ------------------------------------------------------------------------------- a Redis replica


def test_a_replica_keeps_its_catalog_under_one_string_bodies() -> None:
    """Round three: 24 workers posting 3.9 MB one-string bodies stalled a replica until its Redis reads
    timed out and it hid its catalog (23 of 24 answers ``Unknown tool``). A lab replica on a real Redis,
    8 workers posting that body (half with a valid token, half without) while another caller uses the
    catalog: every honest call answers, the catalog stays synchronized, and no one-string call runs."""
    with redis_server() as redis:
        initialize_catalog(redis.url, prefix="round-three")
        state = RedisStateBackend.from_url(redis.url, prefix="round-three")
        app, _ = lab_replica(state, replica_id="eu-west-1")
        with serve_asgi(app) as url, httpx2.Client(timeout=30) as http:
            body = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": "list_regions", "arguments": {"note": "a" * 3_900_000}, "_meta": META},
                }
            ).encode()
            stop = threading.Event()
            answers: list[int] = []

            def flood(token: str | None) -> None:
                headers = {**_headers(token), "mcp-name": "list_regions"}
                with httpx2.Client(timeout=30) as client:
                    while not stop.is_set():
                        answers.append(client.post(url, content=body, headers=headers).status_code)

            workers = [threading.Thread(target=flood, args=(t,)) for t in ["analyst-token", None] * 4]
            for worker in workers:
                worker.start()
            honest: list[httpx2.Response] = []
            deadline = time.monotonic() + 2.0
            while time.monotonic() < deadline:
                honest.append(
                    post(
                        http,
                        url,
                        "tools/call",
                        {"name": "list_regions", "arguments": {}},
                        token="operator-token",
                    )
                )
            stop.set()
            for worker in workers:
                worker.join(timeout=30)
            health = http.get(url.removesuffix("/mcp") + "/healthz").json()
    assert len(honest) >= 5 and all(response.status_code == 200 for response in honest)
    assert not any("Unknown tool" in response.text for response in honest)
    assert all("result" in response.json() for response in honest)
    assert health["state"]["catalogSynchronized"] is True and health["state"]["reachable"] is True
    # Authenticated one-string calls are answered by the tool's argument check (unknown property) or
    # the per-caller cap; unauthenticated ones 401, unread. None is a server error.
    assert answers and set(answers) <= {200, 401, 429}, sorted(set(answers))


def test_cheap_header_checks_come_before_any_token_is_verified() -> None:
    """Two ``Authorization`` headers and a declared body over the limit are refused by the entry's front,
    before FastMCP's authentication runs: the verifier never sees those requests."""
    key = RSAKeyPair.generate()
    calls: list[int] = []
    settings = AuthSettings(issuer=ISSUER, audience=AUDIENCE, public_key_pem=key.public_key)
    server = _server(calls)
    verifier = settings.verifier()
    verified: list[str] = []
    original = verifier.load_access_token

    async def counting(token: str) -> Any:
        verified.append("token")
        return await original(token)

    verifier.load_access_token = counting
    server.auth = verifier
    app = gated_http_app(server, stateless_http=True, json_response=True)
    token = _token(key)
    with serve_asgi(app) as url, httpx2.Client(timeout=30) as client:
        twice = [(name, value) for name, value in _headers(token).items()]
        twice.append(("authorization", f"Bearer {token}"))
        duplicate = client.post(url, content=_call("x"), headers=twice)
        assert duplicate.status_code == 400
        assert duplicate.json()["error"]["data"] == {"category": "duplicate_authorization"}
        host, port = url.split("//")[1].split("/")[0].split(":")
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            head = "".join(f"{name}: {value}\r\n" for name, value in _headers(token).items())
            head += f"Host: {host}:{port}\r\nContent-Length: {5 * 2**20}\r\n\r\n"
            raw.sendall(f"POST /mcp HTTP/1.1\r\n{head}".encode())
            answer = b""
            while chunk := raw.recv(65536):  # the 413 closes the connection: read to the end
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 413"), answer[:100]
        assert answer.endswith(
            b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Request body too large"}}'
        )
        assert verified == [] and calls == []
        assert client.post(url, content=_call("x"), headers=_headers(token)).status_code == 200
        assert verified == ["token"] and calls == [1]
