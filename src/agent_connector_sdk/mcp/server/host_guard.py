"""FastMCP's DNS-rebinding guard, answered from a bounded verdict memo: a set lookup per request.

FastMCP's ``HostOriginGuardMiddleware`` re-derives its verdict on every request (header parsing,
``ipaddress`` parsing of the bound address, URL normalization of the request origin even when there is
no ``Origin`` header): ~40 µs, the largest per-request cost of the gated app. Its verdict is a pure
function of the guard's configuration and four request values — the bound address
(``scope["server"]``), the scheme, and the first ``Host`` and ``Origin`` headers — so
:class:`MemoizedHostOriginGuard` asks FastMCP's own guard once per distinct combination and remembers
the answer (at most :data:`MAX_VERDICTS`, oldest first out, so random ``Host`` headers cannot grow it).
A refusal is FastMCP's own response (421 ``Misdirected Request`` / 403 ``Forbidden Origin``) replayed.
:func:`memoize_host_origin_guard` swaps it in, in place, on an app ``server.http_app`` built.
"""

from __future__ import annotations

from typing import Any, Final

from fastmcp.server.http import HostOriginGuardMiddleware
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["MAX_VERDICTS", "MemoizedHostOriginGuard", "memoize_host_origin_guard"]

MAX_VERDICTS: Final = 1024
"""Distinct (bound address, scheme, Host, Origin) combinations remembered."""

_Key = tuple[Any, Any, bytes | None, bytes | None]
_Verdict = tuple[Message, ...] | None  # None: pass; else FastMCP's refusal, message by message


async def _passed(scope: Scope, receive: Receive, send: Send) -> None:
    scope["agent_connector_guard_passed"] = True


async def _no_body() -> Message:
    return {"type": "http.disconnect"}


class MemoizedHostOriginGuard:
    """ASGI middleware: FastMCP's Host/Origin guard with the same arguments, verdicts memoized."""

    def __init__(self, app: ASGIApp, **guard_options: Any) -> None:
        self.app = app
        self._judge = HostOriginGuardMiddleware(_passed, **guard_options)
        self._verdicts: dict[_Key, _Verdict] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = origin = None
        for name, value in scope.get("headers", ()):
            if name == b"host" and host is None:
                host = value
            elif name == b"origin" and origin is None:
                origin = value
        key: _Key = (scope.get("server"), scope.get("scheme"), host, origin)
        if key in self._verdicts:
            verdict = self._verdicts[key]
        else:
            verdict = await self._ask(scope)
            if len(self._verdicts) >= MAX_VERDICTS:
                del self._verdicts[next(iter(self._verdicts))]
            self._verdicts[key] = verdict
        if verdict is None:
            await self.app(scope, receive, send)
            return
        for message in verdict:
            await send(message)

    async def _ask(self, scope: Scope) -> _Verdict:
        probe = dict(scope)
        sent: list[Message] = []

        async def capture(message: Message) -> None:
            sent.append(message)

        await self._judge(probe, _no_body, capture)
        return None if probe.get("agent_connector_guard_passed") else tuple(sent)


def memoize_host_origin_guard(app: Any) -> bool:
    """Replace FastMCP's guard in ``app.user_middleware`` (same place, same arguments) before the app
    first serves; ``True`` when there was one to replace."""
    middleware = getattr(app, "user_middleware", None)
    if not isinstance(middleware, list) or getattr(app, "middleware_stack", None) is not None:
        return False
    for index, entry in enumerate(middleware):
        factory: Any = entry.cls if isinstance(entry, Middleware) else None
        if factory is HostOriginGuardMiddleware:
            memoized: Any = MemoizedHostOriginGuard  # Starlette's factory protocol is stricter than ASGI
            middleware[index] = Middleware(memoized, *entry.args, **entry.kwargs)
            return True
    return False
