"""``review --mcp-config FILE``: the files MCP clients already keep, as each client writes them.

Parsing is checked on realistic files of Claude Desktop, Cursor, VS Code (``.vscode/mcp.json`` and
``settings.json``), Claude Code, Windsurf and FastMCP's ``MCPConfig``; the review end to end on a real
Streamable HTTP lab, a real stdio server that needs a key, a server that is down and entries that
cannot be used — one JSON document (valid against the published schema), one SARIF log (valid against
the official schema), one lock, and no secret anywhere.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft4Validator, Draft202012Validator, FormatChecker  # type: ignore[import-untyped]

from agent_connector_sdk.cli import main
from agent_connector_sdk.cli.errors import CliError
from agent_connector_sdk.cli.mcp_config import ConfiguredServer, read_mcp_config, select_servers
from agent_connector_sdk.demo.lab_service import OPERATOR_TOKEN, lab_service_app
from tests.support.cli import ROOT
from tests.support.http_server import serve_asgi
from tests.support.sarif_schema import official_sarif_schema

SECRET = "ghp_0123456789SECRETabcdef"
KEYED = str(Path(ROOT) / "tests" / "support" / "stdio_needs_env.py")
ENVIRON = {"GITHUB_TOKEN": SECRET, "LAB_TOKEN": OPERATOR_TOKEN, "EMPTY": ""}


def _write(path: Path, document: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


def _by_name(servers: list[ConfiguredServer]) -> dict[str, ConfiguredServer]:
    return {server.name: server for server in servers}


# --------------------------------------------------------------------------- each client's file
def test_claude_desktop(tmp_path: Path) -> None:
    # claude_desktop_config.json: stdio only, npx/uvx commands, literal or referenced env values.
    path = _write(
        tmp_path / "claude_desktop_config.json",
        {
            "mcpServers": {
                "filesystem": {
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"],
                },
                "github": {
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-github"],
                    "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"},
                },
                "time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone=Europe/Zurich"]},
            },
            "globalShortcut": "Ctrl+Space",
        },
    )
    servers = _by_name(read_mcp_config(path, ENVIRON))
    assert list(servers) == ["filesystem", "github", "time"]
    github = servers["github"]
    assert github.error is None and github.kind == "stdio"
    assert github.command == ("npx", "-y", "@modelcontextprotocol/server-github")
    assert github.env == {"GITHUB_PERSONAL_ACCESS_TOKEN": SECRET}
    assert github.shown == "npx -y @modelcontextprotocol/server-github"
    assert servers["time"].shown == "uvx mcp-server-time --local-timezone=Europe/Zurich"


def test_cursor(tmp_path: Path) -> None:
    # ~/.cursor/mcp.json: stdio with "type", remote with url + headers, ${env:NAME} references.
    path = _write(
        tmp_path / ".cursor" / "mcp.json",
        {
            "mcpServers": {
                "linear": {
                    "url": "https://mcp.linear.app/mcp",
                    "headers": {"Authorization": "Bearer ${env:GITHUB_TOKEN}"},
                },
                "local": {
                    "type": "stdio",
                    "command": "python",
                    "args": ["server.py", "--token", "${env:GITHUB_TOKEN}"],
                },
                "sse-era": {"url": "https://example.com/sse"},
            }
        },
    )
    servers = _by_name(read_mcp_config(path, ENVIRON))
    linear = servers["linear"]
    assert linear.kind == "http" and linear.url == "https://mcp.linear.app/mcp"
    assert linear.headers == {"Authorization": f"Bearer {SECRET}"}
    local = servers["local"]
    assert local.command == ("python", "server.py", "--token", SECRET)
    assert local.shown == "python server.py --token '${env:GITHUB_TOKEN}'"  # as written: no secret
    assert servers["sse-era"].error is not None and "SSE" in servers["sse-era"].error


def test_vscode_workspace_file_and_settings(tmp_path: Path) -> None:
    # .vscode/mcp.json: "servers", "inputs", "type": "http" | "stdio", ${workspaceFolder}, ${input:…}.
    path = _write(
        tmp_path / "project" / ".vscode" / "mcp.json",
        {
            "inputs": [{"type": "promptString", "id": "api-key", "description": "API key", "password": True}],
            "servers": {
                "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"},
                "local": {
                    "type": "stdio",
                    "command": "${workspaceFolder}/.venv/bin/python",
                    "args": ["server.py"],
                    "cwd": "${workspaceFolder}",
                    "env": {"API_KEY": "${input:api-key}"},
                },
                "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
            },
        },
    )
    servers = _by_name(read_mcp_config(path, ENVIRON))
    assert servers["github"].kind == "http" and servers["github"].error is None
    local = servers["local"]
    assert local.error is not None and "${input:api-key} is a VS Code prompt" in local.error
    assert servers["memory"].error is None
    workspace = _write(
        tmp_path / "project" / ".vscode" / "settings.json",
        {
            "editor.tabSize": 4,
            "mcp": {
                "servers": {
                    "local": {
                        "type": "stdio",
                        "command": "${workspaceFolder}/run.sh",
                        "cwd": "${workspaceFolder}",
                    }
                }
            },
        },
    )
    (local,) = read_mcp_config(workspace, ENVIRON)
    folder = str((tmp_path / "project").resolve())
    assert local.command == (f"{folder}/run.sh",) and local.cwd == folder
    assert local.shown == "'${workspaceFolder}/run.sh'"


def test_claude_code_windsurf_and_fastmcp(tmp_path: Path) -> None:
    claude_code = _write(
        tmp_path / ".mcp.json",
        {
            "mcpServers": {
                "api": {"type": "http", "url": "${API_BASE:-http://127.0.0.1:8000}/mcp"},
                "empty-default": {"type": "http", "url": "${EMPTY:-http://127.0.0.1:9000}/mcp"},
            }
        },
    )
    servers = _by_name(read_mcp_config(claude_code, ENVIRON))
    assert servers["api"].url == "http://127.0.0.1:8000/mcp"
    assert servers["empty-default"].url == "http://127.0.0.1:9000/mcp"
    windsurf = _write(
        tmp_path / "mcp_config.json", {"mcpServers": {"remote": {"serverUrl": "https://example.com/mcp"}}}
    )
    (remote,) = read_mcp_config(windsurf, ENVIRON)
    assert remote.kind == "http" and remote.url == "https://example.com/mcp"
    fastmcp = _write(
        tmp_path / "fastmcp.json",
        {
            "mcpServers": {
                "weather": {
                    "url": "https://weather.example/mcp",
                    "transport": "streamable-http",
                    "auth": "${GITHUB_TOKEN}",
                },
                "oauth": {"url": "https://oauth.example/mcp", "auth": "oauth"},
                "renamed": {"command": "python", "args": ["srv.py"], "tools": {"old": {"name": "new"}}},
            }
        },
    )
    servers = _by_name(read_mcp_config(fastmcp, ENVIRON))
    assert servers["weather"].token == SECRET and servers["weather"].error is None
    assert servers["oauth"].error is not None and "browser login" in servers["oauth"].error
    assert servers["renamed"].error is None and servers["renamed"].command == ("python", "srv.py")
    # FastMCP's MCPConfig also reads entries at the root.
    (root,) = read_mcp_config(_write(tmp_path / "root.json", {"one": {"command": "x"}}), ENVIRON)
    assert root.name == "one" and root.command == ("x",)


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        (
            {"command": "npx", "env": {"TOKEN": "${NOT_SET_ANYWHERE}"}},
            "env.TOKEN: environment variable NOT_SET_ANYWHERE is not set",
        ),
        (
            {"url": "https://x.example/mcp", "headers": {"X-Key": "${NOT_SET_ANYWHERE}"}},
            "headers.X-Key: environment variable",
        ),
        ({"args": ["x"]}, "command: Field required"),
        ({"command": 5}, "command: Input should be a valid string"),
        ({"command": "x", "args": "not a list"}, "args: Input should be a valid list"),
        ({"url": "https://x.example/mcp", "type": "websocket"}, 'unknown transport type "websocket"'),
        ({"command": "x", "type": "http"}, 'transport "http" without a url'),
        ({"command": "x", "envFile": "${workspaceFolder}/.env"}, "envFile is not read here"),
        ({"url": "ftp://x.example/mcp"}, "not an http(s) URL"),
        ({"command": "x", "env": {"A": "${1BAD}"}}, "is not a reference this reader knows"),
        ("just a string", "not a JSON object"),
    ],
)
def test_an_unusable_entry_is_its_own_error_naming_no_value(tmp_path: Path, entry: Any, error: str) -> None:
    path = _write(tmp_path / "mcp.json", {"mcpServers": {"bad": entry, "good": {"command": "x"}}})
    servers = _by_name(read_mcp_config(path, ENVIRON))
    assert servers["bad"].error is not None and error in servers["bad"].error, servers["bad"].error
    assert SECRET not in servers["bad"].error
    assert servers["good"].error is None


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (None, "cannot read the MCP configuration"),
        ("{\n  // a comment\n}", "not valid JSON (line 2, column 3); comments (JSONC) are not read"),
        ('{"editor.tabSize": 4}', 'no servers found: expected an "mcpServers" object'),
        ('{"mcpServers": {}}', "the configuration lists no servers"),
        ("[1, 2]", "no servers found"),
    ],
)
def test_a_file_that_cannot_be_used_is_one_error(tmp_path: Path, text: str | None, error: str) -> None:
    path = tmp_path / "mcp.json"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(CliError) as refused:
        read_mcp_config(path, ENVIRON)
    assert error in str(refused.value)


def test_server_selects_by_name_and_an_unknown_name_lists_the_known_ones(tmp_path: Path) -> None:
    path = _write(tmp_path / "mcp.json", {"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}})
    servers = read_mcp_config(path, ENVIRON)
    assert [s.name for s in select_servers(servers, ["b", "a", "b"])] == ["b", "a"]
    assert [s.name for s in select_servers(servers, [])] == ["a", "b"]
    with pytest.raises(CliError, match=r"--server c: not in the configuration \(it has: a, b\)"):
        select_servers(servers, ["c"])


# ------------------------------------------------------------------------------------ end to end
def test_review_every_server_of_a_config_one_failure_per_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LAB_TOKEN", OPERATOR_TOKEN)
    monkeypatch.setenv("MY_KEY", SECRET)
    sarif, lock = tmp_path / "review.sarif", tmp_path / "contracts.lock.json"
    with serve_asgi(lab_service_app()) as url:
        config = _write(
            tmp_path / "claude_desktop_config.json",
            {
                "mcpServers": {
                    "lab": {"url": url, "headers": {"Authorization": "Bearer ${LAB_TOKEN}"}},
                    "keyed": {"command": sys.executable, "args": [KEYED], "env": {"MY_API_KEY": "${MY_KEY}"}},
                    "down": {"type": "http", "url": "http://127.0.0.1:9/mcp"},
                    "unset": {"command": "npx", "env": {"T": "${NOT_SET_ANYWHERE}"}},
                }
            },
        )
        out = io.StringIO()
        args = [
            "review",
            "--mcp-config",
            str(config),
            "--json",
            "--sarif",
            str(sarif),
            "--write-lock",
            str(lock),
        ]
        code = main(args, out)
    err = capsys.readouterr().err
    assert code == 2  # a server could not be reviewed: said after everything was written
    assert (
        err.strip().splitlines()[-1] == "agent-connector: 2 of 4 servers could not be reviewed: down, unset"
    )
    document = json.loads(out.getvalue())
    schema = json.loads(
        (Path(ROOT) / "schemas" / "review-config-report.schema.json").read_text(encoding="utf-8")
    )
    assert not list(Draft202012Validator(schema).iter_errors(document))
    rows = {row["name"]: row for row in document["servers"]}
    assert [row["name"] for row in document["servers"]] == ["lab", "keyed", "down", "unset"]
    assert (
        rows["lab"]["status"] == "reviewed"
        and "route_shipment" in rows["lab"]["report"]["summary"]["admitted"]
    )
    assert rows["keyed"]["status"] == "reviewed"
    assert rows["keyed"]["report"]["summary"]["admitted"] == ["lookup_in_none"]
    assert rows["down"]["error"] == "connection refused: nothing is listening at http://127.0.0.1:9/mcp"
    assert rows["unset"]["error"] == "env.T: environment variable NOT_SET_ANYWHERE is not set"
    summary = document["summary"]
    assert (summary["servers"], summary["reviewed"], summary["failed"]) == (4, 2, 2)
    assert summary["admitted"] == sum(len(rows[n]["report"]["summary"]["admitted"]) for n in ("lab", "keyed"))

    log = json.loads(sarif.read_text(encoding="utf-8"))
    problems = list(Draft4Validator(official_sarif_schema(), format_checker=FormatChecker()).iter_errors(log))
    assert not problems, [p.message for p in problems[:3]]
    assert [run["properties"]["server"] for run in log["runs"]] == ["lab", "keyed", "down", "unset"]
    assert log["runs"][2]["invocations"][0]["executionSuccessful"] is False
    locked = {entry["server"] for entry in json.loads(lock.read_text(encoding="utf-8"))["servers"]}
    assert locked == {url, f"{sys.executable} {KEYED}"}

    everything = out.getvalue() + err + sarif.read_text(encoding="utf-8") + lock.read_text(encoding="utf-8")
    assert SECRET not in everything and OPERATOR_TOKEN not in everything


def test_the_text_report_ends_with_one_table_across_servers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _write(
        tmp_path / "mcp.json",
        {
            "mcpServers": {
                "keyed": {"command": sys.executable, "args": [KEYED], "env": {"MY_API_KEY": "k"}},
                "down": {"url": "http://127.0.0.1:9/mcp"},
            }
        },
    )
    out = io.StringIO()
    assert main(["review", "--mcp-config", str(config), "--server", "keyed", "--concurrency", "1"], out) == 0
    text = out.getvalue()
    assert text.startswith("── keyed\n")
    assert "lookup_in_none" in text and "down" not in text
    assert text.rstrip().endswith(
        "summary  1 of 1 server reviewed (0 failed); 1 tool admitted, 0 rejected; 0 findings"
    )
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        (["--call", "x"], "--call names one tool of one server"),
        (["--pin", "p.json"], "--pin writes one server's pins"),
        (["--concurrency", "0"], "--concurrency must be between 1 and 16"),
        (["http://127.0.0.1:9/mcp"], "review needs exactly one of"),
    ],
)
def test_options_that_do_not_fit_a_config_review_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], error: str
) -> None:
    config = _write(tmp_path / "mcp.json", {"mcpServers": {"a": {"command": "a"}}})
    assert main(["review", "--mcp-config", str(config), *extra], io.StringIO()) == 2
    assert error in capsys.readouterr().err
    assert main(["review", "--server", "a", "http://127.0.0.1:9/mcp"], io.StringIO()) == 2
    assert "--server picks servers of --mcp-config FILE" in capsys.readouterr().err
