"""The audit trail a test reads back.

Host and server objects type their sink as the callable :class:`~agent_connector_sdk.audit.AuditSink`
(any callable qualifies); a test that relies on the default in-memory sink states it, once, here.
"""

from __future__ import annotations

from agent_connector_sdk.audit import AuditSink, BoundedAuditSink


def recorded(sink: AuditSink) -> BoundedAuditSink:
    """``sink`` as the default :class:`BoundedAuditSink` it must be, to be read back."""
    assert isinstance(sink, BoundedAuditSink), f"expected the default in-memory sink, got {sink!r}"
    return sink
