"""Two gated replicas of the contract lab behind a real nginx (the shipped config), sharing state in a
real Redis; plus the JSON-RPC helpers the scale-out tests post through it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx2

from agent_connector_sdk.core.schema_disclosure import SchemaDisclosure
from agent_connector_sdk.state import RedisStateBackend
from agent_connector_sdk.state.replica import REPLICA_HEADER
from tests.support.http_server import serve_asgi
from tests.support.replica import initialize_catalog, lab_replica, post
from tests.support.services import SHIPPED_REPLICAS, RedisServer, nginx_balancer, redis_server

EU, US = "eu-west-1", "us-east-1"  # replica ids; the shipped config routes eu-west / us-east to them


@dataclass
class Cluster:
    redis: RedisServer
    prefix: str
    balancer: str  # http://127.0.0.1:N/mcp through nginx
    replicas: dict[str, str]  # replica id -> its own /mcp URL
    disclosures: dict[str, SchemaDisclosure]
    http: httpx2.Client

    def via(self, target: str) -> str:
        return self.balancer if target == "nginx" else self.replicas[target]

    def health(self, target: str) -> dict[str, Any]:
        base = self.via(target).removesuffix("/mcp")
        response = self.http.get(f"{base}/healthz")
        assert response.status_code == 200
        return dict(response.json())


def address(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port}"


@contextmanager
def nginx_cluster(
    *, shared: bool, prefix: str, limit: int = 5, max_staleness_seconds: float = 60.0
) -> Iterator[Cluster]:
    with ExitStack() as stack:
        redis = stack.enter_context(redis_server())
        if shared:
            initialize_catalog(redis.url, prefix=prefix)  # the operator's one-time `state init`
        replicas: dict[str, str] = {}
        disclosures: dict[str, SchemaDisclosure] = {}
        for replica_id in (EU, US):
            state = RedisStateBackend.from_url(redis.url, prefix=prefix) if shared else None
            app, disclosures = lab_replica(
                state, replica_id=replica_id, limit=limit, max_staleness_seconds=max_staleness_seconds
            )
            replicas[replica_id] = stack.enter_context(serve_asgi(app))
        routed = {SHIPPED_REPLICAS[0]: address(replicas[EU]), SHIPPED_REPLICAS[1]: address(replicas[US])}
        balancer = stack.enter_context(nginx_balancer(routed))
        http = stack.enter_context(httpx2.Client(timeout=10.0))
        yield Cluster(redis, prefix, f"{balancer}/mcp", replicas, disclosures, http)


def result_of(response: httpx2.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body = response.json()
    assert "error" not in body, body
    return dict(body["result"])


def error_of(response: httpx2.Response) -> dict[str, Any]:
    body = response.json()
    assert "result" not in body, body
    return dict(body["error"])


def served_by(response: httpx2.Response) -> str:
    return response.headers[REPLICA_HEADER]


def call_tool(c: Cluster, target: str, name: str, arguments: dict[str, Any], **kw: Any) -> httpx2.Response:
    return post(c.http, c.via(target), "tools/call", {"name": name, "arguments": arguments}, **kw)


def read_resource(c: Cluster, target: str, uri: str) -> httpx2.Response:
    return post(c.http, c.via(target), "resources/read", {"uri": uri})


def set_enabled(c: Cluster, target: str, tool: str, enabled: bool, token: str = "admin-token") -> Any:
    return call_tool(c, target, "admin_set_tool_enabled", {"tool": tool, "enabled": enabled}, token=token)
