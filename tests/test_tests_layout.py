"""``tests/`` mirrors the package's folders (docs/architecture.md, "Where the tests live"): every folder
that holds test modules is a package folder's mirror (``tests/core/contracts`` for
``agent_connector_sdk/core/contracts``) or one of the few folders beside the mirror, and every such
folder is a Python package (modules of the same name live in several folders)."""

from __future__ import annotations

from pathlib import Path

import agent_connector_sdk

TESTS = Path(__file__).resolve().parent
PACKAGE_ROOT = Path(agent_connector_sdk.__file__).parent
# Beside the mirror: the docs' blocks, the repository's examples/ and interop/ folders, the fuzzers
# (across the floors) and the shared helpers.
BESIDE = frozenset({"docs", "examples", "interop", "fuzz", "support"})


def _module_folders(tests: Path) -> set[Path]:
    return {path.parent for path in tests.rglob("*.py") if "__pycache__" not in path.parts} - {tests}


def folders_off_the_mirror(tests: Path, package: Path) -> set[str]:
    """Folders of test modules that mirror no package folder (or module: ``core/disclosure_navigation``)
    and are not beside the mirror."""
    off = set()
    for folder in _module_folders(tests):
        relative = folder.relative_to(tests)
        mirrored = package / relative
        if relative.parts[0] not in BESIDE and not (
            mirrored.is_dir() or mirrored.with_suffix(".py").is_file()
        ):
            off.add(relative.as_posix())
    return off


def folders_without_init(tests: Path) -> set[str]:
    """Folders of test modules that are no package (their modules would clash by name)."""
    return {
        folder.relative_to(tests).as_posix()
        for folder in _module_folders(tests)
        if not (folder / "__init__.py").is_file()
    }


def test_every_test_folder_mirrors_a_package_folder() -> None:
    assert folders_off_the_mirror(TESTS, PACKAGE_ROOT) == set()


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
