"""The host core (sans-I/O): the gate sequence, the options and bounds, the failure families.

Its public face is :mod:`agent_connector_sdk.mcp.host` (with the I/O around it).
"""

__all__: list[str] = []
