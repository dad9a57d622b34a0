"""``review --mcp-config FILE``: every server of a client's configuration, reviewed at once.

Each server gets its own review (:func:`~agent_connector_sdk.cli.review.review_server`: its own session,
``--timeout`` and ``--deadline``), at most ``--concurrency`` of them at a time. A server that cannot
be reviewed (its entry is unusable, it is down, it dies) is its row with the one-line reason; the
others go on. The outputs cover them all: one summary table after the reports, one JSON document
(:class:`ConfigReviewReport`, ``schemas/review-config-report.schema.json``), one SARIF log with a run
per server, and one lock file with an entry per server (keyed by the address as the file writes it).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, TextIO

import anyio
from pydantic import BaseModel, Field
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agent_connector_sdk.cli.errors import CliError
from agent_connector_sdk.cli.mcp_config import ConfiguredServer
from agent_connector_sdk.cli.report import REPORT_VERSION, ReviewReport, Target
from agent_connector_sdk.cli.review import ReviewOptions, review_server
from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.sanitize import sanitize_text

__all__ = [
    "ConfigReviewReport",
    "ConfigReviewSummary",
    "ServerRow",
    "config_sarif_log",
    "render_config_review",
    "review_configured",
    "run_config_review",
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


# ------------------------------------------------------------------------------------------ text
def render_config_review(
    report: ConfigReviewReport, console: Console, *, render_one: Any, descriptors: bool = False
) -> None:
    """Each reviewed server's report under its name, then one table across the servers."""
    for row in report.servers:
        console.print(f"[bold]── {escape(sanitize_text(row.name, 80))}[/bold]", highlight=False)
        if row.report is not None:
            render_one(row.report, console, descriptors=descriptors)
        else:
            console.print(f"not reviewed: {escape(sanitize_text(row.error or '', 1_000))}", highlight=False)
        console.print()
    table = Table(title=f"servers in {escape(sanitize_text(report.config, 200))}", title_justify="left")
    for column, justify in (
        ("server", "left"),
        ("transport", "left"),
        ("result", "left"),
        ("admitted", "right"),
        ("rejected", "right"),
        ("findings", "right"),
    ):
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for row in report.servers:
        name = escape(sanitize_text(row.name, 80))
        if row.report is None:
            table.add_row(
                name, row.target.kind, f"failed: {escape(sanitize_text(row.error or '', 300))}", "—", "—", "—"
            )
            continue
        summary = row.report.summary
        table.add_row(
            name,
            row.target.kind,
            "reviewed",
            str(len(summary.admitted)),
            str(len(summary.rejected)),
            str(summary.findings),
        )
    console.print(table)
    from agent_connector_sdk.cli.render import count

    total = report.summary
    console.print(
        f"summary  {total.reviewed} of {count(total.servers, 'server')} reviewed ({total.failed} failed); "
        f"{count(total.admitted, 'tool')} admitted, {total.rejected} rejected; "
        f"{count(total.findings, 'finding')}",
        highlight=False,
    )


# ----------------------------------------------------------------------------------------- SARIF
def config_sarif_log(report: ConfigReviewReport) -> dict[str, Any]:
    """One SARIF 2.1.0 log: a run per reviewed server (as ``review --sarif`` writes it), and for a
    server that could not be reviewed a run whose invocation failed, with the reason."""
    from agent_connector_sdk import __version__
    from agent_connector_sdk.cli.sarif import SARIF_SCHEMA, SARIF_VERSION, sarif_log

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


def print_failures(report: ConfigReviewReport) -> None:
    """The one stderr line when a server could not be reviewed (exit 2)."""
    failed = [row.name for row in report.servers if row.status == "failed"]
    if failed:
        names = ", ".join(sanitize_text(name, 60) for name in failed)
        print(
            f"agent-connector: {len(failed)} of {len(report.servers)} servers could not be reviewed: {names}",
            file=sys.stderr,
        )


# ------------------------------------------------------------------------------------ the command
def run_config_review(
    config: Path,
    names: Sequence[str],
    options: ReviewOptions,
    *,
    extra_env: Mapping[str, str],
    concurrency: int,
    out: TextIO,
    console: Console,
    json_output: bool,
    strict: bool,
    descriptors: bool,
    lock: Path | None,
    write_lock: Path | None,
    sarif: Path | None,
) -> int:
    """``review --mcp-config``: read, select, review, write every output; the exit code.

    0 every server was reviewed; 1 with ``--strict`` when one has findings; 2 when a server could not
    be reviewed (after everything else was printed and written, with one line on stderr)."""
    from agent_connector_sdk.cli.lockfile import read_lock
    from agent_connector_sdk.cli.mcp_config import read_mcp_config, select_servers
    from agent_connector_sdk.cli.render import render_review
    from agent_connector_sdk.sanitize import sanitize_json

    servers = select_servers(read_mcp_config(config), names)
    approved = read_lock(lock) if lock is not None else None  # a bad lock fails before any review
    rows = review_configured(servers, options, extra_env=extra_env, concurrency=concurrency)
    if approved is not None and lock is not None:
        rows = [_compared(row, approved, lock) for row in rows]
    report = build_config_report(str(config), options.profile, rows)
    if write_lock is not None:
        _write_locks(report, write_lock)
    if sarif is not None:
        import json

        from agent_connector_sdk.cli.errors import write_operator_file

        text = sanitize_json(json.dumps(config_sarif_log(report), indent=2, ensure_ascii=False)) + "\n"
        write_operator_file(sarif, text, "SARIF file")
        print(f"wrote {sarif} (SARIF 2.1.0, {len(report.servers)} runs)", file=sys.stderr)
    if json_output:
        out.write(sanitize_json(report.model_dump_json(indent=2)) + "\n")
    else:
        render_config_review(report, console, render_one=render_review, descriptors=descriptors)
    out.flush()
    if report.summary.failed:
        print_failures(report)
        return 2
    return 1 if strict and report.summary.findings else 0


def _compared(row: ServerRow, approved: Any, file: Path) -> ServerRow:
    """The row's report against its own entry of the lock (matched exactly by address: a lock of one
    server would otherwise apply to every server of the configuration)."""
    from agent_connector_sdk.cli.lockfile import apply_lock
    from agent_connector_sdk.mcp.contracts.lock import ContractLock

    if row.report is None:
        return row
    entries = [entry for entry in approved.servers if entry.server == row.report.target.address]
    own = approved.model_copy(update={"servers": entries}) if entries else ContractLock()
    return row.model_copy(update={"report": apply_lock(row.report, own, str(file))})


def _write_locks(report: ConfigReviewReport, path: Path) -> None:
    from agent_connector_sdk.cli.lockfile import write_lock

    for row in report.servers:
        if row.report is not None:
            write_lock(row.report, path)
