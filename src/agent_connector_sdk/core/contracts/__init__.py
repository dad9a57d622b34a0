"""The five-gate tool contract, pure and sans-I/O: Discover, Admit, Invoke, Execute, Consume.

Each gate lives in one module, so "why was this refused" has one place to look:

* Discover — :mod:`._pagination` (``paginate`` / ``apaginate``)
* Admit — :mod:`._admission` (``admit_tools``)
* Invoke — :mod:`._validation` (``validate_arguments``) and :mod:`._headers` (``build_parameter_headers``)
* Execute — :mod:`._headers` (``validate_parameter_headers``) and :mod:`._completion`
* Consume — :mod:`._content` (``validate_content_block``), :mod:`._results` (``validate_tool_result``)
  and :mod:`._input_required` (SEP-2322 interim results)

Host duties beside the gates: :mod:`._source_pins` (source compatibility, checked in Discover before a
disclosure's fragments are read) and :mod:`._debounce` (when a completion request may go out).

Errors: :mod:`.errors`, one class per gate, each with a stable ``category``.
"""

from agent_connector_sdk.core.contracts._admission import (
    DEFAULT_SENSITIVE_NAMES,
    AdmissionPolicy,
    AdmissionReport,
    Rejection,
    admit_tools,
)
from agent_connector_sdk.core.contracts._completion import (
    MAX_COMPLETION_VALUES,
    CompletionRateLimited,
    CompletionRequest,
    RateLimiter,
    completion_result,
    filter_completions,
    parse_completion_params,
)
from agent_connector_sdk.core.contracts._content import validate_content_block
from agent_connector_sdk.core.contracts._debounce import DebounceWindow
from agent_connector_sdk.core.contracts._headers import (
    HeaderAnnotation,
    build_parameter_headers,
    decode_header_value,
    encode_header_value,
    header_annotations,
    header_text,
    validate_parameter_headers,
)
from agent_connector_sdk.core.contracts._input_required import (
    is_input_required,
    validate_input_required_result,
)
from agent_connector_sdk.core.contracts._pagination import CursorWalk, Pagination, apaginate, paginate
from agent_connector_sdk.core.contracts._results import validate_tool_result
from agent_connector_sdk.core.contracts._source_pins import PinFileError, SourceNotPinned, SourcePins
from agent_connector_sdk.core.contracts._validation import (
    VALIDATOR_CACHE_SIZE,
    ValidatorCache,
    validate_arguments,
    validate_instance,
)
from agent_connector_sdk.core.contracts.errors import (
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
    "DebounceWindow",
    "Gate",
    "HeaderAnnotation",
    "HeaderMismatch",
    "HeaderValueError",
    "Pagination",
    "PaginationError",
    "PinFileError",
    "RateLimiter",
    "Rejection",
    "SourceNotPinned",
    "SourcePins",
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
    "is_input_required",
    "paginate",
    "parse_completion_params",
    "validate_arguments",
    "validate_content_block",
    "validate_input_required_result",
    "validate_instance",
    "validate_parameter_headers",
    "validate_tool_result",
]
