"""Which shared tier a gateway's verified-disclosure cache gets from its state store (``--state``).

The memory backend (the default) gives none: the in-memory LRU is the only tier. A Redis backend gives
a :class:`~agent_connector_sdk.state._disclosures.RedisDisclosureStore` under a namespace that is a
digest of the gateway's children (name and where each is reached), so gateways configured alike share
their verified disclosures and a differently configured one never reads theirs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from agent_connector_sdk.gateway._config import ChildSpec
from agent_connector_sdk.gateway._verified import SharedDisclosures

__all__ = ["config_namespace", "shared_disclosures"]


def config_namespace(children: Sequence[ChildSpec]) -> str:
    """``gw-`` and 32 hex digits naming a gateway configuration's children (never a credential)."""
    identity = sorted([child.name, child.url, list(child.command), child.cwd] for child in children)
    return "gw-" + hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:32]


def shared_disclosures(state: Any, children: Sequence[ChildSpec]) -> SharedDisclosures | None:
    """The shared tier for ``state`` (a :class:`~agent_connector_sdk.state.StateBackend`, a state URL,
    or ``None``); ``None`` when the store is in memory. Raises ``StateConfigError`` for a bad URL."""
    if state is None:
        return None
    if isinstance(state, str):
        from agent_connector_sdk.state import open_state_backend

        state = open_state_backend(state)
    if getattr(state, "kind", None) != "redis":
        return None
    from agent_connector_sdk.state import RedisDisclosureStore

    return RedisDisclosureStore(state, config_namespace(children))
