"""Audit sinks: where gate events (names and categories, never values) go, always bounded.

``AuditSink`` is the one interface every gate emits to; ``BoundedAuditSink`` keeps the most recent
``maxlen`` events in memory (older ones are dropped, so a long-running process never grows), which is
what tests and operators inspect.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

__all__ = ["AuditSink", "BoundedAuditSink"]


@runtime_checkable
class AuditSink(Protocol):
    """Receives one audit event (a JSON-ready mapping of names and categories; never values)."""

    def emit(self, event: Mapping[str, Any]) -> None: ...


class BoundedAuditSink:
    """The last ``maxlen`` events, oldest dropped first; ``events()`` is a snapshot tuple."""

    def __init__(self, maxlen: int = 1024) -> None:
        if maxlen < 1:
            raise ValueError("maxlen must be at least 1")
        self._events: deque[Mapping[str, Any]] = deque(maxlen=maxlen)

    def emit(self, event: Mapping[str, Any]) -> None:
        self._events.append(event)

    def events(self) -> tuple[Mapping[str, Any], ...]:
        return tuple(self._events)
