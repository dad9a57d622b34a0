"""Children for the gateway's operator tests: one that naps (hangs for a while), one that storms
``notifications/tools/list_changed`` and counts the ``tools/list`` requests it served.

``python -m tests.support.operator_children stdio`` runs it over stdio (prints nothing else)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from typing import Any

import mcp_types as types
from fastmcp import Context, FastMCP
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool


class _ListCounter(Middleware):
    def __init__(self) -> None:
        self.count = 0

    async def on_list_tools(
        self, context: MiddlewareContext[Any], call_next: CallNext[Any, Sequence[Tool]]
    ) -> Sequence[Tool]:
        self.count += 1
        return await call_next(context)


def operator_server(name: str = "ops") -> FastMCP[Any]:
    """``nap(seconds)`` sleeps; ``ping`` answers; ``storm(seconds, rate)`` starts sending
    ``tools/list_changed`` on its call's stream ``rate`` times a second for ``seconds``, then answers;
    ``lists`` says how many ``tools/list`` requests this server answered."""
    server: FastMCP[Any] = FastMCP(name)
    counter = _ListCounter()
    server.add_middleware(counter)

    @server.tool
    async def nap(seconds: float = 1.0) -> str:
        """Sleeps, then answers."""
        await asyncio.sleep(seconds)
        return "rested"

    @server.tool(annotations={"readOnlyHint": True, "destructiveHint": False})
    def ping() -> str:
        """Answers at once."""
        return "pong"

    @server.tool(annotations={"readOnlyHint": True, "destructiveHint": False})
    def lists() -> dict[str, int]:
        """How many tools/list requests this server answered."""
        return {"count": counter.count}

    @server.tool
    async def storm(ctx: Context, seconds: float = 2.0, rate: float = 200.0) -> str:
        """Streams notifications/tools/list_changed on this call's stream, then answers."""
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        sent = 0
        while loop.time() < end:
            await ctx.send_notification(types.ToolListChangedNotification())
            sent += 1
            await asyncio.sleep(1.0 / rate)
        return f"sent {sent}"

    return server


if __name__ == "__main__" and sys.argv[1:] == ["stdio"]:
    operator_server().run(transport="stdio", show_banner=False)
