"""Exit codes at the edge: ``cli/errors.py`` is the one table from error family to exit code and line.

The packages below the command line raise their own families (``review.ReviewError``,
``serving.ServingError``) and know no exit code; every family they define has a row of the table, and
:func:`ending` renders each the same way. The control cases show a family left out of the table, and
an exception no command ends with on purpose, refused.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from cyclopts.exceptions import CycloptsError

from agent_connector_sdk.cli.errors import COMMAND_FAILURES, EXIT_CODES, CliError, ending
from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.review import ReviewError, ServerUnavailable
from agent_connector_sdk.serving import ServingError

BELOW_THE_COMMAND_LINE = ("review", "serving")


def _families_defined_in(package: str) -> set[type[AgentConnectorError]]:
    root = importlib.import_module(f"agent_connector_sdk.{package}")
    found: set[type[AgentConnectorError]] = set()
    for info in pkgutil.walk_packages(root.__path__, f"{root.__name__}."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, AgentConnectorError)
                and value.__module__ == module.__name__
            ):
                found.add(value)
    return found


def _unmapped(families: set[type[AgentConnectorError]]) -> set[str]:
    return {family.__name__ for family in families if not issubclass(family, COMMAND_FAILURES)}


@pytest.mark.parametrize("package", BELOW_THE_COMMAND_LINE)
def test_every_family_below_the_command_line_has_an_exit_code(package: str) -> None:
    families = _families_defined_in(package)
    assert families  # each package raises a family of its own
    assert _unmapped(families) == set()


def test_control_a_family_left_out_of_the_table_is_found() -> None:
    class Unmapped(AgentConnectorError):
        pass

    assert _unmapped({ReviewError, Unmapped}) == {"Unmapped"}


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (CliError("--timeout must be a positive number of seconds"), "--timeout must be a positive number"),
        (ReviewError("--env-pass X: the variable is not set in this environment"), "--env-pass X: the"),
        (ServerUnavailable("nothing listens at 127.0.0.1:9", reason="refused"), "nothing listens at"),
        (ServingError("port 1 on 127.0.0.1 is already in use", category="cannot_bind"), "port 1 on"),
    ],
)
def test_each_family_ends_a_command_with_one_line_and_exit_2(error: AgentConnectorError, line: str) -> None:
    text, code = ending(error)
    assert code == 2 == EXIT_CODES[next(family for family in EXIT_CODES if isinstance(error, family))]
    assert text == f"agent-connector: {error}"
    assert text.startswith(f"agent-connector: {line}") and "\n" not in text


def test_a_line_is_sanitized_and_capped() -> None:
    text, _ = ending(ReviewError("refused by this host: \x1b[31mred\u202e" + "x" * 5_000))
    assert "\x1b" not in text and "\u202e" not in text
    assert len(text) < 1_100


def test_parse_errors_and_interrupts_have_their_codes() -> None:
    assert ending(KeyboardInterrupt()) == ("agent-connector: interrupted", 130)
    text, code = ending(CycloptsError(msg="Unknown option: --nope"))
    assert code == 2 and text.endswith("(see --help)")


def test_control_an_exception_no_command_ends_with_is_not_given_a_code() -> None:
    with pytest.raises(TypeError, match="no exit code for ValueError"):
        ending(ValueError("a bug, shown as a traceback"))
