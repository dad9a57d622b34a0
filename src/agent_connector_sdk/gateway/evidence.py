"""Compatibility evidence per child — never claimed from one successful ``tools/call``.

For each child: how it was reached (transport, negotiated revision), how many descriptors it listed and
over which pages (the cursor trace), which tools the gateway admitted (under their gateway names),
which it rejected and why, and — where a harmless read-only tool exists — one result that passed the
Consume gate. "Harmless" is the child's own claim (``readOnlyHint: true``, no ``destructiveHint: true``)
about a tool whose input schema requires nothing, so it can be called with ``{}``; hints are untrusted,
which is why this is an operator's explicit check (``agent-connector gateway --check``), never a side
effect of serving.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.gateway.children import Child, ChildHealth
from agent_connector_sdk.gateway.generations import ChildTool

__all__ = ["ChildEvidence", "ValidatedResult", "collect_evidence", "harmless_tool"]


@dataclass(frozen=True, slots=True)
class ValidatedResult:
    """The one probe call: which tool, and its outcome (``ok``, ``tool_error`` or a refusal category)."""

    tool: str
    outcome: str
    structured: bool


@dataclass(frozen=True, slots=True)
class ChildEvidence:
    health: ChildHealth
    descriptors: int
    page_trace: tuple[str | None, ...]
    admitted: tuple[str, ...]
    rejected: tuple[tuple[str | None, str, str], ...]
    """(tool, category, reason) per rejected descriptor."""
    validated: ValidatedResult | None

    def as_json(self) -> dict[str, Any]:
        health = self.health.as_json()
        del health["rejected"]  # the count; the list below says more
        return {
            **health,
            "descriptors": self.descriptors,
            "pages": len(self.page_trace),
            "page_trace": list(self.page_trace),
            "admitted": list(self.admitted),
            "rejected": [{"tool": t, "category": c, "reason": r} for t, c, r in self.rejected],
            "validated_result": None
            if self.validated is None
            else {
                "tool": self.validated.tool,
                "outcome": self.validated.outcome,
                "structured": self.validated.structured,
            },
        }


def harmless_tool(tools: Mapping[str, ChildTool]) -> ChildTool | None:
    """The first tool that claims to be read-only and not destructive and requires no argument."""
    for tool in tools.values():
        annotations = tool.descriptor.get("annotations")
        if not isinstance(annotations, Mapping) or annotations.get("readOnlyHint") is not True:
            continue
        if annotations.get("destructiveHint") is True:
            continue
        required = tool.descriptor["inputSchema"].get("required")
        if required:
            continue
        return tool
    return None


async def collect_evidence(child: Child, *, probe: bool = True) -> ChildEvidence:
    """The evidence for one (connected or failed) child; ``probe`` calls a harmless tool once."""
    catalog = child.catalog
    validated: ValidatedResult | None = None
    if probe and catalog is not None and child.state == "up":
        tool = harmless_tool(catalog.tools)
        if tool is not None:
            try:
                result = await child.call(tool, {})
                outcome = "tool_error" if result.is_error else "ok"
                validated = ValidatedResult(tool.exposed, outcome, result.has_structured_content)
            except AgentConnectorError as error:
                validated = ValidatedResult(tool.exposed, str(error.category), False)
    return ChildEvidence(
        health=child.health(),
        descriptors=0 if catalog is None else catalog.descriptors,
        page_trace=() if catalog is None else catalog.page_trace,
        admitted=() if catalog is None else tuple(catalog.tools),
        rejected=() if catalog is None else tuple((r.tool, r.category, r.reason) for r in catalog.rejected),
        validated=validated,
    )
