"""Building the review report from what the host core decided (pure: no I/O, no session).

The live review (:mod:`agent_connector_sdk.review.live`) and the offline one
(:mod:`agent_connector_sdk.review.offline`) both end here: header policy from the annotations the core
read (the contracts' codec applied to the reviewer's synthetic sample values), findings in the
report's shape, each tool's contract fingerprint, and the summary a ``--strict`` exit is decided on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from agent_connector_sdk.core.contracts import (
    Finding,
    HeaderAnnotation,
    Profile,
    encode_header_value,
    fingerprint,
    header_annotations,
    header_text,
)
from agent_connector_sdk.core.contracts.errors import AdmissionError, HeaderValueError
from agent_connector_sdk.core.host import AdmittedTool
from agent_connector_sdk.review.report import (
    CallReport,
    CompletionProbe,
    FindingReport,
    HeaderPolicy,
    HeaderRule,
    HeaderSample,
    ReviewReport,
    ReviewSummary,
    SearchReport,
    ServerIdentity,
    ServerTextReview,
    SkillEntry,
    Target,
    ToolReview,
)

__all__ = [
    "admitted_header_policy",
    "build_review_report",
    "finding_reports",
    "header_policy",
    "showable",
    "summarize",
    "with_fingerprints",
]

_STRING_SAMPLES: Final = ("eu-central", "Zürich west", " edge space ")
_INTEGER_SAMPLES: Final = (42, -7, 9_007_199_254_740_991, 9_007_199_254_740_992)
_BOOLEAN_SAMPLES: Final = (True, False)


_SHOWN_DEPTH: Final = 128
"""Nesting of a rejected descriptor the report still carries (JSON and the table's descriptor view)."""


def showable(value: Any) -> bool:
    """Whether a rejected descriptor can be part of the report: nested at most :data:`_SHOWN_DEPTH`
    deep and every string (key or value) encodable as UTF-8 (no lone surrogate). Iterative: a
    descriptor nested past the interpreter's recursion limit is judged, not a crash."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > _SHOWN_DEPTH:
            return False
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return False
        elif isinstance(item, dict):
            stack.extend((key, depth + 1) for key in item)
            stack.extend((member, depth + 1) for member in item.values())
        elif isinstance(item, list):
            stack.extend((member, depth + 1) for member in item)
    return True


def header_policy(descriptor: Mapping[str, Any] | None, *, applicable: bool) -> HeaderPolicy:
    """Each ``x-mcp-header`` argument → its ``Mcp-Param-*`` name, with what the host sends for samples.

    For a descriptor the host did not admit (offline review, rejected tools): annotations are read with
    the spec placement (what the Invoke gate builds headers from); invalid annotations are reported
    with their category instead of rules. An admitted tool's policy is :func:`admitted_header_policy`.
    """
    if descriptor is None:
        return HeaderPolicy(applicable=applicable)
    try:
        annotations = header_annotations(descriptor.get("inputSchema"), placement="spec")
    except AdmissionError as refusal:
        return HeaderPolicy(applicable=applicable, category=refusal.category, reason=refusal.message)
    return _rules(annotations, applicable)


def admitted_header_policy(tool: AdmittedTool, *, applicable: bool) -> HeaderPolicy:
    """The header policy of a tool the host core admitted: the annotations the core read at Admit."""
    return _rules(tool.headers, applicable)


def _rules(annotations: Iterable[HeaderAnnotation], applicable: bool) -> HeaderPolicy:
    rules = []
    for annotation in annotations:
        samples: tuple[Any, ...]
        if annotation.type == "string":
            samples = _STRING_SAMPLES
        elif annotation.type == "integer":
            samples = _INTEGER_SAMPLES
        else:
            samples = _BOOLEAN_SAMPLES
        rules.append(
            HeaderRule(
                argument=annotation.pointer,
                header=annotation.header,
                type=annotation.type,
                samples=[_sample(value, annotation.type) for value in samples],
            )
        )
    return HeaderPolicy(applicable=applicable, rules=rules)


def _sample(value: Any, declared: str) -> HeaderSample:
    try:
        wire = encode_header_value(header_text(value, declared))
    except HeaderValueError as refusal:
        return HeaderSample(value=value, wire=None, encoding="refused", category=refusal.category)
    return HeaderSample(
        value=value, wire=wire, encoding="base64" if wire.startswith("=?base64?") else "plain"
    )


def summarize(
    tools: Sequence[ToolReview], call: CallReport | None, extra_findings: int = 0, extra_project: int = 0
) -> ReviewSummary:
    """Admitted/rejected names and the number of findings (rejections, failed disclosures, a call
    that was refused, failed or rejected its result); ``extra_project``: project-rule findings outside
    the tools (the server's texts)."""
    admitted = [t.name or "?" for t in tools if t.admission.decision == "admitted"]
    rejected = [t.name or "?" for t in tools if t.admission.decision == "rejected"]
    failures = [t.name or "?" for t in tools if t.disclosure is not None and not t.disclosure.verified]
    call_failed = call is not None and call.outcome not in ("validated", "tool_error")
    project = sum(len(t.findings) for t in tools) + (len(call.findings) if call is not None else 0)
    project += extra_project
    return ReviewSummary(
        admitted=admitted,
        rejected=rejected,
        disclosure_failures=failures,
        findings=len(rejected) + len(failures) + int(call_failed) + extra_findings,
        project_findings=project,
    )


def finding_reports(findings: Iterable[Finding]) -> list[FindingReport]:
    """The report's shape of core findings (rule, category, message, path: never values)."""
    return [FindingReport(rule=f.rule, category=f.category, message=f.message, path=f.path) for f in findings]


def with_fingerprints(tools: Sequence[ToolReview]) -> list[ToolReview]:
    """Each tool with its contract fingerprint (the contract lock's ``sha256``), when computable."""
    checked = []
    for tool in tools:
        digest: str | None = None
        if tool.descriptor is not None:
            try:
                digest = fingerprint(tool.descriptor).sha256
            except AdmissionError:
                digest = None  # not encodable: the lock cannot approve it either
        checked.append(tool.model_copy(update={"fingerprint": digest}))
    return checked


def build_review_report(
    *,
    target: Target,
    profile: Profile,
    header_gates: bool,
    tools: list[ToolReview],
    server: ServerIdentity | None = None,
    page_trace: Sequence[str | None] = (),
    search: SearchReport | None = None,
    completion: CompletionProbe | None = None,
    call: CallReport | None = None,
    skills: list[SkillEntry] | None = None,
    server_text: ServerTextReview | None = None,
) -> ReviewReport:
    extra = int(search is not None and search.category is not None)
    extra += int(completion is not None and completion.category is not None)
    # The server's texts have no tool to reject: under strict their findings are failures themselves.
    text_findings = len(server_text.findings) if server_text is not None else 0
    extra += text_findings if profile == "strict" else 0
    tools = with_fingerprints(tools)
    return ReviewReport(
        target=target,
        server=server,
        profile=profile,
        header_gates="applicable" if header_gates else "not_applicable",
        page_trace=list(page_trace),
        search=search,
        tools=tools,
        completion=completion,
        call=call,
        skills=skills,
        server_text=server_text,
        summary=summarize(tools, call, extra, 0 if profile == "strict" else text_findings),
    )
