"""The contract gateway: many child MCP servers behind one gated, disclosed catalog.

:class:`Gateway` (the Python API), :class:`GatewayConfig` / :class:`ChildSpec` (what it is told),
:class:`GatewayError` (its refusals). ``agent-connector gateway`` is the CLI over it. See
``docs/gateway.md``.
"""

from agent_connector_sdk.gateway._app import (
    CONTRACT_BINDING_META_KEY,
    SCHEMA_DIGEST_META_KEY,
    Gateway,
    GatewayTool,
)
from agent_connector_sdk.gateway._config import ChildSpec, GatewayConfig, load_config, parse_child
from agent_connector_sdk.gateway._errors import GatewayError

__all__ = [
    "CONTRACT_BINDING_META_KEY",
    "SCHEMA_DIGEST_META_KEY",
    "ChildSpec",
    "Gateway",
    "GatewayConfig",
    "GatewayError",
    "GatewayTool",
    "load_config",
    "parse_child",
]
