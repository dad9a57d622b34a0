"""The host side: one core every client path runs (Discover → Admit → Invoke → Consume).

* :mod:`.core` — the sans-I/O gate sequence (:class:`HostCore`, :class:`AdmittedTool`,
  :class:`PreparedCall`, :class:`ToolResult`);
* :mod:`.session` — the same core over a real ``fastmcp.Client`` (:class:`HostSession`), with the
  connection's revision, transport and header-gate applicability (:class:`ConnectionReport`);
* :mod:`.param_headers` — delivering ``Mcp-Param-*`` headers on exactly one ``tools/call`` POST;
* :mod:`.errors` — the protocol and tool-execution failure families.

``agent_connector_sdk.mcp.client.ContractClient`` and
``agent_connector_sdk.mcp.schema_disclosure_consumer.SchemaDisclosureConsumer`` are thin faces of it.
"""

from agent_connector_sdk.mcp.host.core import (
    AdmittedTool,
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
from agent_connector_sdk.mcp.host.debounce import CompletionDebouncer
from agent_connector_sdk.mcp.host.errors import (
    ConfirmationRefused,
    InvalidCompletionRequest,
    JsonRpcError,
    MalformedResponse,
    ProtocolCategory,
    ProtocolError,
    ToolExecutionError,
    TransportFailure,
)
from agent_connector_sdk.mcp.host.param_headers import (
    TRANSPORT_EXCEPTIONS,
    ParamHeaderChannel,
    is_local_transport_error,
)
from agent_connector_sdk.mcp.host.session import (
    CallSummary,
    ConfirmWrite,
    ConnectionReport,
    HeaderGates,
    HostSession,
    TransportKind,
)

__all__ = [
    "TRANSPORT_EXCEPTIONS",
    "AdmittedTool",
    "CallSummary",
    "CompletionDebouncer",
    "ConfirmWrite",
    "ConfirmationRefused",
    "ConnectionReport",
    "HeaderGates",
    "HostCore",
    "HostSession",
    "InvalidCompletionRequest",
    "Invocation",
    "JsonRpcError",
    "MalformedResponse",
    "ParamHeaderChannel",
    "PreparedCall",
    "ProtocolCategory",
    "ProtocolError",
    "ToolExecutionError",
    "ToolOrigin",
    "ToolResult",
    "TransportFailure",
    "TransportKind",
    "annotations_may_write",
    "header_map",
    "is_local_transport_error",
    "may_write",
    "prepare_invocation",
    "require_json_data",
]
