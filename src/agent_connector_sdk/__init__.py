"""agent-connector-sdk: expose and consume MCP tools safely (MCP 2026-07-28).

The front door — the names most code needs, importable from the top::

    from agent_connector_sdk import ContractClient, HostOptions, HostSession   # a host
    from agent_connector_sdk import ServerGates, gated_http_app                 # a gated server
    from agent_connector_sdk import register_schema_resources, describe_schema_tools

Everything else stays at its home module (each declares ``__all__``, pinned by
``tests/test_public_api.py``):

* :mod:`agent_connector_sdk.core.schema_disclosure` — hash-bound, bounded transport of tool schemas.
* :mod:`agent_connector_sdk.core.contracts` — the five-gate tool contract (Discover, Admit, Invoke,
  Execute, Consume), pure and sans-I/O.
* :mod:`agent_connector_sdk.mcp.host` — one host core per connection (:class:`HostSession`);
  :class:`ContractClient` and :class:`SchemaDisclosureConsumer` are its two faces.
* :mod:`agent_connector_sdk.mcp.server` — the gates on a FastMCP server, and
  :mod:`agent_connector_sdk.mcp.schema_disclosure_provider` (the disclosure resources).
* :mod:`agent_connector_sdk.errors` — the one error root, :class:`AgentConnectorError`, and its tree.

The names resolve lazily (PEP 562): every ``import agent_connector_sdk.<sub>`` runs this file first, and
the host and server adapters pull in ``fastmcp`` (seconds, not milliseconds), so importing the package
or a pure core must not pay for them. A name's module is imported on first attribute access.
"""

from __future__ import annotations

import importlib

# Not ``typing.TYPE_CHECKING``: importing ``typing`` would double this file's import time, and type
# checkers treat any constant of this name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:  # the same names, eagerly, for type checkers and IDEs
    from agent_connector_sdk.audit import BoundedAuditSink
    from agent_connector_sdk.core.schema_disclosure import build_schema_disclosure
    from agent_connector_sdk.errors import AgentConnectorError
    from agent_connector_sdk.mcp.host import (
        ContractClient,
        HostBounds,
        HostOptions,
        HostSession,
        SchemaDisclosureConsumer,
    )
    from agent_connector_sdk.mcp.schema_disclosure_provider import (
        describe_schema_tools,
        register_schema_resources,
    )
    from agent_connector_sdk.mcp.server import ServerGates, gated_http_app

__version__ = "0.1.0"

# name -> the public module that defines it (the front door re-exports; it never defines).
_EXPORTS: dict[str, str] = {
    "AgentConnectorError": "agent_connector_sdk.errors",
    "BoundedAuditSink": "agent_connector_sdk.audit",
    "ContractClient": "agent_connector_sdk.mcp.host",
    "HostBounds": "agent_connector_sdk.mcp.host",
    "HostOptions": "agent_connector_sdk.mcp.host",
    "HostSession": "agent_connector_sdk.mcp.host",
    "SchemaDisclosureConsumer": "agent_connector_sdk.mcp.host",
    "ServerGates": "agent_connector_sdk.mcp.server",
    "build_schema_disclosure": "agent_connector_sdk.core.schema_disclosure",
    "describe_schema_tools": "agent_connector_sdk.mcp.schema_disclosure_provider",
    "gated_http_app": "agent_connector_sdk.mcp.server",
    "register_schema_resources": "agent_connector_sdk.mcp.schema_disclosure_provider",
}

__all__ = [
    "AgentConnectorError",
    "BoundedAuditSink",
    "ContractClient",
    "HostBounds",
    "HostOptions",
    "HostSession",
    "SchemaDisclosureConsumer",
    "ServerGates",
    "__version__",
    "build_schema_disclosure",
    "describe_schema_tools",
    "gated_http_app",
    "register_schema_resources",
]


def __getattr__(name: str) -> object:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value  # resolve once; later lookups are plain module attributes
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
