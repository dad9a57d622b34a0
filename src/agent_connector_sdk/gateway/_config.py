"""What the gateway is told: its children and its timeouts (pure: parsing and validation only).

A child is ``NAME=URL`` (Streamable HTTP) or ``NAME=-- CMD ARGS…`` (a stdio server the gateway starts),
on the command line (``--child``) or in a TOML file (``--config``)::

    [gateway]
    lock = "gateway.lock"      # optional: publish only approved contracts (relative to this file)
    call_timeout = 10          # seconds a child may take to answer one call
    connect_timeout = 10       # seconds to connect and list a child
    refresh = 60               # seconds between re-lists (a list_changed notification re-lists sooner)
    relist_interval = 10       # at least this many seconds between two re-lists of one child
    degrade_after = 3          # consecutive call timeouts that mark a child degraded
    shutdown_grace = 3         # seconds calls in flight get after SIGTERM/Ctrl-C (whole seconds)

    [auth]                     # optional: JWT authentication, see .auth
    issuer = "https://login.example.com/"
    audience = "agent-connector"
    public_key_file = "issuer-public.pem"
    require = { weather = ["weather:read"] }

    [children.weather]
    url = "https://weather.example/mcp"
    headers_env = { Authorization = "WEATHER_AUTHORIZATION" }   # header -> environment variable

    [children.files]
    command = ["python", "files_server.py"]
    env_env = { FILES_TOKEN = "GATEWAY_FILES_TOKEN" }           # child env var -> our env var

    [children.files.probe]     # what ``--check`` calls to obtain one validated result
    tool = "read"
    arguments = { path = "README.md" }

Credentials are *references*: the configuration names environment variables, and only
:func:`resolve_credentials` reads them, at connect time. Their values are never stored in a spec,
printed, logged or put in an error (a missing variable is named, its value never). The caller's own
credentials are never forwarded to a child: a child's HTTP headers are exactly what its spec says.

Children can also come from an MCP client's ``mcpServers`` file (``gateway --mcp-config``, read by
:mod:`agent_connector_sdk.cli.mcp_config`): such a file holds its ``env`` and ``headers`` values
itself (its ``${VAR}`` references expanded when it is read), so they arrive as ``env_values`` and
``header_values`` — held in memory, left out of the spec's ``repr``, never printed or logged.

Child names are ``[A-Za-z0-9-]{1,32}`` — no ``_``, so ``NAME_tool`` (FastMCP's mount convention) splits
back into one child and one tool, and two children can never publish the same gateway name.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from agent_connector_sdk.gateway._auth import AuthSettings, auth_from_table
from agent_connector_sdk.gateway._errors import GatewayError
from agent_connector_sdk.gateway._generations import RESERVED_TOOL_NAMES
from agent_connector_sdk.gateway._toml import read_toml

__all__ = [
    "ChildSpec",
    "GatewayConfig",
    "Probe",
    "check_credentials",
    "load_config",
    "parse_child",
    "resolve_credentials",
]

_CHILD_NAME: Final = re.compile(r"[A-Za-z0-9-]{1,32}")
_HEADER_NAME: Final = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}")
_ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_FORBIDDEN_HEADERS: Final = frozenset(
    {"host", "content-length", "content-type", "mcp-protocol-version", "mcp-method", "mcp-name"}
)


@dataclass(frozen=True, slots=True)
class Probe:
    """The call ``gateway --check`` makes to a child for its one validated result: the child's own tool
    name (not the namespaced one) and its arguments. Arguments are the operator's choice of harmless
    input; they are sent, never printed, logged or put in the evidence."""

    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ChildSpec:
    """One child server: ``url`` (Streamable HTTP) xor ``command`` (stdio). ``headers_env`` maps an HTTP
    header to the environment variable holding its value; ``env_env`` maps a stdio child's environment
    variable to ours. Values are read only when connecting (:func:`resolve_credentials`). ``probe``:
    the call ``--check`` makes (default: a tool that claims to be read-only and needs no argument)."""

    name: str
    url: str | None = None
    command: tuple[str, ...] = ()
    headers_env: Mapping[str, str] = field(default_factory=dict)
    env_env: Mapping[str, str] = field(default_factory=dict)
    header_values: Mapping[str, str] = field(default_factory=dict, repr=False)
    env_values: Mapping[str, str] = field(default_factory=dict, repr=False)
    cwd: str | None = None
    probe: Probe | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or _CHILD_NAME.fullmatch(self.name) is None:
            raise GatewayError(
                "invalid_config", "a child name is 1-32 characters of A-Z, a-z, 0-9 and '-' (no '_')"
            )
        if (self.url is None) == (not self.command):
            raise GatewayError("invalid_config", f"child {self.name}: give exactly one of a URL or a command")
        if self.url is not None and not re.match(r"https?://[^\s]+\Z", self.url):
            raise GatewayError("invalid_config", f"child {self.name}: the URL must be http:// or https://")
        if self.command and not all(isinstance(part, str) and part for part in self.command):
            raise GatewayError("invalid_config", f"child {self.name}: the command has an empty part")
        for header, variable in self.headers_env.items():
            if not isinstance(header, str) or _HEADER_NAME.fullmatch(header) is None:
                raise GatewayError("invalid_config", f"child {self.name}: a header name is not a token")
            if header.lower() in _FORBIDDEN_HEADERS or header.lower().startswith("mcp-param-"):
                raise GatewayError(
                    "invalid_config", f"child {self.name}: header {header} is the gateway's to set"
                )
            _check_env_name(self.name, variable)
        if self.headers_env and self.url is None:
            raise GatewayError("invalid_config", f"child {self.name}: headers_env needs a URL child")
        for header, value in self.header_values.items():
            if _HEADER_NAME.fullmatch(header) is None or any(c in value for c in "\r\n\0"):
                raise GatewayError(
                    "invalid_config",
                    f"child {self.name}: a header is not a token, or its value holds a line break",
                )
            if header.lower() in _FORBIDDEN_HEADERS or header.lower().startswith("mcp-param-"):
                raise GatewayError(
                    "invalid_config", f"child {self.name}: header {header} is the gateway's to set"
                )
        if self.header_values and self.url is None:
            raise GatewayError("invalid_config", f"child {self.name}: headers need a URL child")
        for key in self.env_values:
            _check_env_name(self.name, key)
        if (self.env_values or self.cwd is not None) and not self.command:
            raise GatewayError("invalid_config", f"child {self.name}: env and cwd need a command child")
        for key, variable in self.env_env.items():
            _check_env_name(self.name, key)
            _check_env_name(self.name, variable)
        if self.env_env and not self.command:
            raise GatewayError("invalid_config", f"child {self.name}: env_env needs a command child")
        if self.probe is not None:
            tool, arguments = self.probe.tool, self.probe.arguments
            if not isinstance(tool, str) or not 1 <= len(tool) <= 128:
                raise GatewayError("invalid_config", f"child {self.name}: probe tool is a tool name")
            if not isinstance(arguments, Mapping):
                raise GatewayError("invalid_config", f"child {self.name}: probe arguments are a table")

    @property
    def transport(self) -> str:
        return "streamable_http" if self.url is not None else "stdio"


def _check_env_name(child: str, name: Any) -> None:
    if not isinstance(name, str) or _ENV_NAME.fullmatch(name) is None:
        raise GatewayError("invalid_config", f"child {child}: not an environment variable name")


@dataclass(frozen=True, slots=True)
class GatewayConfig:
    """The children and the gateway's timeouts (seconds). ``max_backoff`` caps reconnect waits;
    ``relist_interval`` is the least time between two re-lists of one child (a ``list_changed`` storm
    is coalesced into at most one re-list per interval); ``degrade_after`` consecutive call timeouts
    mark a child ``degraded``; ``auth`` (:class:`~._auth.AuthSettings`) turns on JWT authentication and
    per-child/tool scopes."""

    children: tuple[ChildSpec, ...]
    call_timeout: float = 10.0
    connect_timeout: float = 10.0
    refresh: float = 60.0
    max_backoff: float = 30.0
    auth: AuthSettings | None = None
    relist_interval: float = 10.0
    degrade_after: int = 3
    shutdown_grace: int = 3
    """Whole seconds calls in flight get to finish on SIGTERM/Ctrl-C before they are cancelled and
    the children closed (0: none)."""
    lock: Path | None = None
    """A contract lock file (``review --write-lock``): only approved child contracts are published
    (see :mod:`._locks`)."""

    def __post_init__(self) -> None:
        names = [child.name for child in self.children]
        if not names:
            raise GatewayError("invalid_config", "the gateway needs at least one child")
        duplicate = sorted({name for name in names if names.count(name) > 1})
        if duplicate:
            raise GatewayError("invalid_config", f"child {duplicate[0]} is given twice")
        for knob in ("call_timeout", "connect_timeout", "refresh", "max_backoff", "relist_interval"):
            value = getattr(self, knob)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 86_400:
                raise GatewayError("invalid_config", f"{knob} must be a number of seconds in (0, 86400]")
        grace = self.shutdown_grace
        if isinstance(grace, bool) or not isinstance(grace, int) or not 0 <= grace <= 600:
            raise GatewayError(
                "invalid_config", "shutdown_grace must be a whole number of seconds in [0, 600]"
            )
        degrade = self.degrade_after
        if isinstance(degrade, bool) or not isinstance(degrade, int) or not 1 <= degrade <= 1000:
            raise GatewayError("invalid_config", "degrade_after must be a whole number of calls in [1, 1000]")
        if self.auth is not None:
            # A requirement names a child (all its tools) or one gateway tool name `child_tool`.
            # Which tools exist is known once the children are listed (Gateway.start checks again).
            self.auth.check_names(
                names, prefixes=[f"{name}_" for name in names], reserved=RESERVED_TOOL_NAMES
            )


def parse_child(text: str) -> ChildSpec:
    """``NAME=URL`` or ``NAME=-- CMD ARGS…`` (the command split like a POSIX shell would)."""
    name, sep, rest = text.partition("=")
    if not sep or not rest.strip():
        raise GatewayError("invalid_config", "--child is NAME=URL or 'NAME=-- CMD ARGS...'")
    rest = rest.strip()
    if rest.startswith("--"):
        try:
            command = tuple(shlex.split(rest[2:]))
        except ValueError:
            raise GatewayError("invalid_config", f"child {name}: the command has unbalanced quotes") from None
        if not command:
            raise GatewayError("invalid_config", f"child {name}: nothing after '--'")
        return ChildSpec(name=name, command=command)
    return ChildSpec(name=name, url=rest)


def _mapping(child: str, value: Any, key: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise GatewayError("invalid_config", f"child {child}: {key} maps names to variable names")
    return dict(value)


def _seconds(table: Mapping[str, Any], key: str, default: float) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise GatewayError("invalid_config", f"[gateway] {key} must be a number of seconds")
    return float(value)


def load_config(path: Path, extra: Sequence[ChildSpec] = ()) -> GatewayConfig:
    """Read a TOML configuration (see the module docstring); ``extra`` children (from ``--child``) are
    added to the file's. Every problem is one ``GatewayError("invalid_config")`` naming the key."""
    data = read_toml(path)
    unknown = sorted(set(data) - {"gateway", "children", "auth"})
    if unknown:
        raise GatewayError("invalid_config", f"{path.name}: unknown table [{unknown[0]}]")
    table = data.get("gateway", {})
    children_table = data.get("children", {})
    if not isinstance(table, dict) or not isinstance(children_table, dict):
        raise GatewayError("invalid_config", f"{path.name}: [gateway] and [children.*] must be tables")
    known = {
        "call_timeout",
        "connect_timeout",
        "refresh",
        "max_backoff",
        "relist_interval",
        "degrade_after",
        "shutdown_grace",
        "lock",
    }
    if set(table) - known:
        raise GatewayError("invalid_config", f"[gateway] has an unknown key {sorted(set(table) - known)[0]}")
    children: list[ChildSpec] = []
    for name, spec in children_table.items():
        if not isinstance(spec, dict):
            raise GatewayError("invalid_config", f"[children.{name}] must be a table")
        allowed = {"url", "command", "headers_env", "env_env", "probe"}
        if set(spec) - allowed:
            raise GatewayError(
                "invalid_config", f"[children.{name}] has an unknown key {sorted(set(spec) - allowed)[0]}"
            )
        command = spec.get("command", ())
        if isinstance(command, str):
            command = shlex.split(command)
        if not isinstance(command, list | tuple):
            raise GatewayError("invalid_config", f"[children.{name}] command is a list of strings")
        children.append(
            ChildSpec(
                name=str(name),
                url=spec.get("url"),
                command=tuple(command),
                headers_env=_mapping(name, spec.get("headers_env"), "headers_env"),
                env_env=_mapping(name, spec.get("env_env"), "env_env"),
                probe=_probe(name, spec.get("probe")),
            )
        )
    auth_table = data.get("auth")
    if auth_table is not None and not isinstance(auth_table, dict):
        raise GatewayError("invalid_config", f"{path.name}: [auth] must be a table")
    return GatewayConfig(
        auth=None if auth_table is None else auth_from_table(auth_table, path.parent),
        children=(*children, *extra),
        call_timeout=_seconds(table, "call_timeout", 10.0),
        connect_timeout=_seconds(table, "connect_timeout", 10.0),
        refresh=_seconds(table, "refresh", 60.0),
        max_backoff=_seconds(table, "max_backoff", 30.0),
        relist_interval=_seconds(table, "relist_interval", 10.0),
        degrade_after=table.get("degrade_after", 3),
        shutdown_grace=table.get("shutdown_grace", 3),
        lock=_lock_path(table.get("lock"), path.parent),
    )


def _lock_path(value: Any, base: Path) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise GatewayError("invalid_config", "[gateway] lock is the path of a contract lock file")
    return base / value


def _probe(child: str, table: Any) -> Probe | None:
    if table is None:
        return None
    if not isinstance(table, dict) or set(table) - {"tool", "arguments"} or "tool" not in table:
        raise GatewayError(
            "invalid_config", f"[children.{child}.probe] holds tool = NAME and optionally arguments = {{...}}"
        )
    arguments = table.get("arguments", {})
    if not isinstance(arguments, dict):
        raise GatewayError("invalid_config", f"[children.{child}.probe] arguments must be a table")
    return Probe(tool=table["tool"], arguments=arguments)


def resolve_credentials(
    spec: ChildSpec, environ: Mapping[str, str] | None = None
) -> tuple[dict[str, str], dict[str, str]]:
    """The child's HTTP headers and stdio environment, read from the referenced variables now.

    A missing variable is ``GatewayError("invalid_config")`` naming the variable (never a value)."""
    source = os.environ if environ is None else environ
    headers: dict[str, str] = dict(spec.header_values)
    env: dict[str, str] = dict(spec.env_values)
    for target, mapping in ((headers, spec.headers_env), (env, spec.env_env)):
        for key, variable in mapping.items():
            value = source.get(variable)
            if value is None:
                raise GatewayError(
                    "invalid_config", f"child {spec.name}: environment variable {variable} is not set"
                )
            if target is headers and any(c in value for c in "\r\n\0"):
                raise GatewayError(
                    "invalid_config", f"child {spec.name}: {variable} holds a line break or NUL"
                )
            target[key] = value
    return headers, env


def check_credentials(config: GatewayConfig, environ: Mapping[str, str] | None = None) -> None:
    """Refuse at start-up what no reconnect can mend: a credential variable a child's spec names that
    is not set (``GatewayError("invalid_config")`` naming the child and the variable, never a value)."""
    for spec in config.children:
        resolve_credentials(spec, environ)
