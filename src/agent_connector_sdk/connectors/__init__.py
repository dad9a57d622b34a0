"""Connectors: build FastMCP servers from API descriptions (currently OpenAPI, via FastMCP's own support)."""

from agent_connector_sdk.connectors.openapi import (
    OpenAPIOperationTool,
    OpenAPIServer,
    OpenAPIToolsMissing,
    build_openapi_server,
    build_tool_disclosures,
    list_operation_tools,
    openapi_operation_tools,
)

__all__ = [
    "OpenAPIOperationTool",
    "OpenAPIServer",
    "OpenAPIToolsMissing",
    "build_openapi_server",
    "build_tool_disclosures",
    "list_operation_tools",
    "openapi_operation_tools",
]
