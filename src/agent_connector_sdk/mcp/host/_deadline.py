"""The deadline of one host operation: a cancel scope around it, refused as the host's own bound.

The bounds themselves are pure (:mod:`agent_connector_sdk.core.host.bounds`); only the deadline needs
an event loop, so it lives with the adapters that run one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from agent_connector_sdk.core.host import HostBounds
from agent_connector_sdk.core.host.bounds import BoundExceeded

__all__ = ["operation_deadline"]


@asynccontextmanager
async def operation_deadline(bounds: HostBounds, what: str) -> AsyncIterator[None]:
    """Run the block within ``deadline_s`` (``None``: no deadline); past it, the block is cancelled and
    :class:`BoundExceeded` (``deadline_s``) is raised. It bounds the whole operation, however many
    requests it makes, on top of each request's own timeout."""
    if bounds.deadline_s is None:
        yield
        return
    with anyio.move_on_after(bounds.deadline_s) as scope:
        yield
    if scope.cancelled_caught:
        raise BoundExceeded("deadline_s", bounds.deadline_s, f"{what} did not finish in time")
