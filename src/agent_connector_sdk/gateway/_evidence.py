"""Compatibility evidence per child — never claimed from one successful ``tools/call``.

For each child: how it was reached (transport, negotiated revision, the server's own name and version),
how many descriptors it listed and over which pages (the cursor trace), which tools the gateway
admitted (under their gateway names, each with its contract fingerprint — the digests
``review --write-lock`` records, from :func:`~agent_connector_sdk.core.contracts._fingerprint.fingerprint`),
which it rejected and why, and one result that passed the Consume gate:

* from the operator's probe (``[children.NAME.probe]``: a tool and its arguments) when one is
  configured — the only way to obtain a validated result from a child whose read-only tools need
  arguments;
* otherwise from a tool that claims to be harmless (``readOnlyHint: true``, no ``destructiveHint: true``)
  and requires no argument, called with ``{}``. Hints are untrusted, which is why this is an operator's
  explicit check (``agent-connector gateway --check``), never a side effect of serving.

:class:`GatewayCheck` is the ``--check --json`` document (pydantic models are its single source of
truth; ``schemas/gateway-check.schema.json`` is generated from them). Probe arguments are sent, never
recorded: nothing here holds an argument or result value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_connector_sdk.core.contracts import CONTRACT_FIELDS, fingerprint
from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.gateway._children import Child, HealthState
from agent_connector_sdk.gateway._generations import ChildTool

__all__ = [
    "CHECK_VERSION",
    "AdmittedTool",
    "ChildCheck",
    "GatewayCheck",
    "ProbeResult",
    "Problem",
    "RejectedTool",
    "ServerInfo",
    "check_report",
    "collect_evidence",
    "harmless_tool",
]

CHECK_VERSION: Literal[1] = 1
_FROZEN = ConfigDict(frozen=True, extra="forbid")


class ServerInfo(BaseModel):
    """The child's ``serverInfo`` as it said it (untrusted; sanitized when printed)."""

    model_config = _FROZEN
    name: str | None
    version: str | None


class AdmittedTool(BaseModel):
    """One published tool and the fingerprint of the child's descriptor it was admitted from."""

    model_config = _FROZEN
    tool: str = Field(description="the gateway's name (CHILD_tool)")
    child_tool: str = Field(description="the tool's name at the child (the name a contract lock files)")
    descriptor_sha256: str = Field(description="SHA-256 of the admitted descriptor's canonical JSON")
    sha256: str = Field(description="contract fingerprint: the whole contract (as review --write-lock)")
    contract_sha256: str = Field(description="contract fingerprint without the name (finds renames)")
    fields: dict[str, str] = Field(description="one digest per contract field present")


class RejectedTool(BaseModel):
    """A child descriptor the gateway does not publish: category and value-free reason."""

    model_config = _FROZEN
    tool: str | None
    category: str
    reason: str


class ProbeResult(BaseModel):
    """The one validated call: which tool, chosen how, and its outcome (``ok``, ``tool_error`` — an
    ``isError`` result that passed Consume — or the refusal's category). ``reason``: the refusal's
    value-free message."""

    model_config = _FROZEN
    tool: str
    source: Literal["configured", "harmless"]
    outcome: str
    structured: bool
    reason: str | None = None


class ChildCheck(BaseModel):
    """One child's evidence."""

    model_config = _FROZEN
    name: str
    transport: str
    state: HealthState
    last_error: str | None
    reason: str | None = Field(description="last_error with its value-free message (URL, variable name)")
    server: ServerInfo | None
    protocol_version: str | None
    generation: int | None
    descriptors: int
    pages: int
    page_trace: list[str | None]
    admitted: list[AdmittedTool]
    rejected: list[RejectedTool]
    validated_result: ProbeResult | None
    enumeration: str | None = Field(
        default=None,
        description="a search-first child's hidden catalog: 'complete: N tools in S searches' or "
        "'partial: N of at least M (why a bound stopped it)'; null for a child that lists its tools",
    )

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class Problem(BaseModel):
    """Why the check is not ``ok``: ``down`` (a child unreachable), ``rejected`` (a child tool not
    published), ``probe_failed`` (the validated call did not return ``ok``), ``partial`` (a bound
    stopped the enumeration of a search-first child's hidden catalog: "partial: N of at least M") or
    ``no_probe`` (no validated result: nothing configured and no harmless tool; ``--strict`` does not
    fail on it)."""

    model_config = _FROZEN
    child: str
    kind: Literal["down", "rejected", "probe_failed", "no_probe", "partial"]
    detail: str


class GatewayCheck(BaseModel):
    """The output of ``agent-connector gateway --check --json``.

    ``status``: ``ok`` (no problem but ``no_probe``), ``degraded`` (problems, some child up) or ``down``
    (no child up). ``passed``: what ``--strict`` decides — no child down, no rejection, no failed probe.
    A search-first child's withheld search/call tools (``synthetic_proxy``) are listed as rejected but
    are no problem: withholding them is the rule, their tools are federated."""

    model_config = ConfigDict(frozen=True, extra="forbid", title="GatewayCheck")
    check_version: Literal[1] = CHECK_VERSION
    status: Literal["ok", "degraded", "down"]
    passed: bool
    children: list[ChildCheck]
    problems: list[Problem]


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


def _admitted(tool: ChildTool) -> AdmittedTool:
    contract = fingerprint(tool.descriptor)
    return AdmittedTool(
        tool=tool.exposed,
        child_tool=tool.name,
        descriptor_sha256=tool.descriptor_sha256,
        sha256=contract.sha256,
        contract_sha256=contract.contract_sha256,
        fields={field: contract.fields[field] for field in CONTRACT_FIELDS if field in contract.fields},
    )


async def _probe(child: Child) -> ProbeResult | None:
    catalog = child.catalog
    if catalog is None or child.state != "up":
        return None
    configured = child.spec.probe
    if configured is not None:
        source: Literal["configured", "harmless"] = "configured"
        tool = next((t for t in catalog.tools.values() if t.name == configured.tool), None)
        arguments: Mapping[str, Any] = configured.arguments
        if tool is None:
            rejected = any(r.tool == configured.tool for r in catalog.rejected)
            return ProbeResult(
                tool=f"{child.name}_{configured.tool}",
                source=source,
                outcome="not_published",
                structured=False,
                reason="the probe's tool was rejected" if rejected else "the child lists no such tool",
            )
    else:
        source = "harmless"
        tool = harmless_tool(catalog.tools)
        arguments = {}
        if tool is None:
            return None
    try:
        result = await child.call(tool, arguments)
    except AgentConnectorError as error:
        return ProbeResult(
            tool=tool.exposed,
            source=source,
            outcome=str(error.category),
            structured=False,
            reason=error.message,
        )
    outcome = "tool_error" if result.is_error else "ok"
    return ProbeResult(
        tool=tool.exposed, source=source, outcome=outcome, structured=result.has_structured_content
    )


async def collect_evidence(child: Child, *, probe: bool = True) -> ChildCheck:
    """The evidence for one (connected or failed) child; ``probe`` makes the one validated call."""
    catalog = child.catalog
    validated = await _probe(child) if probe else None
    health = child.health()
    server_name, server_version = child.server_info
    seen = catalog is not None and (server_name is not None or server_version is not None)
    return ChildCheck(
        name=health.name,
        transport=health.transport,
        state=health.state,
        last_error=health.last_error,
        reason=child.reason,
        server=ServerInfo(name=server_name, version=server_version) if seen else None,
        protocol_version=health.protocol_version,
        generation=health.generation,
        descriptors=0 if catalog is None else catalog.descriptors,
        pages=0 if catalog is None else len(catalog.page_trace),
        page_trace=[] if catalog is None else list(catalog.page_trace),
        admitted=[] if catalog is None else [_admitted(tool) for tool in catalog.tools.values()],
        rejected=[]
        if catalog is None
        else [RejectedTool(tool=r.tool, category=r.category, reason=r.reason) for r in catalog.rejected],
        validated_result=validated,
        enumeration=_enumeration(child),
    )


def _enumeration(child: Child) -> str | None:
    federation = child.federation
    if federation is None:
        return None
    if federation.partial is not None:
        return federation.partial
    return f"complete: {federation.admitted_total} tools in {federation.searches} searches"


def check_report(children: Sequence[ChildCheck]) -> GatewayCheck:
    """The whole check: each child's evidence, the problems found, the overall status."""
    problems: list[Problem] = []
    for item in children:
        if item.state not in ("up", "degraded"):
            problems.append(
                Problem(child=item.name, kind="down", detail=item.reason or item.last_error or item.state)
            )
            continue
        for rejected in item.rejected:
            if rejected.category == "synthetic_proxy":
                continue  # a search-first child's own search/call tools: withheld by design, federated
            name = rejected.tool if rejected.tool is not None else "(no name)"
            problems.append(Problem(child=item.name, kind="rejected", detail=f"{name}: {rejected.category}"))
        if item.enumeration is not None and item.enumeration.startswith("partial"):
            problems.append(Problem(child=item.name, kind="partial", detail=item.enumeration))
        probe = item.validated_result
        if probe is None:
            problems.append(
                Problem(
                    child=item.name,
                    kind="no_probe",
                    detail="no [children.NAME.probe] and no read-only tool without required arguments",
                )
            )
        elif probe.outcome != "ok":
            problems.append(
                Problem(child=item.name, kind="probe_failed", detail=f"{probe.tool}: {probe.outcome}")
            )
    failing = [problem for problem in problems if problem.kind != "no_probe"]
    serving = any(item.state in ("up", "degraded") for item in children)
    status: Literal["ok", "degraded", "down"] = "ok" if not failing else ("degraded" if serving else "down")
    return GatewayCheck(status=status, passed=not failing, children=list(children), problems=problems)
