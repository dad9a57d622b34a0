"""Exit codes at the edge: the command line's own error family, and the ONE table from every family a
command can end with to its exit code and the line a user reads.

Below the command line each folder raises its own family from the error tree
(:mod:`agent_connector_sdk.errors`): the reviewer :class:`~agent_connector_sdk.review.ReviewError` (and
its :class:`~agent_connector_sdk.review.ServerUnavailable`), the serving assembly
:class:`~agent_connector_sdk.serving.ServingError`; the command line itself raises :class:`CliError` for
an option or a file it cannot use. None of them knows about exit codes: :data:`EXIT_CODES` does, and
:func:`ending` turns whatever ended a command (one of those families, a parse error, Ctrl-C) into the
one line on stderr and the exit code. Files an operator names are read and written by
:mod:`agent_connector_sdk.cli.operator_files`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

from cyclopts.exceptions import CycloptsError

from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.review import ReviewError
from agent_connector_sdk.sanitize import sanitize_text
from agent_connector_sdk.serving import ServingError

__all__ = [
    "COMMAND_ENDINGS",
    "COMMAND_FAILURES",
    "EXIT_CODES",
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "CliCategory",
    "CliError",
    "ending",
]

EXIT_USAGE: Final = 2
"""A command could not run: bad input, or a server that could not be reviewed."""
EXIT_INTERRUPTED: Final = 130

CliCategory = Literal["usage"]


class CliError(AgentConnectorError):
    """An option or a file given on the command line cannot be used: category ``usage``, the message
    names the option or file and what is wrong with it."""

    category: CliCategory

    def __init__(self, message: str) -> None:
        super().__init__("usage", message)


EXIT_CODES: Final[Mapping[type[AgentConnectorError], int]] = {
    CliError: EXIT_USAGE,
    ReviewError: EXIT_USAGE,  # ServerUnavailable included: the server could not be reviewed at all
    ServingError: EXIT_USAGE,
}
"""Every family a command ends with on purpose, and its exit code (``--strict`` findings are a result,
exit 1, decided by the command)."""

COMMAND_FAILURES: Final[tuple[type[AgentConnectorError], ...]] = tuple(EXIT_CODES)
COMMAND_ENDINGS: Final[tuple[type[BaseException], ...]] = (
    *COMMAND_FAILURES,
    CycloptsError,
    KeyboardInterrupt,
)
"""Everything :func:`ending` turns into a line and an exit code (anything else is a bug: a traceback)."""


def ending(error: BaseException) -> tuple[str, int]:
    """The one line on stderr and the exit code for what ended a command: one of
    :data:`COMMAND_FAILURES`, a parse error of cyclopts, or an interrupt."""
    if isinstance(error, COMMAND_FAILURES):
        # One line, whatever the server put in it (its words are quoted in some messages).
        code = next(code for family, code in EXIT_CODES.items() if isinstance(error, family))
        return f"agent-connector: {sanitize_text(str(error), 1_000)}", code
    if isinstance(error, CycloptsError):
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        first = sanitize_text(lines[0] if lines else type(error).__name__, 300)
        return f"agent-connector: {first} (see --help)", EXIT_USAGE
    if isinstance(error, KeyboardInterrupt):
        return "agent-connector: interrupted", EXIT_INTERRUPTED
    raise TypeError(f"no exit code for {type(error).__name__}") from error
