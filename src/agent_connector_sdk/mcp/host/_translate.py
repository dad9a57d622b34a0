"""The one translator of the host: foreign failures in, the host's error tree out.

Every host read and call goes through :meth:`~.HostSession.request` (connecting and closing
through the session too), and every failure on those paths passes :func:`map_errors` — the way
``httpx`` maps ``httpcore``'s exceptions in one context manager. What comes in is foreign: the
``mcp`` SDK's ``MCPError`` (the server's error object, or one the SDK made up on this side), fastmcp's
``RuntimeError`` around a failed connect, ``httpx2``/``anyio``/``OSError`` transport exceptions, the
host's own wire guard (:mod:`._wire`) cutting a read short, and exception groups of any of these.
What goes out is one of:

* :class:`~.JsonRpcError` — the *server's* error object: its code, its words (sanitized and
  capped), its ``data``, and the HTTP status it came with. A server's ``-32000 "backend on fire"`` is
  this, never a closed connection;
* :class:`~.HttpStatusError` — an HTTP error status with no readable JSON-RPC error: the status
  and the server's words from a body of any size (read up to a cap);
* :class:`~.UnsupportedVersion` — no protocol revision in common, with what the server offered;
* :class:`~.MalformedResponse` — this host could not read the answer (not JSON-RPC, refused by
  the parser, compressed though identity was asked), or the server broke the protocol (an answer
  whose id matches no request this host sent: named at once, never left to time out): a local
  failure, saying why;
* :class:`~.NotMcpServer` — what answered is not an MCP server and the host can say what it is: an
  HTML page (a 2xx, 405 or 501 answer in ``text/html``: a page, or a server that takes no POST), a
  stdio line that is not JSON-RPC (the session ends at that line, not at the timeout);
* :class:`~.TransportFailure` — the connection failed, closed or timed out (observed locally);
* :class:`~agent_connector_sdk.core.host.bounds.BoundExceeded` — a :class:`~.HostBounds` cap of this host was
  hit (a read cut at ``max_message_bytes``, an SSE event over it, a message nested past the parser).

The host's own errors (:class:`~agent_connector_sdk.errors.AgentConnectorError`) pass through as
they are; anything else (a programming error, a cancellation) is not translated. Which of the SDK's
errors were made up locally is read by :func:`~agent_connector_sdk.mcp.compat.sdk_local_failure`, the
one place that knows the SDK's texts; nothing downstream decodes a message.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types.version import SUPPORTED_PROTOCOL_VERSIONS

from agent_connector_sdk.core.host import (
    HostBounds,
    HttpStatusError,
    JsonRpcError,
    MalformedResponse,
    NotMcpServer,
    TransportFailure,
    UnsupportedVersion,
)
from agent_connector_sdk.core.host.bounds import BoundExceeded
from agent_connector_sdk.errors import AgentConnectorError, iter_causes
from agent_connector_sdk.mcp import compat
from agent_connector_sdk.mcp.host._transport_errors import TRANSPORT_EXCEPTIONS
from agent_connector_sdk.mcp.host._wire import StdioLineCap, Watch
from agent_connector_sdk.sanitize import sanitize_text

__all__ = ["map_errors", "translate", "translate_unreadable"]

_PAGE_STATUSES = frozenset({405, 501})
"""Error statuses whose HTML page means "not an MCP endpoint": the server takes no POST there."""


@contextmanager
def map_errors(
    bounds: HostBounds, *, what: str, watch: Watch | None = None, stdio: StdioLineCap | None = None
) -> Iterator[None]:
    """Run the block; a foreign failure in it is raised as the host's family (see the module
    docstring), from the original. ``what`` names the operation in value-free messages."""
    try:
        yield
    except BaseException as error:
        mapped = translate(error, bounds, what=what, watch=watch, stdio=stdio)
        if mapped is None or mapped is error:
            raise
        raise mapped from error


def translate(
    error: BaseException,
    bounds: HostBounds,
    *,
    what: str,
    watch: Watch | None = None,
    stdio: StdioLineCap | None = None,
) -> AgentConnectorError | None:
    """The host's error for ``error``, or ``None`` when it is not a failure of the exchange."""
    if isinstance(error, AgentConnectorError):
        return error
    if isinstance(error, BaseExceptionGroup):
        leaves = [translate(leaf, bounds, what=what, watch=watch, stdio=stdio) for leaf in error.exceptions]
        return next((leaf for leaf in leaves if leaf is not None), None)
    if not isinstance(error, Exception):
        return None  # cancellation, KeyboardInterrupt, SystemExit: never turned into a failure
    if stdio is not None and stdio.non_json is not None:
        return NotMcpServer("non_json_output", sample=stdio.non_json)
    bound = _bound_hit(watch, stdio, bounds)
    if bound is not None:
        return bound
    if watch is not None and watch.encoding is not None:
        return MalformedResponse(
            f"{what}: the answer came with Content-Encoding {watch.encoding}, which this host did not ask "
            "for (it reads identity only)"
        )
    if isinstance(error, MCPError) and isinstance(error.data, compat.UnknownResponseId):
        shown = sanitize_text(error.data.shown, 80)
        return MalformedResponse(
            f"{what}: protocol error: the server answered with JSON-RPC id {shown}, which matches no "
            "request this host sent"
        )
    if isinstance(error, MCPError):
        return _from_error_object(error.code, error.message, error.data, bounds, what=what, watch=watch)
    if isinstance(error, RuntimeError):
        if error.__cause__ is None:
            return _unsupported_version(error)
        # The SDK wraps what failed in a RuntimeError: what it was raised from, translated, nearest
        # first (through iter_causes: each once and bounded, so a cyclic chain cannot recurse forever).
        for cause in iter_causes(error):
            mapped: AgentConnectorError | None
            if isinstance(cause, RuntimeError):
                mapped = _unsupported_version(cause)
            else:
                mapped = translate(cause, bounds, what=what, watch=watch, stdio=stdio)
            if mapped is not None:
                return mapped
        return None
    if isinstance(error, TRANSPORT_EXCEPTIONS):
        return TransportFailure(f"{what}: transport failed: {type(error).__name__}")
    return None


def _unsupported_version(error: RuntimeError) -> UnsupportedVersion | None:
    offered = compat.sdk_version_mismatch(str(error))
    return None if offered is None else UnsupportedVersion(offered, tuple(SUPPORTED_PROTOCOL_VERSIONS))


def translate_unreadable(error: Exception, bounds: HostBounds, *, what: str) -> AgentConnectorError:
    """The host's error for a message the SDK could not read and handed to the client's message
    handler instead (it then drops it; the request it answered waits for its timeout): a message
    nested past the parser is :class:`~agent_connector_sdk.core.host.bounds.BoundExceeded`
    (``max_schema_depth``), anything else
    :class:`~.MalformedResponse`; which, :func:`~agent_connector_sdk.mcp.compat.sdk_unreadable_line`
    says."""
    if compat.sdk_unreadable_line(error).kind == "too_deep":
        return BoundExceeded(
            "max_schema_depth", bounds.max_schema_depth, "an answer nests deeper than this host parses"
        )
    return MalformedResponse(f"{what}: a message from the server is not JSON-RPC this host parses")


def _bound_hit(watch: Watch | None, stdio: StdioLineCap | None, bounds: HostBounds) -> BoundExceeded | None:
    if stdio is not None and stdio.too_deep:
        return BoundExceeded(
            "max_schema_depth", bounds.max_schema_depth, "an answer nests deeper than this host parses"
        )
    if (watch is not None and watch.capped == "max_message_values") or (
        stdio is not None and stdio.values_tripped
    ):
        return BoundExceeded(
            "max_message_values",
            bounds.max_message_values,
            "a response held more values than this host parses",
        )
    if watch is not None and watch.capped == "max_stream_bytes":
        return BoundExceeded(
            "max_stream_bytes",
            bounds.max_stream_bytes,
            "one response stream sent more than this host reads before its answer",
        )
    if (watch is not None and watch.capped is not None) or (stdio is not None and stdio.tripped):
        return BoundExceeded(
            "max_message_bytes", bounds.max_message_bytes, "a response was larger than this host reads"
        )
    return None


def _from_error_object(
    code: int, message: str, data: Any, bounds: HostBounds, *, what: str, watch: Watch | None
) -> AgentConnectorError:
    http = watch.errors[-1] if watch is not None and watch.errors else None
    local = compat.sdk_local_failure(code, message)
    if local is None:
        # The server's own error object (also when it came with an HTTP error status).
        return JsonRpcError(code, message, data, http_status=http.status if http is not None else None)
    kind = local.kind
    if kind == "http_status" and http is not None:
        if http.code is not None:  # a JSON-RPC error body the SDK could not take whole (cut at the cap)
            return JsonRpcError(http.code, http.message or "", None, http_status=http.status)
        if http.html and http.status in _PAGE_STATUSES:
            # A page, or a web server that takes no POST at all: not an MCP endpoint. A 401, 403 or
            # 404 page stays an HTTP error (credentials or the path may be what is wrong).
            return NotMcpServer("html_page", sample=http.message, status=http.status)
        return HttpStatusError(http.status, http.message)
    if kind == "too_deep":
        return BoundExceeded(
            "max_schema_depth", bounds.max_schema_depth, "an answer nests deeper than this host parses"
        )
    if kind == "event_too_large":
        return BoundExceeded(
            "max_message_bytes", bounds.max_message_bytes, "an SSE event was larger than this host reads"
        )
    if kind == "parse":
        reason = f" ({local.detail})" if local.detail else ""
        return MalformedResponse(f"{what}: the answer is not JSON-RPC this host parses{reason}")
    if kind == "content_type" and (local.detail or "").lower().startswith("text/html"):
        return NotMcpServer("html_page")
    if kind == "content_type":
        shown = local.detail or "no content type"
        return MalformedResponse(
            f"{what}: the answer is {shown}, not JSON-RPC", content_type=local.detail or ""
        )
    if kind == "no_answer":
        return MalformedResponse(f"{what}: the server answered without a result (202 Accepted or a redirect)")
    if kind == "timeout":
        return TransportFailure(f"{what}: timed out waiting for the answer", code=code)
    # "closed", or an HTTP stand-in without a guard to say which status it was.
    return TransportFailure(
        f"{what}: the connection closed before an answer arrived (code {code})", code=code
    )
