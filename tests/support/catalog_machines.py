"""Pieces shared by the hypothesis state machines over a live FastMCP catalog (the disclosure fast-path
differential and the catalog-cache differential): a caller set through the ``mcp`` SDK's own auth
context, a ``tools/list`` middleware that reads the caller, and the visibility switches."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from fastmcp import FastMCP
from fastmcp.server.auth import AccessToken
from fastmcp.server.context import Context
from fastmcp.server.middleware.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

__all__ = ["HideSecretFromNonAdmins", "as_caller", "run_in_request", "toggle_visibility"]

_T = TypeVar("_T")


@contextmanager
def as_caller(caller: str) -> Iterator[None]:
    """Inside a request: ``anonymous`` is no user; ``admin`` has scopes read and admin; others read.

    Set through the ``mcp`` SDK's auth context variable, which its bearer-auth middleware sets."""
    if caller == "anonymous":
        yield
        return
    scopes = ["read", "admin"] if caller == "admin" else ["read"]
    user = AuthenticatedUser(AccessToken(token=f"{caller}-token", client_id=caller, scopes=scopes))
    token = auth_context_var.set(user)
    try:
        yield
    finally:
        auth_context_var.reset(token)


def run_in_request(
    loop: asyncio.AbstractEventLoop,
    server: FastMCP[Any],
    caller: str,
    factory: Callable[[Context], Awaitable[_T]],
) -> _T:
    """``factory(ctx)`` run on ``loop`` inside a request of ``server`` (its context), as ``caller``."""

    async def within_request() -> _T:
        with as_caller(caller):
            async with Context(fastmcp=server) as ctx:
                return await factory(ctx)

    return loop.run_until_complete(within_request())


class HideSecretFromNonAdmins(Middleware):
    """Per tool: drops tools tagged ``secret`` unless the caller has the ``admin`` scope (a
    ``tools/list`` middleware that reads the caller)."""

    async def on_list_tools(
        self, context: MiddlewareContext[Any], call_next: CallNext[Any, Sequence[Tool]]
    ) -> Sequence[Tool]:
        from fastmcp.server.dependencies import get_access_token

        tools = await call_next(context)
        token = get_access_token()
        admin = token is not None and "admin" in token.scopes
        return [tool for tool in tools if admin or "secret" not in tool.tags]


def toggle_visibility(server: FastMCP[Any], name: str, *, enabled: bool, how: str) -> None:
    """Switch tools on or off through FastMCP's visibility API: ``name`` by name, version 2 of ``name``
    by key, or (``how`` ``tag``) every tool tagged ``secret``."""
    change = server.enable if enabled else server.disable
    if how == "name":
        change(names={name}, components={"tool"})
    elif how == "key":
        change(keys={f"tool:{name}@2"})
    else:
        change(tags={"secret"})
