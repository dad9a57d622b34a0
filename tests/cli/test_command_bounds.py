"""``cli/`` parses arguments, calls into the packages that do the work, and renders (issue 35).

Read from the source with ``ast`` (lazy imports inside functions included, so a deferred import cannot
hide a dependency):

- the ``review`` and ``serve`` commands stay short: each whole function (signature, docstring, body)
  is at most :data:`COMMAND_LINES` lines; their options are one flattened dataclass each
  (``cli/_options.py``), their work is the ``review`` and ``serving`` packages';
- the reviewer's report is built outside ``cli/``: ``review/`` and ``serving/`` import nothing from
  ``cli`` (each raises its own error family; ``cli/errors.py`` decides the exit codes);
- ``cli/`` builds no report itself: no module of it constructs a report model class other than the
  ``Target`` a person names on the command line, nor drives a host session;
- and the report's model and its shaping into contract outputs load no I/O stack (a fresh interpreter
  imports each and finds no transport, server or event-loop library loaded).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import agent_connector_sdk
from agent_connector_sdk.review import report as report_model

PACKAGE = Path(agent_connector_sdk.__file__).parent
COMMAND_LINES = 60
# What a package below ``cli/`` may import of it: nothing. Each raises its own error family
# (``review.ReviewError``, ``serving.ServingError``) and ``cli/errors.py`` maps them to exit codes.
ALLOWED_FROM_CLI: frozenset[str] = frozenset()
# What a person gives on the command line, not something the review found.
INPUT_MODELS = frozenset({"Target"})
# The host stack a review drives; only the review package connects it.
HOST_SESSION_MODULES = (
    "agent_connector_sdk.mcp.host._session",
    "agent_connector_sdk.mcp.host.contract_client",
    "agent_connector_sdk.mcp.host.disclosure_consumer",
)


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _imported_modules(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, "the package imports absolutely"
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _command(name: str) -> ast.FunctionDef:
    tree = _tree(PACKAGE / "cli" / "app.py")
    commands = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name]
    assert len(commands) == 1, f"cli/app.py defines one {name}()"
    return commands[0]


@pytest.mark.parametrize("name", ["review", "serve"])
def test_review_and_serve_commands_are_at_most_sixty_lines(name: str) -> None:
    command = _command(name)
    assert command.end_lineno is not None
    lines = command.end_lineno - command.lineno + 1  # `def` to the last line of the body
    assert lines <= COMMAND_LINES, f"{name}() is {lines} lines (at most {COMMAND_LINES})"


def test_the_line_count_reads_the_whole_function() -> None:
    """The measure above counts a function as written: a long one is caught, not just a long body."""
    source = (
        "def f(\n    a: int,\n    b: int,\n) -> int:\n    '''Doc.'''\n"
        + "    a += 1\n" * 70
        + "    return a\n"
    )
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef) and function.end_lineno is not None
    assert function.end_lineno - function.lineno + 1 == 76


@pytest.mark.parametrize("package", ["review", "serving"])
def test_the_working_packages_import_nothing_from_cli(package: str) -> None:
    upward = {
        (path.name, module)
        for path in sorted((PACKAGE / package).rglob("*.py"))
        for module in _imported_modules(_tree(path))
        if module.startswith("agent_connector_sdk.cli")
        and module not in ALLOWED_FROM_CLI
        and not any(module.startswith(allowed + ".") for allowed in ALLOWED_FROM_CLI)
    }
    assert upward == set()


def test_cli_builds_no_report_and_drives_no_host_session() -> None:
    models = {
        name
        for name in report_model.__all__
        if isinstance(getattr(report_model, name), type) and name not in INPUT_MODELS
    }
    assert {"ReviewReport", "ToolReview", "CallReport", "ReviewSummary"} <= models
    built: set[tuple[str, str]] = set()
    driven: set[tuple[str, str]] = set()
    for path in sorted((PACKAGE / "cli").rglob("*.py")):
        tree = _tree(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                called = (
                    node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                )
                if called in models:
                    built.add((path.name, called))
        driven |= {
            (path.name, module)
            for module in _imported_modules(tree)
            if module.startswith(HOST_SESSION_MODULES) or module == "agent_connector_sdk.mcp.host.HostSession"
        }
    assert built == set(), "cli/ constructs report models: that building belongs in review/"
    assert driven == set(), "cli/ drives a host session: that belongs in review/"


IO_STACKS = ("fastmcp", "mcp", "httpx2", "httpcore2", "anyio", "uvicorn", "starlette", "redis")


def test_the_report_model_and_its_shaping_load_no_io_stack() -> None:
    shaping = ("report", "config_report", "lock", "sarif", "pins", "wording")
    modules = [f"agent_connector_sdk.review.{name}" for name in shaping]
    probe = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        f"print(json.dumps(sorted(m for m in {IO_STACKS!r} if m in sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(done.stdout) == []
