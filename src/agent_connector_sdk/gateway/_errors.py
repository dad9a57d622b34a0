"""The gateway's own failure family: configuration it cannot use, and a child it cannot reach.

What a *caller* of the gateway sees when a call cannot reach a tool that could answer it (the child is
down, slow, answered a JSON-RPC error or outside its contract, or the tool changed) is a JSON-RPC error
whose code says which (:data:`REFUSAL_CODES`, inside the implementation-defined range -32000..-32019)
and whose ``data`` names the tool, the child and the category — never an ``isError`` result with a
value the child did not produce. The exception carries the category for Python callers of
:class:`~agent_connector_sdk.gateway._app.Gateway` and for the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, Literal

from agent_connector_sdk.core.host import JsonRpcError, ProtocolError, TransportFailure
from agent_connector_sdk.core.host.bounds import BoundExceeded
from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.mcp.server import CODES

__all__ = ["CONTRACT_BINDING_META_KEY", "REFUSAL_CODES", "GatewayCategory", "GatewayError", "refusal_code"]

CONTRACT_BINDING_META_KEY: Final = "agent-connector-sdk/contract_sha256"
"""The ``_meta`` key binding a ``tools/call`` to a contract fingerprint (see ``_app``, which publishes it).
The gateway sends it too, on a call of a hidden tool to a child whose navigation entry stated one."""

REFUSAL_CODES: Final[Mapping[str, int]] = MappingProxyType(
    {
        kind: CODES[kind]
        for kind in (
            "child_unavailable",  # down, reconnecting, or the transport failed during the call
            "child_timeout",  # no answer within call_timeout
            "child_error",  # the child answered a JSON-RPC error (its code in data.childCode)
            "child_contract",  # the child's answer broke the contract the gateway admitted
            "tool_changed",  # the tool is not the one the caller bound the call to, or it moved
            "refused",  # the gateway's host side refused the call before sending it
        )
    }
)
"""JSON-RPC error code per kind of gateway refusal (``data.category`` keeps the precise category)."""

GatewayCategory = Literal[
    "invalid_config",
    "child_unavailable",
    "child_timeout",
    "tool_changed",
    "not_federated",
]


class GatewayError(AgentConnectorError):
    """A gateway refusal. ``invalid_config``: a child spec or config file the gateway cannot use;
    ``child_unavailable``: the child is down or reconnecting; ``child_timeout``: it did not answer within
    the configured timeout; ``tool_changed``: the child's tool changed since it was admitted (its
    generation moved); ``not_federated``: a search-first child's hidden catalog cannot be enumerated
    soundly (reported as a rejection in its evidence, see :mod:`._federation`). A child's own failures
    keep their host families (``TransportFailure``, ``JsonRpcError``, ``ContractViolation``...).
    Messages name children, tools and categories, never values."""

    category: GatewayCategory

    def __init__(self, category: GatewayCategory, message: str) -> None:
        super().__init__(category, message)


def refusal_code(error: AgentConnectorError) -> tuple[str, int]:
    """The refusal kind and JSON-RPC code for an error raised while calling a child tool."""
    kind: str
    if isinstance(error, GatewayError) and error.category in REFUSAL_CODES:
        kind = error.category
    elif isinstance(error, TransportFailure):
        kind = "child_unavailable"
    elif isinstance(error, JsonRpcError):
        kind = "child_error"
    elif isinstance(error, ProtocolError | BoundExceeded) or error.gate == "consume":
        kind = "child_contract"
    else:
        kind = "refused"
    return kind, REFUSAL_CODES[kind]
