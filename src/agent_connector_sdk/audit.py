"""Audit events, on both sides, go to an :class:`AuditSink` — never into a list that grows without bound.

An audit event is a small JSON-able dict: event and tool names, header names, gates, categories and
outcomes. It never holds an argument or header *value* (every producer in the SDK keeps to that).

:class:`AuditSink` is any callable taking one event, so a logger function, a metrics exporter or
``list.append`` all qualify. :class:`BoundedAuditSink` is the in-memory default: it keeps the newest
``maxlen`` events (a ``collections.deque``) and counts what it had to drop, so a long-running host or
server holds constant memory however many calls it makes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any, Final, Protocol, TypeAlias

__all__ = ["DEFAULT_AUDIT_EVENTS", "AuditEvent", "AuditSink", "BoundedAuditSink"]

AuditEvent: TypeAlias = dict[str, Any]
DEFAULT_AUDIT_EVENTS: Final = 1024
"""How many events a :class:`BoundedAuditSink` keeps by default."""


class AuditSink(Protocol):
    """Receives one audit event (names and categories only) per call."""

    def __call__(self, event: AuditEvent, /) -> None: ...


class BoundedAuditSink:
    """Keep the newest ``maxlen`` audit events in memory; older ones are dropped (and counted).

    Iterating, indexing (``sink[-1]``) and ``len`` see the kept events, oldest first; ``dropped`` is how
    many were evicted so far, so a reader can tell a complete trail from a truncated one.
    """

    def __init__(self, maxlen: int = DEFAULT_AUDIT_EVENTS) -> None:
        if isinstance(maxlen, bool) or not isinstance(maxlen, int) or maxlen < 1:
            raise ValueError("maxlen must be a positive integer")
        self._events: deque[AuditEvent] = deque(maxlen=maxlen)
        self._maxlen = maxlen
        self._dropped = 0

    def __call__(self, event: AuditEvent, /) -> None:
        events = self._events
        if len(events) == self._maxlen:
            self._dropped += 1
        events.append(event)

    @property
    def maxlen(self) -> int:
        return self._maxlen

    @property
    def dropped(self) -> int:
        """Events evicted because the sink was full."""
        return self._dropped

    def events(self) -> list[AuditEvent]:
        """A copy of the kept events, oldest first."""
        return list(self._events)

    def clear(self) -> None:
        self._events.clear()
        self._dropped = 0

    def __len__(self) -> int:
        return len(self._events)

    def __iter__(self) -> Iterator[AuditEvent]:
        return iter(list(self._events))

    def __getitem__(self, index: int) -> AuditEvent:
        return self._events[index]

    def __repr__(self) -> str:
        return f"BoundedAuditSink(maxlen={self.maxlen}, kept={len(self)}, dropped={self.dropped})"
