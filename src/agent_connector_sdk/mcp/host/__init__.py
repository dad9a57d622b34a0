"""The host side: one core every client path runs (Discover → Admit → Invoke → Consume).

The pure half lives in the pure layer, :mod:`agent_connector_sdk.core.host`: the sans-I/O gate sequence
(``_sequence``: :class:`HostCore`, :class:`AdmittedTool`, :class:`PreparedCall`, :class:`ToolResult`),
:class:`HostOptions` with :class:`HostBounds` (``_options``: one frozen value per session), the bounds
as checks (``bounds``) and the protocol and tool-execution failure families (``_errors``). Here, the
I/O around it:

* :mod:`._session` — the same core over a real ``fastmcp.Client`` (:class:`HostSession`, ONE per
  connection), with the connection's revision, transport and header-gate applicability
  (:class:`ConnectionReport`);
* :mod:`._translate` — ``map_errors``: the one place foreign failures become the host's families;
  :mod:`._transport_errors` says what a transport failure looks like through the ``mcp`` SDK;
* :mod:`._param_headers` — delivering ``Mcp-Param-*`` headers on exactly one ``tools/call`` POST;
* :mod:`._deadline` — one operation's deadline (a cancel scope);
* :mod:`._wire` — what the host reads off the wire itself (byte caps, HTTP error words, raw pages);
* :mod:`._debounce` — debounced completion requests for a host UI.

The two faces people use, thin over one session (a reviewer builds one :class:`HostSession` and both
faces over it): :class:`ContractClient` (:mod:`.contract_client`, tools from ``tools/list``) and
:class:`SchemaDisclosureConsumer` (:mod:`.disclosure_consumer`, tools behind a search transform,
reconstructed from schema disclosures).
"""

# The faces last: they build on the modules above (importing them first would be circular).
from agent_connector_sdk.core.host import (
    AdmittedTool,
    ConfirmationRefused,
    HostBounds,
    HostCore,
    HostOptions,
    HttpStatusError,
    InvalidCompletionRequest,
    Invocation,
    JsonRpcError,
    MalformedResponse,
    NotMcpServer,
    PeerKind,
    PreparedCall,
    Profile,
    ProtocolCategory,
    ProtocolError,
    ToolExecutionError,
    ToolOrigin,
    ToolResult,
    TransportFailure,
    UnsupportedVersion,
    annotations_may_write,
    header_map,
    may_write,
    prepare_invocation,
    require_json_data,
)
from agent_connector_sdk.mcp.host._deadline import operation_deadline
from agent_connector_sdk.mcp.host._debounce import CompletionDebouncer
from agent_connector_sdk.mcp.host._param_headers import ParamHeaderChannel
from agent_connector_sdk.mcp.host._server_output import StderrRecord, StderrRelay
from agent_connector_sdk.mcp.host._session import (
    CallSummary,
    ConfirmWrite,
    ConnectionReport,
    HeaderGates,
    HostSession,
    TransportKind,
)
from agent_connector_sdk.mcp.host._translate import translate_unreadable
from agent_connector_sdk.mcp.host._transport_errors import TRANSPORT_EXCEPTIONS, is_local_transport_error
from agent_connector_sdk.mcp.host.contract_client import ContractClient
from agent_connector_sdk.mcp.host.disclosure_consumer import (
    CallerScope,
    DisclosedTool,
    SchemaDisclosureConsumer,
)

__all__ = [
    "TRANSPORT_EXCEPTIONS",
    "AdmittedTool",
    "CallSummary",
    "CallerScope",
    "CompletionDebouncer",
    "ConfirmWrite",
    "ConfirmationRefused",
    "ConnectionReport",
    "ContractClient",
    "DisclosedTool",
    "HeaderGates",
    "HostBounds",
    "HostCore",
    "HostOptions",
    "HostSession",
    "HttpStatusError",
    "InvalidCompletionRequest",
    "Invocation",
    "JsonRpcError",
    "MalformedResponse",
    "NotMcpServer",
    "ParamHeaderChannel",
    "PeerKind",
    "PreparedCall",
    "Profile",
    "ProtocolCategory",
    "ProtocolError",
    "SchemaDisclosureConsumer",
    "StderrRecord",
    "StderrRelay",
    "ToolExecutionError",
    "ToolOrigin",
    "ToolResult",
    "TransportFailure",
    "TransportKind",
    "UnsupportedVersion",
    "annotations_may_write",
    "header_map",
    "is_local_transport_error",
    "may_write",
    "operation_deadline",
    "prepare_invocation",
    "require_json_data",
    "translate_unreadable",
]
