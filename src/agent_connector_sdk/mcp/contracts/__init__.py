"""The five-gate tool contract, pure and sans-I/O: Discover, Admit, Invoke, Execute, Consume.

Each gate lives in one module; this package re-exports the public names.
"""

from agent_connector_sdk.mcp.contracts.errors import (
    AdmissionError,
    ArgumentError,
    CompletionError,
    ContractError,
    ContractViolation,
    Gate,
    HeaderMismatch,
    HeaderValueError,
    PaginationError,
)

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
