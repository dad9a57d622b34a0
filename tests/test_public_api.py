"""The public API, pinned (in the manner of httpx's exported-members test).

Each public module's ``__all__`` must equal the list below: adding, renaming or dropping a public
name is then a visible, reviewed change to this file, never an accident. The list is also the list of
public faces: every other module is an implementation module, named ``_name`` (the command line's
command modules aside). Every module of the package, private ones included, must also declare an
``__all__`` whose names all resolve, and every error class exported anywhere must descend from the
one error root.
"""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

import agent_connector_sdk
from agent_connector_sdk.errors import AgentConnectorError

PUBLIC_API: dict[str, list[str]] = {
    # The front door: a short, deliberate list (see test_exported_members below).
    "agent_connector_sdk": [
        "AgentConnectorError",
        "BoundedAuditSink",
        "ContractClient",
        "HostBounds",
        "HostOptions",
        "HostSession",
        "SchemaDisclosureConsumer",
        "ServerGates",
        "__version__",
        "build_schema_disclosure",
        "describe_schema_tools",
        "gated_http_app",
        "register_schema_resources",
    ],
    "agent_connector_sdk.audit": [
        "AuditEvent",
        "AuditSink",
        "BoundedAuditSink",
        "DEFAULT_AUDIT_EVENTS",
    ],
    "agent_connector_sdk.state": [
        "ADMIN_SCOPE",
        "AsyncRateLimiter",
        "AuditSink",
        "CatalogSignals",
        "GenerationSignal",
        "InProcessRateLimiter",
        "MAX_DISABLED_TOOLS",
        "MemoryCatalogSignals",
        "MemoryStateBackend",
        "RedisDisclosureStore",
        "RedisStateBackend",
        "STATE_URL_ENV",
        "StateBackend",
        "StateBackendError",
        "StateConfigError",
        "StateNotInitialized",
        "StateUnavailable",
        "describe_state_url",
        "open_state_backend",
        "set_tool_enabled",
        "state_url_from_env",
    ],
    "agent_connector_sdk.errors": [
        "AgentConnectorError",
        "Gate",
        "iter_causes",
    ],
    "agent_connector_sdk.cli": [
        "app",
        "main",
        "main_exit",
    ],
    "agent_connector_sdk.connectors": [
        "DEFAULT_MAX_UPSTREAM_BYTES",
        "FORWARDED_CALLER_HEADERS",
        "InvalidOpenAPIDocument",
        "OpenAPIOperationTool",
        "OpenAPIServer",
        "OpenAPISource",
        "OpenAPIToolsMissing",
        "UpstreamHeaderPolicy",
        "build_openapi_server",
        "build_tool_disclosures",
        "list_operation_tools",
        "load_github_extract",
        "load_openapi_source",
        "openapi_operation_tools",
    ],
    "agent_connector_sdk.demo.contract_lab": [
        "ENVIRONMENTS",
        "EVIDENCE",
        "EVIDENCE_SCOPE",
        "Evidence",
        "PRODUCTION_SCOPE",
        "REGIONS",
        "contract_lab_app",
        "contract_lab_completions",
        "contract_lab_server",
        "visible_evidence",
    ],
    "agent_connector_sdk.mcp.host.contract_client": [
        "CompletionResult",
        "ContractClient",
    ],
    "agent_connector_sdk.core.contracts": [
        "AdmissionError",
        "AdmissionPolicy",
        "AdmissionReport",
        "ArgumentError",
        "AsyncRateLimiter",
        "CATEGORY",
        "CONTRACT_FIELDS",
        "CompletionError",
        "CompletionRateLimited",
        "CompletionRequest",
        "ContractChange",
        "ContractError",
        "ContractViolation",
        "CursorWalk",
        "DEFAULT_SENSITIVE_NAMES",
        "DebounceWindow",
        "Finding",
        "GATE",
        "GATE_EVENT",
        "Gate",
        "HeaderAnnotation",
        "HeaderMismatch",
        "HeaderType",
        "HeaderValueError",
        "INSTRUMENTATION_NAME",
        "MAX_COMPLETION_VALUES",
        "MAX_SAFE_INTEGER",
        "MAX_TOOL_NAME_LENGTH",
        "MCP_PARAM_HEADER_PREFIX",
        "Pagination",
        "PaginationError",
        "PinFileError",
        "Profile",
        "REAPPROVAL",
        "RULES_BY_ID",
        "RateLimiter",
        "Rejection",
        "SERVER_TEXT_LIMIT",
        "SchemaKey",
        "SourceNotPinned",
        "SourcePins",
        "VALIDATOR_CACHE_SIZE",
        "VERDICT",
        "ValidatorCache",
        "X_MCP_HEADER_KEY",
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
    ],
    "agent_connector_sdk.core.contracts.errors": [
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
        "HEADER_MISMATCH_CODE",
        "HeaderMismatch",
        "HeaderMismatchCategory",
        "HeaderValueCategory",
        "HeaderValueError",
        "LockCategory",
        "PaginationCategory",
        "PaginationError",
        "SourcePinCategory",
    ],
    "agent_connector_sdk.mcp.host": [
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
        "TRANSPORT_EXCEPTIONS",
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
    ],
    "agent_connector_sdk.core.schema_disclosure": [
        "FRAGMENT_ENVELOPE_MAX_BYTES",
        "FRAGMENT_TEXT_MAX_BYTES",
        "FRAGMENT_URI_TEMPLATE",
        "MANIFEST_URI_TEMPLATE",
        "MAX_DOCUMENT_BYTES",
        "SchemaDigests",
        "SchemaDisclosure",
        "SchemaDisclosureCategory",
        "SchemaDisclosureError",
        "SchemaFragment",
        "SchemaManifest",
        "SourceDigest",
        "build_schema_disclosure",
        "canonical_json_bytes",
        "compute_schema_digests",
        "fragment_uri",
        "is_valid_alias",
        "manifest_uri",
        "parse_fragment",
        "parse_fragment_index",
        "parse_manifest",
        "read_schema_fragment",
        "reconstruct_schema",
    ],
    "agent_connector_sdk.core.schema_disclosure.cache": [
        "BoundedLRU",
        "DisclosureCache",
        "DisclosureOrigin",
        "FrozenSchemaMemo",
        "FrozenSchemaView",
        "SchemaIdentity",
        "SchemaIdentityMemo",
        "SchemaProvenance",
        "schema_fingerprint",
    ],
    "agent_connector_sdk.core.schema_disclosure.encoding": [
        "encode_schema_document",
        "sha256_hex",
        "split_utf8",
    ],
    "agent_connector_sdk.mcp.host.disclosure_consumer": [
        "CallerScope",
        "ConsumerCategory",
        "DEFAULT_MAX_IN_FLIGHT",
        "DisclosedTool",
        "DisclosureConsumerError",
        "DisclosureMismatch",
        "DisclosureReadFailed",
        "DiscoveryFailed",
        "SchemaDisclosureConsumer",
        "SelectedTool",
        "StaleSelection",
    ],
    "agent_connector_sdk.core.search": [
        "EnumerationPlanner",
        "FusedSearchIndex",
        "MAX_ENUMERATION_SEARCHES",
        "Region",
        "SearchCase",
        "SearchDocument",
        "SearchHit",
        "SearchIndex",
        "SemanticModel",
        "SemanticRanker",
        "document_from_tool",
        "merge_by_rank",
        "region_pattern",
        "semantic_text",
    ],
    "agent_connector_sdk.mcp.search_semantic": ["SemanticExtraMissing", "WordLlamaModel"],
    "agent_connector_sdk.core.disclosure_navigation": [
        "ArgumentSummary",
        "DisclosureAddress",
        "DisclosureReadRefused",
        "MAX_DESCRIPTION_CHARS",
        "MAX_NAVIGATION_HEADERS",
        "MAX_SUMMARY_ARGUMENTS",
        "NAVIGATION_KIND",
        "ParameterHeader",
        "ReadRefusalCategory",
        "SchemaNavigation",
        "ToolHints",
        "VerifiedSchemaSnapshots",
        "VisibleToolSchemas",
        "authorize_disclosure_read",
        "build_navigation_entry",
        "parse_disclosure_uri",
        "serve_disclosure_read",
        "summarize_arguments",
        "summarize_parameter_headers",
        "summarize_tool_hints",
        "type_label",
    ],
    "agent_connector_sdk.mcp.schema_disclosure_provider": [
        "DisclosureOrigin",
        "RankedSearchTransform",
        "SchemaDisclosureRegistry",
        "SchemaResourceRegistrationError",
        "describe_schema_tools",
        "disclosure_not_found",
        "register_schema_resources",
    ],
    "agent_connector_sdk.mcp.server": [
        "ArgumentsRefused",
        "AuthorizedCompletions",
        "CODES",
        "DEFAULT_RATE_LIMIT_CODE",
        "DisclosureOrigin",
        "ERROR_TEXT_LIMIT",
        "GatedEntry",
        "HeaderParityGate",
        "OutputSelfCheck",
        "RankedSearchTransform",
        "RequestBounds",
        "SchemaDisclosureRegistry",
        "SchemaResourceRegistrationError",
        "ServerGates",
        "Suggestion",
        "cache_tool_catalog",
        "caller_key",
        "consumed_by_relay",
        "describe_schema_tools",
        "disclosure_not_found",
        "first_conforming_placeholder",
        "gated_http_app",
        "invalid_cursor",
        "published_contract_sha256",
        "register_schema_resources",
        "relay_refusal",
        "trusted_networks",
    ],
    "agent_connector_sdk.sanitize": [
        "DEFAULT_LIMIT",
        "UNSAFE_CHARACTERS",
        "sanitize_json",
        "sanitize_text",
    ],
    # Packages that only hold their faces (their docstrings say what is where).
    "agent_connector_sdk.core": [],
    "agent_connector_sdk.core.host": [
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
        "PEER_KINDS",
        "PeerKind",
        "PreparedCall",
        "Profile",
        "ProtocolCategory",
        "ProtocolError",
        "SAMPLE_LIMIT",
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
    ],
    "agent_connector_sdk.mcp": [
        "HEAD_BYTES",
        "HttpProbe",
        "ProgramCheck",
        "check_program",
        "check_url",
        "html_title",
        "probe_http",
    ],
    "agent_connector_sdk.demo": [],
    # Each package's front exports its error family (cli/errors.py maps it to an exit code).
    "agent_connector_sdk.review": ["ReviewCategory", "ReviewError", "ServerUnavailable", "UnavailableReason"],
    "agent_connector_sdk.serving": ["ServingCategory", "ServingError"],
    "agent_connector_sdk.core.contracts.lock": [
        "ContractLock",
        "DriftStatus",
        "LOCK_VERSION",
        "LockFileError",
        "LockedServer",
        "LockedTool",
        "ToolDrift",
        "compare_tools",
        "diff_digest",
        "lock_admission",
    ],
    "agent_connector_sdk.core.host.bounds": [
        "BoundCategory",
        "BoundExceeded",
        "bounded_policy",
        "check_list_items",
        "check_listing_size",
        "check_navigation_entries",
        "check_result_size",
    ],
    "agent_connector_sdk.connectors.openapi": [
        "FORWARDED_CALLER_HEADERS",
        "InvalidOpenAPIDocument",
        "OpenAPIOperationTool",
        "OpenAPIServer",
        "OpenAPIToolsMissing",
        "UPSTREAM_ERROR_MODES",
        "UpstreamError",
        "UpstreamErrorMode",
        "UpstreamHeaderPolicy",
        "build_openapi_server",
        "build_tool_disclosures",
        "http_method_annotations",
        "list_operation_tools",
        "openapi_operation_tools",
        "tool_disclosure_origins",
    ],
    "agent_connector_sdk.demo.lab_service": [
        "ANALYST_TOKEN",
        "DEMO_TOKENS",
        "OPERATOR_TOKEN",
        "PINNED_TOOLS",
        "demo_token_verifier",
        "lab_service_app",
        "lab_service_server",
        "server_tool_disclosures",
    ],
    "agent_connector_sdk.gateway": [
        "AuthSettings",
        "CONTRACT_BINDING_META_KEY",
        "ChildSpec",
        "Gateway",
        "GatewayConfig",
        "GatewayError",
        "GatewayTool",
        "REFUSAL_CODES",
        "SCHEMA_DIGEST_META_KEY",
        "check_credentials",
        "check_report",
        "collect_evidence",
        "load_auth_file",
        "load_config",
        "parse_child",
        "shared_disclosures",
    ],
    "agent_connector_sdk.skills": [
        "REVIEWER_SKILL",
        "reviewer_skill",
        "skills_provider",
    ],
    "agent_connector_sdk.state.replica": [
        "COMPLETION_LIMITER",
        "REPLICA_HEADER",
        "ReplicaApp",
        "build_replica_app",
    ],
}
# The published path of the disclosure core (fixed by our wire contract): the same names, the same
# objects as its home in the pure layer (test_fixed_public_paths_are_faces_of_their_homes).
PUBLIC_API["agent_connector_sdk.mcp.schema_disclosure"] = PUBLIC_API[
    "agent_connector_sdk.core.schema_disclosure"
]
# Modules that are neither pinned faces nor ``_private``: the command line's command modules (they
# name commands) and the two packages beside it, the reviewer's report and serve's assembly (their
# modules are named for their parts), and the one seam of private FastMCP/mcp access, whose path the
# project's rules fix.
UNPINNED = (
    "agent_connector_sdk.cli.",
    "agent_connector_sdk.review.",
    "agent_connector_sdk.serving.",
    "agent_connector_sdk.mcp.compat",
)


@pytest.mark.parametrize("module_name", sorted(PUBLIC_API))
def test_public_modules_export_exactly_the_pinned_names(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert sorted(module.__all__) == PUBLIC_API[module_name]


def _all_modules() -> list[str]:
    """Every module, implementation modules included (``__main__`` runs the CLI: not imported)."""
    prefix = agent_connector_sdk.__name__ + "."
    found = [agent_connector_sdk.__name__]
    for info in pkgutil.walk_packages(agent_connector_sdk.__path__, prefix):
        if info.name.rsplit(".", 1)[-1] != "__main__":
            found.append(info.name)
    return found


def _is_public(module_name: str) -> bool:
    return not any(part.startswith("_") for part in module_name.split("."))


def test_every_public_module_is_a_pinned_face() -> None:
    """A module is a public face (pinned above) or an implementation module (``_name``): a new public
    module is a reviewed change to this file, and the faces stay few."""
    unpinned = [
        name
        for name in _all_modules()
        if _is_public(name) and name not in PUBLIC_API and not name.startswith(UNPINNED)
    ]
    assert unpinned == []
    assert [name for name in PUBLIC_API if name not in _all_modules()] == []


@pytest.mark.parametrize(
    ("face", "home"),
    [
        ("agent_connector_sdk.mcp.schema_disclosure", "agent_connector_sdk.core.schema_disclosure"),
        (
            "agent_connector_sdk.mcp.schema_disclosure_provider",
            "agent_connector_sdk.mcp.server._disclosure_provider",
        ),
    ],
)
def test_fixed_public_paths_are_faces_of_their_homes(face: str, home: str) -> None:
    """The two published paths keep working: every name of the home is there, as the same object."""
    face_module = importlib.import_module(face)
    home_module = importlib.import_module(home)
    assert sorted(face_module.__all__) == sorted(home_module.__all__)
    for name in home_module.__all__:
        assert getattr(face_module, name) is getattr(home_module, name), name


@pytest.mark.parametrize("module_name", _all_modules())
def test_every_module_declares_resolvable_unique_exports(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = getattr(module, "__all__", None)
    assert isinstance(exported, list | tuple), f"{module_name} has no __all__"
    assert len(set(exported)) == len(exported)
    for name in exported:
        assert hasattr(module, name), f"{module_name}.{name} does not resolve"


def test_every_exported_error_descends_from_the_one_root() -> None:
    for module_name in _all_modules():
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if isinstance(value, type) and issubclass(value, Exception):
                assert issubclass(value, AgentConnectorError), f"{module_name}.{name}"


def test_exported_members() -> None:
    """The front door re-exports, never defines: each name IS the object of its public home module,
    and the list is exactly the pinned one (in the manner of httpx's test of the same name)."""
    front = agent_connector_sdk.__all__
    assert front == sorted(front), "keep the front door sorted"
    assert front == PUBLIC_API["agent_connector_sdk"]
    for name in front:
        if name == "__version__":
            continue
        value = getattr(agent_connector_sdk, name)
        home = importlib.import_module(value.__module__)  # where it is defined
        homes = [
            module_name
            for module_name, names in PUBLIC_API.items()
            if module_name != "agent_connector_sdk" and name in names
        ]
        assert homes, f"{name} is exported from the front door but from no pinned public module"
        for module_name in homes:
            assert getattr(importlib.import_module(module_name), name) is value, (module_name, name)
        assert getattr(home, name) is value
    assert "__version__" in dir(agent_connector_sdk) and "ContractClient" in dir(agent_connector_sdk)
    try:
        agent_connector_sdk.NoSuchName  # noqa: B018
    except AttributeError as error:
        assert "NoSuchName" in str(error)
    else:
        raise AssertionError("an unknown name must raise AttributeError")


def test_importing_the_package_stays_cheap() -> None:
    """``import agent_connector_sdk`` (run first by every submodule import) loads neither the adapters
    nor ``fastmcp``: the front door resolves its names on first use."""
    code = (
        "import sys, agent_connector_sdk, agent_connector_sdk.errors;"
        "heavy = [m for m in ('fastmcp', 'mcp', 'agent_connector_sdk.mcp.host', "
        "'agent_connector_sdk.mcp.server') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
