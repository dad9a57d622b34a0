"""``review --sarif FILE``: the review as SARIF 2.1.0, for code-scanning UIs (pure: report in, dict out).

One run, tool driver ``agent-connector``. Every rule has a stable id: ``AREA/CATEGORY`` for refusals
(``admit/…``, ``disclosure/…``, ``lock/contract_drift``, ``search/…``, ``completion/…``, ``call/…``)
and ``rule/ID`` for findings (a row of the rule table, e.g. ``rule/hidden-unicode``). Each rule has a
class (``spec``: the specification says MUST, rejected everywhere; ``project``: this project's
stricter rule, a finding by default) and help naming the spec clause or project rule. There is one
result per rejection or finding, naming the tool (``logicalLocations``, kind ``function``), with the
tool's contract fingerprint as a partial fingerprint so a code-scanning UI tracks it across runs.
Levels: ``error`` for rejections, failures and drift, ``warning`` for project-rule findings.
Messages are the review's own value-free reasons.

Validated in the tests against the official SARIF 2.1.0 JSON schema (``sarif-2.1.0-rtm.5.json`` as
Microsoft's ``@microsoft/jest-sarif`` package ships it).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final, Literal

from agent_connector_sdk import __version__
from agent_connector_sdk.cli.report import ReviewReport, ToolReview
from agent_connector_sdk.mcp.contracts.findings import RULES_BY_ID

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
        "Contract lock: a tool's name, title, description, schemas, annotations or header map differ from "
        "the approved lock (added, removed, renamed or changed); re-approve with review --write-lock",
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


def _results(report: ReviewReport) -> Iterator[_Result]:
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
    if report.lock is not None:
        for drift in report.lock.tools:
            if drift.status == "unchanged":
                continue
            message = f"{drift.status} since the lock was approved"
            if drift.status == "changed":
                message = f"changed since the lock was approved: {', '.join(drift.fields)}"
            elif drift.previous is not None:
                message = f"renamed: the approved contract of {drift.previous!r} under a new name"
            yield _Result("lock/contract_drift", "error", message, by_name.get(drift.tool), drift.tool)
    if report.search is not None and report.search.category is not None:
        search = report.search
        yield _Result(
            f"search/{search.category}",
            "error",
            search.reason or search.category or "",
            by_name.get(search.tool),
        )
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


def _location(report: ReviewReport, tool_name: str | None) -> dict[str, Any]:
    location: dict[str, Any] = {}
    target = report.target
    if target.kind == "http" or (target.kind == "descriptor" and ", " not in target.address):
        location["physicalLocation"] = {"artifactLocation": {"uri": target.address}}
    if tool_name is not None:
        location["logicalLocations"] = [
            {"name": tool_name, "fullyQualifiedName": tool_name, "kind": "function"}
        ]
    return location


def sarif_log(report: ReviewReport) -> dict[str, Any]:
    """The SARIF 2.1.0 log of ``report`` (one run; rules sorted by id; results in review order)."""
    results = list(_results(report))
    rule_ids = sorted({result.rule_id for result in results})
    index = {rule_id: position for position, rule_id in enumerate(rule_ids)}
    sarif_results = []
    for result in results:
        name = result.tool_name or (result.tool.name if result.tool is not None else None)
        entry: dict[str, Any] = {
            "ruleId": result.rule_id,
            "ruleIndex": index[result.rule_id],
            "level": result.level,
            "message": {"text": f"{name}: {result.message}" if name else result.message},
        }
        location = _location(report, name)
        if location:
            entry["locations"] = [location]
        if result.tool is not None and result.tool.fingerprint is not None:
            entry["partialFingerprints"] = {"toolContract/v1": result.tool.fingerprint}
        if name is not None:
            entry["properties"] = {"tool": name}
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
