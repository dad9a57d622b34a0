"""The ``agent-connector`` command line (cyclopts for parsing, rich for output).

Exit codes, for every command: **0** it ran; **1** ``--strict`` and something was rejected or failed
verification (``disclose``: a disclosure failed to verify); **2** it could not run — bad input, or a
server that could not be reviewed — with one line on stderr saying why; **130** interrupted.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any, TextIO

from cyclopts import App, Parameter

from agent_connector_sdk import __version__
from agent_connector_sdk.cli._options import (
    DEFAULT_MAX_UPSTREAM_BYTES,
    ReviewArguments,
    ServeArguments,
)
from agent_connector_sdk.cli._output import current_output, writing_to
from agent_connector_sdk.cli.errors import COMMAND_ENDINGS, CliError, ending
from agent_connector_sdk.cli.operator_files import require_readable_file
from agent_connector_sdk.sanitize import sanitize_json, sanitize_text

# Only what parsing needs is imported up front: `--help`, `--version` and every argument or file error
# answer before the host, server or report stack loads (tests/cli/test_startup_imports.py pins the set).
# The commands import the rest where they use it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from rich.console import Console


__all__ = ["app", "main", "main_exit"]

app = App(
    name="agent-connector",
    help=(
        "Review, serve and disclose MCP tools safely (MCP 2026-07-28).\n\n"
        "review: what a host would admit, send and accept. serve: the contract lab or an OpenAPI "
        "document as a gated MCP server behind search. gateway: many MCP servers behind one gated "
        "catalog. disclose: hash-bound schema fragments of an OpenAPI document, offline. state: "
        "switch a tool off or on for every replica sharing a state store.\n\n"
        "Exit codes: 0 ran; 1 with --strict when something was rejected or failed; 2 could not run "
        "(one line on stderr says why)."
    ),
    version=__version__,
    help_format="markdown",
    result_action="return_value",
    suppress_keyboard_interrupt=False,  # main() reports it: one line, exit 130
)

_out = current_output

_DEFAULT_MAX_UPSTREAM_BYTES = (
    DEFAULT_MAX_UPSTREAM_BYTES  # tests/cli/test_openapi_document_cli.py reads it here
)
_REVIEW_DEFAULTS = ReviewArguments()
_SERVE_DEFAULTS = ServeArguments()


def _console(stream: TextIO) -> Console:
    from agent_connector_sdk.cli.console import output_console

    return output_console(stream)  # NO_COLOR, FORCE_COLOR and COLUMNS honoured


# --------------------------------------------------------------------------------------- review
@app.command
def review(
    *target: Annotated[
        str,
        Parameter(
            help="Streamable HTTP URL (http://127.0.0.1:8000/mcp), or after `--` a stdio server command"
        ),
    ],
    given: ReviewArguments = _REVIEW_DEFAULTS,
) -> int:
    """Review an MCP server as a host would: admission, header policy, disclosure, pages, one call.

    Give a URL, a stdio command (--stdio or after --), --descriptor FILE for an offline review, or
    --demo. Exit 0 when the review ran, 1 with --strict when anything was rejected or failed,
    2 when the server could not be reviewed.
    """
    if given.json_schema:
        from importlib.resources import files

        _out().write(
            (files("agent_connector_sdk") / "schemas" / "review-report.schema.json").read_text("utf-8")
        )
        return 0
    from agent_connector_sdk.cli.review_options import review_options

    # Built once, with every argument and file error, before the host stack loads; then passed down.
    options = review_options(target, given)
    from agent_connector_sdk.cli.review_run import run_review

    return run_review(options, _out())


# ---------------------------------------------------------------------------------------- serve
@app.command
def serve(*, given: ServeArguments = _SERVE_DEFAULTS) -> int:
    """Serve gated MCP tools behind search, with schema disclosure, over Streamable HTTP.

    Default: the contract lab, every gate visible, bearer auth with two documented demo tokens
    (analyst: lab-analyst-demo-token, operator: lab-operator-demo-token); refuses a non-loopback
    --host while they are on. --openapi: every operation of the document becomes a tool.
    """
    _check_serve_arguments(given)  # a mistyped option or path answers before the server stack loads
    # At once, before the seconds the server stack takes to load and build, for a person watching a
    # terminal; a log or a pipe gets what it always got (an error stays the one line it reads).
    if sys.stderr.isatty():
        source = "the contract lab" if given.openapi is None else str(given.openapi)
        print(f"starting: {sanitize_text(source, 200)} …", file=sys.stderr, flush=True)
    from agent_connector_sdk.cli.serve_parts import served_parts
    from agent_connector_sdk.cli.sources import load_openapi
    from agent_connector_sdk.serving.assembly import ServeSettings, build_served_app, request_bounds
    from agent_connector_sdk.serving.openapi_app import log_disclosure_read_path
    from agent_connector_sdk.serving.process import bind_socket, is_loopback, one_line_logging, run_server

    settings = ServeSettings(**asdict(given))
    bounds = request_bounds(settings)
    out = _out()
    one_line_logging()
    served = build_served_app(settings, bounds, served_parts(load_openapi))
    sock = bind_socket(given.host, given.port)  # first: a busy port is the one line a user sees
    log_disclosure_read_path(served.app)

    def announce(url: str) -> None:
        print(f"serving {served.what} at {url}", file=out, flush=True)
        if given.insecure_open_bind and not is_loopback(given.host):
            print(
                f"WARNING: no authentication on {given.host} (--insecure-open-bind): anyone who can reach "
                "it may call every tool",
                file=sys.stderr,
                flush=True,
            )

    try:
        run_server(served.app, sock, announce, read_timeout_seconds=given.read_timeout)
    finally:
        sock.close()
    return 0


def _check_serve_arguments(given: ServeArguments) -> None:
    """``serve``'s argument and file errors that need no server stack, each one line (exit 2)."""
    if not 0 <= given.port <= 65535:
        raise CliError(f"--port must be between 0 and 65535 (got {given.port})")
    without_openapi = given.openapi is None
    if given.upstream is not None and without_openapi:
        raise CliError("--upstream only applies with --openapi")
    if given.upstream_errors != "generic" and without_openapi:
        raise CliError("--upstream-errors only applies with --openapi")
    if given.auth_config is not None and without_openapi:
        raise CliError("--auth-config only applies with --openapi")
    openapi_only = {
        "--max-upstream-bytes": given.max_upstream_bytes != DEFAULT_MAX_UPSTREAM_BYTES,
        "--allow-duplicate-operation-ids": given.allow_duplicate_operation_ids,
        "--strict-refs": given.strict_refs,
    }
    for option, used in openapi_only.items():
        if used and without_openapi:
            raise CliError(f"{option} only applies with --openapi")
    if given.max_upstream_bytes < 1:
        raise CliError(
            f"--max-upstream-bytes must be a positive number of bytes (got {given.max_upstream_bytes})"
        )
    if not 0 < given.read_timeout <= 3600:
        raise CliError(f"--read-timeout must be between 0 and 3600 seconds (got {given.read_timeout:g})")
    if given.openapi is not None:
        require_readable_file(given.openapi)
    # Last (the only check here that imports a module of the server side, a light one): a bind the
    # settings do not make safe is refused before the stack loads, so it is the one line a user sees.
    from agent_connector_sdk.serving.process import open_bind_refusal

    refusal = open_bind_refusal(
        given.host,
        lab=without_openapi,
        unauthenticated=given.no_auth if without_openapi else given.auth_config is None,
        insecure_open_bind=given.insecure_open_bind,
        openapi=not without_openapi,
    )
    if refusal is not None:
        raise CliError(refusal)


# ------------------------------------------------------------------------------------- disclose
@app.command
def disclose(
    *,
    openapi: Annotated[
        Path | None,
        Parameter(help="OpenAPI 3.0/3.1 document, JSON or YAML (default: the embedded GitHub extract)"),
    ] = None,
    operation: Annotated[str | None, Parameter(help="only this operation ID or tool name")] = None,
    out: Annotated[
        Path | None, Parameter(help="write DIR/{tool}/manifest.json and DIR/{tool}/fragments/{i}.json")
    ] = None,
    verify: Annotated[
        bool,
        Parameter(
            help="re-read every manifest and fragment (from --out when given) and reconstruct it", negative=()
        ),
    ] = False,
    json_output: Annotated[
        bool, Parameter(name="--json", help="print the manifests and verdicts as JSON", negative=())
    ] = False,
    top: Annotated[int, Parameter(help="how many of the largest schemas to list")] = 5,
    allow_duplicate_operation_ids: Annotated[
        bool,
        Parameter(
            help="disclose a document that reuses an operationId (refused by default, as serve does)",
            negative=(),
        ),
    ] = False,
    strict_refs: Annotated[
        bool,
        Parameter(
            help="refuse the whole document when a $ref resolves to nothing (default: such operations "
            "are listed as refused)",
            negative=(),
        ),
    ] = False,
) -> int:
    """Build hash-bound schema disclosures for every operation of an OpenAPI document (no network).

    Exit 0 when every disclosure was built (and, with --verify, reconstructed intact); 1 when one was
    refused or failed to verify; 2 for bad input.
    """
    if openapi is not None:
        require_readable_file(openapi)
    from agent_connector_sdk.cli.console import progress_bar
    from agent_connector_sdk.cli.disclose import build_disclosures, verify_disclosure, write_disclosures
    from agent_connector_sdk.cli.sources import load_openapi
    from agent_connector_sdk.review.live import quiet_sdk_loggers

    stream = _out()
    source = load_openapi(str(openapi) if openapi is not None else None)
    with quiet_sdk_loggers(), progress_bar("building disclosures") as hook:
        run = build_disclosures(
            source,
            operation=operation,
            progress=hook,
            allow_duplicate_operation_ids=allow_duplicate_operation_ids,
            strict_refs=strict_refs,
        )
    written = write_disclosures(run, out) if out is not None else 0
    failures: dict[str, str] = {}
    if verify:
        for alias, disclosure in run.disclosures.items():
            category = verify_disclosure(disclosure, out)
            if category is not None:
                failures[alias] = category
    if json_output:
        from agent_connector_sdk.cli.disclose_report import disclose_report

        # One model (schemas/disclose-report.schema.json is generated from it).
        document = disclose_report(run, failures, verify=verify).model_dump(mode="json")
        stream.write(sanitize_json(json.dumps(document, indent=2, ensure_ascii=False)) + "\n")
    else:
        from agent_connector_sdk.cli.disclose_render import render_disclosures

        render_disclosures(run, failures, verify=verify, written=written, out=out, top=top, stream=stream)
    return 1 if failures or run.refusals else 0


# ---------------------------------------------------------------------------------------- state
app.command(  # imported when `state` is run; its help is here so `--help` need not import it
    "agent_connector_sdk.cli.state:app",
    name="state",
    help="Switch a tool off or on for every replica sharing a state store (disable, enable, init, status).",
)

# -------------------------------------------------------------------------------------- gateway
app.command(
    "agent_connector_sdk.cli.gateway:gateway",
    name="gateway",
    help="Serve many MCP servers behind one gated catalog with schema disclosure (or --check them).",
)


# ------------------------------------------------------------------------------------------ main
def _interrupt(signum: int, frame: Any) -> None:
    # Raised where the main thread is, even inside the event loop: asyncio's own SIGINT handling
    # would instead cancel the task, which the transport stack reports as a timeout.
    compat = sys.modules.get("agent_connector_sdk.mcp.compat")  # not loaded: no server was started
    if compat is not None:
        compat.stop_stdio_servers()  # each runs in its own session: the terminal's Ctrl-C missed it
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the CLI and return its exit code (never raises for bad input or an unreachable server)."""
    with writing_to(out):
        return _run(argv)


def _run(argv: Sequence[str] | None) -> int:
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, _interrupt)
    try:
        result = app(list(argv) if argv is not None else sys.argv[1:], exit_on_error=False, print_error=False)
    except COMMAND_ENDINGS as error:
        line, code = ending(error)
        print(line, file=sys.stderr)
        return code
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    return result if isinstance(result, int) else 0


def main_exit() -> None:
    """Console-script entry point (``agent-connector``)."""
    sys.exit(main())
