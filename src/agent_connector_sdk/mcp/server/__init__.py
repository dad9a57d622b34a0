"""Server adapters: the gated Streamable HTTP app and its parts, owned by one ``ServerGates`` object.

A gated ``tools/call`` reads top-down: :mod:`._entry` (the one ASGI entry: cheap header checks,
authenticated slots, the body read once under bounds) → :mod:`._resolution` (the one ``get_tool`` hook:
the header verdict and argument validation) → :mod:`._parity` (the header-parity checker) → the tool
→ :mod:`._output_check` (the result against its published contract); what one stage learnt the next
reads from the call's one record (:mod:`._record`), never by calling back.
:mod:`._completion` is the authorized completion handler; :mod:`._gates` assembles
them (``ServerGates``, ``gated_http_app``). Every stage refuses through :mod:`._refusals`, the one
translator of refusals into JSON-RPC errors (and their one code table). Policy lives in
``agent_connector_sdk.core.contracts``; these only adapt it to FastMCP and ASGI.

This is the folder's door: the gateway, the lab and ``serve`` import from here, never a ``_module`` —
the refusal table (``CODES``, :func:`invalid_cursor`, :func:`relay_refusal`), the disclosure provider
(also published as :mod:`agent_connector_sdk.mcp.schema_disclosure_provider`), :func:`cache_tool_catalog`
and :func:`trusted_networks`.
"""

from agent_connector_sdk.mcp.server._catalog import cache_tool_catalog
from agent_connector_sdk.mcp.server._completion import (
    DEFAULT_RATE_LIMIT_CODE,
    AuthorizedCompletions,
    Suggestion,
    caller_key,
    trusted_networks,
)
from agent_connector_sdk.mcp.server._disclosure_provider import (
    DisclosureOrigin,
    RankedSearchTransform,
    SchemaDisclosureRegistry,
    SchemaResourceRegistrationError,
    describe_schema_tools,
    disclosure_not_found,
    published_contract_sha256,
    register_schema_resources,
)
from agent_connector_sdk.mcp.server._entry import GatedEntry, RequestBounds
from agent_connector_sdk.mcp.server._gates import ServerGates, gated_http_app
from agent_connector_sdk.mcp.server._output_check import (
    ERROR_TEXT_LIMIT,
    OutputSelfCheck,
    consumed_by_relay,
    first_conforming_placeholder,
    relay_refusal,
)
from agent_connector_sdk.mcp.server._parity import HeaderParityGate
from agent_connector_sdk.mcp.server._refusals import CODES, invalid_cursor
from agent_connector_sdk.mcp.server._resolution import ArgumentsRefused

__all__ = [
    "CODES",
    "DEFAULT_RATE_LIMIT_CODE",
    "ERROR_TEXT_LIMIT",
    "ArgumentsRefused",
    "AuthorizedCompletions",
    "DisclosureOrigin",
    "GatedEntry",
    "HeaderParityGate",
    "OutputSelfCheck",
    "RankedSearchTransform",
    "RequestBounds",
    "SchemaDisclosureRegistry",
    "SchemaResourceRegistrationError",
    "ServerGates",
    "Suggestion",
    "cache_tool_catalog",
    "caller_key",
    "consumed_by_relay",
    "describe_schema_tools",
    "disclosure_not_found",
    "first_conforming_placeholder",
    "gated_http_app",
    "invalid_cursor",
    "published_contract_sha256",
    "register_schema_resources",
    "relay_refusal",
    "trusted_networks",
]
