"""One replica of the contract lab for the scale-out tests and benchmark: gated tools (``route_shipment``
routes on ``Mcp-Param-Region``), authorized completion, a search transform with schema-disclosure
resources, and the shared state of ``build_replica_app``. Every call builds a fresh, independent server:
replicas share nothing but the state store."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.server.transforms.search import RegexSearchTransform

from agent_connector_sdk.core.contracts import RateLimiter
from agent_connector_sdk.core.schema_disclosure import SchemaDisclosure, build_schema_disclosure, manifest_uri
from agent_connector_sdk.demo.contract_lab import (
    contract_lab_completions,
    contract_lab_server,
)
from agent_connector_sdk.mcp.schema_disclosure_provider import (
    describe_schema_tools,
    register_schema_resources,
)
from agent_connector_sdk.state import ADMIN_SCOPE, RedisStateBackend, StateBackend
from agent_connector_sdk.state.replica import ReplicaApp, build_replica_app
from tests.support.raw_http import LAB_TOKENS, post_on

TOKENS = {**LAB_TOKENS, "admin-token": {"client_id": "admin", "scopes": ["read", ADMIN_SCOPE]}}
NAMESPACE = "contract-lab"
SOURCE = b"contract lab (scale-out replica)"
ENVIRONMENT_PROMPT = {"type": "ref/prompt", "name": "deploy_plan"}


def _lab_disclosures(server: Any) -> dict[str, SchemaDisclosure]:
    async def listed() -> list[Any]:
        return list(await server.list_tools())

    return {
        tool.name: build_schema_disclosure(
            operation=f"lab/{tool.name}",
            alias=tool.name,
            source=SOURCE,
            input_schema=tool.parameters,
            output_schema=tool.output_schema,
        )
        for tool in asyncio.run(listed())
        if tool.name != "fetch_report"  # mirrors a token into a header: not something to advertise
    }


def initialize_catalog(
    url: str, *, prefix: str, disabled: frozenset[str] = frozenset(), replace: bool = False
) -> int:
    """What an operator runs once per store (``agent-connector state init``):
    the lab namespace's marker and set."""

    async def run() -> int:
        backend = RedisStateBackend.from_url(url, prefix=prefix)
        try:
            return await backend.catalog.initialize(NAMESPACE, disabled, replace=replace)
        finally:
            await backend.aclose()

    return asyncio.run(run())


def lab_replica(
    state: StateBackend | str | None,
    *,
    replica_id: str,
    limit: int = 5,
    window_seconds: float = 60.0,
    max_staleness_seconds: float = 5.0,
) -> tuple[ReplicaApp, dict[str, SchemaDisclosure]]:
    """A replica app and the disclosures it serves (their manifest URIs are what clients read)."""
    server = contract_lab_server(auth=StaticTokenVerifier(tokens=TOKENS), name=f"lab-{replica_id}")
    disclosures = _lab_disclosures(server)
    search = RegexSearchTransform(search_result_serializer=describe_schema_tools)
    server.add_transform(search)
    register_schema_resources(server, search, disclosures)
    completions = contract_lab_completions(rate_limiter=RateLimiter(limit, window_seconds))
    app = build_replica_app(
        server,
        state=state,
        namespace=NAMESPACE,
        completions=completions,
        replica_id=replica_id,
        max_staleness_seconds=max_staleness_seconds,
        json_response=True,
    )
    return app, disclosures


def lab_manifest_uri(disclosures: dict[str, SchemaDisclosure], tool: str) -> str:
    return manifest_uri(tool, disclosures[tool].manifest.schema_sha256)


def post(
    http: httpx2.Client,
    url: str,
    method: str,
    params: dict[str, Any],
    *,
    token: str | None = "analyst-token",
    headers: list[tuple[str, str]] | None = None,
    request_id: int = 1,
) -> httpx2.Response:
    """One raw 2026-07-28 POST as ``token``'s bearer (``None``: no authorization), plus ``headers``."""
    auth = [("authorization", f"Bearer {token}")] if token is not None else []
    return post_on(http, url, method, params, headers=[*auth, *(headers or [])], request_id=request_id)


def completion_params(value: str = "st") -> dict[str, Any]:
    return {"ref": ENVIRONMENT_PROMPT, "argument": {"name": "environment", "value": value}}
