"""``review --demo``: the contract lab on 127.0.0.1:<ephemeral>, for one review, then stopped.

The review itself is an ordinary live review (:mod:`agent_connector_sdk.review.live`) of the lab's
URL with the operator's demo token and, unless the person named another, one disclosed + admitted +
validated call of ``search_evidence``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Final

from agent_connector_sdk.review.errors import ReviewError
from agent_connector_sdk.review.options import ReviewOptions

__all__ = ["DEMO_CALL", "demo_review_options", "running_contract_lab"]

DEMO_CALL: Final[tuple[str, dict[str, Any]]] = (
    "search_evidence",
    {"query": "routing audit", "region": "Zürich west", "limit": 3},
)


@contextmanager
def running_contract_lab() -> Iterator[str]:
    """The lab served on a loopback port the OS picks, in a thread; yields its URL once it answers,
    and stops it on the way out (also on an error)."""
    import uvicorn

    from agent_connector_sdk.demo.lab_service import lab_service_app
    from agent_connector_sdk.serving.process import bind_socket, one_line_logging

    one_line_logging()
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(lab_service_app(), log_level="warning", lifespan="on", log_config=None)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="contract-lab", daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise ReviewError("the contract lab did not start")
            threading.Event().wait(0.02)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def demo_review_options(options: ReviewOptions) -> ReviewOptions:
    """``options`` with the operator's demo token (unless one was given) and the demo call (unless
    ``--call`` named another tool)."""
    from agent_connector_sdk.demo.lab_service import OPERATOR_TOKEN

    call, arguments = (options.call, options.arguments) if options.call is not None else DEMO_CALL
    return replace(options, token=options.token or OPERATOR_TOKEN, call=call, arguments=arguments)
