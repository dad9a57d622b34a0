"""Schema disclosure resources behind a FastMCP search transform — the public face.

This path is our published contract (other code imports these names from here); the implementation
lives in the server layer, :mod:`agent_connector_sdk.mcp.server._disclosure_provider`. Intended use::

    search = RegexSearchTransform(search_result_serializer=describe_schema_tools)
    server.add_transform(search)
    register_schema_resources(server, search, disclosures)   # alias -> SchemaDisclosure | DisclosureOrigin
    cache_tool_catalog(server, search)   # optional: agent_connector_sdk.mcp.server._catalog (see there)

What a search pattern matches: FastMCP's ``RegexSearchTransform`` tests a case-insensitive regex
(``(?i)`` prepended; no lookarounds or backreferences; at most 1,000 characters) against one string per
tool: its name, its description, then each input parameter's name and description, joined by single
spaces. So ``issues`` also finds tools that merely mention issues, ``^repos_get`` anchors at the start
of the name, and ``^repos_get$`` finds nothing when the tool has a description or parameters — write
``^repos_get( |$)`` for exactly that name. A search returns at most ``max_results`` tools, in catalog
order; ``agent-connector review`` splits a capped search by name prefix to reach every tool.

Ranked search, the option: ``RankedSearchTransform`` takes the same arguments and *is* a
``RegexSearchTransform`` (the serializer, the ``call_tool`` proxy, the catalog reads are FastMCP's). Its
search tool keeps ``pattern`` and the regex semantics above — every tool a pattern matches stays
reachable — but returns the matches ranked by relevance instead of in catalog order; it also reads
natural language ("who is watching this repository", in ``pattern`` or in the optional ``query``), and
answers a request nothing in the caller's catalog serves with no entries and a one-line note. The search
tool is annotated ``readOnlyHint``. The ranking is :mod:`agent_connector_sdk.core.search`::

    search = RankedSearchTransform(search_result_serializer=describe_schema_tools)
"""

# Exactly the implementation's public names (its ``__all__``), through the server side's door;
# tests/test_public_api.py (test_fixed_public_paths_are_faces_of_their_homes) keeps the lists equal.
from agent_connector_sdk.mcp.server import (
    DisclosureOrigin,
    RankedSearchTransform,
    SchemaDisclosureRegistry,
    SchemaResourceRegistrationError,
    describe_schema_tools,
    disclosure_not_found,
    register_schema_resources,
)

__all__ = [
    "DisclosureOrigin",
    "RankedSearchTransform",
    "SchemaDisclosureRegistry",
    "SchemaResourceRegistrationError",
    "describe_schema_tools",
    "disclosure_not_found",
    "register_schema_resources",
]
