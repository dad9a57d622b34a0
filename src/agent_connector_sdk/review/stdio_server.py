"""What a stdio server is started with, and what its stderr says when it fails (pure, no I/O: the
stderr is a bounded tail kept in memory while the server runs).

The ``mcp`` SDK starts a stdio server with a small safe environment (``HOME``, ``PATH``, ``USER``...),
not ours: a server that needs ``MY_API_KEY`` sees nothing unless it is passed on purpose, with
``--env KEY=VALUE`` or ``--env-pass NAME`` (or an ``env`` entry of ``--mcp-config``). Values are never
printed: an error names the variable only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from agent_connector_sdk.review.errors import ReviewError
from agent_connector_sdk.sanitize import sanitize_text

__all__ = ["ENV_NAME", "environment_hint", "informative_line", "server_environment"]

ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
"""An environment variable name as POSIX shells write it."""

_STDERR_TAIL_BYTES: Final = 64 * 1024
_QUOTED_CHARACTERS: Final = 200
_JUDGED_CHARACTERS: Final = 400

# A line that says what went wrong, rather than what the server was doing: the exception line of a
# traceback, uvicorn's "ERROR: [Errno 98] ...", npm's "npm ERR!", "Error: Cannot find module"...
_ERROR_WORDS: Final = re.compile(
    r"\b(error|errno|exception|fatal|failed|failure|cannot|can't|could not|denied|refused|"
    r"not found|no such|missing|invalid|unauthorized|forbidden|panic)\b|ERR!",
    re.IGNORECASE,
)
_EXCEPTION_NAME: Final = re.compile(r"[A-Za-z]\w*(Error|Exception)\b")  # KeyError: 'MY_API_KEY'
_NOT_THE_ERROR: Final = re.compile(
    r"^(Traceback \(most recent call last\)|During handling of|The above exception)"
)


def server_environment(
    pairs: Sequence[str], passed: Sequence[str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``--env KEY=VALUE`` (repeatable) and ``--env-pass NAME`` (this process's ``NAME``, repeatable)
    as the variables added to a stdio server's environment. A malformed pair, a bad name or an unset
    ``--env-pass`` variable is one :class:`ReviewError` naming the variable, never a value."""
    source = os.environ if environ is None else environ
    env: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or ENV_NAME.fullmatch(name) is None:
            shown = sanitize_text(name if sep else pair, 40)
            raise ReviewError(
                f"--env must look like NAME=VALUE with NAME a variable name (got {shown!r}=...)"
            )
        if "\0" in value:
            raise ReviewError(f"--env {name}: the value holds a NUL byte")
        env[name] = value
    for name in passed:
        if ENV_NAME.fullmatch(name) is None:
            raise ReviewError(f"--env-pass takes a variable name (got {sanitize_text(name, 40)!r})")
        inherited = source.get(name)
        if inherited is None:
            raise ReviewError(f"--env-pass {name}: the variable is not set in this environment")
        env[name] = inherited
    return env


_ABOUT_ENVIRONMENT: Final = re.compile(
    r"environ|\benv\b|not set|KeyError|api[_ -]?key|token|credential|secret|password", re.IGNORECASE
)


def environment_hint(quoted: str | None) -> str:
    """A sentence for a failed stdio server whose error line is about a missing variable or key: the
    server saw only the SDK's small default environment."""
    if quoted is None or _ABOUT_ENVIRONMENT.search(quoted) is None:
        return ""
    return (
        "; the server gets only HOME, LOGNAME, PATH, SHELL, TERM and USER from here: "
        "pass what it needs with --env-pass NAME or --env NAME=VALUE"
    )


def informative_line(tail: bytes | None) -> str | None:
    """The line of a server's stderr tail that best says why it failed, sanitized and capped.

    The last line that reads like an error (the exception line of a traceback, ``ERROR: [Errno 98]
    ...``, ``npm ERR!``), else the last non-blank line: a server that fails to bind its port logs the
    error and then "Application shutdown complete", and only the first of those helps. ``tail`` is
    the last bytes the server wrote (a bounded
    :class:`~agent_connector_sdk.mcp.host._server_output.StderrRecord`); only its last 64 KiB are read."""
    if not tail:
        return None
    text = tail[-_STDERR_TAIL_BYTES:].decode("utf-8", errors="replace")
    # Judged and quoted by their start: a line is cut before matching (the patterns stay linear).
    lines = [line.strip()[:_JUDGED_CHARACTERS] for line in text.splitlines() if line.strip()]
    best = _most_informative(lines)
    return sanitize_text(best, _QUOTED_CHARACTERS) if best else None  # the server's own bytes


def _most_informative(lines: Iterable[str]) -> str | None:
    last: str | None = None
    error: str | None = None
    for line in lines:
        last = line
        if (_ERROR_WORDS.search(line) or _EXCEPTION_NAME.search(line)) and not _NOT_THE_ERROR.match(line):
            error = line
    return error or last
