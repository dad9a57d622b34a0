"""The package's import structure: layers import downward only, and the server side has no cycle.

Read from the source (every ``import``/``from`` statement, including the lazy ones inside functions), so a
deferred import cannot hide an upward dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import agent_connector_sdk

PACKAGE_ROOT = Path(agent_connector_sdk.__file__).parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every ``agent_connector_sdk`` module ``path`` imports (relative imports resolved)."""
    found: set[str] = set()
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.startswith("agent_connector_sdk")}


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(path): path for path in PACKAGE_ROOT.rglob("*.py")}
    return {name: {i for i in _imports(path) if i in modules} for name, path in modules.items()}


def test_nothing_under_mcp_imports_the_state_package() -> None:
    """``state/`` (shared backends, replica assembly) sits above ``mcp/``: the server side takes a
    protocol (``contracts._completion.AsyncRateLimiter``) and ``state/`` provides it."""
    upward = {
        (module, imported)
        for module, imports in _graph().items()
        if module.startswith("agent_connector_sdk.mcp")
        for imported in imports
        if imported.startswith("agent_connector_sdk.state")
    }
    assert upward == set()


def test_server_modules_form_no_import_cycle() -> None:
    graph = {
        module: {i for i in imports if i.startswith("agent_connector_sdk.mcp.server.")}
        for module, imports in _graph().items()
        if module.startswith("agent_connector_sdk.mcp.server.")
    }
    visiting: set[str] = set()
    done: set[str] = set()

    def visit(module: str, trail: tuple[str, ...]) -> None:
        assert module not in visiting, f"import cycle: {' -> '.join((*trail, module))}"
        if module in done:
            return
        visiting.add(module)
        for imported in graph.get(module, ()):
            visit(imported, (*trail, module))
        visiting.discard(module)
        done.add(module)

    for module in graph:
        visit(module, ())


def test_a_gated_call_reads_top_down() -> None:
    """``entry`` -> ``resolution`` -> ``parity`` -> the tool -> ``output_check``: no module imports one that
    comes before it (the per-request record they share sits below all of them, in ``_record``)."""
    order = ["entry", "resolution", "parity", "output_check"]
    graph = _graph()
    for position, name in enumerate(order):
        imports = graph[f"agent_connector_sdk.mcp.server.{name}"]
        earlier = {f"agent_connector_sdk.mcp.server.{before}" for before in order[:position]}
        assert not imports & earlier, name
    record = graph["agent_connector_sdk.mcp.server._record"]
    assert not {i for i in record if i.startswith("agent_connector_sdk.mcp.server.")}
