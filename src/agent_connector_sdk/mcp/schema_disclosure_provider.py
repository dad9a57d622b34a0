"""Schema disclosure resources behind a FastMCP search transform — the public face.

This path is our published contract (other code imports these names from here); the implementation
lives in the server layer, :mod:`agent_connector_sdk.mcp.server.disclosure`. Intended use::

    search = RegexSearchTransform(search_result_serializer=describe_schema_tools)
    server.add_transform(search)
    register_schema_resources(server, search, disclosures)   # alias -> SchemaDisclosure | DisclosureOrigin
"""

from agent_connector_sdk.mcp.server.disclosure import (
    DisclosureOrigin,
    SchemaDisclosureRegistry,
    SchemaResourceRegistrationError,
    describe_schema_tools,
    disclosure_not_found,
    register_schema_resources,
)

__all__ = [
    "DisclosureOrigin",
    "SchemaDisclosureRegistry",
    "SchemaResourceRegistrationError",
    "describe_schema_tools",
    "disclosure_not_found",
    "register_schema_resources",
]
