"""Compatibility re-export: the ``Mcp-Param-*`` header channel now lives in the host package.

See :mod:`agent_connector_sdk.mcp.host.param_headers` (delivery) and
:func:`agent_connector_sdk.mcp.host.core.prepare_invocation` (the Invoke step that computes them).
"""

from agent_connector_sdk.mcp.host.param_headers import (
    TRANSPORT_EXCEPTIONS,
    ParamHeaderChannel,
    is_local_transport_error,
)

__all__ = ["TRANSPORT_EXCEPTIONS", "ParamHeaderChannel", "is_local_transport_error"]
