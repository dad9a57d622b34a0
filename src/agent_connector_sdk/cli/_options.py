"""The commands' options (cyclopts reads the help from the annotation).

Option types that several commands share: one declaration per option, so the same ``--port`` says
the same thing under ``serve`` and ``gateway``; a command's default stays at its own parameter
(``--namespace`` is ``default`` for ``state`` and ``gateway`` for the gateway). And the option sets of
``review`` and ``serve``, each one flattened dataclass (:class:`ReviewArguments`,
:class:`ServeArguments`): the command's help and parsing are exactly those of one parameter per
field, and the command's body reads one value instead of thirty parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from cyclopts import Parameter

__all__ = [
    "DEFAULT_MAX_UPSTREAM_BYTES",
    "ConfigServers",
    "Host",
    "Namespace",
    "Port",
    "ReplicaId",
    "ReviewArguments",
    "ServeArguments",
]

Host = Annotated[str, Parameter(help="address to bind")]
Port = Annotated[int, Parameter(help="port to bind (0: any free port; the real one is printed)")]
ReplicaId = Annotated[
    str | None, Parameter(help="name this replica (sent as the Agent-Connector-Replica header)")
]
Namespace = Annotated[str, Parameter(help="the catalog namespace the replicas share")]
ConfigServers = Annotated[
    list[str] | None,
    Parameter(help="with --mcp-config: only this server of the file (repeatable)", negative=()),
]

DEFAULT_MAX_UPSTREAM_BYTES = 8 * 1024 * 1024
"""connectors.upstream_size.DEFAULT_MAX_UPSTREAM_BYTES, without importing the HTTP stack for `--help`
(tests/cli/test_openapi_document_cli.py keeps the two equal)."""


@Parameter(name="*")  # flattened: each field is one option of `review`, as if it were a parameter
@dataclass(frozen=True, kw_only=True)
class ReviewArguments:
    """``review``'s options (the server itself is the command's positional ``TARGET``)."""

    stdio: Annotated[str | None, Parameter(help="stdio server command line, e.g. 'python server.py'")] = None
    descriptor: Annotated[
        list[Path] | None,
        Parameter(help="review tool descriptors from a JSON/YAML file, offline (repeatable)", negative=()),
    ] = None
    emit_tests: Annotated[
        Path | None, Parameter(help="with --descriptor: write a pytest file of concrete failure cases here")
    ] = None
    demo: Annotated[
        bool,
        Parameter(help="start the contract lab on an ephemeral loopback port, review it, stop", negative=()),
    ] = False
    json_output: Annotated[
        bool,
        Parameter(
            name="--json", help="print the report as JSON (schema: review-report.schema.json)", negative=()
        ),
    ] = False
    strict: Annotated[
        bool,
        Parameter(
            help="strict profile: project rules reject too (not only spec MUST rules); exit 1 when "
            "anything was rejected or failed",
            negative=(),
        ),
    ] = False
    timeout: Annotated[float, Parameter(help="seconds to wait for each answer")] = 30.0
    deadline: Annotated[
        float, Parameter(help="seconds for the whole review: connect, every page, search, disclosures, call")
    ] = 300.0
    header: Annotated[
        list[str] | None,
        Parameter(help="extra HTTP header 'Name: value' on every request (repeatable)", negative=()),
    ] = None
    token: Annotated[str | None, Parameter(help="bearer token for the server")] = None
    search: Annotated[
        list[str] | None,
        Parameter(help="search-tool pattern to find hidden tools (repeatable; default '.*')", negative=()),
    ] = None
    call: Annotated[str | None, Parameter(help="invoke this tool once, through every host gate")] = None
    arguments: Annotated[str | None, Parameter(help="JSON object of arguments for --call")] = None
    descriptors: Annotated[bool, Parameter(help="also print every descriptor in full", negative=())] = False
    pin: Annotated[
        Path | None, Parameter(help="write the disclosed tools' source_sha256 pins to this JSON file")
    ] = None
    pins: Annotated[
        Path | None,
        Parameter(help="refuse disclosures whose source_sha256 this pin file (from --pin) does not list"),
    ] = None
    json_schema: Annotated[
        bool, Parameter(help="print the JSON Schema of the --json report and exit", negative=())
    ] = False
    write_lock: Annotated[
        Path | None,
        Parameter(help="approve every reviewed tool contract: write this contract lock file (per server)"),
    ] = None
    lock: Annotated[
        Path | None,
        Parameter(
            help="compare the tools with this contract lock: unchanged/changed/added/removed/renamed, "
            "each change with its location, old and new value and class"
        ),
    ] = None
    approve: Annotated[
        list[str] | None,
        Parameter(
            help="with --lock: approve this tool's drift into the lock file, TOOL or TOOL@DIFF (DIFF: the "
            "drift's digest as the report shows it, or a prefix); only those entries change (repeatable)",
            negative=(),
        ),
    ] = None
    fail_on_any_drift: Annotated[
        bool,
        Parameter(
            help="with --lock: any drift is a finding (--strict exits 1), cosmetic and narrowing ones "
            "too; by default every change a person must re-approve is (escalation, breaking, compatible)",
            negative=(),
        ),
    ] = False
    allow_compatible: Annotated[
        bool,
        Parameter(
            help="with --lock: compatible drift (reworded text the model reads, a non-boolean default) is "
            "not a finding; only escalation and breaking drift fail --strict (an opt-out: by default a "
            "lock is an approval, and every change a person must re-approve fails)",
            negative=(),
        ),
    ] = False
    sarif: Annotated[
        Path | None, Parameter(help="also write the findings as SARIF 2.1.0 to this file (code scanning)")
    ] = None
    env: Annotated[
        list[str] | None,
        Parameter(
            help="stdio: set NAME=VALUE in the server's environment (repeatable; the server gets only "
            "HOME, PATH, USER... otherwise)",
            negative=(),
        ),
    ] = None
    env_pass: Annotated[
        list[str] | None,
        Parameter(help="stdio: pass this variable of yours on to the server (repeatable)", negative=()),
    ] = None
    mcp_config: Annotated[
        Path | None,
        Parameter(
            help="review every server of an MCP client's mcpServers JSON file (Claude Desktop, Cursor, "
            "VS Code, FastMCP); ${VAR} references are read from the environment"
        ),
    ] = None
    server: ConfigServers = None
    concurrency: Annotated[int, Parameter(help="with --mcp-config: servers reviewed at once (1-16)")] = 4


@Parameter(name="*")  # flattened: each field is one option of `serve`
@dataclass(frozen=True, kw_only=True)
class ServeArguments:
    """``serve``'s options."""

    openapi: Annotated[
        Path | None,
        Parameter(help="serve this OpenAPI 3.0/3.1 document (JSON or YAML) instead of the contract lab"),
    ] = None
    upstream: Annotated[
        str | None, Parameter(help="base URL the OpenAPI tools call (default: the document's servers[0].url)")
    ] = None
    host: Host = "127.0.0.1"
    port: Port = 8000
    no_auth: Annotated[bool, Parameter(help="lab: serve without the demo bearer tokens", negative=())] = False
    state: Annotated[
        str | None,
        Parameter(
            help="run as one replica sharing this state (memory:// or redis://HOST:PORT/DB; "
            "default: $AGENT_CONNECTOR_STATE); see docs/deploy.md"
        ),
    ] = None
    replica_id: ReplicaId = None
    upstream_errors: Annotated[
        Literal["generic", "echo"],
        Parameter(
            help="--openapi: what a caller learns when the upstream answers an error status: "
            "generic (the status only; the body goes to the log, bounded) or echo (also a bounded "
            "excerpt of the body, which may carry secrets)"
        ),
    ] = "generic"
    auth_config: Annotated[
        Path | None,
        Parameter(
            help="--openapi: a TOML file whose [auth] table turns on JWT authentication (JWKS URL or "
            "public key file, issuer, audience) and scopes per tool; see docs/gateway.md"
        ),
    ] = None
    trusted_proxies: Annotated[
        list[str] | None,
        Parameter(
            help="addresses or CIDR blocks of proxies in front of this server (e.g. the nginx host): "
            "only their X-Forwarded-For names the caller for rate limits and in-flight caps; "
            "everyone else is keyed by peer address"
        ),
    ] = None
    read_timeout: Annotated[
        float, Parameter(help="seconds a connection may take to send a request's headers, and its body")
    ] = 10.0
    max_in_flight: Annotated[int, Parameter(help="requests served at once (more: HTTP 503)")] = 64
    max_in_flight_per_caller: Annotated[
        int, Parameter(help="requests one caller may have in flight (more: HTTP 429)")
    ] = 8
    max_upstream_bytes: Annotated[
        int,
        Parameter(
            help="--openapi: largest upstream answer a tool reads, in decoded bytes (default 8 MiB); "
            "a larger one is an upstream_too_large error result"
        ),
    ] = DEFAULT_MAX_UPSTREAM_BYTES
    allow_duplicate_operation_ids: Annotated[
        bool,
        Parameter(
            help="--openapi: serve a document that reuses an operationId (refused by default: OpenAPI "
            "requires uniqueness); every tool derived from the ID inherits its [auth.require] scopes",
            negative=(),
        ),
    ] = False
    strict_refs: Annotated[
        bool,
        Parameter(
            help="--openapi: refuse the whole document when a $ref resolves to nothing (default: leave "
            "out only the operations that reach one, each named in a warning)",
            negative=(),
        ),
    ] = False
    insecure_open_bind: Annotated[
        bool,
        Parameter(
            help="serve WITHOUT authentication on a non-loopback --host: anyone who can reach the "
            "address may call every tool, and no Host/Origin check applies (refused otherwise)",
            negative=(),
        ),
    ] = False
