"""``tests/`` mirrors the package's folders (docs/architecture.md, "Where the tests live"): every folder
that holds test modules is a package folder's mirror (``tests/core/contracts`` for
``agent_connector_sdk/core/contracts``) or one of the few folders beside the mirror, and every such
folder is a Python package (modules of the same name live in several folders). The doors hold for tests
too: a test reaches a package folder's ``_private`` modules and names only from that folder's mirror (a
unit test of a private module sits beside its folder's other tests); everywhere else, ``tests/support``
included, tests import through the doors."""

from __future__ import annotations

import ast
from pathlib import Path

import agent_connector_sdk

TESTS = Path(__file__).resolve().parent
PACKAGE_ROOT = Path(agent_connector_sdk.__file__).parent
# Beside the mirror: the docs' blocks, the repository's examples/ and interop/ folders, the fuzzers
# (across the floors) and the shared helpers.
BESIDE = frozenset({"docs", "examples", "interop", "fuzz", "support"})
# A test folder that mirrors more than its namesake: the command line's tests drive ``review/`` (the
# reviewer's report) and ``serving/`` (what ``serve`` assembles) as a user does (docs/architecture.md).
ALSO_MIRRORED: dict[str, tuple[str, ...]] = {"cli": ("review", "serving")}
PACKAGE = "agent_connector_sdk"


def _module_folders(tests: Path) -> set[Path]:
    return {path.parent for path in tests.rglob("*.py") if "__pycache__" not in path.parts} - {tests}


def mirrored_folders(relative: Path, package: Path) -> set[str]:
    """The package folders (``/``-separated, ``""`` for the package's own) whose mirror the test folder
    ``relative`` (to ``tests/``) is: its namesake folder, or the folder of its namesake module
    (``core/disclosure_navigation`` mirrors ``core``'s module), and the folders of ``ALSO_MIRRORED``; the
    top of ``tests/`` mirrors the package's own folder; a folder beside the mirror mirrors none."""
    if not relative.parts:
        return {""}
    if relative.parts[0] in BESIDE:
        return set()
    name = relative.as_posix()
    if (package / relative).is_dir():
        return {name, *ALSO_MIRRORED.get(name, ())}
    if (package / relative).with_suffix(".py").is_file():
        return {relative.parent.as_posix() if relative.parent.parts else ""}
    return set()


def folders_off_the_mirror(tests: Path, package: Path) -> set[str]:
    """Folders of test modules that mirror no package folder (or module: ``core/disclosure_navigation``)
    and are not beside the mirror."""
    off = set()
    for folder in _module_folders(tests):
        relative = folder.relative_to(tests)
        if relative.parts[0] not in BESIDE and not mirrored_folders(relative, package):
            off.add(relative.as_posix())
    return off


def _is_private(segment: str) -> bool:
    return segment.startswith("_") and not segment.startswith("__")


def _dotted(node: ast.expr) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``; ``None`` for anything but names and attributes."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else [*base, node.attr]
    return None


def _reached(source: str) -> set[str]:
    """Every dotted path into the package that ``source`` imports (``import``/``from`` statements
    anywhere, lazy ones inside functions included), and every attribute read off a name such an import
    bound: ``from agent_connector_sdk.mcp import compat`` then ``compat._Reader`` reaches
    ``agent_connector_sdk.mcp.compat._Reader``."""
    tree = ast.parse(source)
    reached: set[str] = set()
    bound: dict[str, str] = {}  # local name -> the dotted path it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    reached.add(alias.name)
                    # ``import a.b`` binds ``a``; ``import a.b as c`` binds ``c`` to ``a.b``
                    bound[alias.asname or PACKAGE] = alias.name if alias.asname else PACKAGE
        elif isinstance(node, ast.ImportFrom) and not node.level:
            if (node.module or "").split(".")[0] != PACKAGE:
                continue
            for alias in node.names:
                reached.add(f"{node.module}.{alias.name}")
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        chain = _dotted(node) if isinstance(node, ast.Attribute) else None
        if chain is not None and chain[0] in bound:
            reached.add(".".join([bound[chain[0]], *chain[1:]]))
    return reached


def _owner(path: list[str], package: Path) -> str:
    """The package folder that owns ``path`` (relative to the package): its longest leading run that is
    a folder (a module's names belong to the module's folder)."""
    for length in range(len(path), -1, -1):
        if (package.joinpath(*path[:length])).is_dir():
            return "/".join(path[:length])
    return ""


def private_reaches_outside_the_mirror(tests: Path, package: Path) -> set[tuple[str, str]]:
    """(test module, ``_private`` module or name) for every reach into a package folder's private parts
    from a test module outside that folder's mirror. A private name of a public module counts (it is the
    folder's as much as a ``_module`` is); a subfolder's mirror does not reach into its parent's."""
    found = set()
    for path in sorted(tests.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        mine = mirrored_folders(path.parent.relative_to(tests), package)
        for dotted in _reached(path.read_text(encoding="utf-8")):
            parts = dotted.split(".")[1:]
            private = next((index for index, segment in enumerate(parts) if _is_private(segment)), None)
            if private is not None and _owner(parts[:private], package) not in mine:
                found.add((path.relative_to(tests).as_posix(), ".".join([PACKAGE, *parts[: private + 1]])))
    return found


def folders_without_init(tests: Path) -> set[str]:
    """Folders of test modules that are no package (their modules would clash by name)."""
    return {
        folder.relative_to(tests).as_posix()
        for folder in _module_folders(tests)
        if not (folder / "__init__.py").is_file()
    }


def test_every_test_folder_mirrors_a_package_folder() -> None:
    assert folders_off_the_mirror(TESTS, PACKAGE_ROOT) == set()


def test_tests_reach_private_parts_only_from_their_folders_mirror() -> None:
    """A unit test of a ``_private`` module sits in its folder's mirror; every other test (and
    ``tests/support``) goes through the doors (docs/architecture.md, "Where the tests live")."""
    assert private_reaches_outside_the_mirror(TESTS, PACKAGE_ROOT) == set()


def test_every_test_folder_is_a_package() -> None:
    assert folders_without_init(TESTS) == set()


def test_the_folders_beside_the_mirror_name_what_they_test() -> None:
    """``tests/examples`` and ``tests/interop`` test the repository's folders of those names."""
    for name in ("examples", "interop"):
        assert (TESTS.parent / name).is_dir(), name


def _write(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_the_checks_fail_on_a_tree_built_to_break_them(tmp_path: Path) -> None:
    """The control case: an old folder (``tests/host``, which the package no longer has), a folder that
    mirrors nothing and a folder without ``__init__.py`` are each found; the mirror (of a folder or of a
    module), a data folder and the folders beside it are not."""
    package = tmp_path / "agent_connector_sdk"
    for folder in ("core/host", "mcp/host", "gateway"):
        (package / folder).mkdir(parents=True)
    _write(package / "core/navigation.py")
    tests = tmp_path / "tests"
    _write(tests / "__init__.py")
    _write(tests / "test_suite_wide.py")
    for folder in (
        "core",
        "core/host",
        "core/navigation",
        "core/nowhere",
        "mcp",
        "mcp/host",
        "host",
        "docs",
        "support",
    ):
        _write(tests / folder / "__init__.py")
    _write(tests / "core/host/test_sequence.py")
    _write(tests / "mcp/host/test_session.py")
    _write(tests / "core/navigation/test_entries.py")
    _write(tests / "core/nowhere/test_lost.py")
    _write(tests / "host/test_old_place.py")
    _write(tests / "core/host/golden/answer.json", "{}")
    _write(tests / "docs/test_blocks.py")
    _write(tests / "support/servers.py")
    _write(tests / "gateway/test_no_init.py")

    assert folders_off_the_mirror(tests, package) == {"host", "core/nowhere"}
    assert folders_without_init(tests) == {"gateway"}


def test_the_private_reach_check_fails_on_a_tree_built_to_break_it(tmp_path: Path) -> None:
    """The control case: private parts reached from another folder's mirror, from the parent folder's
    mirror, from the shared helpers and from the top, by a lazy import and by an attribute, are each
    found; the same reaches from the owner's mirror (a folder's, a module's, ``tests/cli`` for
    ``review/``) and imports through the doors are not."""
    package = tmp_path / PACKAGE
    for folder in ("core/contracts", "mcp/host", "review", "serving", "cli"):
        (package / folder).mkdir(parents=True)
    _write(package / "core/navigation.py")
    _write(package / "mcp/compat.py")
    _write(package / "mcp/host/reader.py")
    tests = tmp_path / "tests"
    _write(
        tests / "core/contracts/test_own.py",
        "from agent_connector_sdk.core.contracts._poisoning import mentions\n"
        "from agent_connector_sdk.core.contracts import _headers\n"
        "from agent_connector_sdk.core.contracts import Finding\n",
    )
    _write(tests / "core/navigation/test_module.py", "from agent_connector_sdk.core import _shared\n")
    _write(
        tests / "cli/test_drives_review.py",
        "from agent_connector_sdk.review.live import _READS\nimport agent_connector_sdk.serving._app\n",
    )
    _write(
        tests / "mcp/host/test_reader.py",
        "from agent_connector_sdk.mcp.host.reader import _Line\n"  # its own folder: fine
        "from agent_connector_sdk.mcp import compat\n"
        "def test_it():\n"
        "    compat._Capped()\n"  # the parent folder's private name, by attribute
        "    from agent_connector_sdk.core.contracts._poisoning import mentions\n",  # lazy
    )
    _write(tests / "support/helpers.py", "from agent_connector_sdk.mcp.host.reader import _Line as Line\n")
    _write(tests / "test_suite_wide.py", "import agent_connector_sdk.review._rows as rows\nrows._N\n")
    _write(
        tests / "docs/test_blocks.py",
        "import agent_connector_sdk.serving.process\nagent_connector_sdk.serving.process._LOGGERS\n",
    )

    assert private_reaches_outside_the_mirror(tests, package) == {
        ("mcp/host/test_reader.py", "agent_connector_sdk.mcp.compat._Capped"),
        ("mcp/host/test_reader.py", "agent_connector_sdk.core.contracts._poisoning"),
        ("support/helpers.py", "agent_connector_sdk.mcp.host.reader._Line"),
        ("test_suite_wide.py", "agent_connector_sdk.review._rows"),
        ("docs/test_blocks.py", "agent_connector_sdk.serving.process._LOGGERS"),
    }
