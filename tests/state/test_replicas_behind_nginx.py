"""Two gated replicas behind a real nginx (the shipped config) sharing state in a real Redis.

Replicas are independent servers (own FastMCP instance, own backend client) served by uvicorn on
loopback ephemeral ports; the only thing they share is the Redis store. ``redis-server`` and ``nginx``
must be installed (``scripts/ensure_services.sh``): a missing one fails these tests, it never skips them.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any, cast

import httpx2
import pytest
import redis as redis_sync

from tests.support.cluster import (
    EU,
    US,
    Cluster,
    call_tool,
    error_of,
    nginx_cluster,
    read_resource,
    result_of,
    served_by,
    set_enabled,
)
from tests.support.replica import (
    completion_params,
    initialize_catalog,
    lab_manifest_uri,
    post,
)
from tests.support.services import StreamEntries


def _complete_many(c: Cluster, count: int, token: str = "analyst-token") -> list[httpx2.Response]:
    return [
        post(c.http, c.balancer, "completion/complete", completion_params(), token=token)
        for _ in range(count)
    ]


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    prefix = re.sub(r"[^A-Za-z0-9_.-]", "-", request.node.name)[:100]
    with nginx_cluster(shared=True, prefix=prefix) as cluster:
        yield cluster


# ------------------------------------------------------------------------------------ shared limit
def test_completion_requests_spread_over_both_replicas_hit_one_shared_limit(cluster: Cluster) -> None:
    responses = _complete_many(cluster, 10)
    admitted = [r for r in responses if "result" in r.json()]
    refused = [r for r in responses if "error" in r.json()]
    assert len(admitted) == 5 and len(refused) == 5
    assert set(map(served_by, responses)) == {EU, US}  # nginx spread them over both replicas
    assert set(map(served_by, admitted)) == {EU, US}
    for response in refused:
        error = error_of(response)
        assert error["code"] == -32010
        assert 0 < error["data"]["retryAfterMs"] <= 60_000
    assert result_of(admitted[0])["completion"]["values"] == ["staging"]
    # Another caller has its own window, on every replica.
    others = _complete_many(cluster, 2, token="operator-token")
    assert all("result" in r.json() for r in others)
    # Windows are namespaced by the limiter name, hold digests (never the caller identity) and expire.
    keys = redis_sync.Redis.from_url(cluster.redis.url).keys(f"{cluster.prefix}:rl:completion:*")
    assert len(keys) == 2
    client = redis_sync.Redis.from_url(cluster.redis.url)
    assert all(b"analyst" not in key and 0 < client.pttl(key) <= 60_000 for key in keys)


def test_without_shared_state_each_replica_counts_its_own_window() -> None:
    """The problem the shared backend solves: per-process limits give a caller N times the limit."""
    with nginx_cluster(shared=False, prefix="unused") as c:
        responses = _complete_many(c, 10)
        admitted = [r for r in responses if "result" in r.json()]
        assert len(admitted) == 10


# ------------------------------------------------------------------------------------- tool switch
def _searched(c: Cluster, target: str, pattern: str) -> set[str]:
    result = result_of(call_tool(c, target, "search_tools", {"pattern": pattern}))
    assert result["isError"] is False
    return {entry["name"] for entry in result["structuredContent"]["result"]}


def test_tool_switched_off_through_one_replica_is_refused_by_both_on_the_next_read(cluster: Cluster) -> None:
    manifest = lab_manifest_uri(cluster.disclosures, "list_regions")
    for replica in (EU, US):
        assert result_of(call_tool(cluster, replica, "list_regions", {}))["isError"] is False
        assert result_of(read_resource(cluster, replica, manifest))["contents"][0]["uri"] == manifest
        assert _searched(cluster, replica, "regions") == {"list_regions"}

    switched = result_of(set_enabled(cluster, EU, "list_regions", False))
    assert switched["isError"] is False
    generation = switched["structuredContent"]["generation"]
    assert switched["structuredContent"]["enabled"] is False

    for replica in (EU, US):
        refused = call_tool(cluster, replica, "list_regions", {})
        assert error_of(refused)["code"] == -32602  # an unknown tool now, on both replicas
        assert error_of(read_resource(cluster, replica, manifest)) == {
            "code": -32602,
            "message": f"Resource not found: {manifest!r}",
            "data": {"uri": manifest},
        }
        assert cluster.health(replica)["state"]["catalogGeneration"] == generation
        assert _searched(cluster, replica, "regions") == set()  # search results omit it too
        # Other tools are untouched.
        assert (
            result_of(
                call_tool(
                    cluster,
                    replica,
                    "route_shipment",
                    {"region": "ap-south"},
                    headers=[("Mcp-Param-Region", "ap-south")],
                )
            )["isError"]
            is False
        )

    # Only callers holding catalog:admin can use the switch; it cannot switch itself off.
    assert error_of(set_enabled(cluster, US, "list_regions", True, token="analyst-token"))["code"] == -32602
    protected = result_of(set_enabled(cluster, US, "admin_set_tool_enabled", False))
    assert protected["isError"] is True and "protected" in protected["content"][0]["text"]  # error text leads
    unknown = result_of(set_enabled(cluster, US, "no_such_tool", False))
    assert unknown["isError"] is True and "unknown_tool" in unknown["content"][0]["text"]

    back = result_of(set_enabled(cluster, US, "list_regions", True))
    assert back["structuredContent"]["generation"] > generation
    for replica in (EU, US):
        assert result_of(call_tool(cluster, replica, "list_regions", {}))["isError"] is False
        assert "result" in read_resource(cluster, replica, manifest).json()


# ---------------------------------------------------------------------------------- header routing
@pytest.mark.parametrize(("region", "replica"), [("eu-west", EU), ("us-east", US)])
def test_header_routed_calls_land_on_the_intended_replica(
    cluster: Cluster, region: str, replica: str
) -> None:
    for _ in range(4):
        response = call_tool(
            cluster, "nginx", "route_shipment", {"region": region}, headers=[("Mcp-Param-Region", region)]
        )
        assert result_of(response)["structuredContent"]["region"] == region
        assert served_by(response) == replica


@pytest.mark.parametrize(
    ("header", "body", "replica"), [("us-east", "eu-west", US), ("eu-west", "us-east", EU)]
)
def test_mismatched_header_is_refused_by_whichever_replica_receives_it(
    cluster: Cluster, header: str, body: str, replica: str
) -> None:
    response = call_tool(
        cluster, "nginx", "route_shipment", {"region": body}, headers=[("Mcp-Param-Region", header)]
    )
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == -32020 and error["data"]["header"] == "Mcp-Param-Region"
    assert served_by(response) == replica  # routed by the (lying) header; that replica refused it
    # The refusal reached the shared audit stream, with names and categories but no values.
    client = redis_sync.Redis.from_url(cluster.redis.url)
    deadline = time.monotonic() + 5
    entries: list[Any] = []
    while time.monotonic() < deadline and not entries:
        stream = cast(StreamEntries, client.xrange(f"{cluster.prefix}:audit"))
        entries = [e for _, e in stream if b"refused" in e[b"event"]]
        time.sleep(0.05)
    assert entries, "no refusal in the shared audit stream"
    for entry in entries:
        assert b"route_shipment" in entry[b"event"]
        assert header.encode() not in entry[b"event"] and body.encode() not in entry[b"event"]


# ------------------------------------------------------------------------------------ Redis outage
def test_redis_stopped_mid_run_refuses_rate_limited_requests_and_nothing_else(cluster: Cluster) -> None:
    manifest = lab_manifest_uri(cluster.disclosures, "route_shipment")
    assert all("result" in r.json() for r in _complete_many(cluster, 2))
    before = cluster.health(EU)["state"]["catalogGeneration"]
    assert isinstance(before, int)

    cluster.redis.stop()

    refused = _complete_many(cluster, 4)
    assert {served_by(r) for r in refused} == {EU, US}
    for response in refused:
        error = error_of(response)
        assert error["code"] == -32010
        assert error["data"]["category"] == "state_unavailable"
        assert error["data"]["retryAfterMs"] > 0
    for replica in (EU, US):
        assert result_of(call_tool(cluster, replica, "list_regions", {}))["isError"] is False
        assert "result" in read_resource(cluster, replica, manifest).json()
        health = cluster.health(replica)["state"]
        assert health["reachable"] is False and health["catalogSynchronized"] is False
        assert health["catalogGeneration"] == before  # the last set read stays in force
        outage = result_of(set_enabled(cluster, replica, "list_regions", False))
        assert outage["isError"] is True and "state_unavailable" in outage["content"][0]["text"]
    routed = call_tool(
        cluster, "nginx", "route_shipment", {"region": "us-east"}, headers=[("Mcp-Param-Region", "us-east")]
    )
    assert result_of(routed)["isError"] is False and served_by(routed) == US
    mismatched = call_tool(
        cluster, "nginx", "route_shipment", {"region": "eu-west"}, headers=[("Mcp-Param-Region", "us-east")]
    )
    assert mismatched.status_code == 400 and error_of(mismatched)["code"] == -32020

    # Redis comes back empty (no persistence): limits work again, but the catalog is not trusted until
    # an operator initialises it again (test_a_store_that_lost_its_data_... covers that in full).
    cluster.redis.start()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and "error" in _complete_many(cluster, 1)[0].json():
        time.sleep(0.2)
    assert all("result" in r.json() for r in _complete_many(cluster, 2))
    lost = cluster.health(EU)["state"]
    assert lost["catalogInitialized"] is False and lost["catalogSynchronized"] is False
    initialize_catalog(cluster.redis.url, prefix=cluster.prefix)
    after = cluster.health(EU)["state"]
    assert after["catalogSynchronized"] is True and after["catalogGeneration"] > before


def test_balancer_health_and_replica_health(cluster: Cluster) -> None:
    through = cluster.health("nginx")
    assert through["status"] == "ok" and through["replica"] in (EU, US)
    for replica in (EU, US):
        health = cluster.health(replica)
        assert health["replica"] == replica
        assert health["state"]["backend"] == "redis" and health["state"]["reachable"] is True
