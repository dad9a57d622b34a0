"""agent-connector-sdk: expose and consume MCP tools safely (MCP 2026-07-28).

Two concerns, each with its own package:

* :mod:`agent_connector_sdk.mcp.schema_disclosure` — hash-bound, bounded transport of tool schemas.
* :mod:`agent_connector_sdk.mcp.contracts` — the five-gate tool contract (Discover, Admit, Invoke,
  Execute, Consume), pure and sans-I/O.

Adapters: :mod:`agent_connector_sdk.mcp.host` (one host core: ``ContractClient`` and the disclosure
consumer are its two faces) and :mod:`agent_connector_sdk.mcp.server` (the gates on a FastMCP server,
plus ``agent_connector_sdk.mcp.schema_disclosure_provider``).
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
