"""``build_replica_app``: a gated server as one stateless replica among many, sharing state through a backend.

What ``gated_http_app`` builds, plus what a replica behind a load balancer needs:

- **shared completion limit** — the ``AuthorizedCompletions`` limiter is replaced by the backend's
  limiter ``completion`` with the same limits, so a caller spread over N replicas gets the limit once,
  not N times; an unreachable store refuses completions (fail closed, see ``server._completion``);
- **shared tool switch** — a :class:`~agent_connector_sdk.state._catalog_switch.SharedToolSwitch` on the
  server, refreshed once per request before FastMCP sees it (one generation read), and, on a server
  with ``auth``, the ``admin_set_tool_enabled`` tool (scope ``catalog:admin``);
- **shared audit** — header-gate audit events go to the backend's sink (Redis: a capped stream);
- **health** — ``GET /healthz`` answers ``200`` with the replica id, the backend kind, whether the
  store answers, the catalog generation applied, whether the namespace is initialised and whether the
  applied set is confirmed (``catalogSynchronized``: the health check reads the store first, so a
  replica that has not seen the latest generation never says ``true``). ``200`` even when the store is
  away: every replica shares the store, so failing health on it would take them all out of rotation
  at once. The route lives inside the gated app, behind the same Host/Origin guard as ``/mcp`` (a
  foreign ``Host`` gets 421, not the replica's id and state);
- **which replica answered** — with ``replica_id``, every response carries ``Agent-Connector-Replica``;
- the transport is always stateless (``stateless_http=True``): no session may pin a caller to a replica.

On the embedded default (``state=None``) a single process behaves as with ``gated_http_app``. The lead's
CLI hooks this in ``serve`` (``--state URL`` / ``AGENT_CONNECTOR_STATE``).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

from fastmcp import FastMCP
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agent_connector_sdk.mcp.server import AuthorizedCompletions, OutputSelfCheck, gated_http_app
from agent_connector_sdk.state._base import StateBackend, validate_namespace
from agent_connector_sdk.state._catalog_switch import (
    ADMIN_SCOPE,
    DEFAULT_MAX_STALENESS_SECONDS,
    SharedToolSwitch,
    add_admin_tool,
)
from agent_connector_sdk.state._config import open_state_backend

__all__ = ["COMPLETION_LIMITER", "REPLICA_HEADER", "ReplicaApp", "build_replica_app"]

REPLICA_HEADER: Final = "agent-connector-replica"
COMPLETION_LIMITER: Final = "completion"
"""Name of the shared limiter completions charge (same name on every replica = same windows)."""

_REPLICA_ID: Final = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
HEALTH_READ_SECONDS: Final = 0.5
"""Longest a health check waits for the store before reporting it unconfirmed."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class ReplicaApp:
    """The ASGI app of one replica (see the module docstring). ``app`` is the gated FastMCP app inside."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        state: StateBackend,
        switch: SharedToolSwitch,
        replica_id: str | None,
        health_path: str,
    ) -> None:
        self.app = app
        self.state = state
        self.switch = switch
        self.replica_id = replica_id
        self.health_path = health_path
        self._header: list[tuple[bytes, bytes]] = (
            [(REPLICA_HEADER.encode(), replica_id.encode())] if replica_id is not None else []
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, self._closing_on_shutdown(send))
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("method") == "POST":
            await self.switch.refresh()  # never raises: see catalog_switch for outages and staleness
        await self.app(scope, receive, self._tagged(send))

    def _tagged(self, send: Send) -> Send:
        if not self._header:
            return send

        async def tagged(message: Message) -> None:
            if message.get("type") == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *self._header]}
            await send(message)

        return tagged

    def _closing_on_shutdown(self, send: Send) -> Send:
        async def closing(message: Message) -> None:
            if message.get("type") == "lifespan.shutdown.complete":
                await self.state.aclose()
            await send(message)

        return closing

    async def health(self) -> dict[str, Any]:
        """The health document ``GET /healthz`` answers (see :func:`replica_health`)."""
        return await replica_health(self.state, self.switch, self.replica_id)


async def replica_health(
    state: StateBackend, switch: SharedToolSwitch, replica_id: str | None
) -> dict[str, Any]:
    """Read the store (bounded by :data:`HEALTH_READ_SECONDS`), then report what this replica applies."""
    try:
        await asyncio.wait_for(switch.refresh(force=True), timeout=HEALTH_READ_SECONDS)
        reachable = await asyncio.wait_for(state.ping(), timeout=HEALTH_READ_SECONDS)
    except TimeoutError:
        reachable = False
    return {
        "status": "ok",
        "replica": replica_id,
        "state": {
            "backend": state.kind,
            "reachable": reachable,
            "catalogGeneration": switch.generation,
            "catalogInitialized": switch.initialized,
            "catalogSynchronized": reachable and switch.synchronized,
        },
    }


def _add_health_route(
    server: FastMCP[Any], path: str, state: StateBackend, switch: SharedToolSwitch, replica_id: str | None
) -> None:
    """``GET``/``HEAD`` ``path`` as a route of the server's own HTTP app, so the Host/Origin guard and
    every other app-wide middleware apply to it as to ``/mcp``."""

    async def health(request: Request) -> Response:
        return JSONResponse(
            await replica_health(state, switch, replica_id), headers={"cache-control": "no-store"}
        )

    server.custom_route(path, methods=["GET", "HEAD"])(health)


def build_replica_app(
    server: FastMCP[Any],
    *,
    state: StateBackend | str | None = None,
    namespace: str = "default",
    completions: AuthorizedCompletions | None = None,
    replica_id: str | None = None,
    admin_scope: str | None = ADMIN_SCOPE,
    health_path: str = "/healthz",
    output_check: OutputSelfCheck | None = None,
    max_staleness_seconds: float = DEFAULT_MAX_STALENESS_SECONDS,
    **http_app_kwargs: Any,
) -> ReplicaApp:
    """The gated ASGI app of one replica of ``server`` sharing ``state`` (a backend, or a URL for
    :func:`~agent_connector_sdk.state._config.open_state_backend`; ``None`` = embedded).

    Call it once per server, after configuring transforms, instead of ``gated_http_app``.
    ``namespace`` names the catalog the tool switch shares (replicas of one catalog use the same one).
    ``admin_scope=None`` leaves the admin tool out (it is also left out on a server without ``auth``).
    ``max_staleness_seconds`` bounds how long the replica serves its last confirmed switched-off set
    while the store is unreachable (``state._catalog_switch``).
    Other keyword arguments go to ``server.http_app`` (``stateless_http`` is forced on).
    """
    validate_namespace(namespace)
    if replica_id is not None and not _REPLICA_ID.fullmatch(replica_id):
        raise ValueError("replica_id must be 1-64 of A-Za-z0-9_.:-")
    if http_app_kwargs.get("stateless_http") is False:
        raise ValueError("replicas must be stateless (a session would pin a caller to one replica)")
    if any(isinstance(transform, SharedToolSwitch) for transform in server.transforms):
        raise ValueError("build_replica_app was already called for this server")
    http_app_kwargs["stateless_http"] = True
    backend = state if state is not None and not isinstance(state, str) else open_state_backend(state)
    switch = SharedToolSwitch(backend.catalog, namespace, max_staleness_seconds=max_staleness_seconds)
    server.add_transform(switch)
    _add_health_route(server, health_path, backend, switch, replica_id)
    if admin_scope is not None and server.auth is not None:
        add_admin_tool(server, switch, scope=admin_scope)
    if completions is not None:
        current = completions.rate_limiter
        completions.rate_limiter = backend.rate_limiter(
            COMPLETION_LIMITER, max_requests=current.max_requests, window_seconds=current.window_seconds
        )
    audit = backend.audit
    app = gated_http_app(
        server,
        output_check=output_check,
        completions=completions,
        audit=audit,
        **http_app_kwargs,
    )
    return ReplicaApp(app, state=backend, switch=switch, replica_id=replica_id, health_path=health_path)
