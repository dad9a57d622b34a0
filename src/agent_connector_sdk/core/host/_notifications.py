"""What a server may say besides its answers, and how much of it a host passes on: pure bookkeeping.

A server may send notifications at any rate (``notifications/message``, ``notifications/progress``,
``notifications/*/list_changed``, ``notifications/resources/updated``, anything else). Each one the
host relays costs a task, a handler call and, for a log message, a line on the user's terminal: 20,000
log notifications during one call once put 160,001 lines on stderr and starved the answer behind them
for minutes. :class:`NotificationBudget` is the per-connection bound the host applies on the receive
path, before any of that work: a token bucket (``notification_rate`` a second, a burst of
``notification_burst``) and a volume cap (``max_notifications`` relayed per connection). What is over
the bound is counted (:class:`NotificationTally`) and dropped; deciding costs O(1) per notification
(a dict increment and a float update), so a flood cannot starve the answer behind it.

The clock is the caller's (``now``, monotonic seconds): this module does no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from agent_connector_sdk.core.host._options import HostBounds

__all__ = ["NotificationBudget", "NotificationKind", "NotificationTally", "notification_kind"]

NotificationKind = Literal["log", "progress", "list_changed", "resource_updated", "other"]
_KINDS: Final[dict[str, NotificationKind]] = {
    "notifications/message": "log",
    "notifications/progress": "progress",
    "notifications/tools/list_changed": "list_changed",
    "notifications/prompts/list_changed": "list_changed",
    "notifications/resources/list_changed": "list_changed",
    "notifications/resources/updated": "resource_updated",
}
_NOUNS: Final[dict[NotificationKind, str]] = {
    "log": "log",
    "progress": "progress",
    "list_changed": "list_changed",
    "resource_updated": "resource update",
    "other": "other",
}


def notification_kind(method: str) -> NotificationKind:
    """The kind a notification is counted under (one dict lookup)."""
    return _KINDS.get(method, "other")


@dataclass(slots=True)
class NotificationTally:
    """Notifications received and dropped on one connection, by kind."""

    received: dict[NotificationKind, int] = field(default_factory=dict)
    dropped: dict[NotificationKind, int] = field(default_factory=dict)

    @property
    def total_received(self) -> int:
        return sum(self.received.values())

    @property
    def total_dropped(self) -> int:
        return sum(self.dropped.values())

    def snapshot(self) -> NotificationTally:
        return NotificationTally(dict(self.received), dict(self.dropped))

    def since(self, earlier: NotificationTally) -> NotificationTally:
        """What arrived after ``earlier`` (a :meth:`snapshot` of this tally)."""
        return NotificationTally(
            _minus(self.received, earlier.received), _minus(self.dropped, earlier.dropped)
        )

    def summary(self) -> str | None:
        """One clause naming a flood, e.g. ``the server sent 20,000 log notifications; 19,900 dropped``
        (kinds with drops only, most dropped first); ``None`` when nothing was dropped."""
        kinds = sorted((kind for kind in self.dropped if self.dropped[kind]), key=lambda k: -self.dropped[k])
        if not kinds:
            return None
        parts = [
            f"{self.received.get(kind, 0):,} {_NOUNS[kind]} notifications; {self.dropped[kind]:,} dropped"
            for kind in kinds
        ]
        return "the server sent " + "; ".join(parts)


_Counts = dict[NotificationKind, int]


def _minus(now: _Counts, then: _Counts) -> _Counts:
    return {kind: count - then.get(kind, 0) for kind, count in now.items() if count - then.get(kind, 0)}


class NotificationBudget:
    """The per-connection notification bound (see the module docstring). :meth:`admit` says whether
    one notification may be relayed; either way it is counted in :attr:`tally`."""

    __slots__ = ("_last", "_tokens", "burst", "limit", "rate", "relayed", "tally")

    def __init__(self, bounds: HostBounds, now: float) -> None:
        self.rate = float(bounds.notification_rate)
        self.burst = float(bounds.notification_burst)
        self.limit = bounds.max_notifications
        self.relayed = 0
        self.tally = NotificationTally()
        self._tokens = self.burst
        self._last = now

    def admit(self, kind: NotificationKind, now: float) -> bool:
        received = self.tally.received
        received[kind] = received.get(kind, 0) + 1
        elapsed = now - self._last
        self._last = now
        if elapsed > 0:
            self._tokens = min(self.burst, self._tokens + elapsed * self.rate)
        if self.relayed < self.limit and self._tokens >= 1.0:
            self._tokens -= 1.0
            self.relayed += 1
            return True
        dropped = self.tally.dropped
        dropped[kind] = dropped.get(kind, 0) + 1
        return False

    def describe(self) -> str:
        """The bound in words, for the summary line."""
        return f"over {self.rate:g}/s (burst {self.burst:g}) or {self.limit:,} relayed per connection"
