"""The rich console every command prints through: colour and width decided once, the way people and
CI set them.

* Colour on a terminal, plain text elsewhere; ``NO_COLOR`` (any non-empty value, no-color.org) turns
  it off even on a terminal, ``FORCE_COLOR`` turns it on even into a pipe (``NO_COLOR`` wins).
* Width: the terminal's; into a pipe or file ``COLUMNS`` when set (so ``COLUMNS=80 agent-connector
  review … > report.txt`` is what an 80-column terminal shows), else 160.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final, TextIO

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["PIPE_WIDTH", "output_console", "progress_bar"]

PIPE_WIDTH: Final = 160
_MIN_WIDTH: Final = 40
_MAX_WIDTH: Final = 1_000


def output_console(stream: TextIO, environ: Mapping[str, str] | None = None) -> Console:
    from rich.console import Console

    env = os.environ if environ is None else environ
    tty = stream.isatty()
    colour = (tty or env.get("FORCE_COLOR", "") != "") and env.get("NO_COLOR", "") == ""
    width = None if tty else _columns(env.get("COLUMNS"))
    return Console(
        file=stream,
        highlight=False,
        soft_wrap=False,
        width=width,
        no_color=not colour,
        force_terminal=(colour and not tty) or None,
        color_system="auto" if colour else None,  # None: no escape codes whatever rich reads
        # rich would turn a server's ":white_check_mark:" into ✅, text the server never sent.
        emoji=False,
    )


def _columns(value: str | None) -> int:
    try:
        columns = int(value) if value is not None else PIPE_WIDTH
    except ValueError:
        return PIPE_WIDTH
    return min(max(columns, _MIN_WIDTH), _MAX_WIDTH)


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[str, int], None]]:
    """A progress bar on stderr when it is a terminal; else a hook that does nothing."""
    if not sys.stderr.isatty():
        yield lambda event, amount: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    bar = Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        console=Console(stderr=True, emoji=False),
        transient=True,
    )
    task = bar.add_task(label, total=None)

    def hook(event: str, amount: int) -> None:
        if event == "total":
            bar.update(task, total=amount)
        else:
            bar.advance(task, amount)

    with bar:
        yield hook
