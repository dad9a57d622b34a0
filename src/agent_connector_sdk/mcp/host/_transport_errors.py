"""What a transport failure looks like through the ``mcp`` SDK: the exceptions that escape a session,
and the error codes the SDK synthesizes locally for a lost connection or a timeout.
"""

from __future__ import annotations

from typing import Final

import anyio
import httpx2
import mcp_types
from mcp.shared.exceptions import MCPError

__all__ = ["TRANSPORT_EXCEPTIONS", "is_local_transport_error"]

TRANSPORT_EXCEPTIONS: Final[tuple[type[BaseException], ...]] = (
    httpx2.HTTPError,
    OSError,  # includes TimeoutError
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
)
"""Exceptions a ``fastmcp.Client`` session lets escape when the HTTP/stream transport fails."""


_LOCAL_TRANSPORT_CODES: Final = frozenset({mcp_types.CONNECTION_CLOSED, mcp_types.REQUEST_TIMEOUT})


def is_local_transport_error(error: MCPError) -> bool:
    """True for the ``MCPError`` codes the SDK synthesizes locally for a lost connection or a timeout.

    A server sending the same codes is indistinguishable; both mean "the result is unknown".
    """
    return error.code in _LOCAL_TRANSPORT_CODES
