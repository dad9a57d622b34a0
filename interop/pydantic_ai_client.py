"""pydantic-ai's MCP toolset (pinned in python-peers.txt) as a line-driven client, without a model.

Run by ``python -m scripts.interop`` with the interpreter of the peers' virtual environment (not ours:
pydantic-ai brings its own dependency set): ``python pydantic_ai_client.py URL``, the HTTP headers to
send (e.g. a bearer token) as a JSON object in ``INTEROP_HEADERS``. It connects ``MCPToolset`` once,
lists the tools through it (what an agent does before its first turn), prints ``{"ready": [names]}``,
then answers each stdin line ``{"tool": NAME, "arguments": {...}}`` with one stdout line: the call's
``direct_call_tool`` result as JSON, or ``{"error": {"code", "message"}}``. One line each, so the
caller can count the requests that reached the server for every call.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from fastmcp.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from pydantic_ai.mcp import MCPToolset


def _reply(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload, default=str) + "\n")
    sys.stdout.flush()


async def main(url: str) -> None:
    headers = json.loads(os.environ.get("INTEROP_HEADERS", "{}"))
    toolset: MCPToolset[Any] = MCPToolset(url, headers=headers, tool_error_behavior="error")
    async with toolset:
        listed = await toolset.list_tools()
        _reply({"ready": sorted(tool.name for tool in listed)})
        loop = asyncio.get_running_loop()
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line:
                return
            request = json.loads(line)
            try:
                result = await toolset.direct_call_tool(request["tool"], request["arguments"])
            except ToolError as error:
                _reply({"tool_error": str(error)})
            except MCPError as error:
                _reply({"error": {"code": error.error.code, "message": error.error.message}})
            else:
                _reply({"result": result})


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
