"""Switching tools off and on for every replica at once, through the shared catalog signal.

:class:`SharedToolSwitch` is a FastMCP ``Visibility`` transform whose set of switched-off tool names
comes from a :class:`~agent_connector_sdk.state._base.CatalogSignals` namespace. FastMCP's own
visibility filtering then applies it everywhere a tool can be reached — ``tools/list``, ``tools/call``
(a switched-off tool is an unknown tool), search results, and every schema-disclosure read (which
re-authorizes through the caller's catalog). :meth:`SharedToolSwitch.refresh` reads the namespace's
generation (one round trip) and re-reads the set only when the generation moved; ``build_replica_app``
calls it once per request, so a tool switched off through one replica is refused by every replica on
its next request.

Fail-safe rules (why each):

- Until the first successful read, the switch does not know what is off, so it hides **every** tool
  (fail closed: a replica that starts during an outage must not serve what the others withdrew).
- When the store says the namespace is **not initialised** (never initialised, or a Redis restarted
  without its data: see ``state._base``), every tool is hidden too, on every replica, until an operator
  initialises it again — an empty store must not switch withdrawn tools back on.
- When the store is unreachable the switch keeps the last set it *confirmed* for at most
  ``max_staleness_seconds`` (default 5 s): a short blip does not take the catalog away, but a change
  accepted by the store that this replica has not read is ignored for at most that long. After that
  every tool is hidden until the store answers again (the replica cannot confirm any tool is still
  on). ``synchronized`` is ``True`` only when the last read succeeded, the namespace is initialised
  and that read is within the bound; ``/healthz`` reads the store before answering, so it never
  reports an unconfirmed generation as synchronized. It retries after ``retry_seconds`` rather than
  on every request.
- A generation older than the one applied is ignored (reads may finish out of order).

Operators change the set with :func:`set_tool_enabled` (any process holding the backend) or the
optional MCP admin tool :func:`add_admin_tool` (``admin_set_tool_enabled``, protected by a FastMCP auth
scope, default ``catalog:admin``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any, Final

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.transforms.visibility import Visibility
from fastmcp.tools import Tool
from fastmcp.tools.function_tool import FunctionTool
from fastmcp.utilities.authorization import require_scopes
from fastmcp.utilities.components import FastMCPComponent
from mcp_types import ToolAnnotations

from agent_connector_sdk.state._base import (
    CatalogSignals,
    StateBackendError,
    StateNotInitialized,
    StateUnavailable,
    validate_namespace,
    validate_tool_name,
)

__all__ = [
    "ADMIN_SCOPE",
    "ADMIN_TOOL_NAME",
    "SharedToolSwitch",
    "add_admin_tool",
    "set_tool_enabled",
]

# Named as before the file moved: operators filter logs on this name.
logger = logging.getLogger("agent_connector_sdk.state.catalog_switch")

ADMIN_SCOPE: Final = "catalog:admin"
ADMIN_TOOL_NAME: Final = "admin_set_tool_enabled"
DEFAULT_MAX_STALENESS_SECONDS: Final = 5.0
"""How long a replica that cannot reach the store keeps serving its last confirmed set (module doc)."""


class SharedToolSwitch(Visibility):
    """``Visibility(False, names=<switched off in the namespace>)``, kept current by :meth:`refresh`."""

    def __init__(
        self,
        signals: CatalogSignals,
        namespace: str,
        *,
        retry_seconds: float = 0.5,
        max_staleness_seconds: float = DEFAULT_MAX_STALENESS_SECONDS,
    ) -> None:
        super().__init__(False, names=set(), components={"tool"})
        if not max_staleness_seconds >= 0:
            raise ValueError("max_staleness_seconds must be a non-negative number")
        self.signals = signals
        self.namespace = validate_namespace(namespace)
        self.retry_seconds = retry_seconds
        self.max_staleness_seconds = max_staleness_seconds
        self._generation: int | None = None
        self._initialized: bool | None = None  # None: the store has not answered yet
        self._confirmed_at = float("-inf")  # when the store last answered (monotonic)
        self._retry_at = 0.0
        self._last_refresh_failed = False

    @property
    def generation(self) -> int | None:
        """The shared generation this switch applies (``None`` before the first successful read)."""
        return self._generation

    @property
    def initialized(self) -> bool | None:
        """Whether the store knows the namespace's set (``None``: the store has not answered yet)."""
        return self._initialized

    @property
    def synchronized(self) -> bool:
        """Whether the applied set is confirmed: last read succeeded, initialised, within the bound."""
        return (
            self._generation is not None
            and self._initialized is True
            and not self._last_refresh_failed
            and not self._stale()
        )

    @property
    def hiding_all(self) -> bool:
        """Whether every tool is hidden now (nothing confirmed, not initialised, or stale)."""
        return self._generation is None or self._initialized is False or self._stale()

    def _stale(self) -> bool:
        return time.monotonic() - self._confirmed_at > self.max_staleness_seconds

    def disabled(self) -> frozenset[str]:
        return frozenset(self.names or ())

    async def refresh(self, *, force: bool = False) -> int | None:
        """Apply the namespace's current switched-off set if its generation moved; returns the generation.

        Never raises for an unreachable or uninitialised store (see the module docstring); returns what
        is applied. ``force`` asks the store even inside the retry pause (``/healthz`` does).
        """
        if self._last_refresh_failed and not force and time.monotonic() < self._retry_at:
            return self._generation
        try:
            generation = await self.signals.current(self.namespace)
            if generation != self._generation or self._initialized is not True:
                generation, names = await self.signals.disabled_tools(self.namespace)
                self._apply(generation, names)
        except StateNotInitialized:
            if self._initialized is not False:
                logger.warning(
                    "catalog namespace %s is not initialised in the shared store; hiding every tool "
                    "until an operator runs agent-connector state init",
                    self.namespace,
                )
            self._initialized = False
            self._confirmed_at = time.monotonic()
            self._recovered()
            return self._generation
        except StateUnavailable:
            if not self._last_refresh_failed:
                logger.warning(
                    "catalog signal unreachable for namespace %s; %s",
                    self.namespace,
                    "hiding all tools until it answers"
                    if self._generation is None
                    else f"keeping the last read for at most {self.max_staleness_seconds:g} s",
                )
            self._last_refresh_failed = True
            self._retry_at = time.monotonic() + self.retry_seconds
            return self._generation
        if self._initialized is False:
            logger.warning("catalog namespace %s is initialised again", self.namespace)
        self._initialized = True
        self._confirmed_at = time.monotonic()
        self._recovered()
        return self._generation

    def _recovered(self) -> None:
        if self._last_refresh_failed:
            logger.warning("catalog signal reachable again for namespace %s", self.namespace)
        self._last_refresh_failed = False

    def _apply(self, generation: int, names: frozenset[str]) -> None:
        if self._generation is not None and generation < self._generation:
            return  # an older read finishing late
        # A new set object each time (never mutated in place): a concurrent reader sees old or new.
        self.names = set(names)
        self._generation = generation

    def catalog_state(self) -> tuple[int | None, frozenset[str]]:
        """Everything :meth:`_matches` reads besides the component (for the exact catalog cache of
        ``agent_connector_sdk.mcp.server._catalog``: a changed switch is a new catalog generation)."""
        return self._generation, frozenset(self.names or ())

    def _matches(self, component: FastMCPComponent) -> bool:
        # Overrides Visibility's matcher: when nothing is confirmed every tool is hidden (module doc).
        if self.hiding_all:
            return component.key.startswith("tool:")
        return super()._matches(component)


async def set_tool_enabled(signals: CatalogSignals, namespace: str, name: str, enabled: bool) -> int:
    """Switch tool ``name`` on or off for every replica of ``namespace``; returns the new generation.

    Raises :class:`~agent_connector_sdk.state._base.StateUnavailable` when the store cannot be reached
    (the change was not made) and ``StateConfigError`` for a bad name or a full set.
    """
    return await signals.set_tool_enabled(validate_namespace(namespace), validate_tool_name(name), enabled)


async def _inventory_has(server: FastMCP[Any], name: str) -> bool:
    """Whether a provider of ``server`` has a tool ``name`` (before visibility: switched-off tools count)."""
    for provider in server.providers:
        if await provider.get_tool(name) is not None:
            return True
    return False


def add_admin_tool(
    server: FastMCP[Any],
    switch: SharedToolSwitch,
    *,
    scope: str = ADMIN_SCOPE,
    protected: Sequence[str] = (),
) -> Tool:
    """Register ``admin_set_tool_enabled(tool, enabled)``, usable only by callers holding ``scope``.

    Refuses (as a tool error, ``isError``) names that are malformed, unknown to this server, the admin
    tool itself or in ``protected`` — switching those off would lock operators out — and reports an
    unreachable store. On success this replica applies the change before answering; the others apply
    it on their next request. Requires a server with ``auth`` (without it no caller has scopes, so the
    tool would be unusable: that is refused at registration).
    """
    if server.auth is None:
        raise ValueError("the admin tool needs a server with auth (it is guarded by a scope)")
    guarded = {ADMIN_TOOL_NAME, *protected}

    async def admin_set_tool_enabled(tool: str, enabled: bool) -> dict[str, Any]:
        """Switch a tool off (enabled=false) or on again for every replica of this catalog."""
        try:
            name = validate_tool_name(tool)
        except StateBackendError as refusal:
            raise ToolError(f"{refusal.category}: {refusal.message}") from None
        if name in guarded:
            raise ToolError("protected: this tool cannot be switched off")
        if not await _inventory_has(server, name):
            raise ToolError("unknown_tool: this server has no tool of that name")
        try:
            generation = await set_tool_enabled(switch.signals, switch.namespace, name, enabled)
        except StateBackendError as refusal:
            raise ToolError(f"{refusal.category}: {refusal.message}") from None
        await switch.refresh()
        logger.info(
            "catalog switch: namespace=%s tool=%s enabled=%s generation=%d",
            switch.namespace,
            name,
            enabled,
            generation,
        )
        return {"tool": name, "enabled": enabled, "generation": generation}

    tool = FunctionTool.from_function(
        admin_set_tool_enabled,
        name=ADMIN_TOOL_NAME,
        auth=require_scopes(scope),
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True),
    )
    server.add_tool(tool)
    return tool
