"""``review -- CMD`` names a missing program as missing (the parser swallows ``--``, so the command
cannot tell ``review foo`` from ``review -- foo``: a bare word is the stdio command it most likely is)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.support.cli import assert_one_line_error, run_cli_in_process


def test_a_missing_program_is_reported_as_not_found() -> None:
    for command in (["no-such-mcp-server-xyz"], ["no-such-mcp-server-xyz", "--flag"], ["/no/such/server"]):
        run = run_cli_in_process("review", "--", *command)
        assert_one_line_error(run, f"cannot start {' '.join(command)}", "program not found", "PATH")
        assert "review --" not in run.err  # never "type what you typed"


def test_a_program_that_is_not_executable_says_so(tmp_path: Path) -> None:
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\n")
    os.chmod(script, stat.S_IRUSR | stat.S_IWUSR)
    assert_one_line_error(run_cli_in_process("review", "--", str(script)), "permission denied", "executable")


def test_an_address_without_a_scheme_is_told_how_to_write_the_url() -> None:
    run = run_cli_in_process("review", "localhost:8000")
    assert_one_line_error(run, '"localhost:8000" is neither a URL nor a program', "http://localhost:8000/mcp")
