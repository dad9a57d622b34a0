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

This is the folder's door (other folders never import its ``_private`` modules): beside the gates it
exports what the adapters, the gateway and the reviewer build on — findings and profiles
(:class:`Finding`, :data:`RULES_BY_ID`), the contract :func:`fingerprint` and :class:`ContractChange`,
:func:`json_pointer`, the header constants, :func:`server_text`, the span and event names
(:data:`INSTRUMENTATION_NAME`, :data:`GATE_EVENT`, ...) and :func:`reissue_trace_context`.
"""

from agent_connector_sdk.core.contracts._admission import (
    DEFAULT_SENSITIVE_NAMES,
    MAX_TOOL_NAME_LENGTH,
    AdmissionPolicy,
    AdmissionReport,
    Rejection,
    admit_keyed,
    admit_tools,
)
from agent_connector_sdk.core.contracts._completion import (
    MAX_COMPLETION_VALUES,
    AsyncRateLimiter,
    CompletionRateLimited,
    CompletionRequest,
    RateLimiter,
    completion_result,
    filter_completions,
    parse_completion_params,
)
from agent_connector_sdk.core.contracts._confusables import escaped
from agent_connector_sdk.core.contracts._content import validate_content_block
from agent_connector_sdk.core.contracts._contract_diff import REAPPROVAL, ContractChange
from agent_connector_sdk.core.contracts._debounce import DebounceWindow
from agent_connector_sdk.core.contracts._findings import RULES_BY_ID, Finding, Profile
from agent_connector_sdk.core.contracts._fingerprint import CONTRACT_FIELDS, fingerprint
from agent_connector_sdk.core.contracts._headers import (
    MAX_SAFE_INTEGER,
    MCP_PARAM_HEADER_PREFIX,
    X_MCP_HEADER_KEY,
    HeaderAnnotation,
    HeaderType,
    build_parameter_headers,
    decode_header_value,
    encode_header_value,
    header_annotations,
    header_text,
    parameter_headers,
    validate_parameter_headers,
)
from agent_connector_sdk.core.contracts._input_required import (
    is_input_required,
    validate_input_required_result,
)
from agent_connector_sdk.core.contracts._json_schema import exact_value_key
from agent_connector_sdk.core.contracts._pagination import CursorWalk, Pagination, apaginate, paginate
from agent_connector_sdk.core.contracts._pointers import json_pointer
from agent_connector_sdk.core.contracts._poisoning import poisoning_admission
from agent_connector_sdk.core.contracts._results import SERVER_TEXT_LIMIT, server_text, validate_tool_result
from agent_connector_sdk.core.contracts._server_text import server_text_findings
from agent_connector_sdk.core.contracts._sizes import json_bound_crossed
from agent_connector_sdk.core.contracts._source_pins import PinFileError, SourceNotPinned, SourcePins
from agent_connector_sdk.core.contracts._telemetry_names import (
    CATEGORY,
    GATE,
    GATE_EVENT,
    INSTRUMENTATION_NAME,
    VERDICT,
)
from agent_connector_sdk.core.contracts._trace_context import reissue_trace_context
from agent_connector_sdk.core.contracts._validation import (
    VALIDATOR_CACHE_SIZE,
    SchemaKey,
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
    "CATEGORY",
    "CONTRACT_FIELDS",
    "DEFAULT_SENSITIVE_NAMES",
    "GATE",
    "GATE_EVENT",
    "INSTRUMENTATION_NAME",
    "MAX_COMPLETION_VALUES",
    "MAX_SAFE_INTEGER",
    "MAX_TOOL_NAME_LENGTH",
    "MCP_PARAM_HEADER_PREFIX",
    "REAPPROVAL",
    "RULES_BY_ID",
    "SERVER_TEXT_LIMIT",
    "VALIDATOR_CACHE_SIZE",
    "VERDICT",
    "X_MCP_HEADER_KEY",
    "AdmissionError",
    "AdmissionPolicy",
    "AdmissionReport",
    "ArgumentError",
    "AsyncRateLimiter",
    "CompletionError",
    "CompletionRateLimited",
    "CompletionRequest",
    "ContractChange",
    "ContractError",
    "ContractViolation",
    "CursorWalk",
    "DebounceWindow",
    "Finding",
    "Gate",
    "HeaderAnnotation",
    "HeaderMismatch",
    "HeaderType",
    "HeaderValueError",
    "Pagination",
    "PaginationError",
    "PinFileError",
    "Profile",
    "RateLimiter",
    "Rejection",
    "SchemaKey",
    "SourceNotPinned",
    "SourcePins",
    "ValidatorCache",
    "admit_keyed",
    "admit_tools",
    "apaginate",
    "build_parameter_headers",
    "completion_result",
    "decode_header_value",
    "encode_header_value",
    "escaped",
    "exact_value_key",
    "filter_completions",
    "fingerprint",
    "header_annotations",
    "header_text",
    "is_input_required",
    "json_bound_crossed",
    "json_pointer",
    "paginate",
    "parameter_headers",
    "parse_completion_params",
    "poisoning_admission",
    "reissue_trace_context",
    "server_text",
    "server_text_findings",
    "validate_arguments",
    "validate_content_block",
    "validate_input_required_result",
    "validate_instance",
    "validate_parameter_headers",
    "validate_tool_result",
]
