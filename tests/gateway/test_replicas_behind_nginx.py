"""The gateway as replicas on Redis behind the shipped nginx site, like ``serve --state``: calls land on
both replicas, the nginx header routing sees the ``Mcp-Param-Region`` the gateway validates, and the
shared tool switch (``agent-connector state disable``) withdraws a child tool on every replica."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import httpx2
import pytest

from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig
from agent_connector_sdk.mcp.server import gated_http_app
from agent_connector_sdk.state.replica import REPLICA_HEADER
from tests.support.cli import run_cli
from tests.support.gateway import parse_message, wait_for
from tests.support.gateway_children import weather_server
from tests.support.http_server import serve_asgi
from tests.support.raw_http import raw_post
from tests.support.services import SHIPPED_REPLICAS, ServiceMissing, nginx_balancer, redis_server


def _address(url: str) -> str:
    return url.removeprefix("http://").removesuffix("/mcp")


class Cluster:
    def __init__(self, url: str, redis_url: str, replicas: dict[str, str]) -> None:
        self.url = url
        self.redis_url = redis_url
        self.replicas = replicas


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with ExitStack() as stack:
        try:
            redis = stack.enter_context(redis_server())
        except ServiceMissing as missing:  # pragma: no cover - the machine image has both
            pytest.fail(str(missing))
        init = run_cli("state", "init", "--state", redis.url, "--namespace", "gateway")
        assert init.code == 0, init.err
        child = stack.enter_context(serve_asgi(gated_http_app(weather_server(), stateless_http=True)))
        config = GatewayConfig(children=(ChildSpec("weather", url=child),))
        replicas = {}
        for replica_id in ("r1", "r2"):
            app = Gateway(config).http_app(state=redis.url, replica_id=replica_id, namespace="gateway")
            replicas[replica_id] = stack.enter_context(serve_asgi(app))
        routed = {
            SHIPPED_REPLICAS[0]: _address(replicas["r1"]),
            SHIPPED_REPLICAS[1]: _address(replicas["r2"]),
        }
        balancer = stack.enter_context(nginx_balancer(routed))
        yield Cluster(f"{balancer}/mcp", redis.url, replicas)


def _call(
    url: str, tool: str, arguments: dict[str, object], **kwargs: object
) -> tuple[str, dict[str, object]]:
    response = raw_post(url, "tools/call", {"name": tool, "arguments": arguments}, **kwargs)  # type: ignore[arg-type]
    return response.headers[REPLICA_HEADER], parse_message(response)


def test_replicas_share_the_tool_switch_and_nginx_routes_on_the_validated_header(cluster: Cluster) -> None:
    served = set()
    for _ in range(6):
        replica, message = _call(cluster.url, "weather_forecast", {"city": "Oslo"})
        served.add(replica)
        assert message["result"]["structuredContent"] == {"city": "Oslo", "celsius": 21}  # type: ignore[index]
    assert served == {"r1", "r2"}

    # The shipped site routes eu-west to the first replica: the header the gateway validates.
    for _ in range(3):
        replica, message = _call(
            cluster.url, "weather_route", {"region": "eu-west"}, headers=[("mcp-param-region", "eu-west")]
        )
        assert replica == "r1" and message["result"]["structuredContent"]["region"] == "eu-west"  # type: ignore[index]

    # Through the search transform's call_tool a plain client sends no header (the spec asks none):
    # the call is placed round robin and answered on either replica, never refused for the header.
    proxied: dict[str, object] = {"name": "weather_route", "arguments": {"region": "eu-west"}}
    placed = set()
    for _ in range(6):
        replica, message = _call(cluster.url, "call_tool", proxied)
        placed.add(replica)
        assert message["result"]["structuredContent"]["region"] == "eu-west", message  # type: ignore[index]
    assert placed == {"r1", "r2"}
    # A proxied call that carries the header is routed like a direct one, and the header is checked
    # against the inner arguments: a lie is refused by the replica it picked.
    replica, message = _call(cluster.url, "call_tool", proxied, headers=[("mcp-param-region", "eu-west")])
    assert replica == "r1" and message["result"]["structuredContent"]["region"] == "eu-west"  # type: ignore[index]
    replica, lied = _call(cluster.url, "call_tool", proxied, headers=[("mcp-param-region", "us-east")])
    assert replica == "r2" and lied["error"]["code"] == -32020, lied  # type: ignore[index]

    for replica_url in cluster.replicas.values():
        children = httpx2.get(replica_url.removesuffix("/mcp") + "/healthz/children", timeout=10).json()
        assert [(c["name"], c["state"]) for c in children["children"]] == [("weather", "up")]

    off = run_cli(
        "state", "disable", "weather_forecast", "--state", cluster.redis_url, "--namespace", "gateway"
    )
    assert off.code == 0, off.err

    def withdrawn_everywhere() -> bool:
        answers = [_call(url, "weather_forecast", {})[1] for url in cluster.replicas.values()]
        return all("error" in answer and answer["error"]["code"] == -32602 for answer in answers)  # type: ignore[index]

    wait_for(withdrawn_everywhere, timeout=15, what="the switch on both replicas")
    _, still = _call(
        cluster.url, "weather_route", {"region": "us-east"}, headers=[("mcp-param-region", "us-east")]
    )
    assert still["result"]["structuredContent"]["region"] == "us-east"  # type: ignore[index]
