"""The host translates the SDK's failure once, into a host error whose class decides: the server's own
JSON-RPC error (with the HTTP status the guard saw) apart from the SDK's stand-ins, a parser refusal as a
local malformed response naming the reason not the body, a version mismatch naming both sides, a line the
SDK could not read typed by kind; the error body's words and code read from a capped body; every SDK text
the translator reads checked against the installed SDK. Where a case ends in a one-line error, the line the
reviewer prints from it is checked too (``tests/cli/test_hostile_errors.py`` has the rest)."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError

from agent_connector_sdk.core.host import (
    HostBounds,
    JsonRpcError,
    MalformedResponse,
    TransportFailure,
    UnsupportedVersion,
)
from agent_connector_sdk.core.host.bounds import BoundExceeded
from agent_connector_sdk.mcp import compat
from agent_connector_sdk.mcp.host import translate_unreadable
from agent_connector_sdk.mcp.host._translate import translate
from agent_connector_sdk.mcp.host._wire import Watch, error_words, read_error
from agent_connector_sdk.review.unreachable import explain_unreachable

TARGET = "http://127.0.0.1:1/mcp"


def _explain(error: BaseException) -> str:
    return explain_unreachable(error, target=TARGET, timeout=30)


def test_a_401_whose_body_is_a_json_rpc_timeout_code_is_not_a_timeout() -> None:
    watch = Watch()
    stand_in = MCPError(code=-32603, message="Server returned an error response")
    assert isinstance(translate(stand_in, HostBounds(), what="x", watch=watch), TransportFailure)
    # With the status the guard saw, the SDK's stand-in is the server's own error object.
    from agent_connector_sdk.mcp.host._wire import HttpError

    watch.errors.append(HttpError(401, "Unauthorized", -32001))
    mapped = translate(stand_in, HostBounds(), what="x", watch=watch)
    assert isinstance(mapped, JsonRpcError) and (mapped.code, mapped.http_status) == (-32001, 401)
    assert _explain(mapped).startswith(f"{TARGET} answered HTTP 401")


def test_a_servers_own_minus_32000_keeps_its_words_and_the_sdks_is_a_closed_connection() -> None:
    theirs = translate(MCPError(code=-32000, message="backend on fire"), HostBounds(), what="tools/list")
    assert isinstance(theirs, JsonRpcError) and theirs.message == "backend on fire"
    ours = translate(MCPError(code=-32000, message="Connection closed"), HostBounds(), what="tools/list")
    assert isinstance(ours, TransportFailure) and ours.code == -32000


def test_a_parser_refusal_is_a_local_malformed_response_naming_the_reason_not_the_body() -> None:
    text = (
        "Failed to parse JSON response: 1 validation error for union[...]\n  Invalid JSON: number out of "
        "range at line 1 column 4446 [type=json_invalid, input_value=b'{\"secret\": 1}', input_type=bytes]"
    )
    mapped = translate(MCPError(code=-32700, message=text), HostBounds(), what="tools/call")
    assert isinstance(mapped, MalformedResponse)
    assert (
        mapped.message == "tools/call: the answer is not JSON-RPC this host parses "
        "(number out of range at line 1 column 4446)"
    )
    assert "secret" not in _explain(mapped)


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
    mapped = translate(RuntimeError(text), HostBounds(), what="connecting")
    assert isinstance(mapped, UnsupportedVersion)
    line = _explain(mapped)
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


def test_a_json_rpc_error_body_cut_at_the_cap_still_gives_its_code_and_words() -> None:
    body = (
        b'{"jsonrpc": "2.0", "id": 1, "error": {"code": -32050, '
        b'"message": "backend \\"on\\" fire", "data": {"pad": "xxxx'
    )
    assert read_error(body) == (-32050, 'backend "on" fire')


def test_every_sdk_text_the_translator_reads_is_in_the_installed_sdk() -> None:
    import inspect

    import mcp.client.session
    import mcp.client.streamable_http
    import mcp.shared.jsonrpc_dispatcher

    source = "".join(
        inspect.getsource(module)
        for module in (mcp.client.streamable_http, mcp.shared.jsonrpc_dispatcher, mcp.client.session)
    )
    for text in (
        "Failed to parse JSON response: ",
        "Failed to parse SSE message: ",
        '"Server returned an error response"',
        "Unexpected content type: ",
        "SSE stream failed: ",
        '"SSE stream ended without a response"',
        '"SSE stream ended and reconnection attempts were exhausted"',
        '"Connection closed"',
        "server answered a request with 202 Accepted",
        "Unsupported protocol version from the server: ",
        "No mutually supported modern protocol version ",
        "timed out",
    ):
        assert text in source, text
    import httpx2._sse

    assert "Server-sent event exceeded the " in inspect.getsource(httpx2._sse)
    assert compat.sdk_local_failure(
        -32000, "SSE stream failed: Server-sent event exceeded the 5 byte limit."
    ) == (compat.SdkLocalFailure("event_too_large", "5"))


def test_a_line_the_sdk_could_not_read_is_typed_by_kind_not_decoded_by_the_cli() -> None:
    """The stdio reader hands the message handler the parser's own exception for a line it cannot
    read; the translator types it (a bound of this host when nested past the parser), so the CLI
    decides by class."""
    import mcp_types

    deep = '{"jsonrpc": "2.0", "method": "x", "params": ' + '{"a": ' * 10_000 + "1" + "}" * 10_000 + "}"
    broken = '{"jsonrpc": "2.0", "id": 1, "result": '
    refusals: dict[str, Exception] = {}
    for name, line in (("deep", deep), ("broken", broken)):
        with pytest.raises(ValueError) as refused:
            mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        refusals[name] = refused.value
    too_deep = translate_unreadable(refusals["deep"], HostBounds(), what="the review")
    assert isinstance(too_deep, BoundExceeded) and too_deep.bound == "max_schema_depth"
    assert compat.sdk_unreadable_line(refusals["deep"]).kind == "too_deep"
    malformed = translate_unreadable(refusals["broken"], HostBounds(), what="the review")
    assert isinstance(malformed, MalformedResponse)
    assert malformed.message == "the review: a message from the server is not JSON-RPC this host parses"
    assert compat.sdk_unreadable_line(RuntimeError("recursion limit exceeded")).kind == "parse"
