"""``agent-connector gateway``: many child MCP servers behind one gated, disclosed catalog.

    agent-connector gateway --child weather=http://127.0.0.1:9001/mcp \\
                            --child 'files=-- python files_server.py' --port 0 --no-auth
    agent-connector gateway --config gateway.toml --check

Authentication: an ``[auth]`` table in ``--config`` (FastMCP's JWT verifier: JWKS URL or public key
file, issuer, audience; scopes per child or tool). Without one the gateway serves only with
``--no-auth``, and only on a loopback address.

Serving binds the socket first (a bad or busy port is one line, exit 2), connects every child within
its connect timeout (a child that is down is reported and retried with backoff; the others serve), then
prints the real URL. Child state changes are one log line each on stderr. SIGTERM or Ctrl-C ends the
gateway and every child within seconds: requests still running get ``shutdown_grace`` seconds (3 by
default), then the children are closed together (see ``Gateway.stop``).

``--check`` connects, prints each child's compatibility evidence and exits: 0 when every child was
reachable, 2 when one was not; with ``--strict`` also 1 on any rejected tool or failed probe.
A search-first child's hidden catalog is enumerated completely only here (bounded, resumable, progress
on stderr; "partial: N of at least M" when a bound stops it), never while serving.
``--check --json`` prints one :class:`~agent_connector_sdk.gateway._evidence.GatewayCheck` object
(``schemas/gateway-check.schema.json``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from pathlib import Path
from typing import Annotated, Any

from cyclopts import Parameter

from agent_connector_sdk.cli._options import ConfigServers, Host, Namespace, Port, ReplicaId
from agent_connector_sdk.cli._output import current_output
from agent_connector_sdk.cli.errors import CliError
from agent_connector_sdk.cli.operator_files import require_readable_file
from agent_connector_sdk.sanitize import sanitize_json, sanitize_text

__all__ = ["gateway", "render_evidence"]


def gateway(
    *,
    child: Annotated[
        list[str] | None,
        Parameter(
            help="a child server: NAME=URL (Streamable HTTP) or 'NAME=-- CMD ARGS...' (stdio); repeatable",
            negative=(),
        ),
    ] = None,
    config: Annotated[Path | None, Parameter(help="TOML configuration (see docs/gateway.md)")] = None,
    mcp_config: Annotated[
        Path | None,
        Parameter(
            help="also take children from an MCP client's mcpServers JSON file (Claude Desktop, Cursor, "
            "VS Code, FastMCP); ${VAR} references are read from the environment"
        ),
    ] = None,
    server: ConfigServers = None,
    host: Host = "127.0.0.1",
    port: Port = 8000,
    no_auth: Annotated[
        bool, Parameter(help="serve without authentication (loopback --host only)", negative=())
    ] = False,
    check: Annotated[
        bool,
        Parameter(
            help="connect, print each child's compatibility evidence (and call one harmless "
            "read-only tool per child), then exit",
            negative=(),
        ),
    ] = False,
    json_output: Annotated[
        bool,
        Parameter(name="--json", help="--check: print JSON (schema: gateway-check.schema.json)", negative=()),
    ] = False,
    strict: Annotated[
        bool,
        Parameter(help="--check: exit 1 on any rejected tool or failed probe", negative=()),
    ] = False,
    lock: Annotated[
        Path | None,
        Parameter(
            help="a contract lock (review --write-lock): publish only approved child contracts; "
            "a drifted tool waits until the lock is updated"
        ),
    ] = None,
    state: Annotated[
        str | None,
        Parameter(
            help="run as one replica sharing this state (memory:// or redis://HOST:PORT/DB; "
            "default: $AGENT_CONNECTOR_STATE); see docs/gateway.md"
        ),
    ] = None,
    replica_id: ReplicaId = None,
    namespace: Namespace = "gateway",
    health_detail: Annotated[
        bool,
        Parameter(
            help="GET /healthz?detail=1 also lists each child's admitted and rejected tools (the route "
            "is unauthenticated: for operators on a private network)",
            negative=(),
        ),
    ] = False,
) -> int:
    """Serve many MCP servers behind one gated catalog with schema disclosure (or --check them)."""
    if not 0 <= port <= 65535:
        raise CliError(f"--port must be between 0 and 65535 (got {port})")
    if json_output and not check:
        raise CliError("--json only applies with --check")
    if strict and not check:
        raise CliError("--strict only applies with --check")
    if config is not None:
        require_readable_file(config)  # a mistyped path answers before the gateway stack loads
    from agent_connector_sdk.gateway import (
        Gateway,
        GatewayConfig,
        GatewayError,
        check_credentials,
        load_config,
        parse_child,
    )
    from agent_connector_sdk.serving.process import bind_socket, is_loopback, one_line_logging, run_server

    try:
        extra = tuple(parse_child(text) for text in child or ()) + _configured_children(mcp_config, server)
        settings = load_config(config, extra) if config is not None else GatewayConfig(children=extra)
        if lock is not None:
            settings = dataclasses.replace(settings, lock=lock)
        check_credentials(settings)  # a missing variable is named now, not found at the first connect
        probe_gateway = Gateway(settings) if check else None
    except GatewayError as error:
        raise CliError(error.message) from None
    _share_verified(probe_gateway, state, settings.children)
    out = current_output()
    one_line_logging()
    # Child state changes (up, down, reconnected, degraded, generation moved, tools rejected) are the
    # operator's view of the children: shown at INFO, one line each, whatever the SDK's level.
    logging.getLogger("agent_connector_sdk.gateway").setLevel(logging.INFO)
    if probe_gateway is not None:
        return asyncio.run(_check(probe_gateway, json_output=json_output, strict=strict))
    if settings.auth is not None and no_auth:
        raise CliError("--no-auth contradicts the [auth] table of --config: drop one")
    if settings.auth is None and not no_auth:
        raise CliError(
            "the gateway has no authentication configured: add an [auth] table to --config "
            "(see docs/gateway.md), or pass --no-auth to serve on a loopback --host"
        )
    if no_auth and not is_loopback(host):
        raise CliError(f"refusing to bind {host} without authentication: use a loopback --host")
    from agent_connector_sdk.state import StateConfigError, state_url_from_env

    shared = state if state is not None else state_url_from_env()
    try:
        front = Gateway(settings, health_detail=health_detail)
    except GatewayError as error:
        raise CliError(error.message) from None
    _share_verified(front, shared, settings.children)
    try:
        app_ = front.http_app(state=shared, replica_id=replica_id, namespace=namespace)
    except StateConfigError as error:
        raise CliError(f"--state: {error.message}") from None
    except ValueError as error:  # build_replica_app's own argument checks (e.g. --replica-id)
        raise CliError(str(error)) from None
    sock = bind_socket(host, port)

    def announce(url: str) -> None:
        states = ", ".join(f"{h.name} {h.state}" for h in front.health())
        tools = sum(h.tools for h in front.health())
        print(f"serving {tools} tools from {len(settings.children)} children ({states}) at {url}", file=out)
        out.flush()

    try:
        run_server(app_, sock, announce, graceful_shutdown_seconds=settings.shutdown_grace)
    except SystemExit:
        # uvicorn exits (status 3) when the app's lifespan fails: say why in our one line, if we know.
        if front.start_error is None:
            raise
    finally:
        sock.close()
    if front.start_error is not None:  # refused in the app's lifespan (e.g. an [auth.require] typo)
        raise CliError(front.start_error.message)
    return 0


def _share_verified(front: Any, state: str | None, children: Any) -> None:
    """With a shared state store (``--state`` or the environment), the gateway's verified disclosures
    get their shared tier there: replicas share the verification work, a restart (or the next
    ``--check``) starts warm."""
    if front is None:
        return
    from agent_connector_sdk.gateway import shared_disclosures
    from agent_connector_sdk.state import StateConfigError, state_url_from_env

    try:
        front.verified.shared = shared_disclosures(
            state if state is not None else state_url_from_env(), children
        )
    except StateConfigError as error:
        raise CliError(f"--state: {error.message}") from None


def _configured_children(path: Path | None, names: list[str] | None) -> tuple[Any, ...]:
    if path is None:
        if names:
            raise CliError("--server picks servers of --mcp-config FILE")
        return ()
    from agent_connector_sdk.cli.mcp_config import gateway_children, read_mcp_config, select_servers

    return gateway_children(select_servers(read_mcp_config(path), names or []))


class EnumerationProgress:
    """``--check``'s progress through one search-first child's hidden catalog, on stderr: a progress
    bar on a terminal, else one line per 10 % of what is known so far (the catalog's size is only known
    as a lower bound, "at least M", until the enumeration ends: a line each time another tenth of
    that bound is verified, and the last state at the end). Child names are sanitized."""

    def __init__(self, child: str, *, stream: Any = None, tty: bool | None = None) -> None:
        import sys

        self.child = sanitize_text(child, 60)
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self._printed = 0
        self._latest: tuple[int, int, int] | None = None
        self._bar: Any = None
        self._task: Any = None

    def __call__(self, verified: int, found: int, searches: int) -> None:
        if self.tty:
            if self._bar is None:
                from rich.console import Console
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

                self._bar = Progress(
                    TextColumn(f"child {self.child}: hidden tools"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TextColumn("({task.fields[searches]} searches)"),
                    console=Console(file=self.stream, emoji=False),
                    transient=True,
                )
                self._task = self._bar.add_task("enumerate", total=found, searches=searches)
                self._bar.start()
            self._bar.update(self._task, completed=verified, total=max(found, 1), searches=searches)
            return
        self._latest = (verified, found, searches)
        if verified - self._printed >= max(1, found // 10):
            self._line()

    def _line(self) -> None:
        assert self._latest is not None
        verified, found, searches = self._latest
        self._printed = verified
        print(
            f"child {self.child}: {verified} of at least {found} hidden tools verified ({searches} searches)",
            file=self.stream,
            flush=True,
        )

    def close(self) -> None:
        """The last state, once: a line (when not already printed), or the bar ended."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        elif self._latest is not None and self._latest[0] != self._printed:
            self._line()


async def _check(front: Any, *, json_output: bool, strict: bool) -> int:
    import sys

    from agent_connector_sdk.gateway import GatewayError, check_report, collect_evidence

    # Complete evidence when asked (never while serving): each search-first child's hidden catalog
    # is enumerated, bounded and resumable, with progress on stderr.
    reporters = []
    for child in front.children.values():
        child.enumerate_all = True
        child.progress = reporter = EnumerationProgress(child.name)
        reporters.append(reporter)
    try:
        await front.start(supervise=False)
    except GatewayError as error:
        raise CliError(f"--check: {error.message}") from None
    finally:
        for reporter in reporters:
            reporter.close()
    for child in front.children.values():
        federation = child.federation
        if federation is not None and federation.partial is not None:
            print(f"child {sanitize_text(child.name, 60)}: {federation.partial}", file=sys.stderr)
    try:
        evidence = [await collect_evidence(child) for child in front.children.values()]
        # A key under a child that never listed could not be resolved: serving would hold that child's
        # tools back until it does, so the check cannot say the configuration is sound.
        pending = front.pending_requirements()
    finally:
        await front.stop()
    report = check_report(evidence)
    out = current_output()
    if json_output:
        print(sanitize_json(report.model_dump_json(indent=2)), file=out)
    else:
        for line in render_evidence(report):
            print(line, file=out)
    if pending:
        owner = pending[0].split("_", 1)[0]
        raise CliError(
            f"--check: [auth.require] {pending[0]} is not resolved: child {owner} did not list its tools "
            f"({len(pending)} unresolved)"
        )
    if any(item.state not in ("up", "degraded") for item in report.children):
        return 2
    return 1 if strict and not report.passed else 0


def _s(value: Any, limit: int = 200) -> str:
    return sanitize_text(str(value), limit)


def render_evidence(report: Any) -> list[str]:
    """Lines for a person (a :class:`~agent_connector_sdk.gateway._evidence.GatewayCheck`); every
    child-controlled string passes the one sanitizer."""
    lines: list[str] = []
    for item in report.children:
        version = item.protocol_version or "-"
        server = ""
        if item.server is not None:
            server = f", server {_s(item.server.name or '-', 80)} {_s(item.server.version or '-', 40)}"
        lines.append(f"child {item.name} ({item.transport}, {_s(version, 40)}{server}): {item.state}")
        if item.state not in ("up", "degraded"):
            lines.append(f"  error: {_s(item.reason or item.last_error)}")
            continue
        trace = ", ".join("(first)" if c is None else json.dumps(_s(c, 40)) for c in item.page_trace)
        lines.append(f"  descriptors: {item.descriptors} in {item.pages} page(s): {trace}")
        names = ", ".join(tool.tool for tool in item.admitted)
        lines.append(f"  admitted ({len(item.admitted)}): {_s(names, 2000)}")
        lines.append(f"  rejected ({len(item.rejected)})" + (":" if item.rejected else ""))
        for rejected in item.rejected:
            tool = rejected.tool if rejected.tool is not None else "(no name)"
            lines.append(f"    {_s(tool, 130)}: {rejected.category}: {_s(rejected.reason)}")
        if item.enumeration is not None:
            lines.append(f"  hidden catalog: {_s(item.enumeration, 300)}")
        probe = item.validated_result
        if probe is None:
            lines.append(
                "  validated result: none (no [children.NAME.probe] and no read-only tool without "
                "required arguments)"
            )
        elif probe.outcome == "ok":
            shape = "structured content conforms" if probe.structured else "content only"
            lines.append(f"  validated result: {_s(probe.tool, 130)}: ok ({shape}; {probe.source})")
        else:
            why = f": {_s(probe.reason)}" if probe.reason else ""
            lines.append(f"  validated result: {_s(probe.tool, 130)}: {probe.outcome}{why} ({probe.source})")
    verdict = "passed" if report.passed else "not passed"
    lines.append(f"status: {report.status} ({verdict}; {len(report.problems)} problem(s))")
    return lines
