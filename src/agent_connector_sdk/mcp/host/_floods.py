"""The notification bound of one connection, on the SDK's receive path (see
:mod:`agent_connector_sdk.core.host._notifications` for the bookkeeping).

:class:`NotificationGate` is what a :class:`~.HostSession` hands
:func:`~agent_connector_sdk.mcp.compat.session_hooks`: the SDK offers it every inbound notification
synchronously, in receive order, before it spawns a task or calls a handler. Over the bound the
notification is consumed there (counted, dropped: one clock read, one dict increment). A
``notifications/tools/list_changed`` still marks the catalog stale when dropped: the flag is what
keeps a drifted contract from being called, and setting it costs nothing.

What was dropped is said once per request that saw drops, on the ``agent_connector_sdk.host`` logger
(one WARNING line: "the server sent 20,000 log notifications; 19,900 dropped ..."), never once per
notification. The gate also remembers an answer whose id this connection never issued
(:attr:`unknown_id`), so the failure is named as the protocol error it is.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from agent_connector_sdk.core.host import HostBounds, NotificationBudget, NotificationTally, notification_kind

__all__ = ["NotificationGate", "logger"]

logger = logging.getLogger("agent_connector_sdk.host")

_TOOLS_CHANGED = "notifications/tools/list_changed"


class NotificationGate:
    """One connection's notification bound and its tally (see the module docstring)."""

    def __init__(self, bounds: HostBounds, on_tools_changed: Callable[[], None]) -> None:
        self.budget = NotificationBudget(bounds, time.monotonic())
        self._on_tools_changed = on_tools_changed
        self.label: str | None = None
        """Who the summary line names first (the gateway sets ``child NAME``); ``None``: no prefix."""
        self.unknown_id: str | None = None
        """The last answer id that matched no request this connection issued (as received, JSON)."""

    @property
    def tally(self) -> NotificationTally:
        return self.budget.tally

    def admit_notification(self, method: str) -> bool:
        if method == _TOOLS_CHANGED:
            self._on_tools_changed()
        return self.budget.admit(notification_kind(method), time.monotonic())

    def unknown_response_id(self, shown: str) -> None:
        self.unknown_id = shown

    def say_dropped(self, before: NotificationTally, what: str) -> str | None:
        """Log ONE line when notifications were dropped since ``before`` (a snapshot), and return the
        clause naming the flood (``None`` when nothing was dropped)."""
        since = self.tally.since(before)
        summary = since.summary()
        if summary is not None:
            who = f"{self.label}: " if self.label else ""
            logger.warning("%s%s: %s (%s)", who, what, summary, self.budget.describe())
        return summary
