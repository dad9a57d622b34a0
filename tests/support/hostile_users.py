"""Two people in front of a hostile server, as small programs the hostile matrix runs and measures.

``python -m tests.support.hostile_users library TARGET [--call] [--strict] [--prompts] [--max-values=N]
[--timeout=S]``
— a library user following ``docs/host.md``: ``fastmcp.Client`` under a :class:`ContractClient`,
logging on at INFO (so the SDK's and fastmcp's records reach stderr, as a user who turned logging on
sees them). It prints what such a
script prints: the admitted names (``ascii()``: a name is the server's data), each rejection's category
and reason, the call's outcome, and on failure the error's class and message (the SDK's words, printed
as they are); exit 3 on an SDK error, 1 on anything else (a traceback).

``python -m tests.support.hostile_users gateway TARGET [--call] [--timeout=S]`` — an operator running
a gateway with the hostile server as its one child ``odd``, logging as ``agent-connector gateway``
sets it up; a caller searches ``odd_`` and calls ``odd_clean`` over Streamable HTTP, directly and through the
gateway's ``call_tool`` proxy. Prints the published names and
the call's outcome; what the operator sees is the gateway's stderr.

``TARGET`` is an ``http://`` URL of the hostile server, else a mode of its stdio face.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from typing import Any

from tests.support.cli import ROOT

STDIO_SERVER = ("-m", "tests.support.hostile_server")


def _client(target: str, timeout: float = 10) -> Any:
    import fastmcp
    from fastmcp.client.transports.stdio import StdioTransport

    if target.startswith("http"):
        return fastmcp.Client(target, timeout=timeout)
    transport = StdioTransport(sys.executable, [*STDIO_SERVER, target], cwd=ROOT, keep_alive=False)
    return fastmcp.Client(transport, timeout=timeout)


async def library(
    target: str, *, call: bool, strict: bool, prompts: bool, max_values: int | None, timeout: float = 10
) -> int:
    from agent_connector_sdk.core.host import HostBounds, JsonRpcError
    from agent_connector_sdk.errors import AgentConnectorError
    from agent_connector_sdk.mcp.host import ContractClient, HostOptions

    logging.basicConfig(level=logging.INFO)
    bounds = HostBounds(max_message_values=max_values) if max_values else HostBounds()
    options = HostOptions(profile="strict" if strict else "default", bounds=bounds)
    try:
        async with ContractClient(_client(target, timeout), options) as host:
            report = await host.discover_tools()
            print("admitted:", " ".join(ascii(name) for name in report.admitted))
            for rejection in report.rejected:
                print("rejected:", ascii(rejection["tool"]), rejection["category"], rejection["reason"])
            if prompts:
                listed = await host.session.list_catalog("prompts")
                print("prompts:", len(listed))
            if call:
                result = await host.call("clean", {"q": "x"})
                print("called:", "error" if result.is_error else "ok")
            tally = host.session.notifications.tally
            print(f"notifications: received {tally.total_received}, dropped {tally.total_dropped}")
    except AgentConnectorError as error:
        print(f"error: {type(error).__name__} ({error.category}): {error}")
        # The server's own words, as a user would print them (JsonRpcError.message, HttpStatusError.words).
        words = getattr(error, "words", None) or (error.message if isinstance(error, JsonRpcError) else None)
        if words:
            print(f"the server said: {words}")
        return 3
    return 0


def gateway(target: str, *, call: bool, timeout: float | None = None) -> int:
    from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig
    from agent_connector_sdk.serving.process import one_line_logging
    from tests.support.gateway import rpc, search
    from tests.support.http_server import serve_asgi

    one_line_logging()  # as `agent-connector gateway` does
    logging.getLogger("agent_connector_sdk.gateway").setLevel(logging.INFO)
    if target.startswith("http"):
        spec = ChildSpec("odd", url=target)
    else:
        spec = ChildSpec("odd", command=(sys.executable, *STDIO_SERVER, target), cwd=ROOT)
    # The gateway's own timeouts unless the caller gives one (a hang guard for floods).
    config = GatewayConfig(children=(spec,))
    if timeout is not None:
        config = GatewayConfig(children=(spec,), call_timeout=timeout, connect_timeout=timeout)
    served = Gateway(config)
    with serve_asgi(served.http_app()) as url:
        names = sorted(entry["name"] for entry in search(url, "odd_"))
        print("published:", " ".join(ascii(name) for name in names))
        if call:
            # Directly, then through the gateway's call_tool proxy (a refusal there is logged too).
            direct = {"name": "odd_clean", "arguments": {"q": "x"}}
            proxied = {"name": "call_tool", "arguments": {"name": "odd_clean", "arguments": {"q": "x"}}}
            for label, params in (("call", direct), ("proxy call", proxied)):
                _, message = rpc(url, "tools/call", params)
                if "error" in message:
                    error = message["error"]
                    print(f"{label} error:", error["code"], json.dumps(error.get("data", {}), sort_keys=True))
                else:
                    print(f"{label} result:", "error" if message["result"].get("isError") else "ok")
    return 0


def _number(flags: list[str], name: str) -> float | None:
    return next((float(flag.split("=", 1)[1]) for flag in flags if flag.startswith(f"--{name}=")), None)


def main(argv: list[str]) -> int:
    surface, target, *flags = argv
    timeout = _number(flags, "timeout")
    if surface == "library":
        values = _number(flags, "max-values")
        options = {"call": "--call" in flags, "strict": "--strict" in flags, "prompts": "--prompts" in flags}
        return asyncio.run(
            library(target, **options, max_values=int(values) if values else None, timeout=timeout or 10)
        )
    return gateway(target, call="--call" in flags, timeout=timeout)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
