"""``agent-connector``: the command line people run — ``review``, ``serve`` and ``disclose``.

Thin by design: parse arguments (cyclopts), run the SDK's host or server side, render (rich) and map
outcomes to exit codes (0 ran, 1 ``--strict`` findings, 2 could not run). See :mod:`.app`.
"""

from __future__ import annotations

from agent_connector_sdk.cli.app import app, main, main_exit

__all__ = ["app", "main", "main_exit"]
