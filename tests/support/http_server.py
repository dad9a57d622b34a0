"""Run an ASGI app under real uvicorn on 127.0.0.1 with an ephemeral port, for tests and benchmarks.

The server runs in a daemon thread with its own event loop, so both sync and async tests can use it
and the client side stays on the test's own loop (what a real remote client sees).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


@contextmanager
def serve_asgi(
    app: Any, *, path: str = "/mcp", startup_timeout: float = 20.0, port: int = 0, **config_options: Any
) -> Iterator[str]:
    """Serve ``app`` on ``127.0.0.1:<ephemeral>`` and yield the endpoint URL (``http://127.0.0.1:N/mcp``).

    ``port`` pins the port (a restart test serves again where the client already points);
    ``config_options`` go to ``uvicorn.Config`` (e.g. ``proxy_headers=False``)."""
    options: dict[str, Any] = {"log_level": "warning", "lifespan": "on", **config_options}
    config = uvicorn.Config(app, host="127.0.0.1", port=port, **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn-test-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn test server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
