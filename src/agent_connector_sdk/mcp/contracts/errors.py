"""The contract pipeline's error hierarchy: one base, one class per gate.

Every error carries a stable machine-readable ``category`` (what went wrong) and the ``gate`` that
owns the failure (where it went wrong), so a host can route a refusal without parsing messages.
Messages and attributes never contain argument or header *values*: they name fields, paths and
header names only, because these errors end up in logs and audit trails.

Two layers stay apart on purpose (see ``agent_connector_sdk.mcp.client``): these are *contract*
refusals raised by our gates; a tool that ran and failed is a tool result with ``isError: true``,
and a JSON-RPC error from the peer is a protocol error. Neither is ever disguised as the other.
"""

from __future__ import annotations

from typing import ClassVar, Literal

__all__ = [
    "AdmissionError",
    "ArgumentError",
    "CompletionError",
    "ContractError",
    "ContractViolation",
    "Gate",
    "HeaderMismatch",
    "HeaderValueError",
    "PaginationError",
]

Gate = Literal["discover", "admit", "invoke", "execute", "consume"]

HEADER_MISMATCH_CODE = -32020
"""JSON-RPC code the 2026-07-28 spec reserves for header/body disagreement (sent with HTTP 400)."""


class ContractError(Exception):
    """Base of every contract refusal. ``category`` is stable; ``gate`` names the owning gate."""

    gate: ClassVar[Gate]

    def __init__(self, category: str, message: str) -> None:
        super().__init__(message)
        self.category = category
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(category={self.category!r}, message={self.message!r})"


class PaginationError(ContractError):
    """Discover: the server's cursors cannot be followed safely.

    Categories: ``repeated_cursor``, ``page_limit``, ``invalid_cursor``. ``trace`` is the list of
    cursors sent so far (``None`` for the first request), so the refusal shows exactly what was asked.
    """

    gate = "discover"

    def __init__(self, category: str, message: str, *, trace: list[str | None]) -> None:
        super().__init__(category, message)
        self.trace = list(trace)


class AdmissionError(ContractError):
    """Admit: a descriptor or a tool is not admitted (e.g. calling a tool admission rejected)."""

    gate = "admit"


class ArgumentError(ContractError):
    """Invoke: the arguments do not satisfy the admitted input schema. ``path`` points into them."""

    gate = "invoke"

    def __init__(self, category: str, message: str, *, path: str = "") -> None:
        super().__init__(category, message)
        self.path = path


class HeaderValueError(ContractError, ValueError):
    """Invoke/Execute: a value cannot become, or be read back from, an ``Mcp-Param-*`` header.

    Categories: ``type_mismatch``, ``out_of_range``, ``malformed``.
    """

    gate = "invoke"


class HeaderMismatch(ContractError):
    """Execute: the ``Mcp-Param-*`` headers disagree with the JSON-RPC body (HTTP 400, -32020).

    Categories: ``missing``, ``duplicated``, ``unexpected``, ``malformed``, ``mismatched``.
    ``header`` is the canonical header name (never its value).
    """

    gate = "execute"
    code: ClassVar[int] = HEADER_MISMATCH_CODE

    def __init__(self, category: str, message: str, *, header: str) -> None:
        super().__init__(category, message)
        self.header = header


class CompletionError(ContractError):
    """Execute: a completion request is refused (``rate_limited``, ``invalid_request``, ...)."""

    gate = "execute"


class ContractViolation(ContractError):
    """Consume: a tool result or content block breaks the tool's contract. ``path`` is JSON-pointer-like."""

    gate = "consume"

    def __init__(self, category: str, message: str, *, path: str = "") -> None:
        super().__init__(category, message)
        self.path = path
