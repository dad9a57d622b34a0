"""Why a child is down, in words an operator can act on: where (its URL or command) and what happened
(connection refused, timed out, exited with status N, its last line on stderr).

:func:`failure_cause` reads the cause from an exception chain (an ``OSError``'s errno, an HTTP client's
connect or timeout error, a JSON-RPC code), never from the exception's free text except an
``[Errno N]`` marker; :func:`child_target` shows a URL without user info, query or fragment (they may
hold credentials) and a command as its program and argument count; :class:`StderrTail` keeps a stdio
child's last stderr line (sanitized, bounded) while passing every line on to the gateway's own stderr.
"""

from __future__ import annotations

import errno as errno_codes
import os
import re
from typing import Final, TextIO
from urllib.parse import urlsplit, urlunsplit

import httpx2

from agent_connector_sdk.core.host import JsonRpcError, NotMcpServer, TransportFailure
from agent_connector_sdk.errors import iter_causes
from agent_connector_sdk.gateway._config import ChildSpec
from agent_connector_sdk.mcp.host import StderrRelay

__all__ = ["StderrTail", "child_target", "describe_failure", "failure_cause"]

_ERRNO: Final = re.compile(r"\[Errno (\d{1,4})\]")
_MAX_LINE: Final = 300


def child_target(spec: ChildSpec) -> str:
    """The child's URL without user info, query or fragment, or ``command PROGRAM (+N arguments)``."""
    if spec.url is not None:
        parts = urlsplit(spec.url)
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        if parts.port is not None:
            netloc += f":{parts.port}"
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    program = os.path.basename(spec.command[0])
    extra = len(spec.command) - 1
    return f"command {program}" + (f" (+{extra} arguments)" if extra else "")


def _errno_words(number: int) -> str:
    name = errno_codes.errorcode.get(number)
    return os.strerror(number).lower() if name is not None else f"errno {number}"


def failure_cause(error: BaseException) -> str:
    """A few words for what failed: ``connection refused``, ``timed out``, ``the connection closed``,
    ``JSON-RPC error -32603``… (the exception's type name when nothing better is known)."""
    chain = list(iter_causes(error))
    for item in chain:  # what answered, when the host could tell it is not an MCP server
        if isinstance(item, NotMcpServer):
            return item.message
    for item in chain:  # the operating system's own word first, wherever it sits in the chain
        if isinstance(item, OSError) and item.errno:
            return _errno_words(item.errno)
        found = _ERRNO.search(str(item)) if isinstance(item, httpx2.NetworkError | OSError) else None
        if found:
            return _errno_words(int(found.group(1)))
    for item in chain:
        if isinstance(item, TimeoutError | httpx2.TimeoutException):
            return "timed out"
        if isinstance(item, httpx2.ConnectError | httpx2.NetworkError):
            return "could not connect"
        if isinstance(item, httpx2.RemoteProtocolError):
            return "the connection closed mid-answer"
        if isinstance(item, JsonRpcError):
            return f"JSON-RPC error {item.code}"
    for item in chain:
        if isinstance(item, TransportFailure):
            return "the connection closed" if item.code == -32000 else "the transport failed"
    return type(error).__name__


def describe_failure(
    spec: ChildSpec, error: BaseException, stderr_line: str | None = None, *, exit_status: int | None = None
) -> str:
    """``TARGET: CAUSE`` — a stdio child's exit status when its process ended, else the failure's
    cause (what answered, first, when the host could tell it is not an MCP server: the child was then
    stopped by the host, so its exit status says nothing) — and, when given, a stdio child's last
    stderr line (sanitized)."""
    if exit_status is not None and not any(isinstance(item, NotMcpServer) for item in iter_causes(error)):
        cause = (
            f"exited with status {exit_status}" if exit_status >= 0 else f"killed by signal {-exit_status}"
        )
    else:
        cause = failure_cause(error)
    reason = f"{child_target(spec)}: {cause}"
    if stderr_line:
        reason += f"; its last stderr line: {stderr_line}"
    return reason


class StderrTail(StderrRelay):
    """A stdio child's stderr: every line passed on to ``sys.stderr`` (or ``forward``) through the one
    sanitizer, capped and prefixed with ``label`` (a
    :class:`~agent_connector_sdk.mcp.host._server_output.StderrRelay`: a child's bytes never reach the
    operator's terminal raw), the last non-empty one kept
    (``last_line``, sanitized, at most 300 characters) for the reason it went down. ``file`` is what
    to give the transport; :meth:`close` ends the reader once the child's copies of the pipe close."""

    def __init__(self, forward: TextIO | None = None, label: str = "child") -> None:
        super().__init__(label, sink=forward)

    @property
    def file(self) -> TextIO:
        return self.writer
