"""The reviewer's pre-flight: say "cannot connect / not found / not HTTP / not MCP" before the host
stack loads.

Importing ``mcp``, ``fastmcp`` and pydantic costs seconds of CPU on a loaded machine, and a refused
port, a missing program or a web server at the address needs none of it. :func:`preflight` runs the
standard-library checks of :mod:`agent_connector_sdk.mcp._preflight` and raises
:class:`~agent_connector_sdk.review.errors.ServerUnavailable` with the same sentence and the same typed
``reason`` the full review gives for the same server (:mod:`agent_connector_sdk.review.unreachable`);
what it cannot decide, the full review does (``tests/cli/test_review_failfast.py`` pins what this
path imports).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from typing import Final, Literal

from agent_connector_sdk.mcp import check_program, probe_http
from agent_connector_sdk.review.errors import ServerUnavailable
from agent_connector_sdk.review.unreachable import Unreached, not_mcp_sentence, unreachable_sentence

__all__ = ["PREFLIGHT_TIMEOUT", "preflight"]

PREFLIGHT_TIMEOUT: Final = 1.0
"""Seconds each pre-flight step waits at most (name resolution, connect, TLS handshake, the answer);
never more than the review's own ``--timeout``. A step that runs out decides nothing."""


def preflight(
    kind: Literal["http", "stdio"],
    address: str,
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    credentials: bool = False,
) -> None:
    """Raise :class:`ServerUnavailable` when ``address`` cannot be an MCP server: nothing listens
    there, its host does not resolve, the stdio program is missing or not executable, or what
    answers is an HTML page, not HTTP, or plain HTTP behind ``https://``. Return when it may be one.

    ``env`` is what the review adds to a stdio server's environment (its ``PATH`` finds the
    program); ``credentials``: a token or headers will be sent (the probe sends none of them).
    """
    if kind == "stdio":
        try:
            argv = shlex.split(address)
        except ValueError:
            return  # the full review says what is wrong with the command line
        if not argv:
            return
        path = (env or {}).get("PATH", os.environ.get("PATH", os.defpath))
        missing = check_program(argv[0], path=path)
        if missing is not None:
            reason: Unreached = "program_not_found" if missing == "not_found" else "not_executable"
            raise ServerUnavailable(unreachable_sentence(reason, address), reason=reason)
        return
    probe = probe_http(address, timeout=min(timeout, PREFLIGHT_TIMEOUT), credentials=credentials)
    if probe.unreachable is not None:
        raise ServerUnavailable(unreachable_sentence(probe.unreachable, address), reason=probe.unreachable)
    if probe.found is not None:
        raise ServerUnavailable(
            not_mcp_sentence(probe.found, address, probe.sample, status=probe.status), reason=probe.found
        )
