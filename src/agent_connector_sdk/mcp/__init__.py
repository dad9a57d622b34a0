"""MCP integration: pure cores (``schema_disclosure``, ``contracts``) and thin FastMCP adapters."""

__all__: list[str] = []
