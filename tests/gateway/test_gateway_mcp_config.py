"""``gateway --mcp-config FILE``: children from an MCP client's own ``mcpServers`` file — a stdio
server given its key through the file's ``env`` and an HTTP server its bearer token through the
file's ``headers``, both from ``${VAR}`` references — checked for real, with no secret printed."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_connector_sdk.cli import main
from agent_connector_sdk.demo.lab_service import OPERATOR_TOKEN, lab_service_app
from agent_connector_sdk.gateway import ChildSpec, GatewayError
from agent_connector_sdk.gateway._config import resolve_credentials
from tests.support.cli import ROOT
from tests.support.http_server import serve_asgi

SECRET = "sk-live-gateway-0123456789"
KEYED = str(Path(ROOT) / "tests" / "support" / "stdio_needs_env.py")


def _config(tmp_path: Path, servers: dict[str, Any]) -> Path:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=2), encoding="utf-8")
    return path


def test_gateway_check_connects_the_children_of_an_mcp_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # capfd, not capsys: a stdio child inherits the gateway's stderr, which must be a real file.
    monkeypatch.setenv("MY_KEY", SECRET)
    monkeypatch.setenv("LAB_TOKEN", OPERATOR_TOKEN)
    with serve_asgi(lab_service_app()) as url:
        config = _config(
            tmp_path,
            {
                "keyed": {
                    "command": sys.executable,
                    "args": [KEYED],
                    "env": {"MY_API_KEY": "${MY_KEY}", "MY_REGION": "apac"},
                    "cwd": str(tmp_path),
                },
                "lab": {"url": url, "headers": {"Authorization": "Bearer ${LAB_TOKEN}"}},
                "skipped": {"command": "no-such-program"},
            },
        )
        out = io.StringIO()
        code = main(
            ["gateway", "--mcp-config", str(config), "--server", "keyed", "--server", "lab", "--check"], out
        )
    err = capfd.readouterr().err
    text = out.getvalue()
    assert code == 0, text + err
    lines = text.splitlines()
    assert any(
        line.startswith("child keyed (stdio, 2026-07-28, server keyed ") and line.endswith(": up")
        for line in lines
    )
    assert "lookup_in_apac" in text  # the file's env reached the stdio child
    # the file's header authenticated it
    assert any(
        line.startswith("child lab (streamable_http, 2026-07-28, ") and line.endswith(": up")
        for line in lines
    )
    assert "skipped" not in text
    assert SECRET not in text + err and OPERATOR_TOKEN not in text + err


@pytest.mark.parametrize(
    ("servers", "extra", "error"),
    [
        (
            {"brave_search": {"command": "x"}},
            [],
            "server brave_search: a gateway child name is 1-32 characters",
        ),
        (
            {"a": {"command": "x", "env": {"K": "${NOT_SET_ANYWHERE}"}}},
            [],
            "server a: env.K: environment variable",
        ),
        ({"a": {"command": "x"}}, ["--server", "b"], "--server b: not in the configuration (it has: a)"),
        (
            {"a": {"url": "http://x.example/mcp", "headers": {"Mcp-Method": "x"}}},
            [],
            "header Mcp-Method is the gateway's",
        ),
    ],
)
def test_a_config_the_gateway_cannot_use_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], servers: dict[str, Any], extra: list[str], error: str
) -> None:
    config = _config(tmp_path, servers)
    assert main(["gateway", "--mcp-config", str(config), *extra, "--check"], io.StringIO()) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and error in lines[0], lines


def test_file_values_are_resolved_with_references_on_top_and_never_in_repr() -> None:
    spec = ChildSpec(
        name="files",
        command=("python", "srv.py"),
        env_values={"API_KEY": SECRET, "REGION": "eu"},
        env_env={"REGION": "OUR_REGION"},
        cwd="/srv",
    )
    assert SECRET not in repr(spec)
    headers, env = resolve_credentials(spec, {"OUR_REGION": "us"})
    assert headers == {} and env == {"API_KEY": SECRET, "REGION": "us"}
    with pytest.raises(GatewayError, match="env and cwd need a command child"):
        ChildSpec(name="web", url="http://x.example/mcp", cwd="/srv")
    with pytest.raises(GatewayError, match="headers need a URL child"):
        ChildSpec(name="cmd", command=("x",), header_values={"Authorization": "Bearer t"})
