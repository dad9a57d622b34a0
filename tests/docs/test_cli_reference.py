"""docs/cli.md lists exactly the options each command's ``--help`` shows, in its synopsis and in its
option table, and the README's quick starts use only options that exist."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.docs.blocks import ROOT, environment, extract

CLI_DOC = ROOT / "docs" / "cli.md"
# command -> the argv prefixes whose --help it documents (state's options live on its subcommands)
HELPS: dict[str, list[list[str]]] = {
    "review": [["review"]],
    "serve": [["serve"]],
    "disclose": [["disclose"]],
    "state": [["state", sub] for sub in ("init", "disable", "enable", "status")],
}
COMMANDS = tuple(HELPS)
# An option row of --help: its first column (up to the first run of two spaces) names the option(s).
_HELP_ROW = re.compile(r"^[│|]\s+(?P<column>--\S.*?)(?:\s{2,}|$)", re.MULTILINE)
_MAIN = "from agent_connector_sdk.cli import main_exit; main_exit()"
_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def help_options(command: str) -> set[str]:
    return set().union(*(_help_options(argv) for argv in HELPS[command]))


def _help_options(argv: list[str]) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _MAIN, *argv, "--help"],
        capture_output=True,
        text=True,
        env={**environment(), "COLUMNS": "200"},
        timeout=60,
        check=True,
    )
    found = {option for row in _HELP_ROW.finditer(done.stdout) for option in _OPTION.findall(row["column"])}
    return found - {"--help", "--version"}


def _section(command: str) -> str:
    text = CLI_DOC.read_text(encoding="utf-8")
    start = text.index(f"## `{command}`")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def synopsis_options(command: str) -> set[str]:
    synopses = [
        block
        for block in extract(CLI_DOC)
        if "not-run" in block.markers and block.text.startswith(f"agent-connector {command}")
    ]
    assert len(synopses) == 1, f"docs/cli.md: expected one synopsis block for {command}"
    return set(_OPTION.findall(synopses[0].text))


def table_options(command: str) -> set[str]:
    rows = [line for line in _section(command).splitlines() if line.startswith("| `")]
    return {option for row in rows for option in _OPTION.findall(row.split(" | ")[0])}


@pytest.mark.parametrize("command", COMMANDS)
def test_synopsis_lists_exactly_the_options_of_help(command: str) -> None:
    documented, actual = synopsis_options(command), help_options(command)
    assert documented == actual, (
        f"docs/cli.md synopsis of {command}: missing {sorted(actual - documented)}, "
        f"not in --help {sorted(documented - actual)}"
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_option_table_describes_exactly_the_options_of_help(command: str) -> None:
    documented, actual = table_options(command), help_options(command)
    assert documented == actual, (
        f"docs/cli.md option table of {command}: missing {sorted(actual - documented)}, "
        f"not in --help {sorted(documented - actual)}"
    )


def test_every_option_the_docs_use_exists() -> None:
    known = set().union(*(help_options(command) for command in COMMANDS))
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    unknown = []
    for page in pages:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for match in re.finditer(r"agent-connector (review|serve|disclose|state)\b([^`|#]*)", line):
                for option in _OPTION.findall(match[2]):
                    if option not in known:
                        unknown.append(f"{page.relative_to(ROOT)}:{number}: {option}")
    assert not unknown, "options no command accepts:\n" + "\n".join(unknown)
