"""The memoized DNS-rebinding guard answers exactly as FastMCP's own, request for request.

Hypothesis draws requests (bound address, scheme, Host and Origin headers — duplicates included — from
a pool of loopback, foreign, malformed and IPv6 values) and guard configurations (auto/strict, allowed
hosts and origins); FastMCP's ``HostOriginGuardMiddleware`` and :class:`MemoizedHostOriginGuard` each
answer every request twice (cold, then from the memo): status, headers and body must be equal, and a
request that passes must reach the app. ``gated_http_app`` installs the memoized guard in FastMCP's place.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastmcp import FastMCP
from fastmcp.server.http import HostOriginGuardMiddleware
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_connector_sdk.mcp.server import gated_http_app
from agent_connector_sdk.mcp.server._entry import MAX_VERDICTS, EntryFront

HOSTS = st.sampled_from(
    [b"127.0.0.1:8000", b"localhost:8000", b"[::1]:8000", b"evil.example", b"api.example:443", b"", b"a b"]
)
ORIGINS = st.sampled_from(
    [None, b"http://127.0.0.1:8000", b"http://evil.example", b"https://api.example", b"null", b"http://[::1]"]
)
SERVERS = st.sampled_from([("127.0.0.1", 8000), ("0.0.0.0", 8000), ("::1", 8000), ("10.0.0.5", 443), None])
OPTIONS = st.fixed_dictionaries(
    {
        "mode": st.sampled_from(["auto", "strict"]),
        "allowed_hosts": st.sampled_from([None, ["api.example:443"], ["*.example"]]),
        "allowed_origins": st.sampled_from([None, ["https://api.example"], ["*"]]),
    }
)


async def _app(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"reached"})


async def _answer(guard: Any, scope: dict[str, Any]) -> list[Any]:
    sent: list[Any] = []

    async def receive() -> Any:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    await guard(dict(scope), receive, send)
    return sent


@settings(max_examples=200, deadline=None)
@given(
    options=OPTIONS,
    requests=st.lists(
        st.tuples(SERVERS, st.sampled_from(["http", "https"]), st.lists(HOSTS, max_size=2), ORIGINS, HOSTS),
        min_size=1,
        max_size=6,
    ),
)
def test_memoized_guard_answers_as_fastmcp_guard(options: dict[str, Any], requests: list[Any]) -> None:
    plain = HostOriginGuardMiddleware(_app, **options)
    memoized = EntryFront(_app, guard=options)
    for server, scheme, hosts, origin, other in requests * 2:  # each request cold, then from the memo
        headers = [(b"host", host) for host in hosts] + [(b"x-other", other)]
        if origin is not None:
            headers.append((b"origin", origin))
        scope = {"type": "http", "server": server, "scheme": scheme, "headers": headers, "path": "/mcp"}
        assert asyncio.run(_answer(memoized, scope)) == asyncio.run(_answer(plain, scope))


def test_the_memo_is_bounded_and_gated_apps_use_it() -> None:
    memoized = EntryFront(_app, guard={})
    for index in range(MAX_VERDICTS + 50):
        scope = {
            "type": "http",
            "server": ("127.0.0.1", 1),
            "scheme": "http",
            "headers": [(b"host", b"h%d" % index)],
        }
        assert asyncio.run(_answer(memoized, scope))[0]["status"] == 421
    assert len(memoized._verdicts) == MAX_VERDICTS
    app = gated_http_app(FastMCP("guarded"), stateless_http=True)
    assert [m.cls for m in app.user_middleware].count(EntryFront) == 1
    assert HostOriginGuardMiddleware not in [m.cls for m in app.user_middleware]
