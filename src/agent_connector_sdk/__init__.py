"""agent-connector-sdk: expose and consume MCP tools safely (MCP 2026-07-28).

Two concerns, each with its own package:

* :mod:`agent_connector_sdk.mcp.schema_disclosure` — hash-bound, bounded transport of tool schemas.
* :mod:`agent_connector_sdk.mcp.contracts` — the five-gate tool contract (Discover, Admit, Invoke,
  Execute, Consume), pure and sans-I/O; adapters live in :mod:`agent_connector_sdk.mcp.client` and
  :mod:`agent_connector_sdk.mcp.server`.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
