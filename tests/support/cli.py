"""Drive ``agent-connector`` as a user does: a subprocess, its exit code, stdout and stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
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


def review_call(url: str, tool: str, arguments: dict[str, Any], *, token: str) -> Run:
    """``review URL --json --token TOKEN --call TOOL --arguments JSON``: one gated call, as ``token``."""
    as_json = json.dumps(arguments, ensure_ascii=False)
    return run_cli("review", url, "--json", "--token", token, "--call", tool, "--arguments", as_json)


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
