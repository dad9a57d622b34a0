"""OpenTelemetry on the gated server: one SERVER span per request, and every gate decision on it.

Spans and metrics go through ``opentelemetry-api`` (a dependency of ``mcp`` and ``fastmcp``); they cost
next to nothing until the application configures an SDK (``docs/observability.md``).

**One span per request.** FastMCP opens a SERVER span for every request that reaches it (named by the
OpenTelemetry MCP conventions, ``{mcp.method.name} {target}``). This module adds no second one: gate
decisions taken inside FastMCP (header parity, argument validation, the output self-check) are recorded
*on FastMCP's span* (:func:`record_gate`). A request our entry answers before FastMCP sees it (an entry
refusal, a body too large, a missing ``MCP-Protocol-Version``, a caller without credentials) would
leave no span at all, so :func:`traced_request` opens one for exactly those: it learns from
:class:`SpanProbe` (a FastMCP middleware, which runs inside FastMCP's span) whether FastMCP handled the
request.

**Attributes** follow the conventions (``mcp.method.name``, ``mcp.protocol.version``,
``jsonrpc.request.id``, ``gen_ai.tool.name``, ``gen_ai.operation.name``, ``error.type``) plus the gate
namespace of :mod:`~agent_connector_sdk.core.contracts._telemetry_names` (``GATE``, ``VERDICT``,
``CATEGORY``: which gate decided, ``passed``/``refused``, the rule's category). Names and categories
only: never an argument, result or header *value*. A method or tool name taken from a request header
is recorded only when it has the shape of one.

**Metric**: ``mcp.server.operation.duration`` (seconds) for every POST, with the method, ``error.type``
and the deciding gate's verdict, so "refused by parity" and "tool error" are countable apart.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from opentelemetry import metrics, propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from agent_connector_sdk.core.contracts import CATEGORY, GATE, GATE_EVENT, INSTRUMENTATION_NAME, VERDICT
from agent_connector_sdk.core.contracts.errors import HEADER_MISMATCH_CODE

__all__ = [
    "SpanProbe",
    "note_refusal",
    "record_gate",
    "traced_request",
]


_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_METHOD = re.compile(r"[a-z][A-Za-z/_-]{0,63}")
_REVISION = re.compile(r"\d{4}-\d{2}-\d{2}")

_duration = metrics.get_meter(INSTRUMENTATION_NAME).create_histogram(
    "mcp.server.operation.duration",
    unit="s",
    description="Duration of MCP requests at the gated server, refused ones included",
)


@dataclass
class _Request:
    """What one request's span and metric need, filled in as the request crosses the gates."""

    start_ns: int
    reached_fastmcp: bool = False
    status: int | None = None
    gate: str | None = None
    verdict: str | None = None
    category: str | None = None
    error_type: str | None = None
    request_id: Any = None
    span_name: str | None = None  # named by the refusal translator from the body, when it knows it
    tool: str | None = None


_current: ContextVar[_Request | None] = ContextVar("agent_connector_request_trace", default=None)


def record_gate(
    gate: str, verdict: str, category: str | None = None, *, error_type: str | None = None
) -> None:
    """Record a gate decision on the request's span (FastMCP's, when the gate runs inside it).

    A refusal also sets the span's ``error.type`` (``error_type``, else the category) and is what the
    request's metric counts; a later ``passed`` never hides an earlier refusal."""
    attributes: dict[str, str] = {GATE: gate, VERDICT: verdict}
    if category is not None:
        attributes[CATEGORY] = category
    span = trace.get_current_span()
    if span.is_recording():
        span.add_event(GATE_EVENT, attributes)
        if verdict == "refused":
            span.set_attributes({**attributes, "error.type": error_type or category or gate})
    request = _current.get()
    if request is not None and request.verdict != "refused":
        request.gate, request.verdict, request.category = gate, verdict, category
        if verdict == "refused":
            request.error_type = error_type or category or gate


def note_refusal(
    status: int,
    code: int,
    category: str,
    request_id: Any,
    *,
    span_name: str | None = None,
    tool: str | None = None,
) -> None:
    """The entry refused the request (one call, from the refusal translator); a header disagreement
    judged before dispatch (-32020) is the parity gate's decision. ``span_name`` and ``tool`` are what
    the translator read from the body (shape-checked there), used when no routing header names them."""
    record_gate(
        "parity" if code == HEADER_MISMATCH_CODE else "entry", "refused", category, error_type=str(code)
    )
    request = _current.get()
    if request is not None:
        request.request_id = request_id
        request.span_name, request.tool = span_name, tool


class SpanProbe(Middleware):
    """Tells :func:`traced_request` that FastMCP handled the request (and so opened its span)."""

    async def on_request(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]) -> Any:
        request = _current.get()
        if request is not None:
            request.reached_fastmcp = True
        return await call_next(context)

    async def on_call_tool(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]) -> Any:
        result = await call_next(context)
        if getattr(result, "is_error", False):
            # A tool's failure travels inside a successful response: without this, HTTP-level
            # metrics would count it healthy.
            span = trace.get_current_span()
            if span.is_recording():
                span.set_attribute("error.type", "tool_error")
            request = _current.get()
            if request is not None and request.error_type is None:
                request.error_type = "tool_error"
        return result


@asynccontextmanager
async def traced_request(scope: Mapping[str, Any]) -> AsyncIterator[_Request | None]:
    """Around one HTTP request at the entry's front: the metric for every POST, and the SERVER span
    for a POST that FastMCP never saw. Yields the request's record (``None`` for other requests);
    the caller sets ``status`` from the answer it sends."""
    if scope.get("method") != "POST":
        yield None
        return
    request = _Request(start_ns=time.time_ns())
    token = _current.set(request)
    try:
        yield request
    finally:
        _current.reset(token)
        _finish(scope, request)


def _finish(scope: Mapping[str, Any], request: _Request) -> None:
    if request.verdict is None and request.status == 401:
        request.gate, request.verdict, request.category = "auth", "refused", "unauthenticated"
        request.error_type = "401"
    headers = _routing_headers(scope)
    method = headers.get("mcp-method")
    method = method if method is not None and _METHOD.fullmatch(method) else None
    if method is None and request.span_name is not None:
        method = request.span_name.split(" ", 1)[0]  # a handshake-era request: only its body names it
    attributes: dict[str, Any] = {}
    if method is not None:
        attributes["mcp.method.name"] = method
    if request.error_type is not None:
        attributes["error.type"] = request.error_type
    elif request.status is not None and request.status >= 400:
        attributes["error.type"] = str(request.status)
    for key, value in ((GATE, request.gate), (VERDICT, request.verdict), (CATEGORY, request.category)):
        if value is not None:
            attributes[key] = value
    _duration.record((time.time_ns() - request.start_ns) / 1e9, attributes)
    if request.reached_fastmcp:
        return  # FastMCP's span holds this request (and the gates' decisions on it)
    tracer = trace.get_tracer(INSTRUMENTATION_NAME)
    name = method or "mcp"
    tool = headers.get("mcp-name") or request.tool
    if method == "tools/call" and tool is not None and _TOOL_NAME.fullmatch(tool):
        attributes["gen_ai.tool.name"] = tool
        attributes["gen_ai.operation.name"] = "execute_tool"
        name = f"{method} {tool}"
    revision = headers.get("mcp-protocol-version")
    if revision is not None and _REVISION.fullmatch(revision):
        attributes["mcp.protocol.version"] = revision
    if request.request_id is not None:
        attributes["jsonrpc.request.id"] = str(request.request_id)
    if request.status is not None:
        attributes["http.response.status_code"] = request.status
    parent = propagate.extract({k: v for k, v in headers.items() if k in ("traceparent", "tracestate")})
    span = tracer.start_span(
        name, context=parent, kind=SpanKind.SERVER, attributes=attributes, start_time=request.start_ns
    )
    if "error.type" in attributes:
        span.set_status(Status(StatusCode.ERROR))
    span.end()


def _routing_headers(scope: Mapping[str, Any]) -> dict[str, str]:
    """The few headers a span may name (first of each), decoded; nothing else is read."""
    wanted = {b"mcp-method", b"mcp-name", b"mcp-protocol-version", b"traceparent", b"tracestate"}
    found: dict[str, str] = {}
    for name, value in scope.get("headers", ()):
        key = bytes(name).lower()
        if key in wanted and key.decode() not in found:
            found[key.decode()] = bytes(value).decode("latin-1")
    return found
