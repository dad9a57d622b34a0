"""Files an operator names on the command line: each failure to read or write one is one line (exit 2).

Input files (a document, a configuration) are checked to open before a command loads its heavy stack;
operator files (a pin file, a contract lock, a SARIF log) are read with their format's own parser and
written as UTF-8, every refusal naming the file and why, never its content.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from agent_connector_sdk.cli.errors import CliError
from agent_connector_sdk.errors import AgentConnectorError

__all__ = ["read_operator_file", "require_readable_file", "unreadable_file", "write_operator_file"]

_T = TypeVar("_T")


def unreadable_file(path: Path, error: OSError) -> CliError:
    """The one line for an input file that cannot be read (missing, a directory, no permission)."""
    if isinstance(error, FileNotFoundError):
        return CliError(f"{path}: no such file")
    if isinstance(error, IsADirectoryError):
        return CliError(f"{path}: is a directory, not a file")
    return CliError(f"{path}: cannot read ({_os_reason(error)})")


def require_readable_file(path: Path) -> None:
    """Fail on an input file that cannot be opened, before a command loads its heavy stack (the file
    is read again, whole, where it is parsed; this only opens it)."""
    try:
        with path.open("rb"):
            pass
    except OSError as error:
        raise unreadable_file(path, error) from None


def read_operator_file(path: Path, what: str, parse: Callable[[bytes], _T]) -> _T:
    """A file the operator named (a pin file, a contract lock, ...), parsed by its format's own reader.

    Unreadable, or refused by ``parse`` (its format's error: a value-free message), is one line naming
    the file and why, as a usage error (exit 2).
    """
    try:
        data = path.read_bytes()
    except OSError as error:
        raise CliError(f"{path}: cannot read the {what} ({_os_reason(error)})") from None
    try:
        return parse(data)
    except AgentConnectorError as error:  # PinFileError, LockFileError, ...
        raise CliError(f"{path}: {error.message}") from None


def write_operator_file(path: Path, text: str, what: str) -> None:
    """Write a file the operator named (UTF-8); unwritable: one line naming the file and why (exit 2)."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise CliError(f"{path}: cannot write the {what} ({_os_reason(error)})") from None


def _os_reason(error: OSError) -> str:
    return error.strerror or type(error).__name__
