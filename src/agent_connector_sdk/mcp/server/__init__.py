"""Server adapters: the gated Streamable HTTP app and its parts, owned by one ``ServerGates`` object.

A gated ``tools/call`` reads top-down: :mod:`.entry` (the one ASGI entry: cheap header checks,
authenticated slots, the body read once under bounds) → :mod:`.resolution` (the one ``get_tool`` hook:
the header verdict and argument validation) → :mod:`.parity` (the header-parity checker) → the tool
→ :mod:`.output_check` (the result against its published contract); what one stage learnt the next
reads from the call's one record (:mod:`._record`), never by calling back.
:mod:`.completion` is the authorized completion handler; :mod:`.app` assembles
them (``ServerGates``, ``gated_http_app``). Policy lives in ``agent_connector_sdk.mcp.contracts``; these
only adapt it to FastMCP and ASGI.
"""

from agent_connector_sdk.mcp.server.app import ServerGates, gated_http_app
from agent_connector_sdk.mcp.server.completion import (
    DEFAULT_RATE_LIMIT_CODE,
    AuthorizedCompletions,
    Suggestion,
    caller_key,
)
from agent_connector_sdk.mcp.server.entry import GatedEntry, RequestBounds
from agent_connector_sdk.mcp.server.output_check import (
    ERROR_TEXT_LIMIT,
    OutputSelfCheck,
    first_conforming_placeholder,
)
from agent_connector_sdk.mcp.server.parity import HeaderParityGate
from agent_connector_sdk.mcp.server.resolution import ArgumentsRefused

__all__ = [
    "DEFAULT_RATE_LIMIT_CODE",
    "ERROR_TEXT_LIMIT",
    "ArgumentsRefused",
    "AuthorizedCompletions",
    "GatedEntry",
    "HeaderParityGate",
    "OutputSelfCheck",
    "RequestBounds",
    "ServerGates",
    "Suggestion",
    "caller_key",
    "first_conforming_placeholder",
    "gated_http_app",
]
