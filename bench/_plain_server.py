"""Plain FastMCP on an OpenAPI document, the baseline of ``bench.product_path``: ``FastMCP.from_openapi``
with FastMCP's defaults, one ``RegexSearchTransform(max_results=50)`` and ``server.http_app()`` (stateless
Streamable HTTP) under uvicorn — no gates, no disclosure, no catalog cache.

    python -m bench._plain_server DOCUMENT.json UPSTREAM_URL

Prints ``serving at http://127.0.0.1:PORT/mcp`` once it answers (the same line shape as ``serve``).
"""

from __future__ import annotations

import json
import socket
import sys
from typing import Any

import fastmcp
import httpx2
import uvicorn
from fastmcp.server.transforms.search import RegexSearchTransform


def plain_server(document: dict[str, Any], upstream: str) -> fastmcp.FastMCP[Any]:
    client = httpx2.AsyncClient(base_url=upstream, timeout=30)
    server: fastmcp.FastMCP[Any] = fastmcp.FastMCP.from_openapi(document, client=client, name="plain")
    server.add_transform(RegexSearchTransform(max_results=50))
    return server


def main() -> None:
    path, upstream = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    app = plain_server(document, upstream).http_app(stateless_http=True)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]

    class Announcing(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            print(f"serving at http://127.0.0.1:{port}/mcp", flush=True)

    Announcing(uvicorn.Config(app, log_level="warning", lifespan="on")).run(sockets=[sock])


if __name__ == "__main__":
    main()
