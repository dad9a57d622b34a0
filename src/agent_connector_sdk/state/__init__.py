"""Shared state for gated servers running as several replicas: rate-limit windows, catalog generations
and the tool switch, audit. ``memory`` is the embedded default; ``redis_backend`` (the ``redis`` extra)
is what replicas behind a load balancer share. ``build_replica_app`` assembles one replica.

Only the protocols, errors, the in-process backend and URL parsing are imported eagerly; the Redis
backend is imported by :func:`open_state_backend` when a Redis URL is given, so the extra stays optional.
"""

from agent_connector_sdk.core.contracts._completion import AsyncRateLimiter
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

__all__ = [
    "MAX_DISABLED_TOOLS",
    "STATE_URL_ENV",
    "AsyncRateLimiter",
    "AuditSink",
    "CatalogSignals",
    "GenerationSignal",
    "InProcessRateLimiter",
    "MemoryCatalogSignals",
    "MemoryStateBackend",
    "StateBackend",
    "StateBackendError",
    "StateConfigError",
    "StateNotInitialized",
    "StateUnavailable",
    "describe_state_url",
    "open_state_backend",
    "state_url_from_env",
]
