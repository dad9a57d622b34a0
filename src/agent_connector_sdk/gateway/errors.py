"""The gateway's own failure family: configuration it cannot use, and a child it cannot reach.

What a *caller* of the gateway sees when a child fails is never this exception: a tool of a child that
is down, slow or answering outside its contract is refused with an ``isError`` result whose first text
line names the child and the category (:data:`GatewayCategory`). The exception carries the same
category for Python callers of :class:`~agent_connector_sdk.gateway.app.Gateway` and for the CLI.
"""

from __future__ import annotations

from typing import Literal

from agent_connector_sdk.errors import AgentConnectorError

__all__ = ["GatewayCategory", "GatewayError"]

GatewayCategory = Literal[
    "invalid_config",
    "child_unavailable",
    "child_timeout",
    "tool_changed",
]


class GatewayError(AgentConnectorError):
    """A gateway refusal. ``invalid_config``: a child spec or config file the gateway cannot use;
    ``child_unavailable``: the child is down or reconnecting; ``child_timeout``: it did not answer within
    the configured timeout; ``tool_changed``: the child's tool changed since it was admitted (its
    generation moved). A child's own failures keep their host families (``TransportFailure``,
    ``JsonRpcError``, ``ContractViolation``...). Messages name children, tools and categories, never
    values."""

    category: GatewayCategory

    def __init__(self, category: GatewayCategory, message: str) -> None:
        super().__init__(category, message)
