"""Verified disclosures shared through a real ``redis-server``: gateways configured alike share the
verification work (a second gateway, or the same one restarted, reads no disclosure the first one
verified), a tampered or foreign value in Redis is refused and read again from the child, the Redis
tier stays within its bounds, and ``--check``'s enumeration resumes across runs where a bound stopped
it. The child is our own ``serve --openapi`` assembly over real Streamable HTTP, its disclosure reads
counted at the child."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import redis as redis_sync

from agent_connector_sdk.connectors import load_openapi_source
from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig, shared_disclosures
from agent_connector_sdk.gateway._shared_verified import config_namespace
from agent_connector_sdk.serving.openapi_app import build_openapi_app
from agent_connector_sdk.state import RedisDisclosureStore, RedisStateBackend
from tests.support.gateway import rpc, wait_for
from tests.support.http_server import serve_asgi
from tests.support.search_first_child import _upstream, openapi_document
from tests.support.services import RedisServer, redis_server

HANG_GUARD = 60.0


class ReadCounter:
    """ASGI wrapper counting the JSON-RPC ``resources/read`` requests (disclosure reads) a child gets."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.reads = 0
        self.uris: list[str] = []
        """The URI of every read, in order (a disclosure's URI names its content: what was read)."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def counting() -> Any:
            message = await receive()
            if message.get("type") == "http.request" and b'"resources/read"' in message.get("body", b""):
                self.reads += 1
                with contextlib.suppress(ValueError, LookupError, TypeError):
                    self.uris.append(str(json.loads(message["body"])["params"]["uri"]))
            return message

        await self.app(scope, counting, send)


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


@contextmanager
def _child(count: int) -> Iterator[tuple[str, ReadCounter]]:
    with serve_asgi(_upstream, path="") as upstream_url:
        app, _ = build_openapi_app(load_openapi_source(openapi_document(count)), upstream=upstream_url)
        counter = ReadCounter(app)
        with serve_asgi(counter) as url:
            yield url, counter


def _flush(redis: RedisServer) -> None:
    with redis_sync.Redis.from_url(redis.url) as client:
        client.flushdb()


@contextmanager
def _gateway(child_url: str, state: str) -> Iterator[str]:
    config = GatewayConfig(children=(ChildSpec("many", url=child_url),))
    gateway = Gateway(config)
    # The wiring the CLI does for --state (cli/gateway.py, _share_verified).
    gateway.verified.shared = shared_disclosures(state, config.children)
    with serve_asgi(gateway.http_app()) as url:
        wait_for(lambda: gateway.children["many"].state == "up", HANG_GUARD, "child up")
        yield url


def _search(url: str, pattern: str) -> list[str]:
    _, message = rpc(url, "tools/call", {"name": "search_tools", "arguments": {"pattern": pattern}})
    return sorted(entry["name"] for entry in message["result"]["structuredContent"]["result"])


EXPECTED = [f"many_op_{i:05d}" for i in range(10, 20)]


def test_a_second_gateway_and_a_restart_read_nothing_the_first_verified(redis: RedisServer) -> None:
    _flush(redis)
    with _child(40) as (child_url, counter):
        with _gateway(child_url, redis.url) as first:
            assert _search(first, "op_0001") == EXPECTED
        cold = counter.reads
        assert cold >= len(EXPECTED)  # each hidden tool's disclosure was read once at least
        with _gateway(child_url, redis.url) as second:  # another replica (or the first, restarted)
            assert _search(second, "op_0001") == EXPECTED
            assert counter.reads == cold  # verified by the first: not one read
            # A tool nobody verified yet is read from the child as before.
            assert _search(second, "op_0002") == [f"many_op_{i:05d}" for i in range(20, 30)]
            assert counter.reads > cold


def test_in_memory_by_default_and_a_memory_store_shares_nothing() -> None:
    assert shared_disclosures(None, ()) is None and shared_disclosures("memory://", ()) is None


def test_a_tampered_or_foreign_value_in_redis_is_refused_and_read_again(redis: RedisServer) -> None:
    _flush(redis)
    with _child(40) as (child_url, counter):
        with _gateway(child_url, redis.url) as first:
            assert _search(first, "op_0001") == EXPECTED
        cold = counter.reads
        with redis_sync.Redis.from_url(redis.url) as client:
            entries = sorted(k for k in client.scan_iter(match="agent-connector:vd:*:e:*"))
            assert len(entries) == len(EXPECTED)
            # Canonical, well-formed schemas that are not the ones the entry's digests name; a permissive
            # schema (what an attacker would plant); bytes that are no JSON.
            original = client.get(entries[0])
            assert original is not None and b'"string"' in original
            client.set(entries[0], original.replace(b'"string"', b'"integer"'))
            client.set(entries[1], b'{"inputSchema":{"type":"object"},"outputSchema":null}')
            client.set(entries[2], b"\xff not json")
        config = GatewayConfig(children=(ChildSpec("many", url=child_url),))
        gateway = Gateway(config)
        gateway.verified.shared = shared_disclosures(redis.url, config.children)
        with serve_asgi(gateway.http_app()) as url:
            wait_for(lambda: gateway.children["many"].state == "up", HANG_GUARD, "child up")
            assert _search(url, "op_0001") == EXPECTED  # still exactly the child's tools
        assert gateway.verified.shared_refused == 3 and gateway.verified.shared_hits == len(EXPECTED) - 3
        assert counter.reads > cold  # the three refused were read from the child again
        # ...and the child's verified bytes replaced what was tampered.
        with redis_sync.Redis.from_url(redis.url) as client:
            assert client.get(entries[1]) != b'{"inputSchema":{"type":"object"},"outputSchema":null}'


async def test_the_redis_tier_is_bounded_in_entries_and_bytes(redis: RedisServer) -> None:
    _flush(redis)
    backend = RedisStateBackend.from_url(redis.url)
    try:
        store = RedisDisclosureStore(backend, "gw-bounds", max_entries=5, max_bytes=400, max_value_bytes=100)
        for index in range(12):
            await store.put("child", f"k{index}", b"x" * 50)
        await store.put("child", "huge", b"x" * 101)  # above the value bound: not shared
        assert await store.get("child", "huge") is None
        with redis_sync.Redis.from_url(redis.url) as client:
            assert client.zcard(store.keys[0]) == 5 and int(client.get(store.keys[2]) or 0) == 250
        assert await store.get("child", "k11") == b"x" * 50  # the most recent are kept
        assert await store.get("child", "k0") is None  # the least recent were evicted
        for index in range(20):  # bytes bound: 8 of 50 bytes would be 400; 5 entries hold 250 <= 400
            await store.put("child", f"b{index}", b"y" * 90)
        with redis_sync.Redis.from_url(redis.url) as client:
            assert int(client.get(store.keys[2]) or 0) <= 400 and client.zcard(store.keys[0]) == 4
    finally:
        await backend.aclose()


def test_namespaces_follow_the_configuration() -> None:
    one = config_namespace((ChildSpec("a", url="http://127.0.0.1:1/mcp"),))
    assert one == config_namespace((ChildSpec("a", url="http://127.0.0.1:1/mcp"),))
    assert one != config_namespace((ChildSpec("a", url="http://127.0.0.1:2/mcp"),))


async def test_check_resumes_across_runs_where_a_bound_stopped_it(redis: RedisServer) -> None:
    _flush(redis)
    count = 300
    with _child(count) as (child_url, counter):
        config = GatewayConfig(children=(ChildSpec("many", url=child_url),))

        async def run(max_searches: int) -> Any:
            gateway = Gateway(config)  # a fresh process's memory: only Redis carries over
            gateway.verified.shared = shared_disclosures(redis.url, config.children)
            child = gateway.children["many"]
            child.enumerate_all = True
            child.enumeration_searches = max_searches
            try:
                await gateway.start(supervise=False)
            finally:
                await gateway.stop()
            return child.federation

        first = await run(3)
        assert first is not None and first.partial is not None
        assert first.partial.startswith(f"partial: {len(first.admitted)} of at least ")
        verified_first, reads_first = len(first.admitted), counter.reads
        assert 0 < verified_first < count
        second = await run(10_000)
        assert second is not None and second.partial is None and len(second.admitted) == count
        first_uris = set(counter.uris[:reads_first])
        second_uris = set(counter.uris[reads_first:])
        # Nothing the first run read (and verified) was read again: the second read only the rest. By
        # URI, not by count: on a busy machine two searches may find one new tool at once and both read
        # it, the same new work done twice, never a verified tool read again.
        assert len(counter.uris) == counter.reads and first_uris and second_uris
        assert first_uris.isdisjoint(second_uris)


async def test_an_enumeration_holds_a_bounded_number_of_tools_and_names() -> None:
    from agent_connector_sdk.gateway._federation import federate

    count = 120
    with _child(count) as (child_url, _):
        gateway = Gateway(GatewayConfig(children=(ChildSpec("many", url=child_url),)))
        try:
            await gateway.start(supervise=False)
            verifier = gateway.children["many"]._verifier()
            assert verifier is not None
            whole = await federate(verifier, keep=10)
            # Every tool verified and counted, only the last 10 held.
            assert whole.partial is None and whole.admitted_total == count and len(whole.admitted) == 10
            cut = await federate(verifier, max_names=50)
            assert cut.partial is not None and cut.partial.endswith("(the name bound (50 names) was reached)")
            assert cut.admitted_total <= 50
        finally:
            await gateway.stop()


def test_gateway_check_with_state_starts_warm_in_a_new_process(redis: RedisServer) -> None:
    from tests.support.cli import run_cli

    _flush(redis)
    with _child(40) as (child_url, counter):
        args = ("gateway", "--check", "--child", f"many={child_url}", "--state", redis.url)
        first = run_cli(*args)
        assert "complete: 40 tools" in first.out + first.err, first.err[-2000:]
        cold = counter.reads
        assert cold >= 40
        second = run_cli(*args)  # a new process: only Redis carries over
        assert "complete: 40 tools" in second.out + second.err, second.err[-2000:]
        assert counter.reads == cold
