"""The review report: the one wire shape ``agent-connector review --json`` prints (pure, no I/O).

These frozen pydantic models are the single source of truth; ``schemas/review-report.schema.json``
is generated from :class:`ReviewReport` (``python -m scripts.generate_schema_disclosure``) and checked
for freshness in CI. Adding an optional field is compatible; renaming or removing one bumps
``report_version``.

Values that appear here are the server's descriptors and results, the reviewer's own synthetic
samples (header policy) and the arguments the *user* passed to ``--call`` — never anything else.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_connector_sdk.core.contracts.lock import DriftStatus

__all__ = [
    "REPORT_VERSION",
    "AdmissionVerdict",
    "CallReport",
    "CalloutReport",
    "CompletionProbe",
    "DisclosureCheck",
    "FailOn",
    "FindingReport",
    "HeaderPolicy",
    "HeaderRule",
    "HeaderSample",
    "LockCheck",
    "OutputKind",
    "ReviewReport",
    "ReviewSummary",
    "SearchReport",
    "ServerIdentity",
    "ServerTextReview",
    "SkillEntry",
    "Target",
    "ToolDriftReport",
    "ToolReview",
    "output_kind",
]

REPORT_VERSION: Literal[1] = 1
OutputKind = Literal["object", "array", "scalar", "any", "none"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class Target(BaseModel):
    """What was reviewed: an HTTP endpoint, a stdio command line, or descriptor files (offline)."""

    model_config = _FROZEN
    kind: Literal["http", "stdio", "descriptor"]
    address: str = Field(description="URL, command line, or file path")


class ServerIdentity(BaseModel):
    """``serverInfo`` and the negotiated protocol revision (absent offline)."""

    model_config = _FROZEN
    name: str | None
    version: str | None
    protocol_version: str | None


class AdmissionVerdict(BaseModel):
    """The host's Admit decision for one descriptor (``category``/``reason`` only when rejected)."""

    model_config = _FROZEN
    decision: Literal["admitted", "rejected"]
    category: str | None = None
    reason: str | None = None


class HeaderSample(BaseModel):
    """One representative argument value and what the host would send for it."""

    model_config = _FROZEN
    value: Any = Field(description="the reviewer's sample argument value (never a real caller's)")
    wire: str | None = Field(description="the Mcp-Param-* field value sent, or null when refused")
    encoding: Literal["plain", "base64", "refused"]
    category: str | None = Field(default=None, description="why the value is refused (e.g. out_of_range)")


class HeaderRule(BaseModel):
    """One ``x-mcp-header`` annotation: argument path → header name, with samples."""

    model_config = _FROZEN
    argument: str = Field(description="JSON pointer of the annotated property in inputSchema")
    header: str
    type: Literal["string", "integer", "boolean"]
    samples: list[HeaderSample]


class HeaderPolicy(BaseModel):
    """Header mirroring for one tool. ``applicable`` is false over stdio (no HTTP headers exist)."""

    model_config = _FROZEN
    applicable: bool
    rules: list[HeaderRule] = Field(default_factory=list)
    category: str | None = Field(default=None, description="set when the annotations themselves are invalid")
    reason: str | None = None


class DisclosureCheck(BaseModel):
    """The schema-disclosure read of one tool found through search: manifest, fragments, digests."""

    model_config = _FROZEN
    verified: bool
    manifest_uri: str | None = None
    schema_sha256: str | None = None
    source_sha256: str | None = None
    fragment_count: int | None = None
    schema_bytes: int | None = None
    bytes_read: int | None = None
    step: str | None = Field(default=None, description="the consumer step that refused (read, verify, ...)")
    category: str | None = None
    reason: str | None = None


class FindingReport(BaseModel):
    """A project rule the server breaks that the ``default`` profile reports instead of rejecting
    (the README's rule table lists the rules; ``strict`` turns each into a rejection)."""

    model_config = _FROZEN
    rule: str = Field(description="rule id from the rule table, e.g. text-serialization")
    category: str = Field(description="the category a strict host rejects with")
    message: str
    path: str | None = None


class ToolReview(BaseModel):
    """Everything the reviewer learned about one tool."""

    model_config = _FROZEN
    name: str | None
    found: Literal["listed", "search", "file"] = Field(
        description="in tools/list, through the search tool and schema disclosure, or in a file"
    )
    descriptor: dict[str, Any] | None = Field(
        description="the wire descriptor (reconstructed when disclosed)"
    )
    output_kind: OutputKind
    admission: AdmissionVerdict
    headers: HeaderPolicy
    disclosure: DisclosureCheck | None = None
    fingerprint: str | None = Field(
        default=None, description="sha256 of the tool's contract (contract lock fingerprint), when computable"
    )
    findings: list[FindingReport] = Field(
        default_factory=list, description="project rules the admitted descriptor breaks (default profile)"
    )


DriftClass = Literal["escalation", "breaking", "compatible", "narrowing", "cosmetic"]
FailOn = Literal["reapproval", "escalation_or_breaking", "any"]


class WordEditReport(BaseModel):
    """One run of a word-level text diff."""

    model_config = _FROZEN
    op: Literal["equal", "delete", "insert"]
    text: str


class CalloutReport(BaseModel):
    """Something a text change adds that a reviewer must not miss in a word diff."""

    model_config = _FROZEN
    kind: Literal["address", "url", "path", "instruction"] = Field(
        description="an e-mail address, a URL, a file path, or a sentence shaped like an instruction to "
        "the model"
    )
    text: str = Field(description="what the new text adds, as the server wrote it")


class ContractChangeReport(BaseModel):
    """One changed location of a drifted tool's contract: where, from what, to what, what kind."""

    model_config = _FROZEN
    pointer: str = Field(
        description="RFC 6901 pointer into the contract: /description, /inputSchema/properties/path/pattern, "
        "/annotations/readOnlyHint, /_meta/ui/resourceUri, /icons/0/src, /execution/taskSupport, /headers/…"
    )
    kind: Literal["added", "removed", "changed"]
    severity: DriftClass = Field(
        description="escalation (may now do, take or show more, or looks safer), breaking (valid calls or "
        "read outputs may now fail), compatible (what the model reads changed: re-read and re-approve it), "
        "narrowing (only returns less), cosmetic (provably the same: whitespace, order, defaults)"
    )
    reason: str = Field(description="the rule that classed it (never a value)")
    old: Any = Field(default=None, description="the approved value (null when added)")
    new: Any = Field(default=None, description="the current value (null when removed)")
    truncated: bool = Field(
        default=False, description="old/new were too large to show and are replaced by a short summary"
    )
    words: list[WordEditReport] = Field(
        default_factory=list, description="descriptions and titles: the word-level diff of old to new"
    )
    callouts: list[CalloutReport] = Field(
        default_factory=list,
        description="text changes: each address, URL, path and instruction-shaped sentence the new text adds",
    )


class ToolDriftReport(BaseModel):
    """One tool against the contract lock (``--lock``)."""

    model_config = _FROZEN
    tool: str
    status: DriftStatus
    fields: list[str] = Field(default_factory=list, description="changed top-level contract fields")
    previous: str | None = Field(default=None, description="renamed: the locked name")
    severity: DriftClass | None = Field(
        default=None,
        description="the most severe change (added: escalation; removed, renamed: breaking at least); "
        "null when unchanged or when the lock entry holds digests only (format 1: unknown)",
    )
    changes: list[ContractChangeReport] = Field(
        default_factory=list, description="each changed location (changed, renamed with changes)"
    )
    changes_omitted: int = Field(default=0, description="changes past the report's cap, not listed")
    confusable_of: str | None = Field(
        default=None, description="a name this one looks like (Unicode confusables): an escalation"
    )
    escaped: str | None = Field(
        default=None, description="the name with every character outside printable ASCII as \\u escapes"
    )
    digest_only: bool = Field(
        default=False, description="the lock entry holds digests only (format 1): re-write it to see changes"
    )
    diff_sha256: str | None = Field(
        default=None, description="identifies this drift: review --approve TOOL@DIGEST approves exactly it"
    )
    approved: bool = Field(default=False, description="approved in this run (review --approve)")
    fails: bool = Field(default=False, description="counts as a finding: exit 1 under --strict")


class LockCheck(BaseModel):
    """``--lock FILE``: every current and locked tool with its drift status."""

    model_config = _FROZEN
    file: str
    server: str = Field(description="the lock entry compared (a one-server lock applies to any target)")
    entry: bool = Field(description="false when the lock has no entry for this server (all tools added)")
    tools: list[ToolDriftReport]
    drifted: int = Field(description="tools whose status is not unchanged (approved ones not counted)")
    fail_on: FailOn = Field(
        default="reapproval",
        description="which drift is a finding (--strict exits 1): every change a person must re-approve "
        "(escalation, breaking, compatible, and unknown: format 1) by default; escalation and breaking "
        "only with --allow-compatible; any with --fail-on-any-drift",
    )
    digest_only: bool = Field(
        default=False, description="some entries hold digests only (a format 1 lock): re-write it"
    )


class SkillEntry(BaseModel):
    """One skill the server offers over the MCP Skills extension (SEP-2640)."""

    model_config = _FROZEN
    name: str
    description: str
    uri: str = Field(description="the skill's SKILL.md resource URI")
    files: int = Field(description="files the entry lists, each with its size and sha256 digest")


class SearchReport(BaseModel):
    """The search tool the server exposes, and what searching it returned."""

    model_config = _FROZEN
    tool: str
    patterns: list[str]
    entries: int = Field(description="distinct tools the searches returned (a server may cap each search)")
    searches: int = Field(default=0, description="search calls (a capped search is split by name prefix)")
    complete: bool = Field(
        default=True, description="whether every tool behind the search was found (false: see incomplete)"
    )
    incomplete: str | None = Field(default=None, description="why the enumeration could not be complete")
    category: str | None = None
    reason: str | None = None


class ServerTextReview(BaseModel):
    """What the server tells a model besides its tools, and the poisoning rules' findings in it.

    Listings follow the server's declared capabilities: a kind it does not declare is never listed
    (its count is null). A listing that fails is a note, never a finding."""

    model_config = _FROZEN
    instructions: str | None = Field(
        default=None,
        description=(
            "server/discover instructions as a model reads them, sanitized and cut (a marker counts the cut)"
        ),
    )
    instructions_chars: int | None = Field(default=None, description="length of the instructions as sent")
    prompts: int | None = Field(default=None, description="prompts listed (null: prompts not declared)")
    resources: int | None = Field(default=None, description="resources listed (null: resources not declared)")
    resource_templates: int | None = Field(
        default=None, description="resource templates listed (null: resources not declared)"
    )
    findings: list[FindingReport] = Field(
        default_factory=list,
        description="hidden-unicode and instruction-markup findings; path names where (instructions, "
        "prompts/NAME/description, resources/URI/description, ...)",
    )
    notes: list[str] = Field(
        default_factory=list, description="listings that could not be read (not findings)"
    )


class CompletionProbe(BaseModel):
    """One ``completion/complete`` request against the first completable prompt argument, or else the
    first variable of a resource template; only what the server declares is listed or probed."""

    model_config = _FROZEN
    advertised: bool
    ref: dict[str, str] | None = None
    argument: str | None = None
    values: list[str] = Field(default_factory=list)
    total: int | None = None
    has_more: bool | None = None
    category: str | None = None
    reason: str | None = None
    note: str | None = Field(
        default=None,
        description="why the probe could not run (nothing declared to complete, a listing failed)",
    )


class CallReport(BaseModel):
    """``--call``: one invocation through every host gate. ``outcome`` says how far it got."""

    model_config = _FROZEN
    tool: str
    outcome: Literal["validated", "tool_error", "refused", "rejected_result", "failed", "unknown_tool"]
    gate: str | None = Field(default=None, description="the gate or step that stopped it")
    category: str | None = None
    reason: str | None = None
    headers_sent: list[str] = Field(default_factory=list, description="Mcp-Param-* names (values omitted)")
    content_types: list[str] = Field(default_factory=list)
    structured_content: Any = None
    structured_content_present: bool | None = Field(
        default=None, description="whether the result had a structuredContent member (null is a value)"
    )
    is_error: bool | None = None
    text: str | None = Field(
        default=None,
        description=(
            "the server's own words: the result's text blocks (also of a tool error or a rejected "
            "result), sanitized and capped; a successful result's text keeps its line breaks and is "
            "sanitized line by line"
        ),
    )
    code: int | None = Field(default=None, description="the JSON-RPC error code the server answered")
    message: str | None = Field(
        default=None, description="the server's JSON-RPC error message, sanitized and capped"
    )
    findings: list[FindingReport] = Field(
        default_factory=list, description="project rules the result breaks (default profile)"
    )


class ReviewSummary(BaseModel):
    """Counts a CI job can gate on; ``findings`` is what ``--strict`` turns into exit code 1."""

    model_config = _FROZEN
    admitted: list[str]
    rejected: list[str]
    disclosure_failures: list[str]
    findings: int
    project_findings: int = Field(
        default=0, description="project-rule findings reported without rejecting (default profile)"
    )
    drifted: int = Field(default=0, description="tools drifted from the contract lock (with --lock)")


class ReviewReport(BaseModel):
    """The contract review of one MCP server (or of descriptor files), as ``review --json`` prints it."""

    model_config = ConfigDict(frozen=True, extra="forbid", title="ReviewReport")
    report_version: Literal[1] = REPORT_VERSION
    target: Target
    server: ServerIdentity | None = None
    profile: Literal["default", "strict"] = Field(
        description="default: spec MUST rules reject, project rules are findings; strict: both reject"
    )
    header_gates: Literal["applicable", "not_applicable"]
    page_trace: list[str | None] = Field(
        default_factory=list,
        description=(
            'cursors sent to tools/list in order, as opaque values: null = first request; "" is a cursor'
        ),
    )
    search: SearchReport | None = None
    tools: list[ToolReview]
    server_text: ServerTextReview | None = Field(
        default=None, description="instructions, prompts and resources a model reads (live reviews)"
    )
    completion: CompletionProbe | None = None
    call: CallReport | None = None
    lock: LockCheck | None = None
    skills: list[SkillEntry] | None = Field(
        default=None, description="skills listed over the Skills extension (null: not offered)"
    )
    summary: ReviewSummary


def output_kind(descriptor: Any) -> OutputKind:
    """``none`` without an ``outputSchema``; else what its root ``type`` promises (``any`` if unpinned)."""
    if not isinstance(descriptor, dict) or "outputSchema" not in descriptor:
        return "none"
    schema = descriptor["outputSchema"]
    declared = schema.get("type") if isinstance(schema, dict) else None
    if declared == "object":
        return "object"
    if declared == "array":
        return "array"
    if declared in ("string", "number", "integer", "boolean", "null"):
        return "scalar"
    return "any"
