"""One-line errors say what happened: the HTTP status with the server's own words (sanitized, capped),
both protocol versions on a mismatch, the JSON-RPC code and message; pure, over exception chains."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError

from agent_connector_sdk.cli.errors import explain_unreachable
from agent_connector_sdk.mcp.host._wire import error_words

TARGET = "http://127.0.0.1:1/mcp"


def _explain(error: BaseException, status: int | None = None, words: str | None = None) -> str:
    return explain_unreachable(error, target=TARGET, timeout=30, http_status=status, http_words=words)


def _stand_in(code: int = -32603, message: str = "Server returned an error response") -> RuntimeError:
    try:
        raise RuntimeError("Client failed to connect") from MCPError(code=code, message=message)
    except RuntimeError as error:
        return error


@pytest.mark.parametrize(
    ("status", "words", "expected"),
    [
        (
            401,
            "JSON-RPC error -32001: Unauthorized",
            "answered HTTP 401 (unauthorized): JSON-RPC error -32001: Unauthorized; "
            "pass credentials with --token or --header",
        ),
        (
            403,
            "Access is only allowed at localhost:3000",
            "answered HTTP 403: Access is only allowed at localhost:3000",
        ),
        (403, None, "answered HTTP 403 (forbidden): check the credentials and the address used"),
        (404, "no such route", "answered HTTP 404: no such route (wrong path? FastMCP serves /mcp)"),
        (404, None, "answered HTTP 404 Not Found (wrong path? FastMCP serves /mcp)"),
        (502, "upstream down", "answered HTTP 502: upstream down"),
    ],
)
def test_http_errors_name_the_status_and_quote_the_server(
    status: int, words: str | None, expected: str
) -> None:
    assert _explain(_stand_in(), status, words) == f"{TARGET} {expected}"


def test_a_401_whose_body_is_a_json_rpc_timeout_code_is_not_a_timeout() -> None:
    error = _stand_in(-32001, "Unauthorized")
    assert "timed out" in _explain(error)  # without the status the SDK's stand-in is ambiguous
    assert _explain(error, 401, "JSON-RPC error -32001: Unauthorized").startswith(
        f"{TARGET} answered HTTP 401"
    )


def test_the_servers_words_are_sanitized_and_capped() -> None:
    line = _explain(_stand_in(), 500, "boom\x1b[2J\u202e" + "x" * 5_000)
    assert "\x1b" not in line and "\u202e" not in line and "boom\\x1b[2J\\u202e" in line
    assert len(line) < 400 and "…[+" in line


def test_json_rpc_errors_show_code_and_message() -> None:
    line = _explain(_stand_in(-32099, "quota exhausted\x07"))
    assert line == f"{TARGET} refused the session: JSON-RPC error -32099: quota exhausted\\x07"


@pytest.mark.parametrize(
    ("text", "theirs"),
    [
        ("Unsupported protocol version from the server: 1999-01-01", "1999-01-01"),
        (
            "No mutually supported modern protocol version (server: ['2099-01-01'], client: ['2026-07-28'])",
            "['2099-01-01']",
        ),
    ],
)
def test_a_version_mismatch_names_both_sides(text: str, theirs: str) -> None:
    line = _explain(RuntimeError(text))
    assert theirs in line and "2026-07-28" in line and "2025-11-25" in line and "RuntimeError" not in line


def test_error_words_prefer_the_json_rpc_message_then_the_first_line() -> None:
    assert error_words(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Unauthorized"}}') == (
        "JSON-RPC error -32001: Unauthorized"
    )
    assert error_words(b'{"detail":"Not authenticated"}') == "Not authenticated"
    assert (
        error_words(b"\n  Access is only allowed at localhost:3000\nmore")
        == "Access is only allowed at localhost:3000"
    )
    assert error_words(b"") is None
