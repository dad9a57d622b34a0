"""The CLI answers `--help`, `--version` and argument or file errors before it loads the stacks it runs.

Each case runs in a fresh interpreter (the test process has long since imported everything) and reports
the modules loaded after `main()` returned. A command imports only what it uses: the host, server,
gateway and report stacks (and fastmcp, mcp, httpx, uvicorn, pydantic, jsonschema under them) load when a
command actually runs, so a mistyped path or a `--help` costs a fraction of a second, not seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# Third-party stacks a parse-only path must not load (each costs 20 ms to over a second).
HEAVY_PACKAGES = frozenset(
    {
        "fastmcp",
        "mcp",
        "mcp_types",
        "httpx2",
        "uvicorn",
        "starlette",
        "pydantic",
        "jsonschema",
        "jsonschema_rs",
        "anyio",
        "yaml",
        "redis",
    }
)
# The package's own modules a parse-only path may load: the parser's and the error line's.
ALLOWED_OWN = frozenset(
    {
        "agent_connector_sdk",
        "agent_connector_sdk.cli",
        "agent_connector_sdk.cli._options",
        "agent_connector_sdk.cli._output",
        "agent_connector_sdk.cli.app",
        "agent_connector_sdk.cli.errors",
        "agent_connector_sdk.cli.operator_files",
        "agent_connector_sdk.cli.review_options",  # review's options, built from what was parsed
        "agent_connector_sdk.cli.gateway",
        "agent_connector_sdk.cli.state",
        "agent_connector_sdk.errors",
        "agent_connector_sdk.sanitize",
        # The families cli/errors.py maps to exit codes (each package's front loads only its errors).
        "agent_connector_sdk.review",
        "agent_connector_sdk.review.errors",
        "agent_connector_sdk.serving",
        "agent_connector_sdk.serving.errors",
        # The kinds of "not an MCP server" (ServerUnavailable.reason names them): a Literal, no imports.
        "agent_connector_sdk.core",
        "agent_connector_sdk.core.host",
        "agent_connector_sdk.core.host._peer",
    }
)

_PROBE = """
import io, json, sys
from agent_connector_sdk.cli import main
code = main(json.loads(sys.argv[1]), out=io.StringIO())
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""

CASES = [
    (["--help"], 0),
    (["--version"], 0),
    (["review", "--help"], 0),
    (["serve", "--help"], 0),
    (["gateway", "--help"], 0),
    (["state", "--help"], 0),
    (["state", "status", "--help"], 0),
    (["review"], 2),
    (["review", "tools.json"], 2),
    (["review", "--timeout", "0", "http://127.0.0.1:9/mcp"], 2),
    (["serve", "--openapi", "missing.json"], 2),
    (["serve", "--port", "70000"], 2),
    (["disclose", "--openapi", "missing.json"], 2),
    (["gateway", "--config", "missing.toml"], 2),
    (["review", "--no-such-option"], 2),
]


def _modules_after(argv: list[str], cwd: Path) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(argv)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,  # a hang guard: the probe takes ~5 s on a quiet machine
        check=False,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["code"], result["modules"]


@pytest.mark.parametrize(("argv", "code"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_parse_only_paths_load_no_stack(argv: list[str], code: int, tmp_path: Path) -> None:
    exit_code, modules = _modules_after(argv, tmp_path)
    assert exit_code == code
    heavy = sorted({name.split(".")[0] for name in modules} & HEAVY_PACKAGES)
    assert heavy == [], f"{argv} loaded {heavy}"
    own = sorted(m for m in modules if m.startswith("agent_connector_sdk") and m not in ALLOWED_OWN)
    assert own == [], f"{argv} loaded {own}"


def test_the_probe_sees_a_command_that_runs_load_its_stack(tmp_path: Path) -> None:
    """The check above can fail: a command that does its work loads the stacks it needs."""
    document = tmp_path / "tiny.json"
    document.write_text(
        json.dumps(
            {
                "openapi": "3.1.0",
                "info": {"title": "tiny", "version": "1"},
                "paths": {
                    "/a": {"get": {"operationId": "getA", "responses": {"200": {"description": "ok"}}}}
                },
            }
        )
    )
    exit_code, modules = _modules_after(["disclose", "--openapi", str(document)], tmp_path)
    assert exit_code == 0
    assert "fastmcp" in {name.split(".")[0] for name in modules}
