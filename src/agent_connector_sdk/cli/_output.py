"""Where the current ``agent-connector`` run writes: one stream per :func:`~.app.main` call.

Every command module reads it (``current_output()``), so a caller — a test passing a ``StringIO`` —
sees everything a command printed, whichever module the command lives in.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["current_output", "writing_to"]

_STREAMS: list[TextIO] = []


def current_output() -> TextIO:
    """The stream of the innermost :func:`writing_to` (standard output outside one)."""
    return _STREAMS[-1] if _STREAMS else sys.stdout


@contextmanager
def writing_to(stream: TextIO | None) -> Iterator[None]:
    """Make ``stream`` (``None``: standard output) the current output for the duration."""
    _STREAMS.append(stream if stream is not None else sys.stdout)
    try:
        yield
    finally:
        _STREAMS.pop()
