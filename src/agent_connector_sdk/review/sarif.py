"""``review --sarif FILE``: the review as SARIF 2.1.0, for code-scanning UIs (pure: report in, dict out).

One run, tool driver ``agent-connector``. Every rule has a stable id: ``AREA/CATEGORY`` for refusals
(``admit/…``, ``disclosure/…``, ``lock/contract_drift``, ``search/…``, ``completion/…``, ``call/…``)
and ``rule/ID`` for findings (a row of the rule table, e.g. ``rule/hidden-unicode``). Each rule has a
class (``spec``: the specification says MUST, rejected everywhere; ``project``: this project's
stricter rule, a finding by default) and help naming the spec clause or project rule. There is one
result per rejection or finding, naming the tool (``logicalLocations``, kind ``function``), with the
tool's contract fingerprint as a partial fingerprint so a code-scanning UI tracks it across runs.
Levels: ``error`` for rejections, failures and drift that fails the gate (escalation, breaking, and
compatible unless ``--allow-compatible``), ``warning`` for project-rule findings and compatible drift
that does not fail, ``note`` for narrowing and cosmetic drift. A text change's callouts (an address,
a URL, a path, an instruction-shaped sentence it adds) are in its message and its ``properties``.
Contract-lock drift has one result per changed location (rule ``lock/<class>``, the pointer as a
``member`` logical location, the tool's entry in the lock file as the physical location); its
messages carry the old and new values, sanitized and cut short. Other messages are the review's own
value-free reasons.

Validated in the tests against the official SARIF 2.1.0 JSON schema (``sarif-2.1.0-rtm.5.json`` as
Microsoft's ``@microsoft/jest-sarif`` package ships it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from agent_connector_sdk import __version__
from agent_connector_sdk.core.contracts import RULES_BY_ID
from agent_connector_sdk.core.contracts import escaped as escape_name
from agent_connector_sdk.review.report import ReviewReport, ToolReview
from agent_connector_sdk.review.wording import short_json

__all__ = ["SARIF_SCHEMA", "SARIF_VERSION", "RuleHelp", "rule_help", "sarif_log"]

SARIF_VERSION: Final = "2.1.0"
SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"
_SPEC: Final = "https://modelcontextprotocol.io/specification/2026-07-28"
_TOOLS: Final = f"{_SPEC}/server/tools"
_TRANSPORTS: Final = f"{_SPEC}/basic/transports"
_PAGINATION: Final = f"{_SPEC}/server/utilities/pagination"
_COMPLETION: Final = f"{_SPEC}/server/utilities/completion"

Level = Literal["error", "warning", "note"]


@dataclass(frozen=True, slots=True)
class RuleHelp:
    """What a rule is and where it comes from."""

    rule_class: Literal["spec", "project"]
    text: str
    uri: str | None = None


_HELP: Final[dict[str, RuleHelp]] = {
    "admit/malformed": RuleHelp(
        "spec", 'Tool: name is a string and inputSchema a JSON Schema object with type "object"', _TOOLS
    ),
    "admit/invalid_schema": RuleHelp(
        "spec", "Tool schemas are valid JSON Schema (2020-12 unless $schema says otherwise; SEP-1613)", _TOOLS
    ),
    "admit/unsupported_dialect": RuleHelp(
        "spec", "A client must refuse a schema dialect it does not support (SEP-1613)", _TOOLS
    ),
    "admit/unresolvable_ref": RuleHelp(
        "spec", "A client must not dereference network $refs (SEP-1613): every $ref resolves locally", _TOOLS
    ),
    "admit/invalid_header_annotation": RuleHelp(
        "spec",
        "x-mcp-header: an RFC 9110 token, unique, on a string/integer/boolean property reached through "
        "properties only; a client must drop a tool whose annotations are invalid (SEP-2243)",
        _TRANSPORTS,
    ),
    "admit/sensitive_header": RuleHelp(
        "project",
        "Servers should not mirror passwords, keys, tokens or personal data into headers; this host "
        "refuses such a descriptor (project rule: sensitive-header)",
    ),
    "admit/duplicate_name": RuleHelp(
        "project", "Tool names are unique in a listing; every duplicate is refused (project rule)"
    ),
    "admit/header_map_mismatch": RuleHelp(
        "project", "A known header map must equal the schema's x-mcp-header annotations (project rule)"
    ),
    "admit/undisclosed": RuleHelp(
        "project", "A tool found through search is admitted only from a verified schema disclosure"
    ),
    "lock/contract_drift": RuleHelp(
        "project",
        "Contract lock: a tool's contract differs from the approved lock, and the lock entry holds digests "
        "only (format 1), so what changed is unknown; re-write the lock to see and class the changes",
    ),
    "lock/escalation": RuleHelp(
        "project",
        "Contract lock, escalation: since it was approved the tool may do, take or show more, or looks "
        "safer than it is — a hint moved, a new argument (even optional), an input constraint removed or "
        "widened, a header annotation added, removed or renamed, task support offered, a switch's default "
        "changed, instruction-like, exfiltration or safety-claim text added, a new tool, a look-alike "
        "name; approve with review --lock FILE --approve TOOL@DIFF",
    ),
    "lock/breaking": RuleHelp(
        "project",
        "Contract lock, breaking: calls that were valid may now be refused (constraint added or narrowed, "
        "argument or tool removed, tool renamed) or outputs may hold what consumers did not expect",
    ),
    "lock/compatible": RuleHelp(
        "project",
        "Contract lock, compatible: what the model reads changed (wording of a description, title or "
        "example, a default): a person must re-read and re-approve it; fails --strict unless "
        "--allow-compatible",
    ),
    "lock/narrowing": RuleHelp(
        "project",
        "Contract lock, narrowing: the tool only returns less (an output constraint added, an output member "
        "now guaranteed); nothing a model reads or a host decides on changed",
    ),
    "lock/cosmetic": RuleHelp(
        "project",
        "Contract lock, cosmetic: whitespace, order of an order-free array, a default made explicit",
    ),
    "admit/tool_poisoning": RuleHelp(
        "project",
        "Tool poisoning: names, titles and descriptions carry no invisible characters, no instruction-like "
        "markup addressed to the model and no references to other tools or servers (strict profile)",
    ),
    "call/output_schema_violation": RuleHelp(
        "spec", "structuredContent must conform to the tool's outputSchema", _TOOLS
    ),
    "search/repeated_cursor": RuleHelp("spec", "Cursors are opaque; a chain must end", _PAGINATION),
    "completion/malformed_completion": RuleHelp(
        "spec", "completion/complete returns at most 100 string values", _COMPLETION
    ),
}
_AREA_HELP: Final[dict[str, RuleHelp]] = {
    "admit": RuleHelp("spec", "Tool descriptors a host can admit (Admit gate)", _TOOLS),
    "disclosure": RuleHelp(
        "project",
        "Schema disclosure: manifest and fragments verify against their digests and the navigation entry "
        "(project wire contract)",
    ),
    "search": RuleHelp("project", "The search tool answers with navigation entries (project rule)"),
    "completion": RuleHelp("spec", "completion/complete results", _COMPLETION),
    "call": RuleHelp("spec", "A tools/call result honours the admitted tool's contract", _TOOLS),
}


def rule_help(rule_id: str) -> RuleHelp:
    """The help for ``rule_id``: ``rule/ID`` is a row of the rule table (its class and clause); an
    ``AREA/CATEGORY`` has its own entry or falls back to its area's."""
    found = _HELP.get(rule_id)
    if found is not None:
        return found
    area, _, name = rule_id.partition("/")
    table_row = RULES_BY_ID.get(name) if area == "rule" else None
    if table_row is not None:
        page = table_row.clause.split(":")[0]
        uri = None
        if page.startswith("server/"):
            uri = f"{_SPEC}/{page}"
        elif page.startswith("transports"):
            uri = f"{_SPEC}/basic/{page}"
        return RuleHelp(
            table_row.rule_class, f"Rule {table_row.id} ({table_row.category}): {table_row.clause}", uri
        )
    return _AREA_HELP.get(area, RuleHelp("project", "See the README's error and rule tables"))


@dataclass(frozen=True, slots=True)
class _Result:
    rule_id: str
    level: Level
    message: str
    tool: ToolReview | None = None
    tool_name: str | None = None
    pointer: str | None = None
    lock_line: int | None = None
    callouts: tuple[tuple[str, str], ...] = ()
    server_text: str | None = None
    """Where in the server's own texts (``instructions``, ``prompts/NAME/description``, ...)."""


_LOCK_LEVELS: Final[dict[str, Level]] = {
    "escalation": "error",
    "breaking": "error",
    "compatible": "warning",
    "narrowing": "note",
    "cosmetic": "note",
}


def _lock_level(severity: str, fails: bool) -> Level:
    """A class's level, ``error`` whenever the drift fails the gate (compatible under the default)."""
    level = _LOCK_LEVELS[severity]
    return "error" if fails and severity in ("escalation", "breaking", "compatible") else level


_STATUS_WORDS: Final = {
    "added": "added since the lock was approved",
    "removed": "removed since the lock was approved",
    "changed": "changed since the lock was approved",
}


def _lock_results(
    report: ReviewReport, by_name: Mapping[str, ToolReview], lines: Mapping[str, int]
) -> Iterator[_Result]:
    """One result per changed location of each drifted tool (its class is the rule), and one per
    added, removed or renamed tool; approved drift is no result. Values appear in messages bounded."""
    if report.lock is None:
        return
    for drift in report.lock.tools:
        if drift.status == "unchanged" or drift.approved:
            continue
        tool = by_name.get(drift.tool)
        line = lines.get(drift.previous or drift.tool)
        name = drift.escaped or drift.tool
        if drift.digest_only or drift.severity is None:
            fields = ", ".join(drift.fields)
            message = f"changed since the lock was approved: {fields} (re-write the lock to see what)"
            if drift.status == "renamed":
                message = f"renamed: the approved contract of {drift.previous!r} under a new name"
            elif drift.status != "changed":
                message = _STATUS_WORDS.get(drift.status, drift.status)
            yield _Result("lock/contract_drift", "error", message, tool, drift.tool, lock_line=line)
            continue
        if drift.status != "changed" or drift.confusable_of is not None:
            message = _STATUS_WORDS.get(drift.status, drift.status)
            if drift.status == "renamed":
                message = f"renamed from {drift.previous!r}" + (" with changes" if drift.changes else "")
            if drift.confusable_of is not None:
                message += f"; {name} looks like {drift.confusable_of!r}"
            yield _Result(
                f"lock/{drift.severity}",
                _lock_level(drift.severity, drift.fails),
                message,
                tool,
                drift.tool,
                lock_line=line,
            )
        for change in drift.changes:
            shown = ""
            if change.kind != "added":
                shown += short_json(change.old, 80)
            if change.kind == "changed":
                shown += " -> "
            if change.kind != "removed":
                shown += short_json(change.new, 80)
            message = f"{change.severity} at {change.pointer} ({change.kind}): {change.reason}; {shown}"
            called = tuple((callout.kind, short_json(callout.text, 120)) for callout in change.callouts)
            if called:
                message += "; adds " + "; ".join(f"{kind} {text}" for kind, text in called)
            yield _Result(
                f"lock/{change.severity}",
                _lock_level(change.severity, drift.fails),
                message,
                tool,
                drift.tool,
                pointer=change.pointer,
                lock_line=line,
                callouts=called,
            )


def _results(report: ReviewReport, lock_lines: Mapping[str, int]) -> Iterator[_Result]:
    for tool in report.tools:
        verdict = tool.admission
        disclosure = tool.disclosure
        if disclosure is not None and not disclosure.verified:
            reason = disclosure.reason or disclosure.category
            message = f"schema disclosure failed at {disclosure.step or '?'}: {reason}"
            yield _Result(f"disclosure/{disclosure.category or 'failed'}", "error", message, tool)
        elif verdict.decision == "rejected":
            yield _Result(
                f"admit/{verdict.category or 'rejected'}", "error", verdict.reason or "not admitted", tool
            )
        for finding in tool.findings:
            where = f" at {finding.path}" if finding.path else ""
            yield _Result(f"rule/{finding.rule}", "warning", f"{finding.message}{where}", tool)
    by_name = {tool.name: tool for tool in report.tools if tool.name is not None}
    yield from _lock_results(report, by_name, lock_lines)
    if report.search is not None and report.search.category is not None:
        search = report.search
        yield _Result(
            f"search/{search.category}",
            "error",
            search.reason or search.category or "",
            by_name.get(search.tool),
        )
    if report.server_text is not None:
        # No tool to reject: under strict each is a failure of the review itself (an error).
        level: Level = "error" if report.profile == "strict" else "warning"
        for finding in report.server_text.findings:
            where = finding.path or "/"
            yield _Result(f"rule/{finding.rule}", level, finding.message, server_text=where)
    if report.completion is not None and report.completion.category is not None:
        probe = report.completion
        yield _Result(f"completion/{probe.category}", "error", probe.reason or probe.category or "")
    call = report.call
    if call is not None:
        for finding in call.findings:
            where = f" at {finding.path}" if finding.path else ""
            message = f"{finding.message}{where}"
            yield _Result(f"rule/{finding.rule}", "warning", message, by_name.get(call.tool), call.tool)
    if call is not None and call.outcome not in ("validated", "tool_error"):
        yield _Result(
            f"call/{call.category or call.outcome}",
            "error",
            f"{call.outcome} at {call.gate or '?'}: {call.reason or call.category or ''}",
            by_name.get(call.tool),
            call.tool,
        )


def _rule(rule_id: str) -> dict[str, Any]:
    help_ = rule_help(rule_id)
    source = "MCP specification (MUST)" if help_.rule_class == "spec" else "agent-connector project rule"
    rule: dict[str, Any] = {
        "id": rule_id,
        "name": "".join(part.capitalize() for part in rule_id.replace("-", "_").replace("/", "_").split("_")),
        "shortDescription": {"text": help_.text.split(";")[0].split(":")[0][:200]},
        "fullDescription": {"text": help_.text},
        "help": {"text": f"{help_.text} ({source})"},
        "defaultConfiguration": {"level": "error" if help_.rule_class == "spec" else "warning"},
        "properties": {"rule_class": help_.rule_class, "tags": ["mcp", help_.rule_class]},
    }
    if help_.uri is not None:
        rule["helpUri"] = help_.uri
    return rule


def _location(report: ReviewReport, tool_name: str | None, result: _Result | None = None) -> dict[str, Any]:
    location: dict[str, Any] = {}
    target = report.target
    if result is not None and result.rule_id.startswith("lock/") and report.lock is not None:
        # Drift is reviewed in the lock file: point at the tool's approved entry there.
        physical: dict[str, Any] = {"artifactLocation": {"uri": report.lock.file}}
        physical["region"] = {"startLine": result.lock_line or 1}
        location["physicalLocation"] = physical
    elif target.kind == "http" or (target.kind == "descriptor" and ", " not in target.address):
        location["physicalLocation"] = {"artifactLocation": {"uri": target.address}}
    if result is not None and result.server_text is not None:
        location["logicalLocations"] = [
            {
                "name": result.server_text,
                "fullyQualifiedName": f"server/{result.server_text}",
                "kind": "member",
            }
        ]
    elif tool_name is not None:
        logical = [{"name": tool_name, "fullyQualifiedName": tool_name, "kind": "function"}]
        if result is not None and result.pointer is not None:
            logical.append(
                {
                    "name": result.pointer,
                    "fullyQualifiedName": f"{tool_name}{result.pointer}",
                    "kind": "member",
                }
            )
        location["logicalLocations"] = logical
    return location


def sarif_log(report: ReviewReport, *, lock_lines: Mapping[str, int] | None = None) -> dict[str, Any]:
    """The SARIF 2.1.0 log of ``report`` (one run; rules sorted by id; results in review order).
    ``lock_lines``: per tool, the line of its entry in the lock file (drift results point there)."""
    results = list(_results(report, lock_lines or {}))
    rule_ids = sorted({result.rule_id for result in results})
    index = {rule_id: position for position, rule_id in enumerate(rule_ids)}
    sarif_results = []
    for result in results:
        name = result.tool_name or (result.tool.name if result.tool is not None else None)
        entry: dict[str, Any] = {
            "ruleId": result.rule_id,
            "ruleIndex": index[result.rule_id],
            "level": result.level,
            # A name outside ASCII is shown by its code points: a look-alike must not read as the original.
            "message": {"text": f"{escape_name(name)}: {result.message}" if name else result.message},
        }
        location = _location(report, name, result)
        if location:
            entry["locations"] = [location]
        if result.tool is not None and result.tool.fingerprint is not None:
            entry["partialFingerprints"] = {"toolContract/v1": result.tool.fingerprint}
        if name is not None:
            entry["properties"] = {"tool": name}
        if result.callouts:
            entry.setdefault("properties", {})["callouts"] = [
                {"kind": kind, "text": text} for kind, text in result.callouts
            ]
        sarif_results.append(entry)
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "agent-connector",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": "https://modelcontextprotocol.io/specification/2026-07-28",
                        "rules": [_rule(rule_id) for rule_id in rule_ids],
                    }
                },
                "automationDetails": {"id": f"agent-connector/review/{report.target.kind}/"},
                "results": sarif_results,
                "properties": {
                    "target": report.target.address,
                    "profile": report.profile,
                    "findings": report.summary.findings,
                },
            }
        ],
    }
