"""The entry's JSON bound is a linear scan that builds nothing, and the entry holds a body at most twice.

Round three found the old bound (a regular expression blanking strings) allocating ~580 MB for one
3.9 MB string. Here: the count against an oracle computed from the parsed value (a property test over
arbitrary JSON, both separators and both ASCII modes), the four adversarial shapes (one long string,
many keys, deep nesting, many escapes) measured for time and traced memory, and the whole entry —
slot, body, scan, parse — measured with ``tracemalloc`` per shape: peak ≤ 2× the body.
"""

from __future__ import annotations

import asyncio
import json
import time
import tracemalloc
from collections.abc import Callable
from typing import Annotated, Any

import pytest
from fastmcp import FastMCP
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import Field
from starlette.authentication import AuthCredentials, SimpleUser, UnauthenticatedUser

from agent_connector_sdk.mcp.server import GatedEntry, HeaderParityGate, RequestBounds
from agent_connector_sdk.mcp.server._entry import json_value_count
from agent_connector_sdk.mcp.server._resolution import install_resolution

SIZE = 3_900_000  # just under the 4 MiB body limit, as in the attack

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.sampled_from(list('ab:,[]{}"\\\n\u00e9\U0001f600 ')), max_size=12),
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(
            st.text(alphabet=st.sampled_from(list('k:,["\\')), max_size=4), children, max_size=5
        )
    ),
    max_leaves=40,
)


def _oracle(value: Any) -> int:
    """What the scan counts on a JSON text of ``value``: each object of k > 0 members has k colons and
    k - 1 commas; each array has its ``[`` and n - 1 commas."""
    if isinstance(value, dict):
        own = 2 * len(value) - 1 if value else 0
        return own + sum(_oracle(child) for child in value.values())
    if isinstance(value, list):
        return max(len(value), 1) + sum(_oracle(child) for child in value)
    return 0


@settings(max_examples=300, deadline=None)
@given(value=JSON_VALUES, compact=st.booleans(), ascii_only=st.booleans(), limit=st.integers(0, 30))
def test_the_count_is_exact_against_the_parsed_value(
    value: Any, compact: bool, ascii_only: bool, limit: int
) -> None:
    separators = (",", ":") if compact else (", ", ": ")
    body = json.dumps(value, separators=separators, ensure_ascii=ascii_only).encode()
    assert json.loads(body) == value  # the text is what the parser reads
    expected = _oracle(value)
    assert json_value_count(body) == expected
    # With a limit the scan may stop early, but it answers "above the limit" exactly when the full
    # count is above it.
    assert (json_value_count(body, limit) > limit) == (expected > limit)
    # The count is an upper bound on what a parser builds (members + elements).
    assert expected >= _members_and_elements(value)


def _members_and_elements(value: Any) -> int:
    if isinstance(value, dict):
        return len(value) + sum(_members_and_elements(child) for child in value.values())
    if isinstance(value, list):
        return len(value) + sum(_members_and_elements(child) for child in value)
    return 0


def _envelope(arguments_text: bytes) -> bytes:
    """A ``tools/call`` of ``echo`` whose arguments are ``{"region":"eu", …}`` plus the shape."""
    head = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"region":"eu"'
    inner = arguments_text[1:-1]
    return head + b"," * bool(inner) + inner + b"}}}"


SHAPES: dict[str, Callable[[], bytes]] = {
    "one long string": lambda: _envelope(b'{"text":"' + b"a" * SIZE + b'"}'),
    "many keys": lambda: _envelope(b"{" + b",".join(b'"k%d":1' % i for i in range(SIZE // 11)) + b"}"),
    "deep nesting": lambda: _envelope(b'{"text":' + b"[" * 20_000 + b"]" * 20_000 + b"}"),
    "many escapes": lambda: _envelope(b'{"text":"' + b'\\"\\n' * (SIZE // 4) + b'"}'),
    "many empty strings": lambda: _envelope(b'{"text":"' + b'""' * (SIZE // 2) + b'"}'),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_adversarial_shapes_are_scanned_in_linear_time_without_memory(shape: str) -> None:
    body = SHAPES[shape]()
    started = time.thread_time()  # CPU time of this thread: the scan's cost, whatever the machine's load
    count = json_value_count(body, 50_000)
    elapsed = time.thread_time() - started
    tracemalloc.start()
    assert json_value_count(body, 50_000) == count
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 64 * 1024, f"{shape}: {peak} bytes traced"
    # Measured ~10–100 ms of CPU (the old expression took 0.4–0.7 s for one long string).
    assert elapsed < 1.0, f"{shape}: {elapsed:.3f} s CPU"
    assert (count > 50_000) == (shape in ("many keys", "many empty strings"))


class _Recorder:
    """The app behind the entry: records what reached it and answers 200."""

    def __init__(self) -> None:
        self.bodies: list[int] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        message = await receive()
        self.bodies.append(len(message.get("body", b"")))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


def _entry(authenticated_server: bool, app: Any) -> GatedEntry:
    server: FastMCP[Any] = FastMCP(
        "bounded",
        auth=StaticTokenVerifier({"t": {"client_id": "c", "scopes": []}}) if authenticated_server else None,
    )

    @server.tool
    def echo(
        text: Any = None,
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})] = "eu",
    ) -> str:
        return "ok"

    resolution = install_resolution(server, HeaderParityGate())
    return GatedEntry(app, server, resolution=resolution, bounds=RequestBounds(body_timeout_seconds=5))


def _scope(user: Any, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(b"content-type", b"application/json"), *headers],
        "client": ("127.0.0.1", 5000),
        "user": user,
        "auth": AuthCredentials([]),
    }


def _chunks(body: bytes) -> list[bytes]:
    """The body as the server hands it over, in 64 KiB pieces (made before any measurement starts)."""
    return [body[i : i + 65536] for i in range(0, len(body), 65536)] or [b""]


async def _drive(entry: GatedEntry, scope: dict[str, Any], chunks: list[bytes]) -> tuple[list[Any], int]:
    """Run one request through the entry; (messages sent, receive calls)."""
    calls = 0
    sent: list[Any] = []

    async def receive() -> Any:
        nonlocal calls
        calls += 1
        if calls <= len(chunks):
            return {"type": "http.request", "body": chunks[calls - 1], "more_body": calls < len(chunks)}
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    await entry(scope, receive, send)
    return sent, calls


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("route", ["handshake-era", "2026-07-28"])
def test_the_entry_holds_at_most_twice_the_body(shape: str, route: str) -> None:
    """Authenticated (a server without auth): slot, body, scan and — on the handshake-era route, where
    the entry parses — the parse, all under ``tracemalloc``: the peak stays within 2× the body."""
    body = SHAPES[shape]()
    recorder = _Recorder()
    entry = _entry(False, recorder)
    # On the handshake-era route an Mcp-Param header makes the entry parse the body and judge it.
    headers = (
        [(b"mcp-protocol-version", b"2026-07-28")]
        if route == "2026-07-28"
        else [(b"mcp-param-region", b"eu")]
    )
    scope = _scope(None, [*headers, (b"content-length", b"%d" % len(body))])
    chunks = _chunks(body)
    tracemalloc.start()
    sent, _ = asyncio.run(_drive(entry, scope, chunks))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    status = sent[0]["status"]
    if shape in ("many keys", "many empty strings"):
        assert status == 413 and json.loads(sent[1]["body"])["error"]["data"] == {
            "category": "too_many_json_values"
        }
        assert recorder.bodies == []  # nothing reached the app
    else:
        assert status == 200 and recorder.bodies == [len(body)]
    # 2× the body plus a constant (the request's own small objects: scope, messages, match objects).
    assert peak <= 2 * len(body) + 64 * 1024, f"{shape}/{route}: peak {peak / len(body):.3f}× the body"
    assert entry.in_flight == 0


def test_an_unauthenticated_request_is_never_read_and_takes_no_authenticated_slot() -> None:
    """A server with auth: a request without valid credentials goes to the app (which answers 401) with
    its body unread, on a pool of its own; a valid caller's slot count never moves."""
    seen: list[Any] = []

    async def answer_401(scope: Any, receive: Any, send: Any) -> None:
        seen.append(entry.pre_auth_pool.in_flight)
        await send({"type": "http.response.start", "status": 401, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    entry = _entry(True, answer_401)
    chunks = _chunks(SHAPES["one long string"]())
    tracemalloc.start()
    sent, receive_calls = asyncio.run(_drive(entry, _scope(UnauthenticatedUser(), []), chunks))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert sent[0]["status"] == 401
    assert receive_calls == 0  # not one byte of the body was read
    assert peak < 256 * 1024
    assert seen == [1] and entry.pre_auth_pool.in_flight == 0 and entry.in_flight == 0


def test_an_entry_outside_authentication_refuses_rather_than_guess() -> None:
    recorder = _Recorder()
    entry = _entry(True, recorder)
    sent, _ = asyncio.run(_drive(entry, _scope(None, []), [b"{}"]))
    assert sent[0]["status"] == 500 and recorder.bodies == []
    authenticated = _scope(SimpleUser("c"), [])
    sent, _ = asyncio.run(_drive(entry, authenticated, [_envelope(b"{}")]))
    assert sent[0]["status"] == 200 and recorder.bodies == [len(_envelope(b"{}"))]
