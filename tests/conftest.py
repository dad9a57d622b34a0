"""Suite-wide configuration: the `process` marker that `make test-fast` leaves out.

A test is marked `process` when its module drives real processes or real sockets: the CLI as a user runs
it, documented command blocks, the interop and conformance peers, stdio servers, replicas behind nginx,
or any `*_http` module (real Streamable HTTP on 127.0.0.1), or a module that imports `subprocess`,
`uvicorn` or the CLI runner. Everything else is unit or in-process and is
what `make test-fast` runs; `make test` runs both, with the same assertions.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support import process_state

if TYPE_CHECKING:
    from scripts.interop import Toolchain

_TESTS = Path(__file__).resolve().parent
# Folders whose every module starts processes (the CLI, shell blocks, npm peers).
_PROCESS_FOLDERS = frozenset({"cli", "docs", "examples", "interop", "skills"})
# Module names that say so: real HTTP servers, stdio children, nginx replicas, the gateway's CLI.
_PROCESS_WORDS = ("_http", "stdio", "nginx", "replica", "cli", "child")


# Names whose presence in a module's globals says it starts processes or servers itself.
_PROCESS_NAMES = frozenset({"subprocess", "run_cli", "uvicorn", "Popen"})


def _drives_processes(path: Path, module_globals: dict[str, object]) -> bool:
    relative = path.resolve().relative_to(_TESTS)
    if relative.parts and relative.parts[0] in _PROCESS_FOLDERS:
        return True
    if any(word in relative.stem for word in _PROCESS_WORDS):
        return True
    return not _PROCESS_NAMES.isdisjoint(module_globals)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "process: drives real processes or sockets (left out by `make test-fast`)"
    )


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--reverse-order",
        action="store_true",
        help="run the collected tests last to first (tests/test_order_independence.py compares the orders)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("reverse_order"):
        items.reverse()
    for item in items:
        module = getattr(item, "module", None)
        if _drives_processes(Path(str(item.path)), vars(module) if module is not None else {}):
            item.add_marker(pytest.mark.process)


@pytest.fixture(autouse=True)
def _state_as_found() -> Iterator[None]:
    """Every test ends with the process as it found it: loggers (handlers, levels, propagation),
    environment variables (``COLUMNS`` among them), the working directory and OpenTelemetry's global
    providers (``tests.support.process_state``).

    A test that runs a command in-process (``main([...])``) sets logging up as the command does (the
    serve and gateway commands give their loggers one-line handlers and stop propagation), and fastmcp
    configures its own logger when first imported; a later test in the same worker that captures those
    loggers' records or counts stderr lines would otherwise depend on which tests ran before it.
    ``tests/test_order_independence.py`` runs a subset in two orders and compares."""
    found = process_state.snapshot()
    yield
    otel = sys.modules.get("tests.support.otel")
    # The recording provider is installed once per process by design and is the API's no-op while its
    # switch is off (tests.support.otel): kept, switched off.
    sanctioned = otel is not None and bool(getattr(otel, "_installed", False))
    if otel is not None and sanctioned:
        otel._SWITCH.on = False
    process_state.restore(found, keep_telemetry=sanctioned)


@pytest.fixture(autouse=True)
def _cli_width(_state_as_found: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process CLI runs see the width ``run_cli`` gives a process (``COLUMNS=200``), whatever the
    worker's environment or an earlier test left; a test about widths sets its own."""
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture(scope="session")
def npm_peers() -> Toolchain:
    """Where Node and the pinned npm MCP servers (``interop/package.json``) are installed: a
    ``scripts.interop.Toolchain`` (``scripts.interop.installed_toolchain``, the same the interop matrix
    uses). ``make interop-peers`` installs them, and ``make test`` runs it first: no test installs.

    Tests that need them fail when they are missing, naming the command; nothing is skipped."""
    from scripts import interop

    try:
        return interop.installed_toolchain()
    except interop.PeersMissing as missing:
        pytest.fail(f"the interop peers are required: {missing}")
