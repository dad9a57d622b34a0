"""``agent-connector review`` against a hostile server, as a user runs it: a subprocess whose exit code,
one-line message, stdout/stderr *bytes*, wall time and peak RSS are checked.

Memory: every case must stay within 3× the peak RSS of a normal review (measured here, against the
same server's clean mode, in the same kind of subprocess). Sizes are just over the bound that matters,
except two true-size cases (100,000 tools in a page; a 100 MB text block).
"""

from __future__ import annotations

import json
import sys
import threading
import unicodedata
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.hostile_server import hostile_app
from tests.support.http_server import serve_asgi
from tests.support.measured_run import Measured, run_measured

BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029")
STDIO_SERVER = (sys.executable, "-m", "tests.support.hostile_server")


class Review(Measured):
    @property
    def line(self) -> str:
        lines = [line for line in self.err.decode().splitlines() if line.strip()]
        assert len(lines) == 1, self.err
        return lines[0]


def review(*args: str, timeout: float = 180, env_extra: dict[str, str] | None = None) -> Review:
    """``agent-connector review ARGS`` in a fresh interpreter, measured (``tests.support.measured_run``:
    its own peak RSS, VmHWM at exit, or ``wait4``'s when the process died before it could say)."""
    run = run_measured("agent_connector_sdk.cli", ["review", *args], timeout=timeout, env_extra=env_extra)
    return Review(run.code, run.out, run.err, run.wall, run.peak_mb, run.cpu)


def assert_no_control_bytes(run: Review) -> None:
    """Nothing a terminal acts on: C0 (but LF), DEL, C1, bidi controls, separators, and valid UTF-8."""
    for stream in (run.out, run.err):
        text = stream.decode("utf-8")  # strict: invalid UTF-8 would fail here
        bad = [c for c in text if c != "\n" and (unicodedata.category(c) in ("Cc", "Cs") or c in BIDI)]
        assert not bad, [hex(ord(c)) for c in bad[:10]]


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serve_asgi(hostile_app(), path="") as url:
        yield url


@pytest.fixture(scope="module")
def budget_mb(base: str) -> float:
    """3× the peak RSS of a normal review (the issue's bound)."""
    normal = review(f"{base}/clean/mcp", "--call", "clean", "--arguments", '{"q": "x"}')
    assert normal.code == 0, normal.err
    return 3 * normal.peak_mb


def _json(run: Review) -> dict[str, Any]:
    assert run.code == 0, run.err
    report: dict[str, Any] = json.loads(run.out)
    return report


def _tools(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in report["tools"]}


# ------------------------------------------------------------------------------ terminal injection
def test_control_bytes_everywhere_never_reach_the_terminal(base: str, budget_mb: float) -> None:
    url = f"{base}/ansi/mcp"
    table = review(url, "--descriptors")
    assert table.code == 0, table.err
    assert_no_control_bytes(table)
    text = table.out.decode()
    assert "hostile\\x1b[2J\\x1b]0;pwned\\x07" in text and "\\u202e" in text  # shown escaped
    # The CRLF name cannot draw a fake line: it is one cell, escaped, and rejected.
    assert "X-Evil: 1" not in [line.strip("│ ") for line in text.splitlines()]
    assert "crlf\\u000d\\u000aX-Evil: 1" in text  # a tool name is shown by code point
    as_json = review(url, "--json")
    assert_no_control_bytes(as_json)  # --json escapes bidi controls and C1 too
    report = _json(as_json)
    assert report["server"]["name"].startswith("hostile\x1b[2J")
    tools = _tools(report)
    assert tools["crlf\r\nX-Evil: 1"]["admission"]["category"] == "malformed"
    assert {name for name, tool in tools.items() if tool["admission"]["decision"] == "admitted"} == {
        "clean",
        "headers",
        "clean_too",
    }
    assert table.peak_mb < budget_mb


def test_control_bytes_over_stdio_never_reach_the_terminal() -> None:
    run = review("--", *STDIO_SERVER, "ansi")
    assert run.code == 0, run.err
    assert_no_control_bytes(run)
    assert b"(stdio)" in run.out


def test_a_dying_stdio_servers_last_words_are_quoted_escaped() -> None:
    run = review("--timeout", "10", "--", *STDIO_SERVER, "dying")
    assert run.code == 2
    assert_no_control_bytes(run)
    assert "server stderr: fatal: cannot open database\\x1b[31m\\x07" in run.line


# --------------------------------------------------------------------------------------- deadline
def test_the_deadline_bounds_pages_answered_just_under_the_timeout(base: str) -> None:
    run = review(f"{base}/slow_pages-800/mcp", "--timeout", "2", "--deadline", "4")
    assert run.code == 2
    assert run.line.startswith("agent-connector: refused by this host: ")
    assert "deadline_s (4 s)" in run.line and "--deadline" in run.line
    # A hang guard (quiet: the 4 s deadline and start-up) below the 80 s it takes without it.
    assert run.wall < 60  # without it: 100 pages × 0.8 s, then a page_limit refusal


def test_deadline_must_be_positive() -> None:
    run = review("http://127.0.0.1:9/mcp", "--deadline", "0")
    assert run.code == 2 and "--deadline must be a positive number" in run.line


# ------------------------------------------------------------------------------------------ sizes
def test_too_many_navigation_entries_fail_the_search_and_say_so(base: str, budget_mb: float) -> None:
    run = review(f"{base}/nav_flood-10001/mcp", "--json")
    search = _json(run)["search"]
    assert search["category"] == "bound_exceeded"
    assert "max_navigation_entries (10,000)" in search["reason"]
    assert run.peak_mb < budget_mb


def test_too_many_tools_is_a_one_line_refusal(base: str, budget_mb: float) -> None:
    run = review(f"{base}/tool_flood-10001/mcp")
    assert run.code == 2 and run.out == b""
    assert run.line == (
        "agent-connector: refused by this host: the tools/list listing has too many tools: "
        "over this host's max_tools (10,000)"
    )
    assert run.peak_mb < budget_mb


def test_true_size_100000_tools_in_one_page_stay_within_memory(base: str, budget_mb: float) -> None:
    run = review(f"{base}/tool_flood-100000/mcp")
    assert run.code == 2 and "refused by this host" in run.line and "max_message_values" in run.line
    assert run.peak_mb < budget_mb, (run.peak_mb, budget_mb)
    assert run.cpu < 90, run.cpu  # CPU seconds (reader and the refusal), whatever the machine's load


def test_an_oversized_descriptor_is_rejected_alone(base: str, budget_mb: float) -> None:
    tools = _tools(_json(run := review(f"{base}/big_schema-2000000/mcp", "--json")))
    assert tools["big"]["admission"] == {
        "decision": "rejected",
        "category": "malformed",
        "reason": "the descriptor is larger than max_descriptor_bytes (1048576)",
    }
    assert (
        tools["clean"]["admission"]["decision"] == tools["clean_too"]["admission"]["decision"] == "admitted"
    )
    assert run.peak_mb < budget_mb


def test_a_result_over_the_result_bound_is_refused_not_validated(base: str, budget_mb: float) -> None:
    call = _json(
        run := review(
            f"{base}/big_text-20000000/mcp", "--call", "clean", "--arguments", '{"q": "x"}', "--json"
        )
    )["call"]
    assert call["outcome"] == "rejected_result" and call["category"] == "bound_exceeded"
    assert "max_result_bytes" in call["reason"]
    assert run.peak_mb < budget_mb


def test_a_result_breaking_its_output_schema_is_rejected_at_consume_with_the_servers_words(base: str) -> None:
    run = review(f"{base}/bad_result/mcp", "--call", "clean", "--arguments", '{"q": "x"}', "--json")
    call = _json(run)["call"]
    assert (call["outcome"], call["gate"]) == ("rejected_result", "consume")
    assert call["category"] == "output_schema_violation"
    # The server's own words, sanitized: its control bytes never reach the reader.
    assert call["text"].startswith("n is not a number today") and "\x1b" not in call["text"]


def test_true_size_100_mb_text_block_is_cut_while_reading(base: str, budget_mb: float) -> None:
    run = review(f"{base}/big_text-100000000/mcp", "--call", "clean", "--arguments", '{"q": "x"}')
    assert run.code == 0, run.err
    assert b"rejected_result at consume: bound_exceeded" in run.out and b"max_message_bytes" in run.out
    assert run.peak_mb < budget_mb, (run.peak_mb, budget_mb)


# ------------------------------------------------------------------------------------------ headers
def test_a_100000_character_header_name_is_rejected_alone(base: str) -> None:
    run = review(f"{base}/long_header-100000/mcp", "--json")
    tools = _tools(_json(run))
    admission = tools["long_header"]["admission"]
    assert admission["category"] == "invalid_header_annotation"
    assert "max_header_name_length (64)" in admission["reason"]
    assert tools["clean"]["admission"]["decision"] == "admitted"
    table = review(f"{base}/long_header-100000/mcp")
    assert len(table.out) < 20_000  # the name is shown capped, not 100,000 characters


def test_5000_mirrored_arguments_are_rejected_alone_and_the_table_stays_short(base: str) -> None:
    run = review(f"{base}/many_headers-5000/mcp")
    assert run.code == 0, run.err
    text = run.out.decode()
    assert "max_mirrored_headers (32)" in text and "4,968 more not shown" in text
    assert len(text.splitlines()) < 400


# ---------------------------------------------------------------------------- errors say what happened
def test_a_ref_root_schema_costs_only_its_own_tool(base: str) -> None:
    tools = _tools(_json(review(f"{base}/ref_root/mcp", "--json")))
    assert tools["ref_root"]["admission"]["category"] == "malformed"
    assert (
        tools["clean"]["admission"]["decision"] == tools["clean_too"]["admission"]["decision"] == "admitted"
    )


def test_a_10000_level_schema_is_refused_by_depth_over_http_and_stdio(base: str) -> None:
    over_http = review(f"{base}/deep_schema-10000/mcp")
    assert over_http.code == 2 and "max_schema_depth (64)" in over_http.line
    over_stdio = review("--timeout", "5", "--", *STDIO_SERVER, "deep_schema-10000")
    assert over_stdio.code == 2 and "max_schema_depth (64)" in over_stdio.line
    assert "timed out" not in over_stdio.line


def test_a_schema_past_the_depth_bound_but_parseable_is_rejected_alone(base: str) -> None:
    tools = _tools(_json(review(f"{base}/deep_schema-40/mcp", "--json")))
    assert "max_schema_depth (64)" in tools["deep"]["admission"]["reason"]
    assert tools["clean"]["admission"]["decision"] == "admitted"


def test_an_unsupported_protocol_version_names_both_sides(base: str) -> None:
    run = review(f"{base}/bad_version/mcp")
    assert run.code == 2
    assert "1999-01-01" in run.line and "2026-07-28" in run.line and "RuntimeError" not in run.line


def test_a_401_with_a_json_rpc_body_is_not_a_timeout(base: str) -> None:
    run = review(f"{base}/unauthorized/mcp", "--timeout", "120")
    assert run.code == 2
    assert_no_control_bytes(run)
    assert (
        "answered HTTP 401 (unauthorized): JSON-RPC error -32001: Unauthorized: a bearer token is required"
        in run.line
    )
    assert "timed out" not in run.line and "--token" in run.line
    assert run.wall < 60  # a hang guard far below the --timeout (120 s)


def test_a_403_from_a_host_allow_list_quotes_the_server(base: str) -> None:
    run = review(f"{base}/forbidden_host/mcp")
    assert run.code == 2
    assert run.line.endswith("answered HTTP 403: Access is only allowed at localhost:3000")
    assert "credentials" not in run.line


def test_an_endless_stdio_line_is_cut_at_the_message_bound(budget_mb: float) -> None:
    run = review("--timeout", "60", "--", *STDIO_SERVER, "big_schema-40000000")
    assert run.code == 2
    assert run.line == (
        "agent-connector: refused by this host: a response was larger than this host reads: "
        "over this host's max_message_bytes (33,554,432)"
    )
    assert run.peak_mb < budget_mb, (run.peak_mb, budget_mb)


# ------------------------------------------------------------------------------ one translator
def test_a_20_kb_error_page_is_its_status_and_the_servers_words(base: str) -> None:
    run = review(f"{base}/error_page-20000/mcp")
    assert run.code == 2
    assert_no_control_bytes(run)
    assert run.line.endswith(
        "answered HTTP 502: backend exploded\\x1b[2J\\x1b]0;pwned\\x07\\x1b[31m\\u202eevil\\x9b1m\\x7f"
    )


def test_a_servers_minus_32000_on_tools_list_is_quoted_not_called_a_closed_connection(base: str) -> None:
    run = review(f"{base}/rpc_error/mcp")
    assert run.code == 2
    assert_no_control_bytes(run)
    assert "JSON-RPC error -32000: backend on fire\\x1b[2J" in run.line and "closed" not in run.line


def test_a_500_page_on_the_call_is_reported_with_status_and_words(base: str) -> None:
    run = review(
        f"{base}/call_error_page-20000/mcp", "--json", "--call", "clean", "--arguments", '{"q": "x"}'
    )
    call = _json(run)["call"]
    assert_no_control_bytes(run)
    assert (call["outcome"], call["category"], call["reason"]) == (
        "failed",
        "http_error",
        "the server answered HTTP 500",
    )
    assert call["message"].startswith("backend exploded\\x1b[2J")


def test_a_stdio_server_that_floods_stderr_and_dies_is_quoted_from_a_bounded_tail(
    budget_mb: float, tmp_path: Any
) -> None:
    """300 MB of stderr then death: the last line is quoted, memory stays in budget, and nothing is
    written to disk (the review's temp dir is watched while it runs; it used to hold a 300 MB log)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    most_on_disk = 0
    done = threading.Event()

    def watch_disk() -> None:
        nonlocal most_on_disk
        while not done.wait(0.05):
            size = sum(path.stat().st_size for path in scratch.rglob("*") if path.is_file())
            most_on_disk = max(most_on_disk, size)

    watcher = threading.Thread(target=watch_disk)
    watcher.start()
    try:
        run = review("--", *STDIO_SERVER, "stderr_flood-300", env_extra={"TMPDIR": str(scratch)})
    finally:
        done.set()
        watcher.join()
    assert run.code == 2
    assert_no_control_bytes(run)
    assert run.line.endswith(
        "(server stderr: fatal: out of luck\\x1b[2J\\x1b]0;pwned\\x07\\x1b[31m\\u202eevil\\x9b1m\\x7f)"
    )
    assert run.peak_mb < budget_mb, (run.peak_mb, budget_mb)
    assert most_on_disk < 1 << 20, most_on_disk
    # What the review costs (CPU, its own and the reaped server's), whatever the machine's load; the wall
    # time only as a hang guard (it was 15-18 s on a busy 2-core machine, ~5 s on a quiet one).
    assert run.cpu < 20, run.cpu
    assert run.wall < 120, run.wall


def test_write_lock_approves_the_rest_when_one_descriptor_cannot_be_fingerprinted(
    base: str, tmp_path: Any
) -> None:
    lock = tmp_path / "lock.json"
    run = review(f"{base}/nonfinite/mcp", "--json", "--write-lock", str(lock))
    report = _json(run)
    assert _tools(report)["nonfinite"]["admission"]["category"] == "malformed"
    assert [tool["name"] for tool in json.loads(lock.read_text())["servers"][0]["tools"]] == [
        "clean",
        "clean_too",
    ]


def test_a_prompts_listing_that_never_ends_costs_the_probe_not_the_memory(
    base: str, budget_mb: float
) -> None:
    # It used to grow to 2.7 GB and lose the review at its deadline.
    run = review(f"{base}/endless_prompts-2000/mcp", "--json")
    report = _json(run)
    # A listing that cannot be read is a note (the probe could not run), never a finding.
    completion = report["completion"]
    assert completion["category"] is None and "max_list_items (10,000)" in completion["note"]
    assert report["server_text"]["prompts"] is None and report["summary"]["findings"] == 0
    assert run.peak_mb < budget_mb, (run.peak_mb, budget_mb)
    assert run.wall < 120  # a hang guard: the category above says it was not the deadline
