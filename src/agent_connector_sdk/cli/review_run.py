"""``review`` from its options to the exit code: the preflight, the review the options name (a live
server, the demo, descriptor files, or every server of an MCP configuration), then the outputs — the
rendered or JSON report, the pin file, the lock comparison, the lock file and the SARIF log.

The options are the one :class:`~agent_connector_sdk.review.options.ReviewOptions` built from the
command line (:mod:`agent_connector_sdk.cli.review_options`), passed down as they are. Each stack loads
where it is used.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Literal, TextIO

from agent_connector_sdk.cli.console import output_console, progress_bar
from agent_connector_sdk.cli.operator_files import write_operator_file
from agent_connector_sdk.sanitize import sanitize_json

if TYPE_CHECKING:
    from pathlib import Path

    from agent_connector_sdk.review.options import ReviewOptions
    from agent_connector_sdk.review.report import ReviewReport, Target

__all__ = ["run_review"]


def run_review(options: ReviewOptions, out: TextIO) -> int:
    """Review what ``options`` name and write what they ask for; the exit code."""
    if options.descriptor_files:
        report = _review_descriptor_files(options)
    else:
        if options.server is not None:
            # Refused, unresolvable, no such program, not HTTP, not MCP: said before the stack loads.
            from agent_connector_sdk.review.preflight import preflight

            preflight(
                options.server.kind,
                options.server.address,
                timeout=options.timeout,
                env=options.env,
                credentials=options.token is not None or bool(options.headers),
            )
        from agent_connector_sdk.review.live import quiet_sdk_loggers

        if options.mcp_config is not None:
            from agent_connector_sdk.cli.config_review import run_config_review

            with quiet_sdk_loggers():
                return run_config_review(options, out=out, console=output_console(out))
        if options.demo:
            report = _review_demo(options)
        else:
            assert options.server is not None  # exactly one source was given, and it is not --demo
            report = _review_live(_target(options.server.kind, options.server.address), options)
    return _finish(report, options, out)


def _target(kind: Literal["http", "stdio"], address: str) -> Target:
    from agent_connector_sdk.review.report import Target  # the report model loads once input is valid

    return Target(kind=kind, address=address)


def _review_descriptor_files(options: ReviewOptions) -> ReviewReport:
    """``review --descriptor FILE… [--emit-tests PATH]``: the offline review of the files."""
    from agent_connector_sdk.cli.sources import load_descriptors
    from agent_connector_sdk.review.offline import emit_failure_tests, review_descriptors
    from agent_connector_sdk.review.wording import count

    names = [str(path) for path in options.descriptor_files]
    loaded = [item for name in names for item in load_descriptors(name)]
    report = review_descriptors(loaded, address=", ".join(names), profile=options.profile)
    if options.emit_tests is not None:
        written = emit_failure_tests(report, options.emit_tests)
        print(f"wrote {options.emit_tests} ({count(written, 'failure case')})", file=sys.stderr)
    return report


def _review_live(reviewed: Target, options: ReviewOptions) -> ReviewReport:
    """The review of a running server (its URL or stdio command), with a progress bar on a terminal."""
    import anyio

    from agent_connector_sdk.review.live import quiet_sdk_loggers, review_server

    with quiet_sdk_loggers(), progress_bar("reading disclosures") as hook:
        return anyio.run(review_server, reviewed, replace(options, progress=hook))


def _review_demo(options: ReviewOptions) -> ReviewReport:
    """``review --demo``: the lab on 127.0.0.1:<ephemeral> with the operator's demo token, one
    disclosed + admitted + validated call of ``search_evidence``, then stop."""
    from agent_connector_sdk.review.demo import demo_review_options, running_contract_lab

    with running_contract_lab() as url:
        if not options.json_output:
            print(f"contract lab started at {url} (operator demo token); reviewing it", file=sys.stderr)
        return _review_live(_target("http", url), demo_review_options(options))


def _finish(report: ReviewReport, options: ReviewOptions, out: TextIO) -> int:
    if options.pin is not None:
        _write_pins(report, options.pin)
    report = _contract_outputs(report, options)
    if options.json_output:
        # JSON escapes C0 controls itself; DEL, C1 and bidi controls are escaped too (same value).
        out.write(sanitize_json(report.model_dump_json(indent=2)) + "\n")
    else:
        from agent_connector_sdk.cli.render import render_review

        render_review(report, output_console(out), descriptors=options.descriptors)
    return 1 if options.strict and report.summary.findings else 0


def _contract_outputs(report: ReviewReport, options: ReviewOptions) -> ReviewReport:
    from agent_connector_sdk.cli.lockfile import apply_lock, write_lock
    from agent_connector_sdk.review.lock import lock_lines

    if options.lock is not None:
        report = apply_lock(
            report,
            options.lock,
            str(options.lock_file),
            approve=options.approve,
            path=options.lock_file,
            any_drift=options.fail_on_any_drift,
            allow_compatible=options.allow_compatible,
        )
    if options.write_lock is not None:
        write_lock(report, options.write_lock)
    if options.sarif is not None:
        from agent_connector_sdk.review.sarif import sarif_log

        lines: dict[str, int] = {}
        if report.lock is not None and options.lock_file is not None:
            try:
                lines = lock_lines(options.lock_file.read_text("utf-8"), report.lock.server)
            except (OSError, UnicodeDecodeError):
                lines = {}  # the locations lose their line numbers, nothing else
        text = (
            sanitize_json(json.dumps(sarif_log(report, lock_lines=lines), indent=2, ensure_ascii=False))
            + "\n"
        )
        write_operator_file(options.sarif, text, "SARIF file")
        print(f"wrote {options.sarif} (SARIF 2.1.0)", file=sys.stderr)
    return report


def _write_pins(report: ReviewReport, path: Path) -> None:
    """Source compatibility: the reviewed ``source_sha256`` of every verified disclosure, per alias,
    for this server, in the ``SourcePins`` format that ``review --pins`` (and the consumer) read."""
    from agent_connector_sdk.review.pins import reviewed_source_pins
    from agent_connector_sdk.review.wording import count

    pins, pinned = reviewed_source_pins(report)
    write_operator_file(path, pins.to_json(), "pin file")
    print(f"wrote {path} ({count(pinned, 'pinned tool')})", file=sys.stderr)
