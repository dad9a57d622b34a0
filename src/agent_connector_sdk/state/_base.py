"""What the gates share across requests, as small protocols: rate-limit windows, catalog generations, audit.

A *state backend* bundles three things every replica of a gated server must agree on:

- an :class:`~agent_connector_sdk.core.contracts._completion.AsyncRateLimiter` (the protocol the server
  side defines) — one caller's window, charged atomically wherever the request lands;
- :class:`CatalogSignals` — per namespace, a generation that only grows (:class:`GenerationSignal`:
  ``bump`` / ``current``) and the set of tools switched off, changed together atomically, so a cache
  keyed by generation can never serve what a newer generation withdrew;
- :class:`AuditSink` — where gate audit events go (bounded; events hold names and categories, never
  values).

Two implementations: ``state._memory`` (the embedded default: one process, no set-up, the behaviour the
gates always had) and ``state._redis_backend`` (several replicas behind a load balancer). Failures are
typed: :class:`StateUnavailable` when the shared store cannot be reached (a rate limiter then refuses —
it never admits unlimited), :class:`StateNotInitialized` when a namespace's switched-off set is not
known to the store (never initialised, or lost: a Redis restarted without persistence), and
:class:`StateConfigError` for bad configuration or input.

Why an explicit initialisation: a store that restarts empty looks exactly like a store where nothing
was ever switched off. Reading "nothing is off" from it would switch every withdrawn tool back on, on
every replica. So a namespace's set is trusted only while its *initialisation marker* exists; an operator
creates it (``agent-connector state init``, with the tools to keep off) and a store that lost it makes
every replica refuse the namespace's tools until an operator initialises it again.
"""

from __future__ import annotations

import re
from typing import ClassVar, Final, Literal, Protocol

from agent_connector_sdk.audit import AuditSink as _RootAuditSink
from agent_connector_sdk.core.contracts import AsyncRateLimiter
from agent_connector_sdk.errors import AgentConnectorError

__all__ = [
    "MAX_DISABLED_TOOLS",
    "AuditSink",
    "CatalogSignals",
    "GenerationSignal",
    "StateBackend",
    "StateBackendError",
    "StateConfigError",
    "StateNotInitialized",
    "StateUnavailable",
    "validate_namespace",
    "validate_tool_name",
]

MAX_DISABLED_TOOLS: Final = 10_000
"""Bound on the number of tools one namespace may have switched off (the set is read whole on change)."""

_NAME: Final = re.compile(r"[A-Za-z0-9_.-]{1,128}")

ConfigCategory = Literal[
    "invalid_state_url",
    "backend_not_installed",
    "invalid_namespace",
    "invalid_tool_name",
    "too_many_disabled",
    "already_initialized",
]
# Every state category: the two runtime ones plus the configuration ones (a nested Literal flattens).
StateCategory = Literal["state_unavailable", "state_not_initialized", ConfigCategory]


class StateBackendError(AgentConnectorError):
    """The state backends' errors (under the SDK's one root); ``category`` is stable and machine-readable.

    Not a gate's failure (``gate`` is ``None``): shared state serves several gates at once.
    """

    step: ClassVar[str | None] = "state"
    category: StateCategory

    def __init__(self, category: StateCategory, message: str) -> None:
        super().__init__(category, message)


class StateUnavailable(StateBackendError):
    """``state_unavailable``: the shared store could not be reached (connection refused, lost, timed out).

    Rate limiters raise it instead of answering, so a lost store refuses rate-limited requests rather
    than letting them through unlimited. The message names the operation, never keys or values.
    """

    category: Literal["state_unavailable"]

    def __init__(self, operation: str) -> None:
        super().__init__("state_unavailable", f"shared state unavailable during {operation}")
        self.operation = operation


class StateNotInitialized(StateBackendError):
    """``state_not_initialized``: the store has no initialisation marker for the namespace.

    Either nobody initialised it yet or the store lost its data (module doc). Replicas refuse the
    namespace's tools until an operator runs ``agent-connector state init`` (which re-applies the
    switched-off tools it is given); switching a single tool is refused too, so a half-initialised set
    never exists.
    """

    category: Literal["state_not_initialized"]

    def __init__(self, namespace: str) -> None:
        super().__init__(
            "state_not_initialized",
            f"catalog namespace {namespace} is not initialised in the shared store "
            "(never initialised, or the store lost its data): an operator must run "
            "agent-connector state init",
        )
        self.namespace = namespace


class StateConfigError(StateBackendError, ValueError):
    """Bad configuration or input: ``invalid_state_url``, ``backend_not_installed`` (the ``redis`` extra
    is missing), ``invalid_namespace``, ``invalid_tool_name``, ``too_many_disabled``,
    ``already_initialized`` (``initialize`` without ``replace`` on an initialised namespace)."""

    category: ConfigCategory

    def __init__(self, category: ConfigCategory, message: str) -> None:
        super().__init__(category, message)


def validate_namespace(namespace: object) -> str:
    """A namespace is 1–128 of ``A-Za-z0-9_.-`` (it becomes part of a store key)."""
    if not isinstance(namespace, str) or not _NAME.fullmatch(namespace):
        raise StateConfigError("invalid_namespace", "namespace must be 1-128 of A-Za-z0-9_.-")
    return namespace


def validate_tool_name(name: object) -> str:
    """An MCP tool name: 1–128 of ``A-Za-z0-9_.-``."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise StateConfigError("invalid_tool_name", "tool name must be 1-128 of A-Za-z0-9_.-")
    return name


class GenerationSignal(Protocol):
    """Per-namespace generation numbers that only grow: equal generations mean an unchanged catalog.

    ``current`` reads (never ``None``: a namespace nobody bumped yet still has a generation), ``bump``
    moves it on and returns the new value. Both raise :class:`StateUnavailable` when the store is lost.
    A consumer caches per ``(namespace, generation)`` and re-reads ``current`` once per request.
    """

    async def current(self, namespace: str) -> int: ...

    async def bump(self, namespace: str) -> int: ...


class CatalogSignals(GenerationSignal, Protocol):
    """:class:`GenerationSignal` plus the namespace's switched-off tools, changed with a bump atomically."""

    async def disabled_tools(self, namespace: str) -> tuple[int, frozenset[str]]:
        """``(generation, names switched off)`` read together, so the pair is consistent.

        Raises :class:`StateNotInitialized` when the namespace's initialisation marker is missing.
        """
        ...

    async def set_tool_enabled(self, namespace: str, name: str, enabled: bool) -> int:
        """Switch ``name`` on or off and bump the generation in one step; returns the new generation.

        Raises :class:`StateNotInitialized` when the namespace is not initialised.
        """
        ...

    async def initialize(self, namespace: str, disabled: frozenset[str], *, replace: bool = False) -> int:
        """Create the namespace's initialisation marker with exactly ``disabled`` switched off, and bump
        the generation, in one step; returns the new generation.

        An initialised namespace is refused (``already_initialized``) unless ``replace``: re-running an
        initialisation by mistake must not switch tools back on.
        """
        ...


# The audit interface is the SDK's one AuditSink (a callable taking each event); a backend's sink must
# also never block on I/O and never raise for a store outage, since the gates call it inline.
AuditSink = _RootAuditSink


class StateBackend(Protocol):
    """Everything a replica shares: rate limiters, catalog signals and (optionally) an audit sink.

    ``audit`` is ``None`` when the gates' own default (the module loggers) should stay in charge.
    """

    @property
    def kind(self) -> str:
        """``"memory"`` or ``"redis"`` (for health checks and logs; never the URL)."""
        ...

    @property
    def catalog(self) -> CatalogSignals: ...

    @property
    def audit(self) -> AuditSink | None: ...

    def rate_limiter(self, name: str, *, max_requests: int, window_seconds: float) -> AsyncRateLimiter:
        """The limiter ``name`` (a namespace for its windows): same name, same windows, on every replica."""
        ...

    async def ping(self) -> bool:
        """Whether the shared store answers now (``True`` for the in-process backend)."""
        ...

    async def aclose(self) -> None: ...
