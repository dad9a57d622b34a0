"""A FastMCP server with every server gate on — runnable as it is:

    python examples/gated_server.py --port 0      # a free port; the URL is printed once bound
    python examples/gated_server.py --port 8011   # or a port of your choice (default 0)

Two tools of a parcel shop: ``quote`` (read-only; its ``region`` argument is mirrored into the
``Mcp-Param-Region`` header) and ``book`` (a write, so hosts confirm it first). ``ServerGates``
installs the gates on the server and builds its ASGI app: arguments validated against the published
``inputSchema`` before a tool runs, ``Mcp-Param-*`` headers checked against the body (HTTP 400,
-32020, when they disagree), every result checked against its ``outputSchema``, cursors the server
never issued refused, request bodies bounded, and ``Host``/``Origin`` checked (DNS rebinding).

It serves on 127.0.0.1 without authentication (loopback only; ``docs/server.md`` adds a token) until
Ctrl-C. Try it with ``agent-connector review URL --call quote --arguments '{"region": "Zürich west",
"weight_kg": 2}'`` or with ``examples/host_calls_tools.py URL``.
"""

from __future__ import annotations

import argparse
import errno
import socket
import sys
from typing import Annotated, Any

import uvicorn
from fastmcp import FastMCP
from mcp_types import ToolAnnotations
from pydantic import Field

from agent_connector_sdk.mcp.server import ServerGates


def parcel_shop() -> FastMCP[Any]:
    server = FastMCP("parcel-shop")

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def quote(
        region: Annotated[
            str, Field(min_length=1, max_length=40, json_schema_extra={"x-mcp-header": "Region"})
        ],
        weight_kg: Annotated[float, Field(gt=0, le=30)],
    ) -> dict[str, float]:
        """Price a parcel to a region."""
        return {"price": round(4.5 + 1.2 * weight_kg, 2)}

    @server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False))
    def book(region: Annotated[str, Field(min_length=1, max_length=40)], weight_kg: float) -> dict[str, str]:
        """Book a parcel pick-up (a write: hosts confirm it before calling)."""
        return {"booking": f"{region[:3].upper()}-{round(weight_kg * 10):04d}"}

    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A FastMCP server with every server gate on.")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default 0: a free one)")
    port = parser.parse_args(argv).port
    if not 0 <= port <= 65535:
        parser.error(f"--port must be between 0 and 65535 (got {port})")
    # Bound here, before uvicorn starts, so the printed URL names the real port (also for --port 0) and a
    # busy port is one line instead of a traceback.
    try:
        listener = socket.create_server(("127.0.0.1", port))
    except OSError as error:
        why = "is already in use" if error.errno == errno.EADDRINUSE else f"cannot be bound: {error.strerror}"
        print(
            f"gated_server: port {port} on 127.0.0.1 {why} (pick another with --port, or 0)", file=sys.stderr
        )
        return 1
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    app = ServerGates().http_app(parcel_shop(), stateless_http=True)
    print(f"serving parcel-shop (gated) at {url}", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listener])
    return 0


if __name__ == "__main__":
    sys.exit(main())
