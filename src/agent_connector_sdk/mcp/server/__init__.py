"""Server adapters: the gated Streamable HTTP app and its parts (header parity, output self-check,
authorized completion). Policy lives in ``agent_connector_sdk.mcp.contracts``; these only adapt it to
FastMCP and ASGI.
"""

from agent_connector_sdk.mcp.server.app import gated_http_app, install_gates
from agent_connector_sdk.mcp.server.completion import (
    DEFAULT_RATE_LIMIT_CODE,
    AuthorizedCompletions,
    Suggestion,
    caller_key,
)
from agent_connector_sdk.mcp.server.header_gate import install_header_gate
from agent_connector_sdk.mcp.server.header_parity import HeaderParityMiddleware
from agent_connector_sdk.mcp.server.output_check import (
    OutputSelfCheck,
    ResolvedToolRecorder,
    first_conforming_placeholder,
)

__all__ = [
    "DEFAULT_RATE_LIMIT_CODE",
    "AuthorizedCompletions",
    "HeaderParityMiddleware",
    "OutputSelfCheck",
    "ResolvedToolRecorder",
    "Suggestion",
    "caller_key",
    "first_conforming_placeholder",
    "gated_http_app",
    "install_gates",
    "install_header_gate",
]
