"""Every server of an MCP client's configuration reviewed at once: the rows, the report, its SARIF.

Each server gets its own review (:func:`~agent_connector_sdk.review.live.review_server`: its own
session, ``--timeout`` and ``--deadline``), at most ``concurrency`` of them at a time. A server that
cannot be reviewed (its entry is unusable, it is down, it dies) is its row with the one-line reason;
the others go on. The outputs cover them all: one JSON document (:class:`ConfigReviewReport`,
``schemas/review-config-report.schema.json``), one SARIF log with a run per server, each row compared
with its own entry of a lock (keyed by the address as the file writes it). Reading the configuration
file, rendering and writing files are the CLI's (:mod:`agent_connector_sdk.cli.config_review`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import anyio
from pydantic import BaseModel, Field

from agent_connector_sdk.cli.errors import CliError
from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.mcp.contracts.lock import ContractLock
from agent_connector_sdk.review.configured import ConfiguredServer
from agent_connector_sdk.review.live import ReviewOptions, review_server
from agent_connector_sdk.review.lock import compare_with_lock
from agent_connector_sdk.review.report import REPORT_VERSION, ReviewReport, Target
from agent_connector_sdk.sanitize import sanitize_text

__all__ = [
    "ConfigReviewReport",
    "ConfigReviewSummary",
    "ServerRow",
    "build_config_report",
    "compare_rows_with_lock",
    "config_sarif_log",
    "review_configured",
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


def review_configured(
    servers: Sequence[ConfiguredServer],
    options: ReviewOptions,
    *,
    extra_env: Mapping[str, str],
    concurrency: int,
) -> list[ServerRow]:
    """Review every server (at most ``concurrency`` at once); rows in the configuration's order."""
    return anyio.run(_review_all, list(servers), options, dict(extra_env), concurrency)


async def _review_all(
    servers: list[ConfiguredServer],
    options: ReviewOptions,
    extra_env: dict[str, str],
    concurrency: int,
) -> list[ServerRow]:
    rows: list[ServerRow | None] = [None] * len(servers)
    limit = anyio.CapacityLimiter(concurrency)

    async def one(index: int, server: ConfiguredServer) -> None:
        async with limit:
            rows[index] = await _review_one(server, options, extra_env)

    async with anyio.create_task_group() as group:
        for index, server in enumerate(servers):
            group.start_soon(one, index, server)
    return [row for row in rows if row is not None]


async def _review_one(
    server: ConfiguredServer, options: ReviewOptions, extra_env: dict[str, str]
) -> ServerRow:
    target = Target(kind=server.kind, address=server.shown)
    if server.error is not None:
        return ServerRow(name=server.name, target=target, status="failed", error=server.error)
    if server.kind == "stdio":
        own = replace(
            options,
            command=server.command,
            env={**server.env, **extra_env},
            cwd=server.cwd,
        )
    else:
        headers = {**server.headers, **options.headers}
        own = replace(options, url=server.url, headers=headers, token=options.token or server.token)
    try:
        report = await review_server(target, own)
    except (CliError, AgentConnectorError, OSError) as failure:
        words = failure.message if isinstance(failure, AgentConnectorError) else type(failure).__name__
        return ServerRow(name=server.name, target=target, status="failed", error=sanitize_text(words, 1_000))
    return ServerRow(name=server.name, target=target, status="reviewed", report=report)


def compare_rows_with_lock(rows: Sequence[ServerRow], approved: ContractLock, file: Path) -> list[ServerRow]:
    """Each reviewed row's report against its own entry of the lock."""
    return [_compared(row, approved, file) for row in rows]


def _compared(row: ServerRow, approved: Any, file: Path) -> ServerRow:
    """The row's report against its own entry of the lock (matched exactly by address: a lock of one
    server would otherwise apply to every server of the configuration)."""
    if row.report is None:
        return row
    entries = [entry for entry in approved.servers if entry.server == row.report.target.address]
    own = approved.model_copy(update={"servers": entries}) if entries else ContractLock()
    return row.model_copy(update={"report": compare_with_lock(row.report, own, str(file)).report})


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
