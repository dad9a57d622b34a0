"""Findings: what a host reports (instead of rejecting) when a server breaks a *project* rule.

Two classes of rule (see the README's rule table):

* ``spec`` — the specification says MUST (or the result is unusable): rejected in every profile;
* ``project`` — the spec says SHOULD or is silent and this project is stricter: our own servers obey
  it; a host records a :class:`Finding` by default and rejects only in the ``strict`` profile.

A finding names a rule, a category and a JSON pointer; its message names fields, never values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["RULES", "RULES_BY_ID", "Finding", "Profile", "Rule", "RuleClass"]

RuleClass = Literal["spec", "project"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One project-rule deviation that did not stop the result (or the tool) from being used."""

    rule: str
    """Stable rule id, e.g. ``text-serialization`` (the README's rule table lists them)."""
    category: str
    """The category a strict host would have rejected with (e.g. ``missing_text_serialization``)."""
    message: str
    path: str | None = None


Profile = Literal["default", "strict"]
"""``default``: spec MUST rules reject, project rules are findings. ``strict``: project rules reject too.
(Re-exported by :mod:`agent_connector_sdk.core.host._options`.)"""


@dataclass(frozen=True, slots=True)
class Rule:
    """One row of the rule table: a stable id, its class, the category it is refused with, and the
    specification clause it rests on (``spec``) or departs from (``project``)."""

    id: str
    rule_class: RuleClass
    category: str
    clause: str


RULES: tuple[Rule, ...] = (
    # Consume (contracts.results), spec MUST: rejected in every profile.
    Rule("result-type", "spec", "invalid_result_type", "schema.ts Result.resultType"),
    Rule("result-shape", "spec", "malformed_result", "schema.ts CallToolResult (content, isError)"),
    Rule("content-block", "spec", "invalid_content_block", "schema.ts ContentBlock"),
    Rule("content-type", "spec", "unknown_content_type", "schema.ts ContentBlock"),
    Rule(
        "structured-content",
        "spec",
        "missing_structured_content",
        "server/tools#output-schema: servers MUST provide structured results that conform",
    ),
    Rule(
        "output-schema",
        "spec",
        "output_schema_violation",
        "server/tools#output-schema: servers MUST provide structured results that conform",
    ),
    # Consume, project rules: findings by default, rejections in `strict`.
    Rule(
        "text-serialization",
        "project",
        "missing_text_serialization",
        "server/tools#structured-content: SHOULD also return the serialized JSON in a text block",
    ),
    Rule(
        "error-structured-content",
        "project",
        "missing_structured_content",
        "server/tools#error-handling: silent on structuredContent of isError results",
    ),
    Rule(
        "error-output-schema",
        "project",
        "output_schema_violation",
        "server/tools#error-handling: silent on structuredContent of isError results",
    ),
    # Admit (contracts.admission), project rule.
    Rule(
        "header-placement",
        "project",
        "invalid_header_annotation",
        "transports#x-mcp-header: any property reachable through properties keys (since 2026-06-17)",
    ),
    # Admit (contracts.poisoning), project rules: tool poisoning in every string a model is shown, and
    # names a person cannot tell apart.
    Rule(
        "hidden-unicode",
        "project",
        "tool_poisoning",
        "server/tools#security-considerations: silent on invisible characters "
        "(tags, zero-width, bidi, C0/C1 controls)",
    ),
    Rule(
        "instruction-markup",
        "project",
        "tool_poisoning",
        "server/tools#security-considerations: silent on <IMPORTANT>-style text addressed to the model",
    ),
    Rule(
        "cross-reference",
        "project",
        "tool_poisoning",
        "server/tools#security-considerations: silent on a tool's text steering another tool's use"
        " or naming other servers",
    ),
    Rule(
        "exfiltration",
        "project",
        "tool_poisoning",
        "server/tools#security-considerations: silent on text telling the model to send data to an address"
        " or URL no argument names",
    ),
    Rule(
        "name-charset",
        "project",
        "tool_poisoning",
        "server/tools#tool-names: SHOULD use only A-Za-z0-9_.- (a look-alike letter reads as the original)",
    ),
    Rule(
        "confusable-name",
        "project",
        "tool_poisoning",
        "server/tools#tool-names: silent on names that look alike or differ only in case",
    ),
)
"""The rule table (the README's rule table is kept equal to it by a test)."""

RULES_BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}
