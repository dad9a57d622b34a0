"""The ``agent-connector`` command line (cyclopts for parsing, rich for output).

Exit codes, for every command: **0** it ran; **1** ``--strict`` and something was rejected or failed
verification (``disclose``: a disclosure failed to verify); **2** it could not run — bad input, or a
server that could not be reviewed — with one line on stderr saying why; **130** interrupted.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Annotated, Any, Literal, TextIO

from cyclopts import App, Parameter

from agent_connector_sdk import __version__
from agent_connector_sdk.cli._options import (
    DEFAULT_MAX_UPSTREAM_BYTES,
    ReviewArguments,
    ServeArguments,
)
from agent_connector_sdk.cli._output import current_output, writing_to
from agent_connector_sdk.cli.errors import COMMAND_ENDINGS, CliError, ending
from agent_connector_sdk.cli.operator_files import (
    read_operator_file,
    require_readable_file,
    write_operator_file,
)
from agent_connector_sdk.sanitize import sanitize_json, sanitize_text

# Only what parsing needs is imported up front: `--help`, `--version` and every argument or file error
# answer before the host, server or report stack loads (tests/cli/test_startup_imports.py pins the set).
# The commands import the rest where they use it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from rich.console import Console

    from agent_connector_sdk.core.contracts._findings import Profile
    from agent_connector_sdk.core.contracts._source_pins import SourcePins
    from agent_connector_sdk.review.live import ReviewOptions
    from agent_connector_sdk.review.report import ReviewReport, Target

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


@contextmanager
def _progress(label: str) -> Iterator[Any]:
    """A progress bar on stderr when it is a terminal; else a hook that does nothing."""
    if not sys.stderr.isatty():
        yield lambda event, amount: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    bar = Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        console=Console(stderr=True, emoji=False),
        transient=True,
    )
    task = bar.add_task(label, total=None)

    def hook(event: str, amount: int) -> None:
        if event == "total":
            bar.update(task, total=amount)
        else:
            bar.advance(task, amount)

    with bar:
        yield hook


# --------------------------------------------------------------------------------------- review
def _parse_headers(values: Sequence[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for value in values:
        name, sep, text = value.partition(":")
        if not sep or not name.strip() or any(c in name for c in " \t\r\n"):
            raise CliError(f"--header must look like 'Name: value' (got {json.dumps(value)[:60]})")
        headers[name.strip()] = text.strip()
    return headers


def _parse_arguments(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise CliError(f"--arguments is not valid JSON (column {error.colno})") from None
    if not isinstance(value, dict):
        raise CliError('--arguments must be a JSON object, e.g. \'{"query": "audit"}\'')
    return value


@dataclass(frozen=True)
class _Reviewed:
    """The server to review, before the report model (pydantic) loads: its kind and address."""

    kind: Literal["http", "stdio"]
    address: str


def _reviewed_target(target: Sequence[str], stdio: str | None) -> _Reviewed:
    """The server to review: ``--stdio``, a URL, or the words after ``--`` as a stdio command."""
    if stdio is not None:
        return _Reviewed("stdio", stdio)
    if len(target) == 1 and "://" in target[0]:
        return _http_target(target[0])
    if len(target) == 1 and _looks_like_an_address(target[0]):
        # `localhost:8000`, `127.0.0.1:8000/mcp` or `example.com`: a server address without its
        # scheme (the parser swallows `--`, so a bare program name is run as the stdio command it
        # most likely is).
        path = "" if "/" in target[0] else "/mcp"
        raise CliError(
            f"{json.dumps(target[0])[:80]} is neither a URL nor a program on PATH; "
            f"for an HTTP server write http://{target[0]}{path}"
        )
    import shlex

    return _Reviewed("stdio", shlex.join(target))


_SCHEMELESS_ADDRESS = re.compile(
    r"(localhost|[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?(/\S*)?"
)


_SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".rb", ".pl", ".jar", ".exe")


def _looks_like_an_address(word: str) -> bool:
    """``host[:port][/path]`` that is not a program on PATH nor a file here (``python``, ``./srv.py``,
    ``server.py`` stay stdio commands)."""
    if word.startswith(("http:", "https:")) or _SCHEMELESS_ADDRESS.fullmatch(word) is None:
        return False
    if word.endswith(_SCRIPT_SUFFIXES):
        return False  # `server.py`: a script named without its interpreter, not a host
    host = word.split("/", 1)[0]
    has_port = re.search(r":\d{1,5}$", host) is not None
    if "/" in word and not has_port and not host.startswith("localhost"):
        return False  # `dir.v2/server`: a relative path to a program, most likely
    return shutil.which(word) is None and not Path(word).exists()


def _target(kind: Literal["http", "stdio"], address: str) -> Target:
    from agent_connector_sdk.review.report import (
        Target,  # the report model loads only once the input is valid
    )

    return Target(kind=kind, address=address)


def _check_config_options(
    config: Path | None, servers: list[str] | None, concurrency: int, *, call: str | None, pin: Path | None
) -> None:
    if config is None:
        if servers:
            raise CliError("--server picks servers of --mcp-config FILE")
        return
    if not 1 <= concurrency <= 16:
        raise CliError(f"--concurrency must be between 1 and 16 (got {concurrency})")
    if call is not None:
        raise CliError("--call names one tool of one server: review that server by its URL or command")
    if pin is not None:
        raise CliError("--pin writes one server's pins: review that server by its URL or command")
    # Read now: a missing or malformed file answers before the host stack loads.
    require_readable_file(config)


def _is_command(target: Sequence[str]) -> bool:
    return bool(target) and not (len(target) == 1 and "://" in target[0])


def _server_environment(
    pairs: list[str] | None, passed: list[str] | None, *, stdio_target: bool
) -> dict[str, str]:
    if not pairs and not passed:
        return {}
    if not stdio_target:
        raise CliError("--env and --env-pass set a stdio server's environment: give its command after --")
    from agent_connector_sdk.review.stdio_server import server_environment

    return server_environment(pairs or (), passed or ())


def _http_target(url: str) -> _Reviewed:
    from agent_connector_sdk.mcp._preflight import check_url

    wrong = check_url(url)
    if wrong is None:
        return _Reviewed("http", url)
    if wrong == "not an http(s) URL":
        raise CliError(
            f"{json.dumps(url)[:80]} is not an http(s) URL; for a local server use --stdio 'COMMAND' "
            "or `review -- COMMAND ARGS`"
        )
    raise CliError(f"{json.dumps(url)[:80]} is {wrong}")


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
    plan = _plan_review(target, given)  # every argument and file error, before the host stack loads
    out = _out()
    pin = given.pin
    if given.descriptor:
        report = _review_descriptor_files(given.descriptor, given.emit_tests, plan.profile)
        pin = None  # descriptor files disclose nothing: there is no source to pin
    else:
        if plan.reviewed is not None:
            # Refused, unresolvable, no such program, not HTTP, not MCP: said before the stack loads.
            from agent_connector_sdk.review.preflight import preflight

            preflight(
                plan.reviewed.kind,
                plan.reviewed.address,
                timeout=given.timeout,
                env=plan.server_env,
                credentials=given.token is not None or bool(plan.headers),
            )
        from agent_connector_sdk.review.live import quiet_sdk_loggers

        options = _review_options(given, plan)
        if given.mcp_config is not None:
            with quiet_sdk_loggers():
                return _review_mcp_config(given, given.mcp_config, options, plan, out)
        if given.demo:
            report = _review_demo(options, json_output=given.json_output)
        else:
            assert plan.reviewed is not None  # exactly one source was given, and it is not --demo
            report = _review_live(_target(plan.reviewed.kind, plan.reviewed.address), options)
    return _finish(
        report,
        out,
        json_output=given.json_output,
        strict=given.strict,
        descriptors=given.descriptors,
        pin=pin,
        contract=plan.contract,
    )


@dataclass(frozen=True)
class _ReviewPlan:
    """``review``'s arguments, parsed and checked (nothing has connected to anything yet)."""

    profile: Profile
    headers: dict[str, str]
    arguments: dict[str, Any] | None
    server_env: dict[str, str]
    contract: _ContractOutputs
    reviewed: _Reviewed | None
    pins: SourcePins | None = None


def _plan_review(target: Sequence[str], given: ReviewArguments) -> _ReviewPlan:
    """Every argument and file error of ``review``, each one line (exit 2), in this order."""
    if given.timeout <= 0:
        raise CliError("--timeout must be a positive number of seconds")
    if not given.deadline > 0:  # also refuses NaN
        raise CliError("--deadline must be a positive number of seconds")
    stdio, config = given.stdio is not None, given.mcp_config is not None
    if sum([bool(target), stdio, bool(given.descriptor), given.demo, config]) != 1:
        raise CliError(
            "review needs exactly one of: URL, --stdio COMMAND (or -- COMMAND), --mcp-config FILE, "
            "--descriptor FILE, --demo"
        )
    _check_config_options(given.mcp_config, given.server, given.concurrency, call=given.call, pin=given.pin)
    if given.emit_tests is not None and not given.descriptor:
        raise CliError("--emit-tests needs --descriptor FILE")
    if given.arguments is not None and given.call is None:
        raise CliError("--arguments needs --call NAME")
    arguments = _parse_arguments(given.arguments)
    stdio_target = given.stdio is not None or _is_command(target) or given.mcp_config is not None
    server_env = _server_environment(given.env, given.env_pass, stdio_target=stdio_target)
    # The host profile: spec MUST rules reject in both; project rules (the README's rule table) are
    # findings by default and rejections with --strict.
    profile: Profile = "strict" if given.strict else "default"
    headers = _parse_headers(given.header or [])
    if (given.approve or given.fail_on_any_drift or given.allow_compatible) and given.lock is None:
        raise CliError("--approve, --fail-on-any-drift and --allow-compatible need --lock FILE")
    if given.fail_on_any_drift and given.allow_compatible:
        raise CliError("--fail-on-any-drift and --allow-compatible ask for opposite gates: choose one")
    if given.approve and given.write_lock is not None:
        raise CliError("--approve updates the --lock file: it does not go with --write-lock")
    if (given.approve or given.fail_on_any_drift) and given.mcp_config is not None:
        raise CliError("--approve and --fail-on-any-drift review one server: not with --mcp-config")
    contract = _ContractOutputs(
        lock=_read_lock(given.lock) if given.lock is not None else None,
        lock_file=given.lock,
        write_lock=given.write_lock,
        sarif=given.sarif,
        approve=tuple(given.approve or ()),
        any_drift=given.fail_on_any_drift,
        allow_compatible=given.allow_compatible,
    )
    # Read and parsed now: a bad pin file is refused before anything connects (it loads the contract
    # models, not the MCP stack).
    pins = _read_pins(given.pins) if given.pins is not None else None
    # The server's address is checked before the host stack loads: a mistyped URL answers at once.
    reviewed = _reviewed_target(target, given.stdio) if target or given.stdio is not None else None
    return _ReviewPlan(profile, headers, arguments, server_env, contract, reviewed, pins)


def _review_options(given: ReviewArguments, plan: _ReviewPlan) -> ReviewOptions:
    """How to review a server: the profile, timeouts, credentials, search patterns, one call, pins."""
    from agent_connector_sdk.review.live import ReviewOptions

    return ReviewOptions(
        profile=plan.profile,
        timeout=given.timeout,
        deadline=given.deadline,
        headers=plan.headers,
        token=given.token,
        search_patterns=tuple(given.search or (".*",)),
        call=given.call,
        arguments=plan.arguments,
        source_pins=plan.pins,
        env=plan.server_env,
    )


def _review_descriptor_files(
    paths: Sequence[Path], emit_tests: Path | None, profile: Profile
) -> ReviewReport:
    """``review --descriptor FILE… [--emit-tests PATH]``: the offline review of the files."""
    from agent_connector_sdk.cli.sources import load_descriptors
    from agent_connector_sdk.review.offline import emit_failure_tests, review_descriptors
    from agent_connector_sdk.review.wording import count

    names = [str(path) for path in paths]
    loaded = [item for name in names for item in load_descriptors(name)]
    report = review_descriptors(loaded, address=", ".join(names), profile=profile)
    if emit_tests is not None:
        written = emit_failure_tests(report, emit_tests)
        print(f"wrote {emit_tests} ({count(written, 'failure case')})", file=sys.stderr)
    return report


def _review_mcp_config(
    given: ReviewArguments, config: Path, options: ReviewOptions, plan: _ReviewPlan, out: TextIO
) -> int:
    """``review --mcp-config FILE``: every (or each ``--server``) server of the file; the exit code."""
    from agent_connector_sdk.cli.config_review import run_config_review

    return run_config_review(
        config,
        given.server or [],
        options,
        extra_env=plan.server_env,
        concurrency=given.concurrency,
        out=out,
        console=_console(out),
        json_output=given.json_output,
        strict=given.strict,
        descriptors=given.descriptors,
        lock=given.lock,
        write_lock=given.write_lock,
        sarif=given.sarif,
        allow_compatible=given.allow_compatible,
    )


def _review_live(reviewed: Target, options: ReviewOptions) -> ReviewReport:
    """The review of a running server (its URL or stdio command), with a progress bar on a terminal."""
    import anyio

    from agent_connector_sdk.review.live import quiet_sdk_loggers, review_server

    with quiet_sdk_loggers(), _progress("reading disclosures") as hook:
        return anyio.run(review_server, reviewed, replace(options, progress=hook))


@dataclass(frozen=True)
class _ContractOutputs:
    """``--lock`` (read before the review, so a bad file fails fast), ``--write-lock``, ``--sarif``."""

    lock: Any = None
    lock_file: Path | None = None
    write_lock: Path | None = None
    sarif: Path | None = None
    approve: tuple[str, ...] = ()
    any_drift: bool = False
    allow_compatible: bool = False


def _read_lock(path: Path) -> Any:
    from agent_connector_sdk.cli.lockfile import read_lock

    return read_lock(path)


def _finish(
    report: ReviewReport,
    out: TextIO,
    *,
    json_output: bool,
    strict: bool,
    descriptors: bool,
    pin: Path | None,
    contract: _ContractOutputs | None = None,
) -> int:
    if pin is not None:
        _write_pins(report, pin)
    if contract is not None:
        report = _contract_outputs(report, contract)
    if json_output:
        # JSON escapes C0 controls itself; DEL, C1 and bidi controls are escaped too (same value).
        out.write(sanitize_json(report.model_dump_json(indent=2)) + "\n")
    else:
        from agent_connector_sdk.cli.render import render_review

        render_review(report, _console(out), descriptors=descriptors)
    return 1 if strict and report.summary.findings else 0


def _contract_outputs(report: ReviewReport, contract: _ContractOutputs) -> ReviewReport:
    from agent_connector_sdk.cli.lockfile import apply_lock, write_lock
    from agent_connector_sdk.review.lock import lock_lines

    if contract.lock is not None:
        report = apply_lock(
            report,
            contract.lock,
            str(contract.lock_file),
            approve=contract.approve,
            path=contract.lock_file,
            any_drift=contract.any_drift,
            allow_compatible=contract.allow_compatible,
        )
    if contract.write_lock is not None:
        write_lock(report, contract.write_lock)
    if contract.sarif is not None:
        from agent_connector_sdk.review.sarif import sarif_log

        lines: dict[str, int] = {}
        if report.lock is not None and contract.lock_file is not None:
            try:
                lines = lock_lines(contract.lock_file.read_text("utf-8"), report.lock.server)
            except (OSError, UnicodeDecodeError):
                lines = {}  # the locations lose their line numbers, nothing else
        text = (
            sanitize_json(json.dumps(sarif_log(report, lock_lines=lines), indent=2, ensure_ascii=False))
            + "\n"
        )
        write_operator_file(contract.sarif, text, "SARIF file")
        print(f"wrote {contract.sarif} (SARIF 2.1.0)", file=sys.stderr)
    return report


def _read_pins(path: Path) -> SourcePins:
    """A pin file written by ``--pin`` (the ``SourcePins`` format); unreadable or malformed: exit 2."""
    from agent_connector_sdk.core.contracts._source_pins import SourcePins

    return read_operator_file(path, "pin file", SourcePins.from_json)


def _write_pins(report: ReviewReport, path: Path) -> None:
    """Source compatibility: the reviewed ``source_sha256`` of every verified disclosure, per alias,
    for this server, in the ``SourcePins`` format that ``review --pins`` (and the consumer) read."""
    from agent_connector_sdk.review.pins import reviewed_source_pins
    from agent_connector_sdk.review.wording import count

    pins, pinned = reviewed_source_pins(report)
    write_operator_file(path, pins.to_json(), "pin file")
    print(f"wrote {path} ({count(pinned, 'pinned tool')})", file=sys.stderr)


def _review_demo(options: ReviewOptions, *, json_output: bool) -> ReviewReport:
    """``review --demo``: the lab on 127.0.0.1:<ephemeral> with the operator's demo token, one
    disclosed + admitted + validated call of ``search_evidence``, then stop."""
    from agent_connector_sdk.review.demo import demo_review_options, running_contract_lab

    with running_contract_lab() as url:
        if not json_output:
            print(f"contract lab started at {url} (operator demo token); reviewing it", file=sys.stderr)
        return _review_live(_target("http", url), demo_review_options(options))


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
    from agent_connector_sdk.cli.sources import load_openapi
    from agent_connector_sdk.serving.assembly import ServeSettings, build_served_app, request_bounds
    from agent_connector_sdk.serving.openapi_app import log_disclosure_read_path
    from agent_connector_sdk.serving.process import bind_socket, is_loopback, one_line_logging, run_server

    settings = ServeSettings(**asdict(given))
    bounds = request_bounds(settings)
    out = _out()
    one_line_logging()
    served = build_served_app(settings, bounds, load_openapi)
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
    from agent_connector_sdk.cli.disclose import build_disclosures, verify_disclosure, write_disclosures
    from agent_connector_sdk.cli.sources import load_openapi
    from agent_connector_sdk.review.live import quiet_sdk_loggers

    stream = _out()
    source = load_openapi(str(openapi) if openapi is not None else None)
    with quiet_sdk_loggers(), _progress("building disclosures") as hook:
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
        _render_disclosures(run, failures, verify=verify, written=written, out=out, top=top, stream=stream)
    return 1 if failures or run.refusals else 0


def _render_disclosures(
    run: Any,
    failures: dict[str, str],
    *,
    verify: bool,
    written: int,
    out: Path | None,
    top: int,
    stream: TextIO,
) -> None:
    from rich.markup import escape
    from rich.table import Table

    from agent_connector_sdk.cli.render import count

    def shown(text: str, limit: int = 200) -> str:
        # Names and reasons come from the document: through the one sanitizer, then safe from markup.
        return escape(sanitize_text(text, limit))

    console = _console(stream)
    manifests = [d.manifest for d in run.disclosures.values()]
    total = sum(m.schema_bytes for m in manifests)
    fragments = sum(m.fragment_count for m in manifests)
    console.print(f"source   {shown(run.title)} · sha256 {run.source.sha256} · {run.source_bytes:,} bytes")
    console.print(
        f"built    {count(len(manifests), 'disclosure')} "
        f"({count(fragments, 'fragment')} of at most 4,096 bytes), "
        f"{total:,} canonical schema bytes in all"
    )
    table = Table(title=f"largest schemas (top {min(top, len(manifests))})", title_justify="left")
    for column, justify in (
        ("tool", "left"),
        ("operation", "left"),
        ("schema bytes", "right"),
        ("fragments", "right"),
        ("schema sha256", "left"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for m in sorted(manifests, key=lambda m: -m.schema_bytes)[: max(top, 0)]:
        table.add_row(
            shown(m.alias),
            shown(m.operation),
            f"{m.schema_bytes:,}",
            str(m.fragment_count),
            m.schema_sha256[:16] + "…",
        )
    console.print(table)
    if len(manifests) == 1:
        _render_fragments(next(iter(run.disclosures.values())), console)
    if verify:
        intact = len(manifests) - len(failures)
        where = f" from the files in {out}" if out is not None else ""
        console.print(f"verified {intact} of {len(manifests)} reconstructed intact{where}")
        for alias, category in failures.items():
            console.print(f"  [red]FAILED[/red] {shown(alias)}: {category}")
    if out is not None:
        console.print(f"wrote    {count(written, 'file')} under {out}")
    if run.refusals:
        console.print(f"refused  {count(len(run.refusals), 'operation')}:")
        for refusal in run.refusals:
            where = shown(refusal.operation)
            if refusal.alias:
                where = f"{shown(refusal.alias)} ({where})"
            console.print(f"  {where}: {refusal.category} — {shown(refusal.reason, 400)}")
    else:
        console.print("refused  none")


def _render_fragments(disclosure: Any, console: Console) -> None:
    """One disclosure's fragments: the URI a host reads, its size and its digest."""
    from rich.markup import escape

    from agent_connector_sdk.core.schema_disclosure import read_schema_fragment

    manifest = disclosure.manifest
    console.print(f"manifest {escape(sanitize_text(manifest.manifest_uri, 400))}")
    console.print(f"fragment {escape(sanitize_text(manifest.fragment_uri_template, 400))}")
    for index in range(manifest.fragment_count):
        fragment = read_schema_fragment(disclosure, str(index))
        size = len(fragment.text.encode("utf-8"))
        console.print(f"  {{index}}={index:<4d} {size:5,d} bytes  sha256 {fragment.fragment_sha256[:16]}…")


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
