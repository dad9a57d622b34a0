"""Notification floods, long response streams and wrong ids on the three surfaces a person meets them:
``agent-connector review``, a library script (:mod:`tests.support.hostile_users`, logging on at INFO)
and a gateway whose one child is the hostile server; over stdio and over Streamable HTTP, each a real
process (:mod:`tests.support.measured_run`).

What is asserted: the answer behind the flood validates (never "timed out", never ``child_timeout``),
the flood is named in one summary line, what reaches the terminal is bounded (the issue's 20,000 log
notifications once printed 160,001 lines), and every run ends. The time limit of each run is a hang
guard far above a quiet machine's time; nothing here asserts speed (``bench/`` measures it).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from tests.support.hostile_server import hostile_app
from tests.support.http_server import serve_asgi
from tests.support.measured_run import Measured, control_characters, run_measured

CLI = "agent_connector_sdk.cli"
USERS = "tests.support.hostile_users"
STDIO_SERVER = (sys.executable, "-m", "tests.support.hostile_server")
CALL = ("--call", "clean", "--arguments", '{"q": "x"}')
HANG_GUARD_S = 300.0
REQUEST_TIMEOUT_S = "120"
TRANSPORTS = ("stdio", "http")
FLOOD_LINE = "tools/call: the server sent 20,000 log notifications;"


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serve_asgi(hostile_app(), path="") as url:
        yield url


def _review(base: str, transport: str, mode: str, *extra: str) -> Measured:
    source = [f"{base}/{mode}/mcp"] if transport == "http" else ["--", *STDIO_SERVER, mode]
    args = ["review", "--timeout", REQUEST_TIMEOUT_S, *extra, *source]
    return run_measured(CLI, args, timeout=HANG_GUARD_S)


def _user(surface: str, base: str, transport: str, mode: str) -> Measured:
    target = f"{base}/{mode}/mcp" if transport == "http" else mode
    args = [surface, target, "--call", f"--timeout={REQUEST_TIMEOUT_S}"]
    return run_measured(USERS, args, timeout=HANG_GUARD_S)


def _clean(run: Measured) -> str:
    assert not control_characters(run.out) and not control_characters(run.err)
    return run.text


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_review_validates_the_answer_behind_a_log_flood_and_names_it_once(base: str, transport: str) -> None:
    run = _review(base, transport, "log_flood-20000", *CALL)
    seen = _clean(run)
    assert run.code == 0, seen[-3000:]
    assert "clean: validated" in seen and "timed out" not in seen
    assert seen.count(FLOOD_LINE) == 1, seen[-3000:]
    assert len(seen.splitlines()) < 100  # the relayed log lines stay off the review


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_review_validates_a_result_after_100000_progress_events(base: str, transport: str) -> None:
    run = _review(base, transport, "progress_flood-100000", "--json", *CALL)
    seen = _clean(run)
    assert run.code == 0, seen[-3000:]
    assert '"outcome": "validated"' in seen and "max_message_values" not in seen
    assert "the server sent 100,000 progress notifications;" in seen


def test_review_reads_40_mb_of_progress_as_many_messages(base: str) -> None:
    run = _review(base, "http", "progress_bytes-40", "--json", *CALL)
    seen = _clean(run)
    assert run.code == 0, seen[-3000:]
    assert '"outcome": "validated"' in seen and "max_message_bytes" not in seen


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_review_names_an_unknown_answer_id_as_a_protocol_error(base: str, transport: str) -> None:
    run = _review(base, transport, "wrong_id", *CALL)
    seen = _clean(run)
    assert "protocol error: the server answered with JSON-RPC id 4242" in seen, seen[-3000:]
    assert "raise --timeout" not in seen and "timed out" not in seen


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_library_script_sees_the_answer_and_one_summary_not_the_flood(base: str, transport: str) -> None:
    run = _user("library", base, transport, "log_flood-20000")
    seen = _clean(run)
    assert run.code == 0, seen[-3000:]
    assert "called: ok" in seen and "notifications: received 20000" in seen
    assert seen.count(FLOOD_LINE) == 1, seen[-3000:]
    # fastmcp's handler prints each relayed notification over a few dozen lines: the burst and the
    # rate's refill, never 20,000 of them (160,001 lines before the bound).
    assert seen.count("Received INFO from server") < 20_000 // 4


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_gateway_answers_through_a_flooding_child_without_child_timeout(
    base: str, transport: str
) -> None:
    run = _user("gateway", base, transport, "log_flood-20000")
    seen = _clean(run)
    assert run.code == 0, seen[-3000:]
    assert "call result: ok" in seen and "proxy call result: ok" in seen, seen[-3000:]
    assert "child_timeout" not in seen and "degraded" not in seen
    assert seen.count(f"child odd: {FLOOD_LINE}") == 2, seen[-3000:]  # one per call: direct and proxied


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_gateway_refuses_an_unknown_answer_id_at_once(base: str, transport: str) -> None:
    run = _user("gateway", base, transport, "wrong_id")
    seen = _clean(run)
    assert run.code == 0, seen[-3000:]
    assert '"category": "malformed_response"' in seen and "child_timeout" not in seen, seen[-3000:]
