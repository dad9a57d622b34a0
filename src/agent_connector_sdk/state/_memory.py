"""The embedded state backend: one process, no set-up — what the gates did before backends existed.

``MemoryStateBackend().rate_limiter(...)`` wraps the same sliding-window
:class:`~agent_connector_sdk.core.contracts._completion.RateLimiter` the completion handler uses by
default, so the behaviour (windows, ``retry_after_ms``, bounded caller keys) is unchanged. Catalog
generations are plain counters, and every namespace counts as initialised (the store lives and dies
with the process that reads it). ``audit`` is ``None``: the gates keep logging through their own loggers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from agent_connector_sdk.core.contracts import RateLimiter
from agent_connector_sdk.state._base import (
    MAX_DISABLED_TOOLS,
    AuditSink,
    StateConfigError,
    validate_namespace,
    validate_tool_name,
)

__all__ = ["InProcessRateLimiter", "MemoryCatalogSignals", "MemoryStateBackend"]


class InProcessRateLimiter:
    """:class:`AsyncRateLimiter` over the in-process ``RateLimiter`` (never unavailable)."""

    def __init__(self, limiter: RateLimiter) -> None:
        self.limiter = limiter

    @property
    def max_requests(self) -> int:
        return self.limiter.max_requests

    @property
    def window_seconds(self) -> float:
        return self.limiter.window_seconds

    async def acquire(self, key: str) -> int | None:
        return self.limiter.acquire(key)


class MemoryCatalogSignals:
    """Generations and switched-off tools of this process only (thread-safe)."""

    def __init__(self) -> None:
        self._generations: dict[str, int] = {}
        self._disabled: dict[str, frozenset[str]] = {}
        self._lock = threading.Lock()

    async def current(self, namespace: str) -> int:
        validate_namespace(namespace)
        with self._lock:
            return self._generations.get(namespace, 0)

    async def bump(self, namespace: str) -> int:
        validate_namespace(namespace)
        with self._lock:
            return self._bump_locked(namespace)

    async def disabled_tools(self, namespace: str) -> tuple[int, frozenset[str]]:
        validate_namespace(namespace)
        with self._lock:
            return self._generations.get(namespace, 0), self._disabled.get(namespace, frozenset())

    async def initialize(self, namespace: str, disabled: frozenset[str], *, replace: bool = False) -> int:
        """Replace the namespace's set (an in-process store is initialised from the start: it cannot
        lose its data without losing the replica, so ``replace`` is not required)."""
        validate_namespace(namespace)
        names = frozenset(validate_tool_name(name) for name in disabled)
        if len(names) > MAX_DISABLED_TOOLS:
            raise StateConfigError(
                "too_many_disabled", f"at most {MAX_DISABLED_TOOLS} tools may be switched off"
            )
        with self._lock:
            self._disabled[namespace] = names
            return self._bump_locked(namespace)

    async def set_tool_enabled(self, namespace: str, name: str, enabled: bool) -> int:
        validate_namespace(namespace)
        validate_tool_name(name)
        with self._lock:
            disabled = self._disabled.get(namespace, frozenset())
            if enabled:
                disabled = disabled - {name}
            else:
                if name not in disabled and len(disabled) >= MAX_DISABLED_TOOLS:
                    raise StateConfigError(
                        "too_many_disabled", f"at most {MAX_DISABLED_TOOLS} tools may be switched off"
                    )
                disabled = disabled | {name}
            self._disabled[namespace] = disabled
            return self._bump_locked(namespace)

    def _bump_locked(self, namespace: str) -> int:
        generation = self._generations.get(namespace, 0) + 1
        self._generations[namespace] = generation
        return generation


class MemoryStateBackend:
    """The in-process :class:`StateBackend` (see the module docstring)."""

    kind = "memory"

    def __init__(self, *, clock: Callable[[], float] | None = None) -> None:
        self._clock = clock
        self._catalog = MemoryCatalogSignals()
        self._limiters: dict[str, InProcessRateLimiter] = {}
        self._lock = threading.Lock()

    @property
    def catalog(self) -> MemoryCatalogSignals:
        return self._catalog

    @property
    def audit(self) -> AuditSink | None:
        return None

    def rate_limiter(self, name: str, *, max_requests: int, window_seconds: float) -> InProcessRateLimiter:
        """The limiter ``name``; asking twice with the same name returns the same windows."""
        validate_namespace(name)
        with self._lock:
            existing = self._limiters.get(name)
            if existing is not None:
                if (existing.max_requests, existing.window_seconds) != (max_requests, float(window_seconds)):
                    raise StateConfigError("invalid_namespace", f"limiter {name!r} exists with other limits")
                return existing
            limiter = (
                RateLimiter(max_requests, window_seconds)
                if self._clock is None
                else RateLimiter(max_requests, window_seconds, clock=self._clock)
            )
            created = InProcessRateLimiter(limiter)
            self._limiters[name] = created
            return created

    async def ping(self) -> bool:
        return True

    async def aclose(self) -> None:
        return None
