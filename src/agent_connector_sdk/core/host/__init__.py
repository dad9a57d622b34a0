"""The host core (sans-I/O): the gate sequence, the options and bounds, the failure families.

This is the folder's door: other folders import these names from here, never from its ``_private``
modules (``tests/test_layering.py`` refuses that). :class:`HostCore` with :class:`AdmittedTool`,
:class:`PreparedCall` and :class:`ToolResult` (the gate sequence), :class:`HostOptions` with
:class:`HostBounds` (one frozen value per session), the protocol and tool-execution failure families
(:class:`ProtocolError`, :class:`ToolExecutionError`, :class:`ConfirmationRefused` …), the kinds of peer
that is not an MCP server, and the notification budget. The bounds as checks are the public module
:mod:`.bounds`. Its face with the I/O around it is :mod:`agent_connector_sdk.mcp.host`.

The names resolve lazily (PEP 562), as the package's front door does: the command line's error line
needs :data:`PeerKind` alone, and must not pay for the gate sequence (``jsonschema``, ``pydantic``).
"""

from __future__ import annotations

import importlib

# Not ``typing.TYPE_CHECKING`` (see the package's front door): the same names, eagerly, for type checkers.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_connector_sdk.core.host._errors import (
        ConfirmationCategory,
        ConfirmationRefused,
        HttpStatusError,
        InvalidCompletionRequest,
        JsonRpcError,
        MalformedResponse,
        NotMcpServer,
        ProtocolCategory,
        ProtocolError,
        ToolExecutionError,
        TransportFailure,
        UnsupportedVersion,
    )
    from agent_connector_sdk.core.host._notifications import (
        NotificationBudget,
        NotificationKind,
        NotificationTally,
        notification_kind,
    )
    from agent_connector_sdk.core.host._options import (
        HostBounds,
        HostOptions,
        Profile,
    )
    from agent_connector_sdk.core.host._peer import (
        PEER_KINDS,
        SAMPLE_LIMIT,
        PeerKind,
        peer_description,
    )
    from agent_connector_sdk.core.host._sequence import (
        AdmittedTool,
        HeaderGates,
        HostCore,
        Invocation,
        PreparedCall,
        ToolOrigin,
        ToolResult,
        annotations_may_write,
        header_map,
        may_write,
        prepare_invocation,
        require_json_data,
    )

# name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "AdmittedTool": "agent_connector_sdk.core.host._sequence",
    "ConfirmationCategory": "agent_connector_sdk.core.host._errors",
    "ConfirmationRefused": "agent_connector_sdk.core.host._errors",
    "HeaderGates": "agent_connector_sdk.core.host._sequence",
    "HostBounds": "agent_connector_sdk.core.host._options",
    "HostCore": "agent_connector_sdk.core.host._sequence",
    "HostOptions": "agent_connector_sdk.core.host._options",
    "HttpStatusError": "agent_connector_sdk.core.host._errors",
    "InvalidCompletionRequest": "agent_connector_sdk.core.host._errors",
    "Invocation": "agent_connector_sdk.core.host._sequence",
    "JsonRpcError": "agent_connector_sdk.core.host._errors",
    "MalformedResponse": "agent_connector_sdk.core.host._errors",
    "NotMcpServer": "agent_connector_sdk.core.host._errors",
    "NotificationBudget": "agent_connector_sdk.core.host._notifications",
    "NotificationKind": "agent_connector_sdk.core.host._notifications",
    "NotificationTally": "agent_connector_sdk.core.host._notifications",
    "PEER_KINDS": "agent_connector_sdk.core.host._peer",
    "PeerKind": "agent_connector_sdk.core.host._peer",
    "PreparedCall": "agent_connector_sdk.core.host._sequence",
    "Profile": "agent_connector_sdk.core.host._options",
    "ProtocolCategory": "agent_connector_sdk.core.host._errors",
    "SAMPLE_LIMIT": "agent_connector_sdk.core.host._peer",
    "ProtocolError": "agent_connector_sdk.core.host._errors",
    "ToolExecutionError": "agent_connector_sdk.core.host._errors",
    "ToolOrigin": "agent_connector_sdk.core.host._sequence",
    "ToolResult": "agent_connector_sdk.core.host._sequence",
    "TransportFailure": "agent_connector_sdk.core.host._errors",
    "UnsupportedVersion": "agent_connector_sdk.core.host._errors",
    "annotations_may_write": "agent_connector_sdk.core.host._sequence",
    "header_map": "agent_connector_sdk.core.host._sequence",
    "may_write": "agent_connector_sdk.core.host._sequence",
    "notification_kind": "agent_connector_sdk.core.host._notifications",
    "peer_description": "agent_connector_sdk.core.host._peer",
    "prepare_invocation": "agent_connector_sdk.core.host._sequence",
    "require_json_data": "agent_connector_sdk.core.host._sequence",
}

__all__ = [
    "PEER_KINDS",
    "SAMPLE_LIMIT",
    "AdmittedTool",
    "ConfirmationCategory",
    "ConfirmationRefused",
    "HeaderGates",
    "HostBounds",
    "HostCore",
    "HostOptions",
    "HttpStatusError",
    "InvalidCompletionRequest",
    "Invocation",
    "JsonRpcError",
    "MalformedResponse",
    "NotMcpServer",
    "NotificationBudget",
    "NotificationKind",
    "NotificationTally",
    "PeerKind",
    "PreparedCall",
    "Profile",
    "ProtocolCategory",
    "ProtocolError",
    "ToolExecutionError",
    "ToolOrigin",
    "ToolResult",
    "TransportFailure",
    "UnsupportedVersion",
    "annotations_may_write",
    "header_map",
    "may_write",
    "notification_kind",
    "peer_description",
    "prepare_invocation",
    "require_json_data",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
