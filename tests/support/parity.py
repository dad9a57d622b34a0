"""Header-parity test helpers: raw 2026-07-28 ``tools/call`` POSTs whose every header byte the test
controls, the servers they call (header-annotated tools, with and without search and auth) and the
readers of their answers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any

import httpx2
from fastmcp import FastMCP
from fastmcp.server.transforms.search import RegexSearchTransform
from pydantic import Field

from agent_connector_sdk.core.contracts import build_parameter_headers
from tests.support.raw_http import mixed_headers

__all__ = [
    "PROTOCOL_VERSION",
    "Gated",
    "RawHeaders",
    "make_authed_server",
    "make_server",
    "raw_call",
    "refusal_of",
    "result_of",
    "wire_descriptor",
]

PROTOCOL_VERSION = "2026-07-28"

RawHeaders = Sequence[tuple[str | bytes, str | bytes]]


def raw_call(
    client: httpx2.Client,
    url: str,
    name: str,
    arguments: dict[str, Any] | None,
    extra_headers: RawHeaders = (),
    *,
    request_id: int | None = 1,
    body: bytes | None = None,
) -> httpx2.Response:
    """POST one 2026-07-28 ``tools/call`` exactly as written: the envelope ``_meta`` and the routing headers
    (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``) a conforming client sends, plus
    ``extra_headers`` verbatim (bytes allowed, duplicates kept). ``request_id=None`` makes a notification."""
    message: dict[str, Any] = {
        "jsonrpc": "2.0",
        "method": "tools/call",
        "params": {
            "name": name,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    if arguments is not None:
        message["params"]["arguments"] = arguments
    if request_id is not None:
        message["id"] = request_id
    headers: list[tuple[str | bytes, str | bytes]] = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", PROTOCOL_VERSION),
        ("mcp-method", "tools/call"),
        ("mcp-name", name),
        *extra_headers,
    ]
    content = body if body is not None else json.dumps(message).encode()
    return client.post(url, content=content, headers=mixed_headers(headers))


def make_server(*, search: bool = False) -> FastMCP[Any]:
    server: FastMCP[Any] = FastMCP("header-parity")

    @server.tool
    def route(
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
        count: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Count"})] = 0,
        dry_run: Annotated[bool, Field(json_schema_extra={"x-mcp-header": "Dry-Run"})] = False,
    ) -> str:
        """Echo the arguments, so a test can see the exact values that reached the tool."""
        return json.dumps([region, count, dry_run])

    @server.tool
    def plain(text: str) -> str:
        return text

    if search:
        server.add_transform(RegexSearchTransform())
    return server


class Gated:
    """A gated server on real HTTP plus a raw client; ``audit`` collects the gate's events."""

    def __init__(
        self, url: str, client: httpx2.Client, audit: list[dict[str, Any]], descriptor: dict[str, Any]
    ):
        self.url = url
        self.client = client
        self.audit = audit
        self.descriptor = descriptor

    def call(self, arguments: dict[str, Any], headers: RawHeaders = (), **kw: Any) -> httpx2.Response:
        return raw_call(self.client, self.url, kw.pop("name", "route"), arguments, headers, **kw)

    def call_encoded(self, arguments: dict[str, Any]) -> httpx2.Response:
        """Call with the headers our own client-side builder produces for these arguments."""
        headers = build_parameter_headers(self.descriptor, arguments)
        return self.call(arguments, list(headers.items()))


async def wire_descriptor(server: FastMCP[Any], name: str) -> dict[str, Any]:
    tool = await server.get_tool(name)
    assert tool is not None
    return {"name": tool.name, "inputSchema": tool.parameters}


def result_of(response: httpx2.Response) -> list[Any]:
    assert response.status_code == 200, response.text
    payload = response.json()
    assert "error" not in payload, payload
    assert payload["result"]["isError"] is False, payload
    decoded: list[Any] = json.loads(payload["result"]["content"][0]["text"])
    return decoded


def refusal_of(response: httpx2.Response, *, request_id: int = 1) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    payload = response.json()
    assert payload["id"] == request_id
    assert payload["error"]["code"] == -32020
    data: dict[str, Any] = payload["error"]["data"]
    return data


def make_authed_server() -> FastMCP[Any]:
    from fastmcp.server.auth import require_scopes
    from fastmcp.server.auth.providers.jwt import StaticTokenVerifier

    verifier = StaticTokenVerifier(
        tokens={
            "admin-token": {"client_id": "admin", "scopes": ["admin"]},
            "guest-token": {"client_id": "guest", "scopes": []},
        }
    )
    server: FastMCP[Any] = FastMCP("header-parity-auth", auth=verifier)

    @server.tool(auth=require_scopes("admin"))
    def deploy(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
        return region

    server.add_transform(RegexSearchTransform())
    return server


def versioned_server() -> FastMCP[Any]:
    """``zone`` twice: version 1 mirrors ``region`` into ``Mcp-Param-Region``, version 2 does not."""
    server: FastMCP[Any] = FastMCP("versions")

    @server.tool(name="zone", version="1")
    def zone_v1(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
        return "v1:" + region

    @server.tool(name="zone", version="2")
    def zone_v2(region: str) -> str:
        return "v2:" + region

    return server


def pinned_zone_call(version: str) -> bytes:
    """The body of a 2026-07-28 ``tools/call`` of ``zone`` (``region`` eu) pinned to ``version``."""
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "zone",
                "arguments": {"region": "eu"},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "fastmcp": {"version": version},
                },
            },
        }
    ).encode()
