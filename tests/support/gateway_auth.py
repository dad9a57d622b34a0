"""The gateway tests' token issuer and the caller's view through it: one signing key per test process,
tokens with the scopes a test names, the unauthenticated ``/healthz`` and a search's names."""

from __future__ import annotations

import functools
from typing import Any

import httpx2
from fastmcp.server.auth.providers.jwt import RSAKeyPair

# Not exported by the gateway package yet: its one import in the tests is here.
from agent_connector_sdk.gateway import AuthSettings
from tests.support.gateway import rpc

ISSUER = "https://issuer.test/"
AUDIENCE = "gw"


@functools.cache
def signing_key() -> RSAKeyPair:
    """The issuer's key (generating an RSA key costs a good fraction of a second: once per process)."""
    return RSAKeyPair.generate()


def auth_settings(require: dict[str, tuple[str, ...]]) -> AuthSettings:
    """The gateway's ``[auth]`` trusting :func:`signing_key`, with ``require`` as ``[auth.require]``."""
    return AuthSettings(
        issuer=ISSUER, audience=AUDIENCE, public_key_pem=signing_key().public_key, require=require
    )


def token(*scopes: str) -> list[tuple[str, str]]:
    """The ``authorization`` header of a caller holding ``scopes`` (valid for 10 minutes)."""
    jwt = signing_key().create_token(
        subject="caller", issuer=ISSUER, audience=AUDIENCE, scopes=list(scopes), expires_in_seconds=600
    )
    return [("authorization", f"Bearer {jwt}")]


def healthz(url: str) -> dict[str, Any]:
    """``GET /healthz`` beside the gateway's ``/mcp`` URL."""
    body: dict[str, Any] = httpx2.get(url.removesuffix("/mcp") + "/healthz", timeout=10).json()
    return body


def found(url: str, headers: list[tuple[str, str]], pattern: str) -> list[str]:
    """The names a caller's ``search_tools`` finds (none when the search abstained with a note)."""
    params = {"name": "search_tools", "arguments": {"pattern": pattern}}
    status, message = rpc(url, "tools/call", params, headers=headers)
    assert status == 200, message
    result = message["result"]["structuredContent"]["result"]
    return [] if isinstance(result, str) else [entry["name"] for entry in result]
