"""Server adapters: the gated Streamable HTTP app and its parts (header parity, argument validation,
output self-check, authorized completion), owned by one ``ServerGates`` object. Policy lives in
``agent_connector_sdk.mcp.contracts``; these only adapt it to FastMCP and ASGI.
"""

from agent_connector_sdk.mcp.server.app import ServerGates, gated_http_app, install_gates
from agent_connector_sdk.mcp.server.completion import (
    DEFAULT_RATE_LIMIT_CODE,
    AuthorizedCompletions,
    Suggestion,
    caller_key,
)
from agent_connector_sdk.mcp.server.header_gate import ArgumentsRefused, install_header_gate
from agent_connector_sdk.mcp.server.header_parity import HeaderParityGate, HeaderParityMiddleware
from agent_connector_sdk.mcp.server.output_check import (
    ERROR_TEXT_LIMIT,
    OutputSelfCheck,
    ResolvedToolRecorder,
    first_conforming_placeholder,
)

__all__ = [
    "DEFAULT_RATE_LIMIT_CODE",
    "ERROR_TEXT_LIMIT",
    "ArgumentsRefused",
    "AuthorizedCompletions",
    "HeaderParityGate",
    "HeaderParityMiddleware",
    "OutputSelfCheck",
    "ResolvedToolRecorder",
    "ServerGates",
    "Suggestion",
    "caller_key",
    "first_conforming_placeholder",
    "gated_http_app",
    "install_gates",
    "install_header_gate",
]
