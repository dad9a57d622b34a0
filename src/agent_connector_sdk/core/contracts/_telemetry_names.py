"""The names our OpenTelemetry spans and metrics share on both sides (pure; see docs/observability.md).

The host (:mod:`agent_connector_sdk.mcp.host._telemetry`) and the gated server
(:mod:`agent_connector_sdk.mcp.server._telemetry`) record gate decisions under one namespace, so a trace
that crosses both reads the same words on every span.
"""

from __future__ import annotations

from typing import Final

__all__ = ["CATEGORY", "GATE", "GATE_EVENT", "INSTRUMENTATION_NAME", "VERDICT"]

INSTRUMENTATION_NAME: Final = "agent-connector-sdk"
"""The tracer and meter name."""
GATE: Final = "agent_connector.gate"
"""Which gate decided: ``entry``, ``auth``, ``parity``, ``arguments``, ``output`` (server); ``admit``,
``invoke``, ``execute``, ``consume`` (host)."""
VERDICT: Final = "agent_connector.verdict"
"""``passed`` or ``refused``."""
CATEGORY: Final = "agent_connector.category"
"""The rule's category (the same word as the refusal's ``data.category``)."""
GATE_EVENT: Final = "agent_connector.gate_decision"
"""The span event each gate decision adds (with the three attributes above)."""
