"""Extract the fenced code blocks of the documentation and run them as a user would paste them.

A block is chosen by its fence language and by HTML comments on the lines right above its fence:

==========================  =====================================================================
``python``                  run with this interpreter in a fresh temporary directory (exit 0)
``sh``                      run with ``bash -e`` in a fresh temporary directory (exit 0)
``console``                 every ``$ command`` line is run (:func:`run_console_step`); the lines
                            under it are the output the doc claims, compared after normalising
                            (see :func:`normalise`)
``<!-- not-run: why -->``   deliberately not run (counted; the reason is required)
``<!-- with-lab -->``       the contract lab (``agent-connector serve``) runs first, on a free port
                            that replaces ``8000``, the lab's port, in the block (one lab per test
                            module: the lab keeps no state between requests, and each start costs a
                            process)
``<!-- serve -->``          a ``python`` server program: not run alone, but started in the
                            background for every later block of the file marked ``with-server``
``<!-- with-server -->``    the nearest ``serve`` block above runs first, its port replaced
``<!-- output -->``         a ``text`` block: the output of the runnable block above, compared
==========================  =====================================================================

Every block gets a ``.venv`` beside it (a link to this interpreter's environment) and ``PATH`` with the
environment's ``bin`` first, so ``agent-connector``, ``python`` and ``. .venv/bin/activate`` work as
they do in a checkout after ``make demo``; ``PYTHONPATH`` puts this checkout's sources first.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
BIN = Path(sys.executable).parent
LAB_PORT = "8000"
"""The contract lab's port in the docs (``agent-connector serve``'s default)."""
DOC_PORTS = tuple(str(port) for port in range(8000, 8010))
"""The ports the docs write: the lab's, and one of its own for each other server a quick start starts
(so a reader who follows them one after another, leaving each running, never finds a port taken).
Each run replaces each of them with a free port."""
_BACKGROUND_LINE = re.compile(r"&\s*(?:#.*)?$")

RUNNABLE = frozenset({"python", "sh", "console"})
MARKERS = frozenset({"not-run", "with-lab", "serve", "with-server", "output"})
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_MARKER = re.compile(r"^<!--\s*(?P<name>[a-z-]+)(?::\s*(?P<value>.*?))?\s*-->$")


@dataclass
class Block:
    """One fenced block: where it is (``path``, 1-based ``line`` of its opening fence), what it is."""

    path: Path
    line: int
    language: str
    text: str
    markers: dict[str, str] = field(default_factory=dict)
    index: int = 0

    @property
    def where(self) -> str:
        return f"{shown(self.path)}:{self.line}"

    def describe(self) -> str:
        return f"{self.where} (block {self.index + 1}, {self.language or 'no language'})"


def shown(path: Path) -> str:
    """``path`` relative to the checkout when it is inside it (how failures name files)."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def extract(path: Path) -> list[Block]:
    """Every fenced block of ``path`` in order, with the markers directly above it.

    Raises ``ValueError`` naming the line for an unknown marker or an unclosed fence, so a typo in a
    marker cannot quietly exclude a block."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if match is None:
            marker = _MARKER.match(lines[i].strip())
            if marker is not None and marker["name"] not in MARKERS and lines[i].startswith("<!--"):
                raise ValueError(f"{shown(path)}:{i + 1}: unknown doc marker {marker['name']!r}")
            i += 1
            continue
        fence, start = match["fence"], i
        language = match["info"].strip().split(" ")[0]
        body: list[str] = []
        i += 1
        while i < len(lines) and not (
            lines[i].strip().startswith(fence[0] * len(fence)) and not lines[i].strip().strip(fence[0])
        ):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise ValueError(f"{shown(path)}:{start + 1}: unclosed code fence")
        markers: dict[str, str] = {}
        above = start - 1
        while above >= 0 and (marker := _MARKER.match(lines[above].strip())) is not None:
            markers[marker["name"]] = (marker["value"] or "").strip()
            above -= 1
        blocks.append(Block(path, start + 1, language, "\n".join(body) + "\n", markers, len(blocks)))
        i += 1
    return blocks


# ------------------------------------------------------------------------------------- normalising
_NORMALISERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:PORT"),
    (re.compile(r"\bport \d+\b"), "port PORT"),
    (re.compile(r"/tmp/[^\s'\"]+"), "/tmp/PATH"),
    (re.compile(r"\b[0-9a-f]{12,64}\b"), "HEX"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b"), "TIME"),
    (re.compile(r"\b\d{1,3}(?:,\d{3})+\b"), "N"),
)


def normalise(text: str) -> list[str]:
    """Lines with ports, temporary paths, hex digests, timings and grouped numbers replaced by
    placeholders and trailing spaces dropped; blank lines at either end removed."""
    lines = []
    for line in text.splitlines():
        for pattern, placeholder in _NORMALISERS:
            line = pattern.sub(placeholder, line)
        lines.append(line.rstrip())
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def matches(expected: str, actual: str) -> str | None:
    """``None`` when ``actual`` is what ``expected`` claims, else a short diff-like explanation.

    A line ``…`` (or ``...``) in ``expected`` stands for any number of lines; a line ending in ``…``
    matches any line that starts with the rest (an output line the doc cuts)."""
    want, got = normalise(expected), normalise(actual)

    def walk(w: int, g: int) -> bool:
        while w < len(want):
            if want[w] in ("…", "..."):
                return any(walk(w + 1, k) for k in range(g, len(got) + 1))
            if g >= len(got) or not _line_matches(want[w], got[g]):
                return False
            w, g = w + 1, g + 1
        return g == len(got)

    if walk(0, 0):
        return None
    diff = difflib.unified_diff(want, got, "documented (normalised)", "actual (normalised)", lineterm="")
    return "\n".join(diff)


def _line_matches(want: str, got: str) -> bool:
    if want.endswith("…") and not want.endswith(" …"):
        return got.startswith(want[:-1])
    return want == got


# ------------------------------------------------------------------------------------------ running
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def free_ports() -> dict[str, int]:
    """A distinct free port for each of :data:`DOC_PORTS` (all held open until all are chosen)."""
    with ExitStack() as held:
        sockets = [held.enter_context(socket.socket()) for _ in DOC_PORTS]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return {doc: int(sock.getsockname()[1]) for doc, sock in zip(DOC_PORTS, sockets, strict=True)}


def environment() -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(SRC),
        "COLUMNS": "200",
        "NO_COLOR": "1",
        "TERM": "dumb",
        "PYTHONUNBUFFERED": "1",
    }


@contextmanager
def workdir() -> Iterator[Path]:
    """A fresh directory with ``.venv`` linking to this interpreter's environment."""
    with tempfile.TemporaryDirectory(prefix="doc-block-") as name:
        path = Path(name)
        (path / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
        yield path


def with_ports(text: str, ports: Mapping[str, int]) -> str:
    """``text`` with each documented port (``:8001``, ``--port 8001``, ``port=8001``) replaced by its
    run's port."""
    return re.sub(rf"(?<=[:= ])({'|'.join(ports)})\b", lambda match: str(ports[match[1]]), text)


def documented_ports(text: str) -> list[str]:
    """The :data:`DOC_PORTS` ``text`` names, in order of first use."""
    found = re.findall(rf"(?<=[:= ])({'|'.join(DOC_PORTS)})\b", text)
    return list(dict.fromkeys(found))


def bound_ports(block: Block) -> list[str]:
    """The documented ports a block starts a server on: a ``serve`` block's, and those of an ``sh``
    block's background commands (a line ending in ``&``)."""
    if "serve" in block.markers:
        return documented_ports(block.text)
    if block.language != "sh":
        return []
    lines = [line for line in block.text.splitlines() if _BACKGROUND_LINE.search(line)]
    return documented_ports("\n".join(lines))


READY_TIMEOUT = 120.0
"""A hang guard for a background server's start-up (a few seconds on a quiet machine; 15-20 s were seen
on a busy one)."""
SERVING_LINE = re.compile(r"^serving .* at (?P<url>http://\S+)$")
"""What ``agent-connector serve`` (and ``gateway``) print once they listen."""


def wait_for_port(
    port: int, process: subprocess.Popen[str], what: str, timeout: float = READY_TIMEOUT
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            out, _ = process.communicate()
            raise AssertionError(f"{what} exited with {process.returncode} before listening:\n{out}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"{what} did not listen on port {port} within {timeout:g} s")


def wait_for_line(
    ready: re.Pattern[str], process: subprocess.Popen[str], what: str, timeout: float = READY_TIMEOUT
) -> list[str]:
    """Read ``process``'s output until a line matches ``ready`` (what the server says once it listens);
    then keep draining it in a thread, so a chatty server never blocks on a full pipe. Returns the list
    the drain appends to (the lines read so far first)."""
    assert process.stdout is not None
    lines: list[str] = []
    found = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if ready.match(line.rstrip("\n")):
                found.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout
    while not found.wait(0.05):
        if not reader.is_alive() and not found.is_set():
            process.wait(timeout=10)
            said = "".join(lines)
            raise AssertionError(f"{what} exited with {process.returncode} before it was ready:\n{said}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not say it was ready within {timeout:g} s:\n{''.join(lines)}")
    return lines


@contextmanager
def background(
    command: list[str], port: int, cwd: Path, what: str, ready: re.Pattern[str] | None = None
) -> Iterator[None]:
    """Run ``command`` until the block is done; it must listen on ``port`` first, or, given ``ready``,
    say so in a line matching it (e.g. :data:`SERVING_LINE`)."""
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    drained = False  # a thread reads its output (wait_for_line): communicate() must not read it too
    try:
        if ready is not None:
            drained = True
            wait_for_line(ready, process, what)
        else:
            wait_for_port(port, process, what)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=10) if drained else process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait() if drained else process.communicate()


@dataclass(frozen=True)
class Outcome:
    code: int
    output: str


def run_program(block: Block, text: str, cwd: Path, timeout: float) -> Outcome:
    if block.language == "python":
        command = [sys.executable, "-c", text]
    else:
        command = ["bash", "-e", "-o", "pipefail", "-c", text]
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # one stream, in the order a terminal shows it
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    except subprocess.TimeoutExpired as expired:
        raise AssertionError(f"{block.describe()}: still running after {timeout:g} s") from expired
    return Outcome(done.returncode, done.stdout)


# A console step that is nothing but ``agent-connector`` and plain words (no expansion, quoting aside, no
# redirection, pipe or list) is what the shell would hand the console script word for word.
_SHELL_SYNTAX = re.compile(r"[|&;<>()$`*?~{}\[\]\\!#=]")


def run_console_step(block: Block, command: str, cwd: Path, timeout: float) -> Outcome:
    """One ``$ command`` of a console block: a plain ``agent-connector`` command through the console
    script's entry function in this interpreter (stdout and stderr as one stream, the block's working
    directory; no process start-up per step); anything else with ``bash`` as :func:`run_program` runs it."""
    words = shlex.split(command) if not _SHELL_SYNTAX.search(command) else []
    if words and words[0] == "agent-connector":
        from tests.support.cli import run_cli_in_process

        run = run_cli_in_process(*words[1:], cwd=cwd, timeout=timeout, stderr_into_stdout=True)
        return Outcome(run.code, run.out)
    probe = Block(block.path, block.line, "sh", command + "\n", {}, block.index)
    return run_program(probe, probe.text, cwd, timeout)


def console_steps(text: str) -> list[tuple[str, str]]:
    """``(command, claimed output)`` for each ``$ `` line of a console block."""
    steps: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
        elif line.strip():
            raise ValueError(f"console block line before any '$ ' command: {line!r}")
    return [(command, "\n".join(output)) for command, output in steps]


def strip_comment(command: str) -> str:
    """A console command without its trailing ``# comment`` (explanations for the reader)."""
    return re.sub(r"\s+#\s[^'\"]*$", "", command)
