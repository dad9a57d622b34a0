"""Every server of an MCP client's configuration in one report: the rows, the summary, its SARIF.

A server that could not be reviewed is its row with the one-line reason. The outputs cover them all:
one JSON document (:class:`ConfigReviewReport`, ``schemas/review-config-report.schema.json``), one
SARIF log with a run per server, each row compared with its own entry of a lock (keyed by the address
as the file writes it). Pure: the reviews themselves run in
:mod:`agent_connector_sdk.review.config_review`; reading the configuration file, rendering and writing
files are the CLI's (:mod:`agent_connector_sdk.cli.config_review`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from agent_connector_sdk.core.contracts.lock import ContractLock
from agent_connector_sdk.review.lock import compare_with_lock
from agent_connector_sdk.review.report import REPORT_VERSION, ReviewReport, Target

__all__ = [
    "ConfigReviewReport",
    "ConfigReviewSummary",
    "ServerRow",
    "build_config_report",
    "compare_rows_with_lock",
    "config_sarif_log",
]


class ServerRow(BaseModel):
    """One server of the configuration: its review, or why there is none."""

    name: str = Field(description="the server's name in the configuration file")
    target: Target = Field(description="the address as the file writes it (references unexpanded)")
    status: Literal["reviewed", "failed"]
    error: str | None = Field(default=None, description="why it could not be reviewed (one line)")
    report: ReviewReport | None = Field(default=None, description="the review (status reviewed)")


class ConfigReviewSummary(BaseModel):
    """Counts across the servers (tools of the reviewed ones)."""

    servers: int
    reviewed: int
    failed: int
    admitted: int
    rejected: int
    findings: int = Field(description="the reviewed servers' findings, added up (what --strict fails on)")
    project_findings: int


class ConfigReviewReport(BaseModel):
    """``agent-connector review --mcp-config FILE --json``: one review per configured server."""

    report_version: Literal[1] = REPORT_VERSION
    config: str = Field(description="the configuration file as given")
    profile: Literal["default", "strict"]
    servers: list[ServerRow]
    summary: ConfigReviewSummary


def _summary(rows: Sequence[ServerRow]) -> ConfigReviewSummary:
    reports = [row.report for row in rows if row.report is not None]
    return ConfigReviewSummary(
        servers=len(rows),
        reviewed=len(reports),
        failed=len(rows) - len(reports),
        admitted=sum(len(report.summary.admitted) for report in reports),
        rejected=sum(len(report.summary.rejected) for report in reports),
        findings=sum(report.summary.findings for report in reports),
        project_findings=sum(report.summary.project_findings for report in reports),
    )


def build_config_report(
    config: str, profile: Literal["default", "strict"], rows: list[ServerRow]
) -> ConfigReviewReport:
    return ConfigReviewReport(config=config, profile=profile, servers=rows, summary=_summary(rows))


def compare_rows_with_lock(
    rows: Sequence[ServerRow], approved: ContractLock, file: Path, *, allow_compatible: bool = False
) -> list[ServerRow]:
    """Each reviewed row's report against its own entry of the lock (``allow_compatible``: only
    escalation and breaking drift are findings)."""
    return [_compared(row, approved, file, allow_compatible) for row in rows]


def _compared(row: ServerRow, approved: Any, file: Path, allow_compatible: bool = False) -> ServerRow:
    """The row's report against its own entry of the lock (matched exactly by address: a lock of one
    server would otherwise apply to every server of the configuration)."""
    if row.report is None:
        return row
    entries = [entry for entry in approved.servers if entry.server == row.report.target.address]
    own = approved.model_copy(update={"servers": entries}) if entries else ContractLock()
    compared = compare_with_lock(row.report, own, str(file), allow_compatible=allow_compatible)
    return row.model_copy(update={"report": compared.report})


def config_sarif_log(report: ConfigReviewReport) -> dict[str, Any]:
    """One SARIF 2.1.0 log: a run per reviewed server (as ``review --sarif`` writes it), and for a
    server that could not be reviewed a run whose invocation failed, with the reason."""
    from agent_connector_sdk import __version__
    from agent_connector_sdk.review.sarif import SARIF_SCHEMA, SARIF_VERSION, sarif_log

    runs: list[dict[str, Any]] = []
    for row in report.servers:
        if row.report is not None:
            run = sarif_log(row.report)["runs"][0]
            run["properties"]["server"] = row.name
            run["automationDetails"] = {"id": f"agent-connector/review/{row.report.target.kind}/{row.name}/"}
            runs.append(run)
            continue
        runs.append(
            {
                "tool": {"driver": {"name": "agent-connector", "version": __version__, "rules": []}},
                "automationDetails": {"id": f"agent-connector/review/{row.target.kind}/{row.name}/"},
                "invocations": [
                    {
                        "executionSuccessful": False,
                        "toolExecutionNotifications": [
                            {"level": "error", "message": {"text": row.error or "not reviewed"}}
                        ],
                    }
                ],
                "results": [],
                "properties": {"server": row.name, "target": row.target.address},
            }
        )
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": runs}
