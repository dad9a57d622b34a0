"""``gateway --check``'s progress through a search-first child's hidden catalog, as the operator sees it
on stderr: on a terminal (a real pseudo-terminal) a bar that is drawn, then erased with the cursor shown
again, and nothing else; on a pipe one plain line per tenth of what is known, ending at the whole catalog.
The CLI is a real process; the child (300 hidden tools behind FastMCP's regex search) is served over
Streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from tests.support.cli import ROOT
from tests.support.http_server import serve_asgi
from tests.support.search_first_child import build

COUNT = 300
HANG_GUARD = 300.0
CHECK = ["-c", "from agent_connector_sdk.cli import main_exit; main_exit()", "gateway", "--check", "--json"]
# What a bar may write on a terminal: colours, cursor show/hide, cursor moves and line erasing (CSI),
# carriage returns and newlines. Never an OSC (window title), a BEL or any other control byte.
TERMINAL_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture(scope="module")
def child() -> Iterator[str]:
    with serve_asgi(build("huge", COUNT).http_app(stateless_http=True)) as url:
        yield url


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "src"), ROOT]), **extra}
    env.pop("NO_COLOR", None)
    return env


def _report(stdout: str) -> dict[str, object]:
    (child,) = json.loads(stdout)["children"]
    assert isinstance(child, dict)
    return child


def test_on_a_terminal_the_progress_is_a_bar_that_ends_cleanly(child: str) -> None:
    primary, secondary = os.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, *CHECK, "--child", f"big={child}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=secondary,
            env=_env(TERM="xterm-256color", COLUMNS="100"),
            cwd=ROOT,
        )
        os.close(secondary)  # the child holds the only other end: reading ends when it exits
        chunks: list[bytes] = []

        def drain() -> None:  # a terminal's buffer is small: read as it is written
            while True:
                try:
                    data = os.read(primary, 65536)
                except OSError:  # EIO: the other end is closed
                    return
                if not data:
                    return
                chunks.append(data)

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        stdout, _ = process.communicate(timeout=HANG_GUARD)
        reader.join(timeout=HANG_GUARD)
    finally:
        os.close(primary)
    assert process.returncode == 0, b"".join(chunks)[-2000:]
    assert str(_report(stdout.decode())["enumeration"]).startswith(f"complete: {COUNT} tools in ")
    shown = b"".join(chunks).decode("utf-8")
    # The bar was drawn: the child's name, the label and a count out of the catalog known so far.
    assert "child big: hidden tools" in shown, shown[-2000:]
    assert re.search(r"\d+/\d+", shown), shown[-2000:]
    # Not the pipe's plain lines: a terminal gets the bar only.
    assert "hidden tools verified" not in shown
    # Nothing but terminal control sequences among the bytes a terminal would interpret.
    plain = TERMINAL_CONTROL.sub("", shown)
    bad = [hex(ord(c)) for c in plain if (ord(c) < 32 and c not in "\r\n") or 0x7F <= ord(c) < 0xA0]
    assert not bad, bad[:10]
    # It ends cleanly: the cursor the bar hid is shown again, and the bar (transient) is erased, so
    # no partly drawn bar is left as the last thing on the terminal.
    assert shown.rfind("\x1b[?25h") > shown.rfind("\x1b[?25l") >= 0
    last_line = TERMINAL_CONTROL.sub("", shown.replace("\r\n", "\n").split("\n")[-1])
    assert "hidden tools" not in last_line.split("\r")[-1], repr(last_line)


def test_on_a_pipe_the_progress_is_a_line_per_tenth_ending_at_the_whole_catalog(child: str) -> None:
    run = subprocess.run(
        [sys.executable, *CHECK, "--child", f"big={child}"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=_env(TERM="xterm-256color"),
        cwd=ROOT,
        timeout=HANG_GUARD,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert str(_report(run.stdout)["enumeration"]).startswith(f"complete: {COUNT} tools in ")
    assert "\x1b" not in run.stderr and "\r" not in run.stderr  # no bar, no colour on a pipe
    pattern = re.compile(r"^child big: (\d+) of at least (\d+) hidden tools verified \((\d+) searches\)$")
    lines = [match for line in run.stderr.splitlines() if (match := pattern.match(line))]
    assert lines, run.stderr[-2000:]
    verified = [int(match[1]) for match in lines]
    known = [int(match[2]) for match in lines]
    # Monotonic, at most one line per tenth of the final size (and the last state once), ending whole.
    assert verified == sorted(verified) and known == sorted(known)
    assert len(lines) <= 11 + 1
    assert (verified[-1], known[-1]) == (COUNT, COUNT)
