"""The package's floors (docs/architecture.md): imports point down, the pure layer does no I/O.

Read from the source (every ``import``/``from`` statement, including the lazy ones inside functions and
under ``TYPE_CHECKING``), so a deferred import cannot hide an upward dependency. Each check is a
function of a package root, and the control cases run it on a small package written to a temporary
directory, so a check that could never fail would be seen failing to fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agent_connector_sdk

PACKAGE_ROOT = Path(agent_connector_sdk.__file__).parent
PACKAGE = "agent_connector_sdk"

# Bottom to top. A module may import from its own floor and the floors below it, never from above.
FLOORS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("", "errors", "sanitize", "audit")),  # "" is the front door (lazy: it loads nothing)
    ("pure core", ("core",)),
    ("MCP adapters", ("mcp",)),
    # ``serving`` builds ``serve``'s app; the contract lab and the ``--auth-config`` reader it composes
    # (applications) are handed to it by the command line (``cli/serve_parts.py``).
    ("assemblies", ("state", "connectors", "skills", "serving")),
    ("applications", ("demo", "gateway")),
    ("command line", ("cli", "review")),
]
# Inside the pure layer, bottom to top: the ranked tool search (it reads tool descriptors only), the wire
# format (with the canonical encoding) under the gates, the gates under the disclosure navigation (it
# summarizes headers), all of them under the host core.
CORE_ORDER = [
    "core.search",
    "core.schema_disclosure",
    "core.contracts",
    "core.disclosure_navigation",
    "core.host",
]
# Libraries that do I/O (network, files, processes, event loops, logging handlers) or wrap it: the pure
# layer and the foundation import none of them. ``threading`` is allowed: its locks guard caches.
IO_LIBRARIES = frozenset(
    {
        "anyio",
        "asyncio",
        "fastmcp",
        "h11",
        "http",
        "httpx",
        "httpx2",
        "io",
        "logging",
        "mcp",
        "mcp_types",
        "multiprocessing",
        "opentelemetry",
        "os",
        "pathlib",
        "redis",
        "select",
        "selectors",
        "shutil",
        "signal",
        "sniffio",
        "socket",
        "ssl",
        "starlette",
        "subprocess",
        "sys",
        "tempfile",
        "uvicorn",
    }
)


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, root: Path) -> tuple[set[str], set[str]]:
    """(package modules, top-level names of other libraries) that ``path`` imports."""
    own: set[str] = set()
    foreign: set[str] = set()
    name = _module_name(path, root)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            modules = [module]
            if module.startswith(PACKAGE):
                own.update(f"{module}.{alias.name}" for alias in node.names)
        else:
            continue
        for module in modules:
            (own if module.split(".")[0] == PACKAGE else foreign).add(module)
    return own, {module.split(".")[0] for module in foreign}


def _graph(root: Path) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(module -> package modules it imports, module -> libraries it imports) for the tree at ``root``."""
    paths = {_module_name(path, root): path for path in root.rglob("*.py")}
    own: dict[str, set[str]] = {}
    foreign: dict[str, set[str]] = {}
    for name, path in paths.items():
        imported, libraries = _imports(path, root)
        own[name] = {module for module in imported if module in paths}
        foreign[name] = libraries
    return own, foreign


def _relative(module: str) -> str:
    return module.removeprefix(PACKAGE).removeprefix(".")


def _floor(module: str) -> int:
    top = _relative(module).split(".")[0]
    for level, (_, packages) in enumerate(FLOORS):
        if top in packages:
            return level
    raise AssertionError(f"{module} is on no floor: add its package to FLOORS (and docs/architecture.md)")


def modules_on_no_floor(root: Path) -> set[str]:
    own, _ = _graph(root)
    floored = {package for _, packages in FLOORS for package in packages}
    return {module for module in own if _relative(module).split(".")[0] not in floored}


def upward_imports(root: Path) -> set[tuple[str, str]]:
    """Every import of a module on a higher floor (the front door itself re-exports, lazily: exempt)."""
    own, _ = _graph(root)
    return {
        (module, imported)
        for module, imports in own.items()
        if module != PACKAGE
        for imported in imports
        if _floor(imported) > _floor(module)
    }


def io_in_the_pure_layer(root: Path) -> set[tuple[str, str]]:
    """Every I/O library the pure layer or the foundation imports."""
    _, foreign = _graph(root)
    return {
        (module, library)
        for module, libraries in foreign.items()
        if module != PACKAGE and _floor(module) <= 1
        for library in libraries & IO_LIBRARIES
    }


def _core_rank(module: str) -> int | None:
    relative = _relative(module)
    for rank, prefix in enumerate(CORE_ORDER):
        if relative == prefix or relative.startswith(prefix + "."):
            return rank
    return None


def upward_in_the_core(root: Path) -> set[tuple[str, str]]:
    """Imports inside the pure layer that point up its order (``CORE_ORDER``)."""
    own, _ = _graph(root)
    found = set()
    for module, imports in own.items():
        rank = _core_rank(module)
        for imported in imports:
            imported_rank = _core_rank(imported)
            if rank is not None and imported_rank is not None and imported_rank > rank:
                found.add((module, imported))
    return found


def host_server_crossings(root: Path) -> set[tuple[str, str]]:
    """The host side and the server side are independent adapters: neither imports the other."""
    own, _ = _graph(root)
    sides = {"mcp.host": "mcp.server", "mcp.server": "mcp.host"}
    return {
        (module, imported)
        for module, imports in own.items()
        for side, other in sides.items()
        if _relative(module) == side or _relative(module).startswith(side + ".")
        for imported in imports
        if _relative(imported) == other or _relative(imported).startswith(other + ".")
    }


def _is_private(segment: str) -> bool:
    return segment.startswith("_") and not segment.startswith("__")


def private_imports_across_folders(root: Path) -> set[tuple[str, str]]:
    """Every import into another folder's ``_private`` module. A folder is entered through its door: its
    ``__init__`` or a named public module in it. Below the importer's folder and the imported module's
    nearest common package, no segment of the imported module's path may be ``_private`` (a subfolder
    reaching into its parent's ``_module`` included: the parent's door exports what it needs)."""
    own, _ = _graph(root)
    packages = {_module_name(path, root) for path in root.rglob("__init__.py")}

    def folder(module: str) -> str:
        return module if module in packages else module.rsplit(".", 1)[0]

    found = set()
    for module, imports in own.items():
        mine = folder(module).split(".")
        for imported in imports:
            if folder(imported) == folder(module):
                continue  # a folder's own private modules are its business
            theirs = imported.split(".")
            common = 0
            while common < min(len(mine), len(theirs)) and mine[common] == theirs[common]:
                common += 1
            if any(_is_private(segment) for segment in theirs[common:]):
                found.add((module, imported))
    return found


def test_every_module_is_on_a_floor() -> None:
    assert modules_on_no_floor(PACKAGE_ROOT) == set()


def test_nothing_imports_upward() -> None:
    """Foundation < pure core < MCP adapters < assemblies < applications < command line: in particular
    no adapter imports ``cli``, and nothing under ``mcp`` imports ``state`` (the server side takes a
    protocol, ``AsyncRateLimiter``, and ``state`` provides it)."""
    assert upward_imports(PACKAGE_ROOT) == set()


def test_the_pure_layer_imports_no_io() -> None:
    assert io_in_the_pure_layer(PACKAGE_ROOT) == set()


def test_the_pure_layer_reads_bottom_up() -> None:
    """The wire format (and its canonical encoding) at the bottom: ``contracts`` may use the encoding,
    the encoding never uses ``contracts`` (the two folders once imported each other)."""
    assert upward_in_the_core(PACKAGE_ROOT) == set()


def test_host_and_server_sides_do_not_import_each_other() -> None:
    assert host_server_crossings(PACKAGE_ROOT) == set()


def test_every_folder_is_entered_through_its_door() -> None:
    """No module imports another folder's ``_private`` module (lazy and ``TYPE_CHECKING`` imports
    included): each folder's ``__init__`` (or a named public module) exports what other folders use
    (docs/architecture.md, "Doors")."""
    assert private_imports_across_folders(PACKAGE_ROOT) == set()


def _write(root: Path, relative: str, text: str = "") -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def bent_package(tmp_path: Path) -> Path:
    """A small package that breaks every rule once (and keeps the rest)."""
    root = tmp_path / PACKAGE
    _write(root, "__init__.py", "from agent_connector_sdk.mcp.host import HostSession\n")  # the front door
    _write(root, "errors.py")
    for package in (
        "core",
        "core/contracts",
        "core/schema_disclosure",
        "mcp",
        "mcp/host",
        "mcp/server",
        "cli",
    ):
        _write(root, f"{package}/__init__.py")
    _write(
        root, "core/schema_disclosure/_encoding.py", "from agent_connector_sdk.core.contracts import _fine\n"
    )
    _write(
        root,
        "core/contracts/_fine.py",
        "import json\nimport threading\nfrom agent_connector_sdk import errors\n",
    )
    _write(
        root,
        "core/contracts/_bad.py",
        "def later():\n    import anyio\n    from agent_connector_sdk.mcp import compat\n",
    )
    _write(root, "mcp/compat.py", "import fastmcp\n")
    _write(root, "mcp/host/_session.py", "from agent_connector_sdk.mcp.server import _entry\n")
    _write(root, "mcp/server/_entry.py", "import agent_connector_sdk.cli.app\n")
    _write(root, "cli/app.py", "from agent_connector_sdk.mcp.host import _session\n")
    return root


def test_control_the_checks_find_what_they_forbid(bent_package: Path) -> None:
    # (``from package import module`` imports the package too: both are named.)
    assert upward_imports(bent_package) == {
        ("agent_connector_sdk.core.contracts._bad", "agent_connector_sdk.mcp"),
        ("agent_connector_sdk.core.contracts._bad", "agent_connector_sdk.mcp.compat"),
        ("agent_connector_sdk.mcp.server._entry", "agent_connector_sdk.cli.app"),
    }
    assert io_in_the_pure_layer(bent_package) == {("agent_connector_sdk.core.contracts._bad", "anyio")}
    assert upward_in_the_core(bent_package) == {
        ("agent_connector_sdk.core.schema_disclosure._encoding", "agent_connector_sdk.core.contracts"),
        ("agent_connector_sdk.core.schema_disclosure._encoding", "agent_connector_sdk.core.contracts._fine"),
    }
    assert host_server_crossings(bent_package) == {
        ("agent_connector_sdk.mcp.host._session", "agent_connector_sdk.mcp.server"),
        ("agent_connector_sdk.mcp.host._session", "agent_connector_sdk.mcp.server._entry"),
    }


def test_control_a_package_on_no_floor_is_refused(tmp_path: Path) -> None:
    root = tmp_path / PACKAGE
    _write(root, "__init__.py")
    _write(root, "elsewhere/__init__.py", "import json\n")
    _write(root, "elsewhere/_user.py", "from agent_connector_sdk import elsewhere\n")
    assert modules_on_no_floor(root) == {
        "agent_connector_sdk.elsewhere",
        "agent_connector_sdk.elsewhere._user",
    }
    with pytest.raises(AssertionError, match="on no floor"):
        upward_imports(root)


def test_server_modules_form_no_import_cycle() -> None:
    own, _ = _graph(PACKAGE_ROOT)
    graph = {
        module: {i for i in imports if i.startswith("agent_connector_sdk.mcp.server.")}
        for module, imports in own.items()
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
    """``_entry`` -> ``_resolution`` -> ``_parity`` -> the tool -> ``_output_check``: no module imports one
    that comes before it (the per-request record they share sits below all of them, in ``_record``)."""
    order = ["_entry", "_resolution", "_parity", "_output_check"]
    own, _ = _graph(PACKAGE_ROOT)
    for position, name in enumerate(order):
        imports = own[f"agent_connector_sdk.mcp.server.{name}"]
        earlier = {f"agent_connector_sdk.mcp.server.{before}" for before in order[:position]}
        assert not imports & earlier, name
    record = own["agent_connector_sdk.mcp.server._record"]
    assert not {i for i in record if i.startswith("agent_connector_sdk.mcp.server.")}


def test_control_an_import_around_a_door_is_refused(tmp_path: Path) -> None:
    root = tmp_path / PACKAGE
    _write(root, "__init__.py")
    for package in ("core", "core/host", "mcp", "mcp/host", "gateway"):
        _write(root, f"{package}/__init__.py")
    _write(root, "core/host/__init__.py", "from agent_connector_sdk.core.host._errors import Refused\n")
    _write(root, "core/host/_errors.py", "class Refused(Exception): ...\n")
    _write(root, "core/host/bounds.py", "from agent_connector_sdk.core.host._errors import Refused\n")
    _write(root, "mcp/_preflight.py")
    _write(root, "mcp/host/_session.py", "from agent_connector_sdk.mcp._preflight import probe\n")
    _write(
        root,
        "gateway/_app.py",
        "from typing import TYPE_CHECKING\n"
        "from agent_connector_sdk.core.host import Refused\n"  # through the door: fine
        "from agent_connector_sdk.core.host.bounds import Refused as Again\n"  # a named public module
        "from agent_connector_sdk.gateway._errors import Own\n"  # its own folder: fine
        "if TYPE_CHECKING:\n"
        "    from agent_connector_sdk.mcp.host import _session\n"
        "def later():\n"
        "    from agent_connector_sdk.core.host._errors import Refused\n",
    )
    _write(root, "gateway/_errors.py")
    assert private_imports_across_folders(root) == {
        # a subfolder reaching into its parent's private module
        ("agent_connector_sdk.mcp.host._session", "agent_connector_sdk.mcp._preflight"),
        ("agent_connector_sdk.gateway._app", "agent_connector_sdk.mcp.host._session"),  # TYPE_CHECKING
        ("agent_connector_sdk.gateway._app", "agent_connector_sdk.core.host._errors"),  # lazy
    }
