"""Connectors: build FastMCP servers from API descriptions (currently OpenAPI, via FastMCP's own support)."""

from agent_connector_sdk.connectors._sources import OpenAPISource, load_github_extract, load_openapi_source
from agent_connector_sdk.connectors._upstream_size import DEFAULT_MAX_UPSTREAM_BYTES
from agent_connector_sdk.connectors.openapi import (
    FORWARDED_CALLER_HEADERS,
    InvalidOpenAPIDocument,
    OpenAPIOperationTool,
    OpenAPIServer,
    OpenAPIToolsMissing,
    UpstreamHeaderPolicy,
    build_openapi_server,
    build_tool_disclosures,
    list_operation_tools,
    openapi_operation_tools,
)

__all__ = [
    "DEFAULT_MAX_UPSTREAM_BYTES",
    "FORWARDED_CALLER_HEADERS",
    "InvalidOpenAPIDocument",
    "OpenAPIOperationTool",
    "OpenAPIServer",
    "OpenAPISource",
    "OpenAPIToolsMissing",
    "UpstreamHeaderPolicy",
    "build_openapi_server",
    "build_tool_disclosures",
    "list_operation_tools",
    "load_github_extract",
    "load_openapi_source",
    "openapi_operation_tools",
]
