"""What a host connection is allowed to do and how much it may spend: one frozen value per session.

:class:`HostOptions` is built once and handed to the one :class:`~agent_connector_sdk.mcp.host.HostSession` of
a connection; every face (``ContractClient``, ``SchemaDisclosureConsumer``) and the CLI reviewer read their
policy, profile, audit sink, confirmation and bounds from it, so nothing is kept in step by hand.

:class:`HostBounds` are the host's defences against a server that never stops sending: a whole-operation
deadline, caps on pages, tools, navigation entries, descriptor and schema size and depth, result size and
``Mcp-Param-*`` headers. A cap that is hit is a typed refusal naming the cap (never a crash, never a
silently truncated report).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

# Profile: one definition, shared with the pure rules (contracts.findings); the host profile selects them.
from agent_connector_sdk.core.contracts import AdmissionPolicy, Profile
from agent_connector_sdk.core.contracts.lock import ContractLock

if TYPE_CHECKING:  # the session module imports this one
    from agent_connector_sdk.audit import AuditSink

__all__ = ["HostBounds", "HostOptions", "Profile"]


@dataclass(frozen=True, slots=True)
class HostBounds:
    """Upper bounds on what one host operation may take from a server (documented defaults).

    The header bounds keep one call's ``Mcp-Param-*`` block well under common proxy limits (8 KiB):
    32 headers × (64-byte name + value) stays far below it.
    """

    deadline_s: float | None = 300.0
    """Whole operation (a review; a discover + admit; a disclosure), on top of each request's timeout."""
    max_pages: int = 100
    max_tools: int = 10_000
    """Tools in one listing, all pages together."""
    max_navigation_entries: int = 10_000
    """Entries in one search result."""
    max_list_items: int = 10_000
    """Prompts, resources or resource templates in one listing, all pages together
    (:meth:`~agent_connector_sdk.mcp.host.HostSession.list_catalog`)."""
    max_descriptor_bytes: int = 1 << 20
    max_schema_bytes: int = 1 << 20
    max_schema_depth: int = 64
    max_result_bytes: int = 16 << 20
    """One ``tools/call`` result (text, blobs and structuredContent together)."""
    max_message_bytes: int = 32 << 20
    """One JSON-RPC message read from the transport (enforced while reading where the transport allows)."""
    max_message_values: int = 400_000
    """JSON values in one message (objects and arrays, and their members after the first), counted while
    reading on Streamable HTTP. Parsed, each value costs a few hundred bytes, far more than its text: a
    page of 100,000 tiny tools is 9 MB on the wire and ~270 MB parsed. 400,000 keeps a parsed message
    near 200 MB; a schema-dense page (GitHub's REST descriptions) holds ~45 values per KB, ~9 MB."""
    max_stream_bytes: int = 256 << 20
    """One response stream (all the SSE events answering one Streamable HTTP request together): the
    caps above hold per message (an SSE event is one message); this bounds what one request's stream
    may send in all before its answer (e.g. progress events), named when it trips. Its duration is
    bounded by the request's timeout and ``deadline_s``."""
    notification_rate: float = 20.0
    """Notifications a second relayed to the client's handlers per connection (log messages, progress,
    list_changed, resource updates, others together), after a burst of ``notification_burst``; the rest
    are counted and dropped (:mod:`~agent_connector_sdk.core.host._notifications`)."""
    notification_burst: int = 100
    max_notifications: int = 10_000
    """Notifications relayed per connection in all; past it every notification is counted and dropped
    (a ``tools/list_changed`` still marks the catalog stale)."""
    max_header_name_length: int = 64
    max_mirrored_headers: int = 32

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if value is None and name == "deadline_s":
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"HostBounds.{name} must be a positive number")


@dataclass(frozen=True, slots=True)
class HostOptions:
    """Everything a host session needs besides the connection; frozen and shared by its faces.

    ``policy`` admits descriptors; ``profile`` decides what project rules do (findings by default,
    rejections in ``strict``), including the ``x-mcp-header`` placement (the core sets
    ``policy.profile`` from it: the spec's placement plus a finding, or root properties only);
    ``audit`` receives every event (default: a bounded in-memory sink);
    ``confirm_write``/``require_confirmation`` are write confirmation (on by default); ``bounds`` are
    :class:`HostBounds`; ``max_disclosed`` bounds the tools remembered from disclosures; ``lock`` is the
    contract lock (approved contracts, see the field).
    """

    policy: AdmissionPolicy = field(default_factory=AdmissionPolicy)
    profile: Profile = "default"
    audit: AuditSink | None = None
    confirm_write: Any = None
    """A :data:`~agent_connector_sdk.mcp.host.ConfirmWrite` callback (typed ``Any`` here to avoid an import
    cycle)."""
    require_confirmation: bool = True
    bounds: HostBounds = field(default_factory=HostBounds)
    max_disclosed: int = 256
    sanitize_server_output: bool = True
    """Pass what a server writes besides its answers through the one sanitizer
    (:mod:`~agent_connector_sdk.mcp.host._server_output`): a stdio server's stderr (when it would be
    inherited) is relayed line by line, sanitized, capped and prefixed; its log notifications reach the
    client's log handler sanitized. ``False`` is the explicit opt-out (raw stderr, raw log data)."""
    lock: ContractLock | None = None
    """Approved tool contracts (``review --write-lock``): a listed tool whose contract drifted is refused
    at Admit (``contract_drift``, naming the changed fields) until re-approved; on
    ``notifications/tools/list_changed`` the session re-lists before its next call. A lock holding one
    server applies to this connection; otherwise the entry keyed by the server's URL (or stdio command
    line) does, and without one every listed tool is refused (fail closed)."""
    refuse_server_text: bool = True
    """In the ``strict`` profile, a ``hidden-unicode`` or ``instruction-markup`` finding in what the server
    says besides its tools (its ``instructions`` at connect; prompts and resources when the caller asks,
    :meth:`~agent_connector_sdk.mcp.host.HostSession.check_server_text`) refuses the connection
    (``AdmissionError('tool_poisoning')``). The reviewer sets ``False``: it reports them as failures
    instead of stopping its review. Ignored in the ``default`` profile (findings only)."""
