"""A plain FastMCP server (no search transform) for the CLI tests, served over stdio or HTTP.

It carries what a reviewer must see: an unsafe descriptor (a token mirrored into a header), an array
output, a Unicode routing header and a ``""`` cursor in its ``tools/list`` chain (the contract lab's
paging). ``python tests/support/plain_server.py`` serves it over stdio.
"""

from __future__ import annotations

from typing import Any

from fastmcp import FastMCP

from agent_connector_sdk.demo.contract_lab import contract_lab_server


def plain_server() -> FastMCP[Any]:
    return contract_lab_server(empty_cursor_pages=True, name="plain-lab")


if __name__ == "__main__":
    plain_server().run(transport="stdio", show_banner=False)
