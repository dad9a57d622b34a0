"""An OpenAPI document served as gated MCP tools behind search (``serve --openapi``), and the start-up
line saying how its disclosure reads resolve.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, Final, Protocol

from agent_connector_sdk.connectors import DEFAULT_MAX_UPSTREAM_BYTES, OpenAPISource
from agent_connector_sdk.connectors.openapi import (
    InvalidOpenAPIDocument,
    UpstreamErrorMode,
    build_openapi_server,
    tool_disclosure_origins,
)
from agent_connector_sdk.mcp.server import RequestBounds
from agent_connector_sdk.serving.errors import ServingError
from agent_connector_sdk.serving.openapi_document import concrete_server_url, document_info
from agent_connector_sdk.serving.process import SERVE_LOGGER

__all__ = [
    "SEARCH_TOOL_NAMES",
    "ToolAuth",
    "build_openapi_app",
    "disclosure_read_path",
    "document_refusal",
    "log_disclosure_read_path",
]

logger = logging.getLogger(SERVE_LOGGER)


class ToolAuth(Protocol):
    """``--auth-config`` as read (the gateway's ``AuthSettings`` is one): the scopes each tool name
    requires, and the verifier of callers' JWTs. A protocol, so this assembly needs not load the
    gateway (nor sit above it) to take one."""

    @property
    def require(self) -> Mapping[str, tuple[str, ...]]: ...

    def verifier(self) -> Any: ...


SEARCH_TOOL_NAMES: Final = ("search_tools", "call_tool")
"""The search transform's own tools on a served OpenAPI document: no operation may take these names."""


def build_openapi_app(
    source: OpenAPISource,
    *,
    upstream: str | None,
    state: str | None = None,
    replica_id: str | None = None,
    upstream_errors: UpstreamErrorMode = "generic",
    request_bounds: RequestBounds | None = None,
    auth: ToolAuth | None = None,
    max_upstream_bytes: int = DEFAULT_MAX_UPSTREAM_BYTES,
    allow_duplicate_operation_ids: bool = False,
    strict_refs: bool = False,
    ranked: bool = True,
) -> tuple[Any, int]:
    """Every operation of ``source`` a tool behind a ranked search (``RankedSearchTransform``: FastMCP's
    ``RegexSearchTransform`` with results ranked by relevance, natural language read, abstaining when
    nothing fits; ``ranked=False`` keeps FastMCP's catalog-order regex search) whose results are
    navigation entries, disclosure resources registered, the contract gates on; ``serverInfo`` from the
    document's ``info``. ``upstream_errors="echo"`` lets callers see a bounded excerpt of an upstream
    error body (default: the status and a generic message). ``auth`` (``--auth-config``) turns on
    FastMCP's JWT verifier and puts each ``[auth.require]`` tool behind its scopes (a name there may be an
    ``operationId``: every tool derived from it inherits the requirement). ``max_upstream_bytes`` bounds
    each upstream answer; ``allow_duplicate_operation_ids`` and ``strict_refs`` are
    :func:`~agent_connector_sdk.connectors.openapi.build_openapi_server`'s. A document the connector
    refuses is one :class:`ServingError` line; each operation left out (an unresolvable ``$ref``) is one
    warning line. Returns the ASGI app and the tool count."""
    from fastmcp.server.transforms.search import RegexSearchTransform

    from agent_connector_sdk.core.schema_disclosure import SourceDigest
    from agent_connector_sdk.mcp.schema_disclosure_provider import (
        RankedSearchTransform,
        describe_schema_tools,
        register_schema_resources,
    )
    from agent_connector_sdk.mcp.server import cache_tool_catalog, gated_http_app

    base_url = upstream if upstream is not None else concrete_server_url(source.document)
    if base_url is None:
        raise ServingError(
            "the document has no concrete servers[0].url for the tools to call: pass --upstream URL"
        )
    title, version = document_info(source.document)
    try:
        openapi = build_openapi_server(
            source.document,
            base_url=base_url,
            name=title,
            version=version,
            upstream_errors=upstream_errors,
            max_upstream_bytes=max_upstream_bytes,
            allow_duplicate_operation_ids=allow_duplicate_operation_ids,
            strict_refs=strict_refs,
            reserved_names=SEARCH_TOOL_NAMES,
            raw=source.raw,
        )
    except InvalidOpenAPIDocument as error:
        raise ServingError(document_refusal(error)) from None
    for operation, reason in openapi.refused.items():
        logger.warning("operation %s left out: %s", json.dumps(operation, ensure_ascii=False)[:200], reason)

    # Lazy: each disclosure is built on its first read, from the schemas that read sees, so start-up
    # lists and hashes nothing per operation (the source document is hashed once).
    disclosures = tool_disclosure_origins(openapi, SourceDigest.of(source.raw))
    if not disclosures:
        raise ServingError("the document has no operations: there is nothing to serve")
    server = openapi.server
    if auth is not None:
        # JWT authentication and per-tool scopes (FastMCP's require_scopes: search, reads and calls agree).
        from agent_connector_sdk.mcp import compat

        own = sorted(set(auth.require) & set(SEARCH_TOOL_NAMES))
        if own:
            raise ServingError(
                f"--auth-config: [auth.require] {own[0]} is the server's own search tool, not an operation"
            )
        # A name may be an operationId: every tool derived from it (several, when duplicates were
        # allowed) inherits the requirement.
        require = {tool: scopes for name, scopes in auth.require.items() for tool in openapi.tools_of(name)}
        missing = set(auth.require) - {name for name in auth.require if openapi.tools_of(name)}
        missing |= compat.require_tool_scopes(server, require)
        if missing:
            first = sorted(missing)[0]
            raise ServingError(f"--auth-config: [auth.require] {first} names no tool of the document")
        server.auth = auth.verifier()
    search_name, call_name = SEARCH_TOOL_NAMES
    search = (RankedSearchTransform if ranked else RegexSearchTransform)(
        search_result_serializer=describe_schema_tools,
        max_results=50,
        search_tool_name=search_name,
        call_tool_name=call_name,
    )
    server.add_transform(search)
    # from_openapi tools are never edited in place: reads may memoize on the schema objects.
    register_schema_resources(server, search, disclosures, frozen_schemas=True)
    # Nothing edits these tools in place: search and proxy calls read the caller's catalog from the
    # exact cache instead of re-listing (and re-dereferencing) every operation per call.
    cache_tool_catalog(server, search)
    if state is not None or replica_id is not None:
        from agent_connector_sdk.state.replica import build_replica_app

        replica = build_replica_app(
            server, state=state, namespace="openapi", replica_id=replica_id, request_bounds=request_bounds
        )
        return replica, len(disclosures)
    return gated_http_app(server, stateless_http=True, request_bounds=request_bounds), len(disclosures)


_RELAXED_BY: Final = {"unique_operation_ids": "--allow-duplicate-operation-ids"}


def document_refusal(error: InvalidOpenAPIDocument) -> str:
    """The connector's refusal as the CLI says it: its words, and the option that relaxes the rule."""
    option = _RELAXED_BY.get(error.rule or "")
    return f"{error.message} (to serve it anyway: {option})" if option else error.message


def disclosure_read_path(app: Any) -> str | None:
    """Why disclosure reads on ``app`` (as :func:`build_openapi_app` or the lab build it) take the exact
    whole-catalog path, ``None`` when they resolve by name; ``"no disclosure registry"`` when the app
    serves none."""
    from agent_connector_sdk.mcp.schema_disclosure_provider import SchemaDisclosureRegistry

    inner = getattr(app, "app", app)  # a replica wraps the gated app
    server = getattr(getattr(inner, "state", None), "fastmcp_server", None)
    registry = SchemaDisclosureRegistry.of(server) if server is not None else None
    if registry is None:
        return "no disclosure registry"
    return registry.fast_path_blocker()


def log_disclosure_read_path(app: Any) -> None:
    """One start-up line: do disclosure reads resolve by name (cost independent of the catalog's size)
    or fall back to listing the caller's whole catalog per read, and why. All is well: a debug line
    (nothing to act on); the fallback: a warning."""
    blocker = disclosure_read_path(app)
    if blocker is None:
        logger.debug("disclosure reads resolve by name (cost independent of the catalog's size)")
    else:
        logger.warning("disclosure reads list the whole catalog per read: %s", blocker)
