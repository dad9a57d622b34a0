"""``review --mcp-config FILE``: read the configuration, review it, render and write the outputs.

The reviewing is :mod:`agent_connector_sdk.review.config_review`, the report
:mod:`agent_connector_sdk.review.config_report`; this module reads the file, prints the reports and one
summary table across the servers, and writes the SARIF log and the lock file (an entry per server,
keyed by the address as the file writes it).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agent_connector_sdk.review.config_report import (
    ConfigReviewReport,
    build_config_report,
    compare_rows_with_lock,
    config_sarif_log,
)
from agent_connector_sdk.review.config_review import review_configured
from agent_connector_sdk.review.options import ReviewOptions
from agent_connector_sdk.sanitize import sanitize_text

__all__ = ["print_failures", "render_config_review", "run_config_review"]


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
def run_config_review(options: ReviewOptions, *, out: TextIO, console: Console) -> int:
    """``review --mcp-config``: read, select, review, write every output; the exit code.

    0 every server was reviewed; 1 with ``--strict`` when one has findings; 2 when a server could not
    be reviewed (after everything else was printed and written, with one line on stderr)."""
    from agent_connector_sdk.cli.mcp_config import read_mcp_config, select_servers
    from agent_connector_sdk.cli.render import render_review
    from agent_connector_sdk.sanitize import sanitize_json

    assert options.mcp_config is not None  # the command line routes only --mcp-config here
    config = options.mcp_config
    servers = select_servers(read_mcp_config(config), options.servers)
    rows = review_configured(servers, options, extra_env=options.env, concurrency=options.concurrency)
    if options.lock is not None and options.lock_file is not None:  # read when the options were built
        rows = compare_rows_with_lock(
            rows, options.lock, options.lock_file, allow_compatible=options.allow_compatible
        )
    report = build_config_report(str(config), options.profile, rows)
    if options.write_lock is not None:
        _write_locks(report, options.write_lock)
    if options.sarif is not None:
        import json

        from agent_connector_sdk.cli.operator_files import write_operator_file

        text = sanitize_json(json.dumps(config_sarif_log(report), indent=2, ensure_ascii=False)) + "\n"
        write_operator_file(options.sarif, text, "SARIF file")
        print(f"wrote {options.sarif} (SARIF 2.1.0, {len(report.servers)} runs)", file=sys.stderr)
    if options.json_output:
        out.write(sanitize_json(report.model_dump_json(indent=2)) + "\n")
    else:
        render_config_review(report, console, render_one=render_review, descriptors=options.descriptors)
    out.flush()
    if report.summary.failed:
        print_failures(report)
        return 2
    return 1 if options.strict and report.summary.findings else 0


def _write_locks(report: ConfigReviewReport, path: Path) -> None:
    from agent_connector_sdk.cli.lockfile import write_lock

    for row in report.servers:
        if row.report is not None:
            write_lock(row.report, path)
