"""The host side's own failure families (protocol, tool execution, unsendable requests).

Three families never mix (see :mod:`agent_connector_sdk.mcp.host`):

* ``ContractError`` subclasses (``contracts.errors``): *our* gates refused something;
* :class:`ProtocolError`: the peer answered with a JSON-RPC error (:class:`JsonRpcError`, with ``code``
  and ``data``), the transport failed (:class:`TransportFailure`, also when connecting) or a page had
  the wrong shape (:class:`MalformedResponse`). Their ``str()`` names the code or failure type only:
  the peer's message and ``data`` (which may quote request values) stay attributes;
* :class:`ToolExecutionError`: the tool ran and reported failure (``isError: true``), raised only on
  request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from agent_connector_sdk.errors import AgentConnectorError, Gate
from agent_connector_sdk.mcp.contracts.errors import ConfirmationCategory, ContractError

if TYPE_CHECKING:
    from agent_connector_sdk.mcp.host.core import ToolResult

__all__ = [
    "ConfirmationCategory",
    "ConfirmationRefused",
    "InvalidCompletionRequest",
    "JsonRpcError",
    "MalformedResponse",
    "ProtocolCategory",
    "ProtocolError",
    "ToolExecutionError",
    "TransportFailure",
]

ProtocolCategory = Literal["json_rpc_error", "transport_failure", "malformed_response"]


class ProtocolError(AgentConnectorError):
    """The exchange with the peer failed at the protocol level; the tool result is not available.

    ``gate`` is ``None`` and ``step`` is ``"exchange"``: the failure is in the conversation, not in a
    gate's verdict (a server's Execute-gate refusal arrives as a :class:`JsonRpcError` with its code).
    """

    step: ClassVar[str | None] = "exchange"
    category: ProtocolCategory

    def __init__(self, category: ProtocolCategory, message: str) -> None:
        super().__init__(category, message)


class JsonRpcError(ProtocolError):
    """The server answered with a JSON-RPC error object (``code``, ``message``, optional ``data``).

    Unlike every other error of the SDK, ``message`` is the *peer's* text and may quote request
    values; ``str(error)``, which ends up in logs, names the code only.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__("json_rpc_error", f"JSON-RPC error {code}")
        self.code = code
        self.message = message
        self.data = data

    @property
    def retry_after_ms(self) -> int | None:
        """``data.retryAfterMs`` when the server sent one (rate limiting), else ``None``."""
        if isinstance(self.data, Mapping):
            value = self.data.get("retryAfterMs")
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None


class TransportFailure(ProtocolError):
    """The HTTP/stream transport failed (or timed out) before a JSON-RPC answer arrived.

    ``code`` is the SDK's locally synthesized JSON-RPC code when there is one (``-32000`` connection
    closed, ``-32001`` request timeout), else ``None``.
    """

    def __init__(self, message: str, *, code: int | None = None) -> None:
        super().__init__("transport_failure", message)
        self.code = code


class MalformedResponse(ProtocolError):
    """A ``tools/list`` page did not have the shape the protocol requires (refused by the SDK)."""

    def __init__(self, message: str) -> None:
        super().__init__("malformed_response", message)


class InvalidCompletionRequest(ContractError, ValueError):
    """``complete`` was given a request it cannot send (category ``invalid_request``); nothing was sent.

    A ``ValueError`` too, as before. The message names the offending part, never its value.
    """

    gate: ClassVar[Gate] = "invoke"
    category: Literal["invalid_request"]

    def __init__(self, category: Literal["invalid_request"], message: str) -> None:
        super().__init__(category, message)


class ConfirmationRefused(ContractError):
    """Invoke: a tool that may write was not confirmed, so nothing was sent.

    ``confirmation_required`` — the host has no confirmation callback; ``not_confirmed`` — the callback
    declined (or failed). ``tool`` is the tool's name; never an argument value.
    """

    gate: ClassVar[Gate] = "invoke"
    category: ConfirmationCategory

    def __init__(self, category: ConfirmationCategory, message: str, *, tool: str) -> None:
        super().__init__(category, message)
        self.tool = tool


class ToolExecutionError(AgentConnectorError):
    """The tool ran and returned ``isError: true``. ``result`` is the (validated) result."""

    gate: ClassVar[Gate | None] = "execute"
    category: Literal["tool_error"]

    def __init__(self, tool: str, result: ToolResult) -> None:
        super().__init__("tool_error", f"tool {tool!r} reported an error")
        self.tool = tool
        self.result = result
