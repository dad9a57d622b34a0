"""Shared state for gated servers running as several replicas: rate-limit windows, catalog generations
and the tool switch, audit. ``memory`` is the embedded default; ``redis_backend`` (the ``redis`` extra)
is what replicas behind a load balancer share. ``build_replica_app`` assembles one replica.

Only the protocols, errors, the in-process backend and URL parsing are imported eagerly; the Redis
backend is imported by :func:`open_state_backend` when a Redis URL is given, so the extra stays optional.
The two names that need an extra's stack resolve lazily (PEP 562): :class:`RedisDisclosureStore`
(``redis``) and :func:`set_tool_enabled` (``fastmcp``).
"""

from __future__ import annotations

import importlib

from agent_connector_sdk.core.contracts import AsyncRateLimiter
from agent_connector_sdk.state._base import (
    MAX_DISABLED_TOOLS,
    AuditSink,
    CatalogSignals,
    GenerationSignal,
    StateBackend,
    StateBackendError,
    StateConfigError,
    StateNotInitialized,
    StateUnavailable,
)
from agent_connector_sdk.state._config import (
    STATE_URL_ENV,
    describe_state_url,
    open_state_backend,
    state_url_from_env,
)
from agent_connector_sdk.state._memory import InProcessRateLimiter, MemoryCatalogSignals, MemoryStateBackend

# Not ``typing.TYPE_CHECKING`` (see the package's front door): the lazy names, eagerly, for type checkers.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_connector_sdk.state._catalog_switch import ADMIN_SCOPE, set_tool_enabled
    from agent_connector_sdk.state._disclosures import RedisDisclosureStore
    from agent_connector_sdk.state._redis_backend import RedisStateBackend

# name -> the module that defines it, imported on first use
_LAZY: dict[str, str] = {
    "ADMIN_SCOPE": "agent_connector_sdk.state._catalog_switch",
    "RedisDisclosureStore": "agent_connector_sdk.state._disclosures",
    "RedisStateBackend": "agent_connector_sdk.state._redis_backend",
    "set_tool_enabled": "agent_connector_sdk.state._catalog_switch",
}

__all__ = [
    "ADMIN_SCOPE",
    "MAX_DISABLED_TOOLS",
    "STATE_URL_ENV",
    "AsyncRateLimiter",
    "AuditSink",
    "CatalogSignals",
    "GenerationSignal",
    "InProcessRateLimiter",
    "MemoryCatalogSignals",
    "MemoryStateBackend",
    "RedisDisclosureStore",
    "RedisStateBackend",
    "StateBackend",
    "StateBackendError",
    "StateConfigError",
    "StateNotInitialized",
    "StateUnavailable",
    "describe_state_url",
    "open_state_backend",
    "set_tool_enabled",
    "state_url_from_env",
]


def __getattr__(name: str) -> object:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value  # resolve once; later lookups are plain module attributes
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
