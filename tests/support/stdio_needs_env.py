"""A stdio MCP server as real ones are: it needs an API key from its environment.

    python tests/support/stdio_needs_env.py            # MY_API_KEY must be set (else: logs, exits 1)
    python tests/support/stdio_needs_env.py --silent PIDFILE
        # never answers: writes its pid and a grandchild's to PIDFILE, then waits forever

Without ``MY_API_KEY`` it fails the way a typical server does: an error line, then routine log lines
(the reviewer must quote the error, not the last line). The key's value is never printed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


def silent(pidfile: Path) -> None:
    grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    pidfile.write_text(f"{os.getpid()} {grandchild.pid}\n")
    print("starting: waiting for nothing", file=sys.stderr, flush=True)
    time.sleep(600)


def main() -> None:
    if sys.argv[1:2] == ["--silent"]:
        silent(Path(sys.argv[2]))
        return
    print("INFO starting the keyed server", file=sys.stderr, flush=True)
    if not os.environ.get("MY_API_KEY"):
        print("ERROR: MY_API_KEY is not set; cannot authenticate upstream", file=sys.stderr)
        print("INFO shutting down", file=sys.stderr)
        print("INFO shutdown complete", file=sys.stderr, flush=True)
        sys.exit(1)
    from fastmcp import FastMCP

    server = FastMCP("keyed")
    region = os.environ.get("MY_REGION", "none")

    @server.tool(name=f"lookup_in_{region}")
    def lookup(query: str) -> str:
        """Look something up with the key (the key itself is never returned)."""
        return f"{len(query)} characters looked up"

    server.run(transport="stdio", show_banner=False)


if __name__ == "__main__":
    main()
