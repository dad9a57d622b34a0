"""The one per-request record of a gated ``tools/call``: what each gate learnt, for the next one to read.

The resolution hook (:mod:`._resolution`) records that it judged the call's headers (when the ASGI
entry, :mod:`._entry`, handed it a handshake-era call before dispatch, or during dispatch) and the tool
it resolved and checked (and, through a search proxy, the proxied
tool); the output self-check (:mod:`._output_check`) reads the tool that ran. Each writes or reads the
record here and never calls back into the module before it, so a call reads top-down.

Where it lives: over HTTP in the request's ASGI scope (``scope["state"]``, which Starlette's
``request.state`` reads, so it travels with the request to whichever task serves it on every
transport); without an HTTP request (in-memory, stdio) in a context variable, tied to FastMCP's request
context (there FastMCP serves the request in the task that resolves the tool).
"""

from __future__ import annotations

import contextvars
from collections.abc import MutableMapping
from typing import Any, Final

from fastmcp.tools import Tool

from agent_connector_sdk.mcp import compat

__all__ = ["CALL_RECORD_KEY", "CallRecord", "call_record", "http_call_record", "resolved_tool"]

CALL_RECORD_KEY: Final = "agent_connector_sdk.call"
"""Key of the :class:`CallRecord` in an HTTP request's ASGI ``scope["state"]``."""


class CallRecord:
    """What the gates learn about one ``tools/call`` (see the module docstring).

    ``judged``: the tool whose headers the resolution hook judged for this request (before dispatch, for
    a handshake-era call the entry handed it; not judged twice for the same tool);
    ``name``/``tool``: the call's name and the tool resolved for it (``None`` until resolution checked
    the call); ``proxied``: through a search proxy, the proxied tool (its name is the target's).
    """

    __slots__ = ("judged", "name", "owner", "proxied", "tool")

    def __init__(self) -> None:
        self.judged: Tool | None = None
        self.owner: object | None = None  # FastMCP's request context this record belongs to
        self.name: str | None = None
        self.tool: Tool | None = None
        self.proxied: Tool | None = None

    def tool_named(self, name: str) -> Tool | None:
        """The tool this call resolved under ``name`` (the called tool, or the proxied one), if any."""
        if self.tool is not None and name == self.name:
            return self.tool
        if self.proxied is not None and name == self.proxied.name:
            return self.proxied
        return None


# Only for calls without an HTTP request (see the module docstring).
_RECORD: contextvars.ContextVar[CallRecord | None] = contextvars.ContextVar(
    "agent_connector_sdk_call_record", default=None
)


def http_call_record(scope: MutableMapping[str, Any]) -> CallRecord:
    """A fresh record in an HTTP request's ``scope``, before dispatch (the request's own from then on)."""
    record = scope.setdefault("state", {})[CALL_RECORD_KEY] = CallRecord()
    return record


def call_record(request_ctx: Any) -> CallRecord:
    """The record of the call served under FastMCP's ``request_ctx`` (created on first use)."""
    request = request_ctx.request
    if request is not None:
        state = request.scope.setdefault("state", {})
        record = state.get(CALL_RECORD_KEY)
        if not isinstance(record, CallRecord) or _foreign(record, request_ctx):
            record = state[CALL_RECORD_KEY] = CallRecord()
        record.owner = request_ctx
        return record
    record = _RECORD.get()
    if record is None or _foreign(record, request_ctx):
        record = CallRecord()
        record.owner = request_ctx
        _RECORD.set(record)
    return record


def _foreign(record: CallRecord, request_ctx: Any) -> bool:
    """Whether ``record`` belongs to another request (an unowned one was made before dispatch, for this)."""
    # Identity, not equality: FastMCP's request context is a dataclass compared field by field.
    return record.owner is not None and record.owner is not request_ctx


def resolved_tool(name: str) -> Tool | None:
    """The tool resolution checked for ``name`` in the current ``tools/call`` (``None``: not recorded)."""
    current = compat.wire_request()
    if current is None:
        return None
    request_ctx, method, _ = current
    if method != "tools/call":
        return None
    return call_record(request_ctx).tool_named(name)
