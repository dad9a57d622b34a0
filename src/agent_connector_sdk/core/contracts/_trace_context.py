"""W3C Trace Context in a request's ``_meta`` (``traceparent``, ``tracestate``), re-issued by a relay.

A relay (the gateway) must not hand a caller's strings to another server, yet a caller that sends
trace context legitimately asks one thing: *continue my trace*. :func:`reissue_trace_context` answers
exactly that and nothing more. It parses the caller's ``traceparent`` strictly (W3C Trace Context,
version ``00``; a later version is read by its version-``00`` prefix, as the recommendation says) and
returns the relay's own: the same trace id and sampled flag, a **new** parent (span) id the relay made,
and the ``tracestate`` rebuilt from its parsed list members. Anything invalid is dropped: a bad
``traceparent`` means no trace context at all (and then no ``tracestate`` either, which has no meaning
alone); a bad ``tracestate`` means none. Every other ``_meta`` key of the caller stays behind.

Pure (no I/O, no OpenTelemetry objects): the span id source is a parameter, so tests are exact and an
OpenTelemetry layer can pass its own id generator.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "MAX_TRACESTATE_MEMBERS",
    "TraceContext",
    "parse_trace_context",
    "reissue_trace_context",
]

MAX_TRACESTATE_MEMBERS: Final = 32
"""W3C: a ``tracestate`` holds at most 32 list members (more: the header is discarded here)."""
_MAX_TRACESTATE_CHARS: Final = 512

_TRACEPARENT_00: Final = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
_TRACEPARENT_LATER: Final = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?")
_KEY: Final = re.compile(r"[a-z][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13}")
_VALUE: Final = re.compile(r"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]")
_ZERO_TRACE: Final = "0" * 32
_ZERO_SPAN: Final = "0" * 16


@dataclass(frozen=True, slots=True)
class TraceContext:
    """A parsed trace context: ids in lowercase hex, the sampled flag, ``tracestate`` members in order."""

    trace_id: str
    parent_id: str
    sampled: bool
    tracestate: tuple[tuple[str, str], ...] = ()

    @property
    def traceparent(self) -> str:
        return f"00-{self.trace_id}-{self.parent_id}-{'01' if self.sampled else '00'}"

    def as_meta(self) -> dict[str, str]:
        """The ``_meta`` entries that carry this context (``tracestate`` only when it has members)."""
        meta = {"traceparent": self.traceparent}
        if self.tracestate:
            meta["tracestate"] = ",".join(f"{key}={value}" for key, value in self.tracestate)
        return meta


def _parse_traceparent(value: Any) -> tuple[str, str, bool] | None:
    if not isinstance(value, str):
        return None
    match = _TRACEPARENT_00.fullmatch(value)
    if match is None:
        later = _TRACEPARENT_LATER.fullmatch(value)
        # A version other than 00 (never ff) is read by its version-00 prefix.
        if later is None or later.group(1) in ("00", "ff"):
            return None
        trace_id, parent_id, flags = later.group(2, 3, 4)
    else:
        trace_id, parent_id, flags = match.group(1, 2, 3)
    if trace_id == _ZERO_TRACE or parent_id == _ZERO_SPAN:
        return None
    return trace_id, parent_id, bool(int(flags, 16) & 0x01)


def _parse_tracestate(value: Any) -> tuple[tuple[str, str], ...]:
    """The list members of a valid ``tracestate``; ``()`` when absent or invalid in any way."""
    if not isinstance(value, str) or len(value) > _MAX_TRACESTATE_CHARS:
        return ()
    members: list[tuple[str, str]] = []
    seen: set[str] = set()
    for raw in value.split(","):
        member = raw.strip(" \t")
        if not member:
            continue  # W3C allows empty list members
        key, equals, item = member.partition("=")
        if not equals or _KEY.fullmatch(key) is None or _VALUE.fullmatch(item) is None or key in seen:
            return ()
        seen.add(key)
        members.append((key, item))
    if len(members) > MAX_TRACESTATE_MEMBERS:
        return ()
    return tuple(members)


def parse_trace_context(meta: Mapping[str, Any] | None) -> TraceContext | None:
    """The trace context a request's ``_meta`` carries, or ``None`` when it carries no valid one."""
    if not isinstance(meta, Mapping):
        return None
    parent = _parse_traceparent(meta.get("traceparent"))
    if parent is None:
        return None
    trace_id, parent_id, sampled = parent
    return TraceContext(trace_id, parent_id, sampled, _parse_tracestate(meta.get("tracestate")))


def _random_span_id() -> str:
    while True:
        span = secrets.token_hex(8)
        if span != _ZERO_SPAN:
            return span


def reissue_trace_context(
    meta: Mapping[str, Any] | None, *, new_span_id: Callable[[], str] = _random_span_id
) -> TraceContext | None:
    """The relay's own trace context for a caller's ``_meta``: same trace id, sampled flag and
    ``tracestate`` members, a new parent id from ``new_span_id``; ``None`` when the caller sent no valid
    ``traceparent`` (then nothing of the caller's trace context is sent on)."""
    caller = parse_trace_context(meta)
    if caller is None:
        return None
    span = new_span_id()
    if re.fullmatch(r"[0-9a-f]{16}", span) is None or span == _ZERO_SPAN:
        raise ValueError("new_span_id must return 16 lowercase hex digits, not all zero")
    return TraceContext(caller.trace_id, span, caller.sampled, caller.tracestate)
