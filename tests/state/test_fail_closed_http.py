"""Shared state that survives or fails closed (issue 25), with two real replicas and a real Redis:

- a Redis restarted without persistence must not switch withdrawn tools back on: every replica refuses
  the catalog until an operator initialises it again, and then the withdrawn tool stays off;
- a replica that has not seen the latest generation never reports ``catalogSynchronized: true``, and
  once its last confirmed read is older than ``max_staleness_seconds`` it refuses every tool rather than
  serve one another replica may have switched off.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from agent_connector_sdk.state import MemoryStateBackend, StateNotInitialized, StateUnavailable
from agent_connector_sdk.state._catalog_switch import SharedToolSwitch
from tests.support.cluster import (
    EU,
    US,
    Cluster,
    call_tool,
    error_of,
    nginx_cluster,
    result_of,
    set_enabled,
)
from tests.support.replica import initialize_catalog

STALENESS = 1.5


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    prefix = re.sub(r"[^A-Za-z0-9_.-]", "-", request.node.name)[:100]
    with nginx_cluster(shared=True, prefix=prefix, max_staleness_seconds=STALENESS) as cluster:
        yield cluster


def _works(c: Cluster, replica: str, tool: str = "list_regions") -> bool:
    response = call_tool(c, replica, tool, {})
    body = response.json()
    if "error" in body:
        assert body["error"]["code"] == -32602  # an unknown tool: refused, never half-run
        return False
    return result_of(response)["isError"] is False


def _wait_for(predicate: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.1)


def test_a_store_that_lost_its_data_keeps_switched_off_tools_off_on_every_replica(cluster: Cluster) -> None:
    assert result_of(set_enabled(cluster, EU, "list_regions", False))["isError"] is False
    for replica in (EU, US):
        assert not _works(cluster, replica)
    before = cluster.health(US)["state"]["catalogGeneration"]

    cluster.redis.stop()
    cluster.redis.start()  # without persistence: the switched-off set and the marker are gone

    for replica in (EU, US):
        # Not "nothing is off": every tool is refused until an operator initialises the store again.
        _wait_for(lambda r=replica: cluster.health(r)["state"]["catalogInitialized"] is False)
        health = cluster.health(replica)["state"]
        assert health["catalogSynchronized"] is False and health["reachable"] is True
        assert not _works(cluster, replica)
        assert not _works(cluster, replica, "route_shipment")
    # The admin tool cannot half-initialise the store either (it is refused with everything else).
    assert "error" in set_enabled(cluster, US, "list_regions", False).json()

    # The operator's recovery (docs/deploy.md): initialise with the tools that must stay off.
    initialize_catalog(cluster.redis.url, prefix=cluster.prefix, disabled=frozenset({"list_regions"}))
    for replica in (EU, US):
        health = cluster.health(replica)["state"]
        assert health["catalogInitialized"] is True and health["catalogSynchronized"] is True
        assert health["catalogGeneration"] > before
        assert not _works(cluster, replica)  # still off
        header = [("Mcp-Param-Region", "eu-west")]
        routed = call_tool(cluster, replica, "route_shipment", {"region": "eu-west"}, headers=header)
        assert result_of(routed)["isError"] is False


def test_a_replica_that_missed_a_change_is_not_synchronized_and_fails_closed(cluster: Cluster) -> None:
    for replica in (EU, US):
        assert _works(cluster, replica)
    switched = result_of(set_enabled(cluster, US, "list_regions", False))["structuredContent"]
    assert switched["generation"] > 0
    # EU receives no request and so has not read the change; then the store goes away.
    cluster.redis.stop()
    stopped_at = time.monotonic()

    eu = cluster.health(EU)["state"]
    assert eu["reachable"] is False and eu["catalogSynchronized"] is False
    assert eu["catalogGeneration"] < switched["generation"]  # it says which generation it applies
    us = cluster.health(US)["state"]
    assert us["catalogSynchronized"] is False and us["catalogGeneration"] == switched["generation"]

    # Past the staleness bound neither replica can confirm any tool is still on: both refuse all.
    time.sleep(max(0.0, STALENESS + 0.3 - (time.monotonic() - stopped_at)))
    for replica in (EU, US):
        assert not _works(cluster, replica)
        assert not _works(cluster, replica, "flaky_search")
        assert error_of(call_tool(cluster, replica, "search_tools", {"pattern": "x"}))["code"] == -32602


# ---------------------------------------------------------------------- the switch on its own
class _Signals:
    """Catalog signals over an in-process backend that can be told to fail or to forget its data."""

    def __init__(self) -> None:
        self.inner = MemoryStateBackend().catalog
        self.down = False
        self.lost = False

    async def current(self, namespace: str) -> int:
        if self.down:
            raise StateUnavailable("catalog generation read")
        return await self.inner.current(namespace)

    async def bump(self, namespace: str) -> int:
        return await self.inner.bump(namespace)

    async def disabled_tools(self, namespace: str) -> tuple[int, frozenset[str]]:
        if self.down:
            raise StateUnavailable("catalog read")
        if self.lost:
            raise StateNotInitialized(namespace)
        return await self.inner.disabled_tools(namespace)

    async def set_tool_enabled(self, namespace: str, name: str, enabled: bool) -> int:
        return await self.inner.set_tool_enabled(namespace, name, enabled)

    async def initialize(self, namespace: str, disabled: frozenset[str], *, replace: bool = False) -> int:
        self.lost = False
        return await self.inner.initialize(namespace, disabled, replace=replace)


async def test_switch_hides_everything_when_uninitialised_or_stale_and_says_so() -> None:
    signals = _Signals()
    switch = SharedToolSwitch(signals, "lab", retry_seconds=0.0, max_staleness_seconds=0.2)
    await signals.set_tool_enabled("lab", "a", False)
    await switch.refresh()
    assert switch.synchronized and not switch.hiding_all and switch.initialized is True

    signals.down = True
    await switch.refresh()
    assert not switch.synchronized and not switch.hiding_all  # within the bound: the last confirmed set
    time.sleep(0.25)
    await switch.refresh()
    assert not switch.synchronized and switch.hiding_all  # stale: nothing can be confirmed

    signals.down, signals.lost = False, True
    await signals.bump("lab")
    await switch.refresh()
    assert switch.initialized is False and switch.hiding_all and not switch.synchronized

    generation = await signals.initialize("lab", frozenset({"a"}))
    assert await switch.refresh() == generation
    assert switch.synchronized and not switch.hiding_all and switch.disabled() == {"a"}


def test_healthz_is_behind_the_same_host_guard_as_mcp(cluster: Cluster) -> None:
    for replica in (EU, US):
        base = cluster.replicas[replica].removesuffix("/mcp")
        foreign = cluster.http.get(f"{base}/healthz", headers={"Host": "evil.example"})
        assert foreign.status_code == 421
        assert replica not in foreign.text and "catalog" not in foreign.text
        rebinding = cluster.http.get(f"{base}/healthz", headers={"Origin": "http://evil.example"})
        assert rebinding.status_code == 403
        assert cluster.health(replica)["replica"] == replica  # its own loopback name still works
