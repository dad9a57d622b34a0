"""Drive ``agent-connector`` as a user does: its exit code, stdout and stderr.

``run_cli`` starts a fresh interpreter (the console script's own entry point): for what is about the
process itself (start-up imports, signals, stdio children, the real streams). ``run_cli_in_process``
runs the same entry function in this interpreter, with the same environment, working directory and
stream capture, so the many tests that assert on exit codes and output do not each pay a process
start-up (~1.3 s of CPU importing the stack).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import subprocess
import sys
import threading
import traceback
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def run_cli(*args: str, timeout: float = 120) -> Run:
    """``agent-connector ARGS`` in a fresh interpreter (the console script's own entry point)."""
    # This checkout's sources first (an installed copy elsewhere must not answer for them), then the
    # root for `tests.*` helpers a spawned server imports.
    path = os.pathsep.join([os.path.join(ROOT, "src"), ROOT])
    env = {**os.environ, "PYTHONPATH": path, "COLUMNS": "200", "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-c", "from agent_connector_sdk.cli import main_exit; main_exit()", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )
    return Run(done.returncode, done.stdout, done.stderr)


# What a fresh interpreter's console script sees: the environment ``run_cli`` gives it.
_CLI_ENVIRONMENT = {"COLUMNS": "200", "NO_COLOR": "1"}


@contextmanager
def _as_a_fresh_process(cwd: str | Path, err: io.StringIO) -> Iterator[None]:
    """The parts of a fresh process the CLI's output depends on, for the duration of one in-process run:
    the environment, the working directory, and where warnings and library log records go."""
    saved_environment = {name: os.environ.get(name) for name in _CLI_ENVIRONMENT}
    saved_cwd = os.getcwd()
    # A process without logging configuration prints records of WARNING and above, bare, on stderr
    # (logging.lastResort); under pytest the root logger has capture handlers, so say it explicitly.
    last_resort = logging.StreamHandler(err)
    last_resort.setLevel(logging.WARNING)
    root = logging.getLogger()
    os.environ.update(_CLI_ENVIRONMENT)
    os.chdir(cwd)
    root.addHandler(last_resort)
    try:
        with warnings.catch_warnings():
            # The interpreter's default filters (pytest's configuration would hide or raise them).
            warnings.resetwarnings()
            warnings.filterwarnings("default", category=DeprecationWarning, module="__main__", append=True)
            for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
                warnings.filterwarnings("ignore", category=category, append=True)
            yield
    finally:
        root.removeHandler(last_resort)
        os.chdir(saved_cwd)
        for name, value in saved_environment.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_cli_in_process(*args: str, cwd: str | Path = ROOT, timeout: float = 120) -> Run:
    """``agent-connector ARGS`` through its entry function in this interpreter, as ``run_cli`` sees it:
    exit code, stdout, stderr. A crash is exit 1 with its traceback on stderr, as in a process; a run
    past ``timeout`` fails the test, as ``run_cli``'s does (it runs on a worker thread to be bounded)."""
    from agent_connector_sdk.cli import main

    out, err = io.StringIO(), io.StringIO()
    codes: list[int] = []

    def run() -> None:
        try:
            codes.append(main(list(args), out=out))
        except SystemExit as exit_:
            codes.append(exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1))
        except Exception:
            traceback.print_exc(file=err)
            codes.append(1)

    with _as_a_fresh_process(cwd, err), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        worker = threading.Thread(target=run, name="agent-connector", daemon=True)
        worker.start()
        worker.join(timeout)
    if worker.is_alive():
        raise AssertionError(f"agent-connector {' '.join(args)} did not finish in {timeout} s")
    return Run(codes[0], out.getvalue(), err.getvalue())


def review_call(url: str, tool: str, arguments: dict[str, Any], *, token: str) -> Run:
    """``review URL --json --token TOKEN --call TOOL --arguments JSON``: one gated call, as ``token``."""
    as_json = json.dumps(arguments, ensure_ascii=False)
    return run_cli_in_process(
        "review", url, "--json", "--token", token, "--call", tool, "--arguments", as_json
    )


def assert_one_line_error(run: Run, *fragments: str) -> None:
    """Exit 2, nothing on stdout, exactly one line on stderr, no traceback, naming ``fragments``."""
    assert run.code == 2, (run.code, run.out, run.err)
    assert "Traceback" not in run.err and "Traceback" not in run.out
    lines = [line for line in run.err.splitlines() if line.strip()]
    assert len(lines) == 1, run.err
    assert lines[0].startswith("agent-connector: ")
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@contextmanager
def non_mcp_server(kind: str, contacted: threading.Event | None = None) -> Iterator[str]:
    """A real HTTP server that is not MCP: ``html``, ``json`` (not JSON-RPC), ``404`` or ``silent``
    (accepts and never answers). ``contacted`` is set when the first request arrives."""
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def _reply(self) -> None:
            if contacted is not None:
                contacted.set()
            if kind == "silent":
                stop.wait(30)
                return
            if kind == "404":
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = b"<html><body>hello</body></html>" if kind == "html" else b'{"hello": "world"}'
            self.send_response(200)
            self.send_header("Content-Type", "text/html" if kind == "html" else "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_DELETE = _reply

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True  # type: ignore[attr-defined]  # a ThreadingHTTPServer flag, harmless here
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
