"""Real authentication: FastMCP's JWT verifier with a key the test makes, scopes per child and per
tool; search results, disclosure reads and calls agree per caller; caller tokens never forwarded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastmcp.server.auth.providers.jwt import RSAKeyPair

from agent_connector_sdk.gateway import (
    AuthSettings,
    ChildSpec,
    Gateway,
    GatewayConfig,
    GatewayError,
    load_config,
)
from agent_connector_sdk.mcp.server import gated_http_app
from tests.support.gateway import rpc
from tests.support.gateway_children import Misbehaving, recording, weather_server
from tests.support.http_server import serve_asgi
from tests.support.raw_http import raw_post

ISSUER = "https://issuer.test/"
AUDIENCE = "agent-connector-gateway"


@pytest.fixture(scope="module")
def key() -> RSAKeyPair:
    return RSAKeyPair.generate()


class Stack:
    def __init__(self, url: str, key: RSAKeyPair, weather_log: list[dict[str, str]]) -> None:
        self.url = url
        self.key = key
        self.weather_log = weather_log

    def token(self, *scopes: str, audience: str = AUDIENCE, issuer: str = ISSUER, expires: int = 600) -> str:
        return self.key.create_token(
            subject="caller",
            issuer=issuer,
            audience=audience,
            scopes=list(scopes),
            expires_in_seconds=expires,
        )


@pytest.fixture(scope="module")
def stack(key: RSAKeyPair, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    folder = tmp_path_factory.mktemp("auth")
    (folder / "issuer.pem").write_text(key.public_key, encoding="ascii")
    log: list[dict[str, str]] = []
    bad = Misbehaving()
    with (
        serve_asgi(recording(gated_http_app(weather_server(), stateless_http=True), log)) as weather_url,
        serve_asgi(bad.server().streamable_http_app(stateless_http=True)) as bad_url,
    ):
        (folder / "gateway.toml").write_text(
            f"""
[auth]
issuer = "{ISSUER}"
audience = "{AUDIENCE}"
public_key_file = "issuer.pem"
required_scopes = ["mcp"]

[auth.require]
weather = ["weather:read"]
bad_ok = ["bad:ok"]

[children.weather]
url = "{weather_url}"

[children.bad]
url = "{bad_url}"
""",
            encoding="utf-8",
        )
        gateway = Gateway(load_config(folder / "gateway.toml"))
        with serve_asgi(gateway.http_app()) as url:
            yield Stack(url, key, log)


def _as(token: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")]


def _names(stack: Stack, token: str) -> set[str]:
    status, message = rpc(
        stack.url, "tools/call", {"name": "search_tools", "arguments": {"pattern": ".*"}}, headers=_as(token)
    )
    assert status == 200, message
    return {entry["name"] for entry in message["result"]["structuredContent"]["result"]}


def test_no_token_and_bad_tokens_are_401(stack: Stack) -> None:
    assert raw_post(stack.url, "tools/list", {}).status_code == 401
    for token in (
        stack.token("mcp", audience="someone-else"),
        stack.token("mcp", issuer="https://other.test/"),
        stack.token("mcp", expires=-60),
        RSAKeyPair.generate().create_token(issuer=ISSUER, audience=AUDIENCE, scopes=["mcp"]),
        "not-a-jwt",
    ):
        assert raw_post(stack.url, "tools/list", {}, headers=_as(token)).status_code == 401
    # The server-wide required scope.
    assert raw_post(stack.url, "tools/list", {}, headers=_as(stack.token("weather:read"))).status_code in (
        401,
        403,
    )


def test_scopes_decide_search_reads_and_calls_alike(stack: Stack) -> None:
    plain = stack.token("mcp")
    reader = stack.token("mcp", "weather:read")
    assert _names(stack, plain) == {"bad_listing", "bad_morph"}
    assert _names(stack, reader) == {
        "bad_listing",
        "bad_morph",
        "weather_forecast",
        "weather_route",
        "weather_slow",
        "weather_grow",
    }
    assert "bad_ok" in _names(stack, stack.token("mcp", "bad:ok"))

    # A call: allowed with the scope, an unknown tool without it (no oracle).
    status, message = rpc(
        stack.url, "tools/call", {"name": "weather_forecast", "arguments": {}}, headers=_as(reader)
    )
    assert status == 200 and message["result"]["structuredContent"]["celsius"] == 21
    _, denied = rpc(
        stack.url, "tools/call", {"name": "weather_forecast", "arguments": {}}, headers=_as(plain)
    )
    assert denied["error"]["code"] == -32602  # the same answer as for a tool that does not exist

    # A disclosure read: the reader's manifest URI is refused to the plain caller, uniformly.
    _, found = rpc(
        stack.url,
        "tools/call",
        {"name": "search_tools", "arguments": {"pattern": "forecast"}},
        headers=_as(reader),
    )
    uri = found["result"]["structuredContent"]["result"][0]["manifest_uri"]
    _, ok = rpc(stack.url, "resources/read", {"uri": uri}, headers=_as(reader))
    assert "result" in ok
    _, refused = rpc(stack.url, "resources/read", {"uri": uri}, headers=_as(plain))
    assert refused["error"]["code"] == -32602


def test_the_callers_token_never_reaches_a_child(stack: Stack) -> None:
    token = stack.token("mcp", "weather:read")
    rpc(stack.url, "tools/call", {"name": "weather_forecast", "arguments": {}}, headers=_as(token))
    assert stack.weather_log and all("authorization" not in headers for headers in stack.weather_log)
    assert token not in repr(stack.weather_log)


def test_auth_settings_are_checked(tmp_path: Path, key: RSAKeyPair) -> None:
    with pytest.raises(GatewayError, match="exactly one of"):
        AuthSettings(issuer=ISSUER, audience=AUDIENCE)
    with pytest.raises(GatewayError, match="not a PEM public key"):
        AuthSettings(issuer=ISSUER, audience=AUDIENCE, public_key_pem=key.private_key.get_secret_value())
    auth = AuthSettings(
        issuer=ISSUER, audience=AUDIENCE, public_key_pem=key.public_key, require={"wether": ("x",)}
    )
    with pytest.raises(GatewayError, match="wether names no child or tool"):
        GatewayConfig(children=(ChildSpec("weather", url="http://x"),), auth=auth)


def test_a_jwks_url_verifies_tokens_by_key_id(key: RSAKeyPair) -> None:
    from joserfc import jwk
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    public = jwk.RSAKey.import_key(key.public_key).as_dict(private=False)
    keys = {"keys": [{**public, "kid": "k1", "use": "sig", "alg": "RS256"}]}

    async def jwks(request: object) -> JSONResponse:
        return JSONResponse(keys)

    issuer_app = Starlette(routes=[Route("/jwks.json", jwks)])
    with (
        serve_asgi(issuer_app, path="/jwks.json") as jwks_url,
        serve_asgi(gated_http_app(weather_server(), stateless_http=True)) as child,
    ):
        auth = AuthSettings(issuer=ISSUER, audience=AUDIENCE, jwks_url=jwks_url, require={"weather": ("w",)})
        gateway = Gateway(GatewayConfig(children=(ChildSpec("weather", url=child),), auth=auth))
        with serve_asgi(gateway.http_app()) as url:
            good = key.create_token(issuer=ISSUER, audience=AUDIENCE, scopes=["w"], kid="k1")
            status, message = rpc(
                url, "tools/call", {"name": "weather_forecast", "arguments": {}}, headers=_as(good)
            )
            assert status == 200 and message["result"]["structuredContent"]["celsius"] == 21
            stranger = RSAKeyPair.generate().create_token(
                issuer=ISSUER, audience=AUDIENCE, scopes=["w"], kid="k1"
            )
            assert raw_post(url, "tools/list", {}, headers=_as(stranger)).status_code == 401
