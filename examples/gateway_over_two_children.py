"""A gateway over two children, and a host calling through it — runnable as it is:

    python examples/gateway_over_two_children.py

Two gated FastMCP servers (``weather`` and ``shipping``) serve on free loopback ports; the gateway
connects to both as a host (each child's tools admitted before they are published, as
``weather_forecast`` and ``shipping_quote``) and serves them as one gated catalog on its own free port;
a host then finds, discloses and calls one tool of each child through the gateway (its catalog is
behind search), every gate on both sides.
Everything stops at the end. No authentication: loopback only (``docs/gateway.md`` adds JWT).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import fastmcp
import uvicorn
from mcp_types import ToolAnnotations
from pydantic import Field

from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig
from agent_connector_sdk.mcp.host import (
    CallerScope,
    ContractClient,
    HostOptions,
    HostSession,
    SchemaDisclosureConsumer,
)
from agent_connector_sdk.mcp.server import gated_http_app

READ_ONLY = ToolAnnotations(readOnlyHint=True)


def weather_server() -> fastmcp.FastMCP[Any]:
    server = fastmcp.FastMCP("weather")

    @server.tool(annotations=READ_ONLY)
    def forecast(city: Annotated[str, Field(min_length=1, max_length=80)]) -> dict[str, Any]:
        """Tomorrow's forecast for a city."""
        return {"city": city, "high_c": 21, "sky": "clear"}

    return server


def shipping_server() -> fastmcp.FastMCP[Any]:
    server = fastmcp.FastMCP("shipping")

    @server.tool(annotations=READ_ONLY)
    def quote(
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
        weight_kg: Annotated[float, Field(gt=0, le=30)],
    ) -> dict[str, float]:
        """Price a parcel."""
        return {"price": round(4.5 + 1.2 * weight_kg, 2)}

    return server


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """Serve an ASGI app on 127.0.0.1 at a free port (uvicorn in a thread); yield its /mcp URL."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


async def call_through(url: str) -> None:
    # The gateway serves its catalog behind search: the host finds each tool, reads its schema by
    # disclosure (hash-checked), admits it, then calls it with validated arguments and result.
    session = HostSession(fastmcp.Client(url), HostOptions())
    connection = ContractClient(session)  # opens and closes the one connection both faces share
    host = SchemaDisclosureConsumer(session, scope=CallerScope("example", url))
    async with connection:
        for query, name, arguments in (
            ("forecast", "weather_forecast", {"city": "Zürich"}),
            ("quote", "shipping_quote", {"region": "eu-central", "weight_kg": 2}),
        ):
            tool = await host.disclose(await host.select(query, name))
            result = await host.call(tool, arguments)
            print(f"{name} -> {result.structured_content}")


def main() -> None:
    with (
        serving(gated_http_app(weather_server(), stateless_http=True)) as weather,
        serving(gated_http_app(shipping_server(), stateless_http=True)) as shipping,
    ):
        gateway = Gateway(
            GatewayConfig(children=(ChildSpec("weather", url=weather), ChildSpec("shipping", url=shipping)))
        )
        with serving(gateway.http_app()) as front:  # its lifespan connects the children
            print(f"gateway over {len(gateway.config.children)} children: weather, shipping")
            asyncio.run(call_through(front))


if __name__ == "__main__":
    main()
