"""A stdio MCP server for the host tests: the contract lab, optionally behind search with disclosures.

Run as a subprocess by ``tests/mcp/host/test_stdio_and_older_revisions.py``::

    python tests/support/stdio_lab.py [--search]
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

# Run as a script: make the repository root importable for ``tests.support.host_servers``.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agent_connector_sdk.demo.contract_lab import contract_lab_server
from tests.support.host_servers import lab_behind_search


def main() -> None:
    server = asyncio.run(lab_behind_search()) if "--search" in sys.argv[1:] else contract_lab_server()
    server.run(transport="stdio", show_banner=False)


if __name__ == "__main__":
    main()
