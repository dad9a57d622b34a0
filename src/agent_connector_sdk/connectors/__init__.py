"""Connectors: build FastMCP servers from API descriptions (currently OpenAPI, via FastMCP's own support)."""

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
    "FORWARDED_CALLER_HEADERS",
    "InvalidOpenAPIDocument",
    "OpenAPIOperationTool",
    "OpenAPIServer",
    "OpenAPIToolsMissing",
    "UpstreamHeaderPolicy",
    "build_openapi_server",
    "build_tool_disclosures",
    "list_operation_tools",
    "openapi_operation_tools",
]
