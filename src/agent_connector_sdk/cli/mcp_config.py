"""``--mcp-config FILE``: the servers an MCP client already knows, read from its own ``mcpServers`` file.

Every MCP client keeps its servers in one JSON shape, give or take a key:

* Claude Desktop, Claude Code (``.mcp.json``), Cursor (``~/.cursor/mcp.json``), Windsurf and FastMCP's
  ``MCPConfig``: ``{"mcpServers": {NAME: ENTRY}}`` (FastMCP also accepts the entries at the root);
* VS Code: ``{"servers": {NAME: ENTRY}, "inputs": [...]}`` in ``.vscode/mcp.json``, or under
  ``"mcp"`` in ``settings.json``.

An entry is stdio (``command``, ``args``, ``env``, ``cwd``) or remote (``url`` — Windsurf writes
``serverUrl`` — ``headers``, and a transport in ``type`` or ``transport``). Each entry is validated by
FastMCP's own ``MCPConfig`` model (``fastmcp.mcp_config``), after two translations it does not do:
VS Code's and Cursor's ``type`` for remote entries, and references to the environment.

References: ``${NAME}``, ``${env:NAME}`` (VS Code, Cursor) and ``${NAME:-default}`` (Claude Code) read
this process's environment; ``${workspaceFolder}`` is the folder holding ``.vscode`` (else the file's
folder) and ``${userHome}`` the home directory. They are expanded in ``command``, ``args``, ``env``,
``cwd``, ``url`` and ``headers`` only when connecting: what is shown (the report's address, errors)
is the entry as written, so a secret a reference stands for is never printed. A reference that
cannot be resolved (an unset variable, VS Code's ``${input:…}`` prompts) fails that one entry, named
by the variable; the other servers go on.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

from agent_connector_sdk.cli.errors import CliError
from agent_connector_sdk.review.configured import ConfiguredServer
from agent_connector_sdk.sanitize import sanitize_text

__all__ = ["ConfiguredServer", "gateway_children", "read_mcp_config", "select_servers"]

_REFERENCE: Final = re.compile(r"\$\{([^}]*)\}")
_VARIABLE: Final = re.compile(r"(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?", re.DOTALL)
_REMOTE_TYPES: Final = {"http": "http", "streamable-http": "http", "streamablehttp": "http", "sse": "sse"}
_MAX_FILE_BYTES: Final = 4 << 20


class _Unresolved(Exception):
    """A reference that cannot be expanded (its text names the variable, never a value)."""


def read_mcp_config(path: Path, environ: Mapping[str, str] | None = None) -> list[ConfiguredServer]:
    """Every server of an ``mcpServers``-style file, in the file's order. A file that cannot be read
    or holds no servers is one :class:`CliError`; an entry that cannot be used is its own
    :class:`ConfiguredServer` with ``error`` set."""
    try:
        with path.open("rb") as handle:
            data = handle.read(_MAX_FILE_BYTES + 1)
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise CliError(f"{path}: cannot read the MCP configuration ({reason})") from None
    if len(data) > _MAX_FILE_BYTES:
        raise CliError(f"{path}: an MCP configuration is at most {_MAX_FILE_BYTES >> 20} MiB")
    try:
        document = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        where = (
            f" (line {error.lineno}, column {error.colno})" if isinstance(error, json.JSONDecodeError) else ""
        )
        raise CliError(f"{path}: not valid JSON{where}; comments (JSONC) are not read") from None
    entries = _entries(document)
    if entries is None:
        raise CliError(
            f'{path}: no servers found: expected an "mcpServers" object (Claude Desktop, Cursor, '
            'FastMCP) or a "servers" object (VS Code)'
        )
    if not entries:
        raise CliError(f"{path}: the configuration lists no servers")
    source = os.environ if environ is None else environ
    folder = path.resolve().parent
    workspace = folder.parent if folder.name == ".vscode" else folder
    return [_server(str(name), entry, source, workspace) for name, entry in entries.items()]


def select_servers(servers: Sequence[ConfiguredServer], names: Sequence[str]) -> list[ConfiguredServer]:
    """The servers named with ``--server`` (all when none is named), in the order given."""
    if not names:
        return list(servers)
    by_name = {server.name: server for server in servers}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        known = ", ".join(sanitize_text(name, 60) for name in by_name)
        raise CliError(
            f"--server {sanitize_text(unknown[0], 60)}: not in the configuration (it has: {known})"
        )
    return [by_name[name] for name in dict.fromkeys(names)]


def _entries(document: Any) -> dict[str, Any] | None:
    if not isinstance(document, dict):
        return None
    for holder in (document, document.get("mcp")):
        if not isinstance(holder, dict):
            continue
        for key in ("mcpServers", "servers"):
            if isinstance(holder.get(key), dict):
                return dict(holder[key])
    # FastMCP's MCPConfig also takes server entries at the root.
    root = {k: v for k, v in document.items() if isinstance(v, dict) and ("command" in v or "url" in v)}
    return root or None


def _server(name: str, entry: Any, environ: Mapping[str, str], workspace: Path) -> ConfiguredServer:
    if not isinstance(entry, dict):
        return ConfiguredServer(name, "stdio", "?", error="the entry is not a JSON object")
    entry = dict(entry)
    if "url" not in entry and isinstance(entry.get("serverUrl"), str):
        entry["url"] = entry.pop("serverUrl")  # Windsurf
    remote = "url" in entry
    kind: Literal["stdio", "http"] = "http" if remote else "stdio"
    shown = _shown(entry, remote)
    declared = entry.get("type", entry.get("transport"))
    if remote:
        transport = _REMOTE_TYPES.get(str(declared).lower()) if declared is not None else "http"
        if transport is None:
            return ConfiguredServer(name, kind, shown, error=f"unknown transport type {_quoted(declared)}")
        if transport == "sse" or (declared is None and re.search(r"/sse(/|\?|$)", str(entry["url"]))):
            return ConfiguredServer(
                name,
                kind,
                shown,
                error="an SSE server (the 2024 transport): only Streamable HTTP is reviewed",
            )
        entry["transport"] = "http"
        entry.pop("type", None)
    elif declared not in (None, "stdio"):
        return ConfiguredServer(name, kind, shown, error=f"transport {_quoted(declared)} without a url")
    if "envFile" in entry:
        return ConfiguredServer(
            name, kind, shown, error="envFile is not read here: pass its variables with --env-pass NAME"
        )
    try:
        expanded = _expand_entry(entry, environ, workspace)
    except _Unresolved as unresolved:
        return ConfiguredServer(name, kind, shown, error=str(unresolved))
    from fastmcp.mcp_config import MCPConfig, RemoteMCPServer, StdioMCPServer
    from pydantic import ValidationError

    try:
        parsed = MCPConfig.model_validate({"mcpServers": {name: expanded}}).mcpServers[name]
    except ValidationError as invalid:
        return ConfiguredServer(name, kind, shown, error=_first_problem(invalid, remote))
    if isinstance(parsed, RemoteMCPServer):
        if parsed.auth is not None and not isinstance(parsed.auth, str):
            return ConfiguredServer(name, kind, shown, error="auth must be a bearer token string")
        if parsed.auth == "oauth":
            return ConfiguredServer(
                name, kind, shown, error='auth "oauth" needs a browser login: give a bearer token instead'
            )
        url = parsed.url
        if not re.match(r"https?://[^\s/]+", url):
            return ConfiguredServer(name, kind, shown, error="the url is not an http(s) URL")
        headers = {str(key): str(value) for key, value in parsed.headers.items()}
        if any(any(c in f"{k}{v}" for c in "\r\n\0") for k, v in headers.items()):
            return ConfiguredServer(name, kind, shown, error="a header holds a line break or NUL")
        token = parsed.auth if isinstance(parsed.auth, str) else None
        return ConfiguredServer(name, kind, shown, url=url, headers=headers, token=token)
    assert isinstance(parsed, StdioMCPServer)
    if not parsed.command.strip():
        return ConfiguredServer(name, kind, shown, error="the command is empty")
    env = {str(key): str(value) for key, value in parsed.env.items()}
    if any("\0" in f"{k}{v}" or "=" in k or not k for k, v in env.items()):
        return ConfiguredServer(name, kind, shown, error="env has a name with '=' or a NUL byte")
    cwd = str(workspace / parsed.cwd) if parsed.cwd is not None else None
    return ConfiguredServer(name, kind, shown, command=(parsed.command, *parsed.args), env=env, cwd=cwd)


def _shown(entry: Mapping[str, Any], remote: bool) -> str:
    if remote:
        return sanitize_text(str(entry.get("url")), 300)
    command = entry.get("command")
    args = entry.get("args")
    words = [str(word) for word in (command, *(args if isinstance(args, list) else [])) if word is not None]
    return sanitize_text(shlex.join(words), 300) if words else "?"


def _quoted(value: Any) -> str:
    return json.dumps(sanitize_text(str(value), 40))


def _first_problem(invalid: Any, remote: bool) -> str:
    """pydantic's first complaint about the shape the entry meant (it has a url: remote; else stdio),
    by field: never the input value."""
    meant = "RemoteMCPServer" if remote else "StdioMCPServer"
    for problem in invalid.errors(include_input=False, include_url=False):
        location = problem["loc"]
        if len(location) > 2 and location[2] == meant:
            where = ".".join(str(part) for part in location[3:]) or "the entry"
            return f"{where}: {problem['msg']}"
    return "the entry is neither a stdio server (command) nor a remote one (url)"


def _expand_entry(entry: dict[str, Any], environ: Mapping[str, str], workspace: Path) -> dict[str, Any]:
    expanded = dict(entry)
    for key in ("command", "cwd", "url", "auth"):
        if isinstance(entry.get(key), str):
            expanded[key] = _expand(entry[key], environ, workspace, key)
    if isinstance(entry.get("args"), list):
        expanded["args"] = [
            _expand(arg, environ, workspace, "args") if isinstance(arg, str) else arg for arg in entry["args"]
        ]
    for key in ("env", "headers"):
        if isinstance(entry.get(key), dict):
            expanded[key] = {
                name: _expand(value, environ, workspace, f"{key}.{name}") if isinstance(value, str) else value
                for name, value in entry[key].items()
            }
    return expanded


def _expand(text: str, environ: Mapping[str, str], workspace: Path, where: str) -> str:
    def replace(match: re.Match[str]) -> str:
        inner = match.group(1)
        if inner == "workspaceFolder":
            return str(workspace)
        if inner == "userHome":
            return str(Path.home())
        if inner.startswith("input:"):
            raise _Unresolved(
                f"{where}: ${{{sanitize_text(inner, 60)}}} is a VS Code prompt, not available here: "
                "write ${env:NAME} and set NAME"
            )
        variable = _VARIABLE.fullmatch(inner)
        if variable is None:
            raise _Unresolved(
                f"{where}: ${{{sanitize_text(inner, 60)}}} is not a reference this reader knows"
            )
        name, default = variable.group(1), variable.group(2)
        value = environ.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                raise _Unresolved(f"{where}: environment variable {name} is not set")
            return default
        return value

    return _REFERENCE.sub(replace, text)


def gateway_children(servers: Sequence[ConfiguredServer]) -> tuple[Any, ...]:
    """``gateway --mcp-config``: each server as a :class:`~agent_connector_sdk.gateway._config.ChildSpec`.
    The gateway fails closed on its configuration: an unusable entry, or a name the gateway cannot
    publish tools under, is one :class:`CliError` naming the server."""
    from agent_connector_sdk.gateway import ChildSpec, GatewayError

    children = []
    for server in servers:
        name = sanitize_text(server.name, 60)
        if server.error is not None:
            raise CliError(f"--mcp-config: server {name}: {server.error}")
        if re.fullmatch(r"[A-Za-z0-9-]{1,32}", server.name) is None:
            raise CliError(
                f"--mcp-config: server {name}: a gateway child name is 1-32 characters of A-Z, a-z, 0-9 and "
                "'-' (its tools are published as NAME_tool): rename it in the file"
            )
        headers = dict(server.headers)
        if server.token is not None:
            headers.setdefault("Authorization", f"Bearer {server.token}")
        try:
            children.append(
                ChildSpec(
                    name=server.name,
                    url=server.url,
                    command=server.command,
                    header_values=headers,
                    env_values=dict(server.env),
                    cwd=server.cwd,
                )
            )
        except GatewayError as error:
            raise CliError(f"--mcp-config: {error.message}") from None
    return tuple(children)
