"""The contract pipeline's error hierarchy: one base, one class per gate, under the SDK's one root.

Every error carries a stable machine-readable ``category`` (what went wrong; one ``Literal`` per gate
class) and the ``gate`` that owns the failure (where it went wrong), so a host can route a refusal
without parsing messages. Messages and attributes never contain argument or header *values*: they
name fields, paths and header names only, because these errors end up in logs and audit trails.

Two layers stay apart on purpose (see ``agent_connector_sdk.mcp.host``): these are *contract*
refusals raised by our gates; a tool that ran and failed is a tool result with ``isError: true``,
and a JSON-RPC error from the peer is a protocol error. Neither is ever disguised as the other.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from agent_connector_sdk.errors import AgentConnectorError, Gate

__all__ = [
    "HEADER_MISMATCH_CODE",
    "AdmissionCategory",
    "AdmissionError",
    "ArgumentCategory",
    "ArgumentError",
    "CompletionCategory",
    "CompletionError",
    "ConfirmationCategory",
    "ConsumeCategory",
    "ContractCategory",
    "ContractError",
    "ContractViolation",
    "Gate",
    "HeaderMismatch",
    "HeaderMismatchCategory",
    "HeaderValueCategory",
    "HeaderValueError",
    "LockCategory",
    "PaginationCategory",
    "PaginationError",
    "SourcePinCategory",
]

HEADER_MISMATCH_CODE = -32020
"""JSON-RPC code the 2026-07-28 spec reserves for header/body disagreement (sent with HTTP 400)."""

PaginationCategory = Literal["repeated_cursor", "page_limit", "invalid_cursor", "malformed_page"]
AdmissionCategory = Literal[
    "malformed",
    "invalid_schema",
    "unsupported_dialect",
    "unresolvable_ref",
    "invalid_header_annotation",
    "sensitive_header",
    "duplicate_name",
    "not_admitted",
    "header_map_mismatch",
    "contract_drift",
    "tool_poisoning",
]
ArgumentCategory = Literal["invalid_arguments", "invalid_schema", "unsupported_dialect", "unresolvable_ref"]
HeaderValueCategory = Literal[
    "type_mismatch", "out_of_range", "malformed", "undeliverable", "invalid_header_annotation"
]
HeaderMismatchCategory = Literal[
    "missing", "duplicated", "unexpected", "malformed", "mismatched", "invalid_header_annotation"
]
CompletionCategory = Literal["invalid_request", "rate_limited"]
ConfirmationCategory = Literal["confirmation_required", "not_confirmed"]
ConsumeCategory = Literal[
    "malformed_result",
    "invalid_result_type",
    "invalid_content_block",
    "unknown_content_type",
    "missing_structured_content",
    "output_schema_violation",
    "invalid_schema",
    "unsupported_dialect",
    "unresolvable_ref",
    "missing_text_serialization",
    "malformed_completion",
    "input_required_rounds_exceeded",
    "input_request_refused",
    "input_required_not_allowed",
    "empty_input_required",
    "invalid_request_state",
    "malformed_input_request",
    "undeclared_client_capability",
]
SourcePinCategory = Literal["source_not_pinned", "server_not_pinned", "malformed_pins"]
LockCategory = Literal["malformed_lock"]
ContractCategory = (
    PaginationCategory
    | SourcePinCategory
    | LockCategory
    | AdmissionCategory
    | ArgumentCategory
    | HeaderValueCategory
    | HeaderMismatchCategory
    | CompletionCategory
    | ConfirmationCategory
    | ConsumeCategory
)


class ContractError(AgentConnectorError):
    """Base of every contract refusal. ``category`` is stable; ``gate`` names the owning gate."""

    gate: ClassVar[Gate]
    category: ContractCategory

    def __init__(self, category: ContractCategory, message: str) -> None:
        super().__init__(category, message)


class PaginationError(ContractError):
    """Discover: the server's cursors cannot be followed safely.

    Categories: ``repeated_cursor``, ``page_limit``, ``invalid_cursor``, ``malformed_page``. ``trace``
    is the list of cursors sent so far (``None`` for the first request), so the refusal shows exactly
    what was asked.
    """

    gate = "discover"
    category: PaginationCategory

    def __init__(self, category: PaginationCategory, message: str, *, trace: list[str | None]) -> None:
        super().__init__(category, message)
        self.trace = list(trace)


class AdmissionError(ContractError):
    """Admit: a descriptor or a tool is not admitted (e.g. calling a tool admission rejected)."""

    gate = "admit"
    category: AdmissionCategory

    def __init__(self, category: AdmissionCategory, message: str) -> None:
        super().__init__(category, message)


class ArgumentError(ContractError):
    """Invoke: the arguments do not satisfy the admitted input schema. ``path`` points into them."""

    gate = "invoke"
    category: ArgumentCategory

    def __init__(self, category: ArgumentCategory, message: str, *, path: str = "") -> None:
        super().__init__(category, message)
        self.path = path


class HeaderValueError(ContractError, ValueError):
    """Invoke: a value cannot become (or be read back from) an ``Mcp-Param-*`` header, or cannot be
    delivered.

    Categories: ``type_mismatch``, ``out_of_range``, ``malformed``, ``undeliverable``,
    ``invalid_header_annotation``. (On the server, a header that cannot be read back is reported as
    :class:`HeaderMismatch` ``malformed``, by the Execute gate.)
    """

    gate = "invoke"
    category: HeaderValueCategory

    def __init__(self, category: HeaderValueCategory, message: str) -> None:
        super().__init__(category, message)


class HeaderMismatch(ContractError):
    """Execute: the ``Mcp-Param-*`` headers disagree with the JSON-RPC body (HTTP 400, -32020).

    Categories: ``missing``, ``duplicated``, ``unexpected``, ``malformed``, ``mismatched``, and
    ``invalid_header_annotation`` (the tool's own annotations are invalid, so nothing can be checked;
    ``header`` is then ``None``). ``header`` is the canonical header name (never its value).
    """

    gate = "execute"
    code: ClassVar[int] = HEADER_MISMATCH_CODE
    category: HeaderMismatchCategory

    def __init__(self, category: HeaderMismatchCategory, message: str, *, header: str | None) -> None:
        super().__init__(category, message)
        self.header = header


class CompletionError(ContractError):
    """Execute: a completion request is refused (``rate_limited``, ``invalid_request``)."""

    gate = "execute"
    category: CompletionCategory

    def __init__(self, category: CompletionCategory, message: str) -> None:
        super().__init__(category, message)


class ContractViolation(ContractError):
    """Consume: a tool result or content block breaks the tool's contract. ``path`` is JSON-pointer-like.

    ``server_text`` is what the server *said* in the refused result (its text blocks, sanitized and
    bounded), so a caller still sees the server's words; ``None`` when it said nothing. It is the
    server's text, not ours: like ``JsonRpcError.message`` it stays an attribute and never enters
    ``str(error)`` or the audit trail.
    """

    gate = "consume"
    category: ConsumeCategory

    def __init__(
        self, category: ConsumeCategory, message: str, *, path: str = "", server_text: str | None = None
    ) -> None:
        super().__init__(category, message)
        self.path = path
        self.server_text = server_text
