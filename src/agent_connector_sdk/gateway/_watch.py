"""Health that watches: an idle child is pinged, so a hung one shows before a caller's call finds it.

Without this a child's health changed only when a caller's call timed out (``degrade_after`` of them),
so a hung child (a stopped process, a dead upstream behind a live socket) stayed ``up`` with
``last_error: null`` for as long as nobody called it. :func:`watch_child` sends an MCP ``ping`` to a
child that is ``up`` and has been quiet (no answer to a call or a ping) for :data:`PING_INTERVAL`
seconds, bounded by ``call_timeout``:

* no answer in time: the child is ``degraded`` at once, ``last_error`` ``child_timeout`` (a ping costs
  the child nothing, so one unanswered ping says more than one slow call);
* an answer: a child the watcher degraded recovers; one degraded by calls timing out stays degraded
  until a call is answered (it answers pings, its tools are slow: the ``degrade_after`` rule holds);
* a transport failure: nothing here (a call or the supervisor's next listing sees it and reconnects).

A hung child is therefore ``degraded`` within ``PING_INTERVAL + call_timeout`` seconds. A child that
answers nothing to ``ping`` but an error (a server that does not implement it) still answered: it is
alive. One ping at a time per child; the watcher never pings while the child is not ``up``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Final

import anyio
import mcp_types
from mcp.shared.exceptions import MCPError

from agent_connector_sdk.gateway._children import Child

__all__ = ["PING_INTERVAL", "watch_child"]

PING_INTERVAL: Final = 3.0
"""Seconds a child may be quiet before it is pinged."""
_NO_ANSWER: Final = frozenset({mcp_types.CONNECTION_CLOSED, mcp_types.REQUEST_TIMEOUT})
"""Error codes the client makes up itself when no answer came: not a sign of life."""

logger = logging.getLogger("agent_connector_sdk.gateway.children")


async def watch_child(child: Child, interval: float = PING_INTERVAL) -> None:
    """Ping ``child`` whenever it has been quiet for ``interval`` seconds, until it is closed (or the
    task is cancelled)."""
    pinged = 0.0
    while child.state != "closed":
        wait = interval - (time.monotonic() - max(child.last_answer, pinged))
        if wait > 0:
            await asyncio.sleep(wait)
            continue
        pinged = time.monotonic()
        session = child.session
        if child.state != "up" or session is None:
            continue
        try:
            with anyio.fail_after(child.config.call_timeout):
                await session.client.ping()
        except TimeoutError:
            child.ping_timed_out(session)
        except MCPError as error:
            if error.code not in _NO_ANSWER:
                child.heard_from(session)  # an error answer (e.g. no ping method): alive
        except Exception:
            logger.debug("child %s: ping failed", child.name)
        else:
            child.heard_from(session)
