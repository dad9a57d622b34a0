"""The contract lab as ``agent-connector serve`` runs it: behind search, with disclosure and bearer auth.

Every lab tool except a few pinned ones (:data:`PINNED_TOOLS`: the rejected descriptor and two honest
tools, so a plain ``tools/list`` shows admission at work) hides behind a ``RankedSearchTransform`` (FastMCP's
``RegexSearchTransform``, ranked: see :mod:`agent_connector_sdk.core.search`) whose results are
``schema-navigation`` entries; each hidden tool's schemas are disclosed as hash-bound
fragments. The listing is paged with the ``""`` cursor. Authentication is FastMCP's own
``StaticTokenVerifier`` with two documented demo tokens (:data:`DEMO_TOKENS`): an *analyst* and an
*operator*, who differ in what completion and ``search_evidence`` show them. The demo tokens are public,
so :func:`lab_service_app` is for loopback only; the CLI refuses any other bind while they are on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import anyio
import fastmcp
from fastmcp import FastMCP
from fastmcp.server.auth import AuthProvider
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier

from agent_connector_sdk.core.schema_disclosure import (
    SchemaDisclosure,
    SourceDigest,
    build_schema_disclosure,
    canonical_json_bytes,
)
from agent_connector_sdk.demo.contract_lab import (
    EVIDENCE_SCOPE,
    PRODUCTION_SCOPE,
    contract_lab_completions,
    contract_lab_server,
)
from agent_connector_sdk.mcp.schema_disclosure_provider import (
    RankedSearchTransform,
    describe_schema_tools,
    register_schema_resources,
)
from agent_connector_sdk.mcp.server import cache_tool_catalog, gated_http_app
from agent_connector_sdk.skills import skills_provider

__all__ = [
    "ANALYST_TOKEN",
    "DEMO_TOKENS",
    "OPERATOR_TOKEN",
    "PINNED_TOOLS",
    "demo_token_verifier",
    "lab_service_app",
    "lab_service_server",
    "server_tool_disclosures",
]

ANALYST_TOKEN: Final = "lab-analyst-demo-token"
"""Demo bearer token of the *analyst* role: reads, no production, no restricted evidence."""
OPERATOR_TOKEN: Final = "lab-operator-demo-token"
"""Demo bearer token of the *operator* role: also ``deploy:production`` and ``evidence:restricted``."""
DEMO_TOKENS: Final[Mapping[str, Mapping[str, Any]]] = {
    ANALYST_TOKEN: {"client_id": "lab-analyst", "sub": "analyst", "scopes": ["lab:read"]},
    OPERATOR_TOKEN: {
        "client_id": "lab-operator",
        "sub": "operator",
        "scopes": ["lab:read", PRODUCTION_SCOPE, EVIDENCE_SCOPE],
    },
}
PINNED_TOOLS: Final = ("fetch_report", "list_regions", "route_shipment")
"""Tools left in the plain listing; everything else is found through the search tool."""
_MAX_SEARCH_RESULTS: Final = 50


def demo_token_verifier() -> StaticTokenVerifier:
    """FastMCP's static verifier over :data:`DEMO_TOKENS` (a fresh copy: callers cannot edit ours)."""
    return StaticTokenVerifier(tokens={token: dict(claims) for token, claims in DEMO_TOKENS.items()})


async def server_tool_disclosures(server: FastMCP[Any], *, source: bytes) -> dict[str, SchemaDisclosure]:
    """``name -> SchemaDisclosure`` for every tool of ``server`` as its ``tools/list`` shows it.

    Lists over an in-memory session (the wire form the provider re-hashes on every read), so call it
    before adding a search transform. ``source`` identifies what the tools were built from.
    """
    digest = SourceDigest.of(source)
    async with fastmcp.Client(server) as session:
        tools = await session.list_tools()
    return {
        tool.name: build_schema_disclosure(
            operation=tool.name,
            alias=tool.name,
            source=digest,
            input_schema=tool.input_schema,
            output_schema=tool.output_schema,
        )
        for tool in tools
    }


async def lab_service_server(*, auth: AuthProvider | None) -> FastMCP[Any]:
    """The lab server with its non-pinned tools behind search and their schemas disclosed."""
    server = contract_lab_server(auth=auth, empty_cursor_pages=True)
    probe = contract_lab_server()  # same tools, no auth and no paging: a plain listing to disclose
    async with fastmcp.Client(probe) as session:
        listing = [tool.model_dump(mode="json", by_alias=True) for tool in await session.list_tools()]
    disclosures = await server_tool_disclosures(probe, source=canonical_json_bytes(listing))
    hidden = {name: d for name, d in disclosures.items() if name not in PINNED_TOOLS}
    search = RankedSearchTransform(
        search_result_serializer=describe_schema_tools,
        always_visible=list(PINNED_TOOLS),
        max_results=_MAX_SEARCH_RESULTS,
    )
    server.add_transform(search)
    register_schema_resources(server, search, hidden)
    # The reviewer skill (SEP-2640 Skills extension: skills/list, skills/get, per-file digests).
    server.add_provider(skills_provider())
    cache_tool_catalog(server, search)  # the lab never edits a tool in place
    return server


def lab_service_app(
    *,
    demo_tokens: bool = True,
    state: str | None = None,
    replica_id: str | None = None,
    trusted_proxies: Sequence[str] = (),
    **http_app_kwargs: Any,
) -> Any:
    """The ASGI app ``agent-connector serve`` runs by default (gated, stateless Streamable HTTP).

    ``demo_tokens=False`` serves without authentication. With ``state`` (a state URL, e.g.
    ``redis://127.0.0.1:6379/0``) or ``replica_id`` the lab runs as one replica of several
    (:func:`agent_connector_sdk.state.replica.build_replica_app`: shared completion limit, tool switch
    and audit, a ``/healthz`` route). Builds synchronously (call it outside an event loop, or from a
    worker thread). ``trusted_proxies`` (addresses or CIDR blocks) are believed about the client behind
    them (``X-Forwarded-For``) for the completion limit and the in-flight caps; ``request_bounds`` (in
    ``http_app_kwargs``) sets the caps themselves.
    """
    auth = demo_token_verifier() if demo_tokens else None
    server = anyio.run(_build, auth)
    http_app_kwargs.setdefault("stateless_http", True)
    if state is not None or replica_id is not None:
        from agent_connector_sdk.state.replica import build_replica_app

        return build_replica_app(
            server,
            state=state,
            namespace="contract-lab",
            completions=contract_lab_completions(trusted_proxies=trusted_proxies),
            replica_id=replica_id,
            **http_app_kwargs,
        )
    return gated_http_app(
        server, completions=contract_lab_completions(trusted_proxies=trusted_proxies), **http_app_kwargs
    )


async def _build(auth: AuthProvider | None) -> FastMCP[Any]:
    return await lab_service_server(auth=auth)
