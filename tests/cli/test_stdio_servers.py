"""Stdio servers that just work: their environment on purpose (``--env``, ``--env-pass``), the handshake
under ``--timeout``, Ctrl-C stopping the whole server process group at once, no orphan and no traceback
on any teardown path, and the quoted stderr line that says why (not the last log line)."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from agent_connector_sdk.cli import main
from agent_connector_sdk.review import ReviewError, ServerUnavailable
from agent_connector_sdk.review.live import ReviewOptions, review_server
from agent_connector_sdk.review.report import Target
from agent_connector_sdk.review.stdio_server import informative_line, server_environment
from tests.support.cli import ROOT

SERVER = Path(ROOT) / "tests" / "support" / "stdio_needs_env.py"
COMMAND = ["--", sys.executable, str(SERVER)]
SECRET = "sk-live-0123456789abcdef"


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie waiting for its reaper is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _wait_dead(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.05)
    return [pid for pid in pids if _alive(pid)]


def _pids(pidfile: Path, seconds: float = 30) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        text = pidfile.read_text() if pidfile.exists() else ""
        if text.endswith("\n"):
            return [int(part) for part in text.split()]
        time.sleep(0.05)
    raise AssertionError("the stdio server never started")


# ------------------------------------------------------------------------------ the environment
def test_env_pairs_and_passed_variables_become_the_servers_environment() -> None:
    env = server_environment(
        ["MY_REGION=eu", "EMPTY=", "WITH_EQUALS=a=b"], ["MY_API_KEY"], {"MY_API_KEY": SECRET}
    )
    assert env == {"MY_REGION": "eu", "EMPTY": "", "WITH_EQUALS": "a=b", "MY_API_KEY": SECRET}


@pytest.mark.parametrize(
    ("pairs", "passed", "words"),
    [
        (["NOEQUALS"], [], "--env must look like NAME=VALUE"),
        (["1BAD=x"], [], "--env must look like NAME=VALUE"),
        (["BAD NAME=" + SECRET], [], "--env must look like NAME=VALUE"),
        (["NUL=a\0b"], [], "--env NUL: the value holds a NUL byte"),
        ([], ["NOT_SET_ANYWHERE"], "--env-pass NOT_SET_ANYWHERE: the variable is not set"),
        ([], ["not-a-name"], "--env-pass takes a variable name"),
    ],
)
def test_bad_env_options_are_one_error_naming_the_variable_never_a_value(
    pairs: list[str], passed: list[str], words: str
) -> None:
    with pytest.raises(ReviewError) as refused:
        server_environment(pairs, passed, {"MY_API_KEY": SECRET})
    assert words in str(refused.value)
    assert SECRET not in str(refused.value)


def test_env_options_reach_the_server_and_their_values_are_never_printed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MY_API_KEY", SECRET)
    out = io.StringIO()
    code = main(["review", "--env-pass", "MY_API_KEY", "--env", "MY_REGION=zurich", *COMMAND], out)
    err = capsys.readouterr().err
    assert code == 0, err
    assert "lookup_in_zurich" in out.getvalue()  # the tool's name comes from the passed MY_REGION
    assert SECRET not in out.getvalue() + err


def test_env_options_on_an_http_target_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["review", "--env", "A=1", "http://127.0.0.1:9/mcp"], io.StringIO()) == 2
    assert "stdio server's environment" in capsys.readouterr().err


# ------------------------------------------------------------------------- what stderr says
def test_without_its_key_the_server_fails_and_the_error_line_is_quoted(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MY_API_KEY", SECRET)  # ours: the server gets it only when passed
    assert main(["review", *COMMAND], io.StringIO()) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert "(server stderr: ERROR: MY_API_KEY is not set; cannot authenticate upstream)" in lines[0]
    assert "--env-pass" in lines[0]  # the way out is said
    assert "Traceback" not in lines[0]


@pytest.mark.parametrize(
    ("log", "quoted"),
    [
        (
            "INFO: Started server process [1]\nERROR: [Errno 98] error while attempting to bind on address "
            "('127.0.0.1', 8000): address already in use\nINFO: Waiting for application shutdown.\n"
            "INFO: Application shutdown complete.\n",
            "ERROR: [Errno 98] error while attempting to bind on address ('127.0.0.1', 8000): address "
            "already in use",
        ),
        (
            'Traceback (most recent call last):\n  File "srv.py", line 3, in <module>\n    key = '
            "os.environ['MY_API_KEY']\nKeyError: 'MY_API_KEY'\n",
            "KeyError: 'MY_API_KEY'",
        ),
        (
            "npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://registry/x\n\n",
            "npm ERR! 404 Not Found - GET",
        ),
        ("starting\nlistening on stdio\n", "listening on stdio"),
        ("   \n\n", None),
        ("ok\nerror: \x1b[31mred\x1b[0m \u202eevil\n", "error: \\x1b[31mred\\x1b[0m \\u202eevil"),
    ],
)
def test_the_quoted_line_is_the_error_not_the_last_log_line(log: str, quoted: str | None) -> None:
    line = informative_line(log.encode())
    if quoted is None:
        assert line is None
    else:
        assert line is not None and line.startswith(quoted), line


def test_only_the_last_64_kib_of_a_huge_stderr_tail_is_judged() -> None:
    assert informative_line(b"ERROR: early\n" + b"x" * (1 << 20) + b"\nfinal words\n") == "final words"
    assert informative_line(b"") is None and informative_line(None) is None


# ----------------------------------------------------------------- the handshake and teardown
def test_a_server_that_never_answers_times_out_under_timeout_and_leaves_no_process(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    target = Target(kind="stdio", address=f"{sys.executable} {SERVER} --silent {pidfile}")
    options = ReviewOptions(timeout=1.0)
    started = time.monotonic()
    with pytest.raises(ServerUnavailable) as failed:
        anyio.run(review_server, target, options)
    elapsed = time.monotonic() - started
    assert "timed out after 1 s" in str(failed.value)
    assert "deadline" not in str(failed.value)
    assert elapsed < 60, elapsed  # a hang guard: was 300 s, the handshake hung past --timeout
    assert _wait_dead(_pids(pidfile), 5) == []  # the server and its child: the whole group


def test_ctrl_c_mid_handshake_ends_the_review_and_the_server_group_at_once(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    review = subprocess.Popen(
        [
            sys.executable,
            "-c",
            # The SDK's stdin grace (2 s) made long, so "at once" and "after the grace" are far apart
            # whatever the machine's load.
            "import mcp.client.stdio as sdk_stdio; sdk_stdio.PROCESS_TERMINATION_TIMEOUT = 60.0\n"
            "from agent_connector_sdk.cli import main_exit; main_exit()",
            "review",
            "--timeout",
            "60",
            "--",
            sys.executable,
            str(SERVER),
            "--silent",
            str(pidfile),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "src"), ROOT])},
        cwd=ROOT,
    )
    try:
        pids = _pids(pidfile)
        assert all(_alive(pid) for pid in pids)
        time.sleep(0.3)  # the reviewer is now waiting for the server's first answer
        review.send_signal(signal.SIGINT)
        interrupted = time.monotonic()
        survivors = _wait_dead(pids, 10)
        took = time.monotonic() - interrupted
        out, err = review.communicate(timeout=90)
    finally:
        if review.poll() is None:
            review.kill()
    assert review.returncode == 130, err
    assert [line for line in err.splitlines() if line.strip()] == ["agent-connector: interrupted"]
    assert "Traceback" not in err + out
    assert survivors == []  # no orphan: the server and the child it started
    # At once: the interrupt signals the server's group itself, instead of the SDK's teardown waiting
    # out its stdin grace (60 s here) before it does; a hang guard far from both.
    assert took < 10, took
