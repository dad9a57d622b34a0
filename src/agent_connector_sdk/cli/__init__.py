"""``agent-connector``: the command line people run — ``review``, ``serve`` and ``disclose``.

Thin by design: parse arguments (cyclopts), run the SDK's host or server side, render (rich) and map
outcomes to exit codes (0 ran, 1 ``--strict`` findings, 2 could not run). See :mod:`.app`.
"""

from __future__ import annotations

from typing import Any

from agent_connector_sdk.cli.app import app, main, main_exit

__all__ = ["app", "build_serve_app", "main", "main_exit"]


def build_serve_app(source: Any, *, upstream: str | None = None) -> tuple[Any, int]:
    """The ASGI app ``serve --openapi`` runs for ``source`` (an ``OpenAPISource``), and its tool count."""
    from agent_connector_sdk.cli.serve import build_openapi_app

    return build_openapi_app(source, upstream=upstream)
