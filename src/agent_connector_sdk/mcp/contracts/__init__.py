"""The five-gate tool contract, pure and sans-I/O: Discover, Admit, Invoke, Execute, Consume.

Each gate lives in one module, so "why was this refused" has one place to look:

* Discover — :mod:`.pagination` (``paginate`` / ``apaginate``)
* Admit — :mod:`.admission` (``admit_tools``)
* Invoke — :mod:`.validation` (``validate_arguments``) and :mod:`.headers` (``build_parameter_headers``)
* Execute — :mod:`.headers` (``validate_parameter_headers``) and :mod:`.completion`
* Consume — :mod:`.content` (``validate_content_block``) and :mod:`.results` (``validate_tool_result``)

Errors: :mod:`.errors`, one class per gate, each with a stable ``category``.
"""

from agent_connector_sdk.mcp.contracts.admission import (
    DEFAULT_SENSITIVE_NAMES,
    AdmissionPolicy,
    AdmissionReport,
    Rejection,
    admit_tools,
)
from agent_connector_sdk.mcp.contracts.completion import (
    MAX_COMPLETION_VALUES,
    CompletionRateLimited,
    CompletionRequest,
    RateLimiter,
    completion_result,
    filter_completions,
    parse_completion_params,
)
from agent_connector_sdk.mcp.contracts.content import validate_content_block
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
from agent_connector_sdk.mcp.contracts.headers import (
    HeaderAnnotation,
    build_parameter_headers,
    decode_header_value,
    encode_header_value,
    header_annotations,
    header_text,
    validate_parameter_headers,
)
from agent_connector_sdk.mcp.contracts.pagination import CursorWalk, Pagination, apaginate, paginate
from agent_connector_sdk.mcp.contracts.results import validate_tool_result
from agent_connector_sdk.mcp.contracts.validation import (
    VALIDATOR_CACHE_SIZE,
    ValidatorCache,
    validate_arguments,
    validate_instance,
)

__all__ = [
    "DEFAULT_SENSITIVE_NAMES",
    "MAX_COMPLETION_VALUES",
    "VALIDATOR_CACHE_SIZE",
    "AdmissionError",
    "AdmissionPolicy",
    "AdmissionReport",
    "ArgumentError",
    "CompletionError",
    "CompletionRateLimited",
    "CompletionRequest",
    "ContractError",
    "ContractViolation",
    "CursorWalk",
    "Gate",
    "HeaderAnnotation",
    "HeaderMismatch",
    "HeaderValueError",
    "Pagination",
    "PaginationError",
    "RateLimiter",
    "Rejection",
    "ValidatorCache",
    "admit_tools",
    "apaginate",
    "build_parameter_headers",
    "completion_result",
    "decode_header_value",
    "encode_header_value",
    "filter_completions",
    "header_annotations",
    "header_text",
    "paginate",
    "parse_completion_params",
    "validate_arguments",
    "validate_content_block",
    "validate_instance",
    "validate_parameter_headers",
    "validate_tool_result",
]
