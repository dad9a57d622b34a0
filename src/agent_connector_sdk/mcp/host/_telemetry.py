"""OpenTelemetry on the host: each operation a CLIENT span named by the MCP conventions, with its verdicts.

:class:`~.HostSession` opens one span per operation: ``tools/list`` around Discover and Admit
(every page), ``tools/call {name}`` around Invoke, Execute and Consume, and ``{method}`` around any other
request it sends. The ``mcp`` SDK's own ``MCP send …`` span sits inside, one per wire request, and
carries the W3C trace context to the server in ``_meta`` (SEP-414), so the server's span continues the
host's trace. Attributes: ``mcp.method.name``, ``mcp.protocol.version``, ``gen_ai.tool.name``,
``gen_ai.operation.name``, ``error.type``, and the verdicts in the server's gate namespace
(:mod:`~agent_connector_sdk.core.contracts._telemetry_names`) plus admission counts. Names and
categories only: never an argument, result, header value or error text.

Metric: ``mcp.client.operation.duration`` (seconds) with the method, ``error.type`` and the verdict.
No SDK configured: every call below is the API's no-op (``bench/product_path.py`` measures it).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final

from opentelemetry import metrics, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from agent_connector_sdk.core.contracts import CATEGORY, GATE, INSTRUMENTATION_NAME, VERDICT
from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.sanitize import sanitize_text

__all__ = ["Operation", "client_operation", "in_operation", "record_admission", "record_result"]

MAX_REJECTION_EVENTS: Final = 100
"""At most this many rejected tools are named as span events (the counts are always exact)."""

_duration = metrics.get_meter(INSTRUMENTATION_NAME).create_histogram(
    "mcp.client.operation.duration", unit="s", description="Duration of MCP operations at the host"
)
_operation: ContextVar[bool] = ContextVar("agent_connector_host_operation", default=False)


def in_operation() -> bool:
    """Whether a host operation's span is open (its wire requests then add no span of their own)."""
    return _operation.get()


@dataclass
class Operation:
    """An open host operation: its span, and whether the result it returned was a tool error."""

    span: Span
    tool_error: bool = False


@contextmanager
def client_operation(
    method: str, *, tool: str | None = None, protocol_version: str | None = None
) -> Iterator[Operation]:
    """One host operation as a CLIENT span and one duration measurement; a failure sets ``error.type``
    (the error's category, or the server's JSON-RPC code) and the refusing gate."""
    attributes: dict[str, Any] = {"mcp.method.name": method}
    name = method
    if tool is not None:
        shown = sanitize_text(tool, 128)
        attributes.update({"gen_ai.tool.name": shown, "gen_ai.operation.name": "execute_tool"})
        name = f"{method} {shown}"
    if protocol_version is not None:
        attributes["mcp.protocol.version"] = protocol_version
    start = time.perf_counter()
    token = _operation.set(True)
    span = trace.get_tracer(INSTRUMENTATION_NAME).start_span(
        name, kind=SpanKind.CLIENT, attributes=attributes
    )
    measured = {"mcp.method.name": method}
    operation = Operation(span)
    try:
        with trace.use_span(span, end_on_exit=True, record_exception=False, set_status_on_exception=False):
            try:
                yield operation
            except BaseException as error:
                failure = _failure_attributes(error)
                span.set_attributes(failure)
                span.set_status(Status(StatusCode.ERROR))
                measured.update(failure)
                raise
            if operation.tool_error:
                measured.update({"error.type": "tool_error", GATE: "consume", VERDICT: "passed"})
    finally:
        _operation.reset(token)
        _duration.record(time.perf_counter() - start, measured)


def record_admission(operation: Operation, admitted: int, rejected: Mapping[str, str], findings: int) -> None:
    """Admit's verdict on a listing: counts, and each rejected tool's name and category."""
    span = operation.span
    if not span.is_recording():
        return
    span.set_attributes(
        {
            GATE: "admit",
            VERDICT: "refused" if rejected else "passed",
            "agent_connector.admitted": admitted,
            "agent_connector.rejected": len(rejected),
            "agent_connector.findings": findings,
        }
    )
    for name, category in list(rejected.items())[:MAX_REJECTION_EVENTS]:
        span.add_event(
            "agent_connector.rejected", {"gen_ai.tool.name": sanitize_text(name, 128), CATEGORY: category}
        )


def record_result(operation: Operation, *, is_error: bool) -> None:
    """Consume's verdict on a result it accepted; a tool's ``isError`` result sets ``error.type`` (it
    travels inside a successful response, which HTTP-level metrics count as healthy)."""
    operation.tool_error = is_error
    span = operation.span
    if span.is_recording():
        span.set_attributes({GATE: "consume", VERDICT: "passed"})
        if is_error:
            span.set_attribute("error.type", "tool_error")
            span.set_status(Status(StatusCode.ERROR))


def _failure_attributes(error: BaseException) -> dict[str, str]:
    if isinstance(error, AgentConnectorError):
        code = getattr(error, "code", None)
        attributes = {"error.type": str(code) if isinstance(code, int) else str(error.category)}
        attributes[VERDICT] = "refused"
        attributes[CATEGORY] = str(error.category)
        where = error.where
        if where is not None:
            attributes[GATE] = str(where)
        if isinstance(code, int):
            attributes["rpc.response.status_code"] = str(code)
        return attributes
    return {"error.type": type(error).__qualname__}
