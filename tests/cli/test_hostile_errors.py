"""One-line errors say what happened, decided by the host error's class (the host translated the
SDK's failure once): the HTTP status with the server's own words (sanitized, capped), both protocol
versions on a mismatch, the JSON-RPC code and message; pure, over exception chains. The
translation itself is tested beside the host's other tests (``tests/mcp/host/test_error_translation.py``)."""

from __future__ import annotations

import pytest

from agent_connector_sdk.core.host import (
    HttpStatusError,
    JsonRpcError,
)
from agent_connector_sdk.review.unreachable import explain_unreachable

TARGET = "http://127.0.0.1:1/mcp"


def _explain(error: BaseException) -> str:
    return explain_unreachable(error, target=TARGET, timeout=30)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            JsonRpcError(-32001, "Unauthorized", http_status=401),
            "answered HTTP 401 (unauthorized): JSON-RPC error -32001: Unauthorized; "
            "pass credentials with --token or --header",
        ),
        (
            HttpStatusError(403, "Access is only allowed at localhost:3000"),
            "answered HTTP 403: Access is only allowed at localhost:3000",
        ),
        (
            HttpStatusError(403, None),
            "answered HTTP 403 (forbidden): check the credentials and the address used",
        ),
        (
            HttpStatusError(404, "no such route"),
            "answered HTTP 404: no such route (wrong path? FastMCP serves /mcp)",
        ),
        (HttpStatusError(404, None), "answered HTTP 404 Not Found (wrong path? FastMCP serves /mcp)"),
        (HttpStatusError(502, "upstream down"), "answered HTTP 502: upstream down"),
    ],
)
def test_http_errors_name_the_status_and_quote_the_server(error: Exception, expected: str) -> None:
    assert _explain(error) == f"{TARGET} {expected}"


def test_the_servers_words_are_sanitized_and_capped() -> None:
    line = _explain(HttpStatusError(500, "boom\x1b[2J\u202e" + "x" * 5_000))
    assert "\x1b" not in line and "\u202e" not in line and "boom\\x1b[2J\\u202e" in line
    assert len(line) < 400 and "…[+" in line


def test_json_rpc_errors_show_code_and_message() -> None:
    line = _explain(JsonRpcError(-32099, "quota exhausted\x07"))
    assert line == f"{TARGET} refused the session: JSON-RPC error -32099: quota exhausted\\x07"
