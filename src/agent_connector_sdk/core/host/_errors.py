"""The host side's own failure families (protocol, tool execution, unsendable requests).

Three families never mix (see :mod:`agent_connector_sdk.mcp.host`):

* ``ContractError`` subclasses (``contracts.errors``): *our* gates refused something;
* :class:`ProtocolError`: the peer answered with a JSON-RPC error (:class:`JsonRpcError`, with ``code``
  and ``data``), with an HTTP error status and no JSON-RPC error (:class:`HttpStatusError`, with
  ``status``), offered no protocol version this host speaks (:class:`UnsupportedVersion`), the
  transport failed (:class:`TransportFailure`, also when connecting) or this host could not read the
  answer (:class:`MalformedResponse`: not JSON-RPC, refused by the parser, an encoding it did not ask
  for), or what answered is not an MCP server and the host can say what it is
  (:class:`NotMcpServer`: an HTML page, not HTTP, plain HTTP behind ``https://``, text on stdout).
  Their ``str()`` names the code, status or failure type only: the peer's words (``message``,
  ``words``, ``sample``, sanitized and capped) and ``data`` (which may quote request values) stay
  attributes. All of them are made in one place, :func:`~agent_connector_sdk.mcp.host._translate.map_errors`;
* :class:`ToolExecutionError`: the tool ran and reported failure (``isError: true``), raised only on
  request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal

from agent_connector_sdk.core.contracts.errors import ConfirmationCategory, ContractError
from agent_connector_sdk.core.host._peer import SAMPLE_LIMIT, PeerKind, peer_description
from agent_connector_sdk.errors import AgentConnectorError, Gate
from agent_connector_sdk.sanitize import sanitize_text

if TYPE_CHECKING:
    from agent_connector_sdk.core.host._sequence import ToolResult

__all__ = [
    "ConfirmationCategory",
    "ConfirmationRefused",
    "HttpStatusError",
    "InvalidCompletionRequest",
    "JsonRpcError",
    "MalformedResponse",
    "NotMcpServer",
    "PeerKind",
    "ProtocolCategory",
    "ProtocolError",
    "ToolExecutionError",
    "TransportFailure",
    "UnsupportedVersion",
]

ProtocolCategory = Literal[
    "json_rpc_error",
    "http_error",
    "unsupported_version",
    "transport_failure",
    "malformed_response",
    "not_mcp",
]

SERVER_WORDS_LIMIT: Final = 500
"""Characters of a server's own words (a JSON-RPC error message, an HTTP error page's first line) kept
on an error, after :func:`~agent_connector_sdk.sanitize.sanitize_text`."""


def server_words(text: object) -> str:
    """A server's words as an error keeps them: sanitized (no control, bidi or separator character
    survives) and capped at :data:`SERVER_WORDS_LIMIT` characters with a visible marker."""
    return sanitize_text(text, SERVER_WORDS_LIMIT)


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

    Unlike every other error of the SDK, ``message`` is the *peer's* text (sanitized and capped, see
    :func:`server_words`) and may quote request values; ``str(error)``, which ends up in logs, names
    the code only. ``http_status`` is the HTTP status the error object came with (Streamable HTTP may
    carry a JSON-RPC error at 4xx/5xx), else ``None``.
    """

    def __init__(self, code: int, message: str, data: Any = None, *, http_status: int | None = None) -> None:
        super().__init__("json_rpc_error", f"JSON-RPC error {code}")
        self.code = code
        self.message = server_words(message)
        self.data = data
        self.http_status = http_status

    @property
    def retry_after_ms(self) -> int | None:
        """``data.retryAfterMs`` when the server sent one (rate limiting), else ``None``."""
        if isinstance(self.data, Mapping):
            value = self.data.get("retryAfterMs")
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None


class HttpStatusError(ProtocolError):
    """The server answered an HTTP error status without a readable JSON-RPC error (a proxy's error
    page, a plain-text 500, a 403 from a Host allow-list).

    ``status`` is the HTTP status; ``words`` are the server's own words — a JSON body's ``message``,
    else the first non-empty line of the body, read up to a cap whatever the body's size — sanitized
    and capped, or ``None`` when the body said nothing. ``str(error)`` names the status only.
    """

    def __init__(self, status: int, words: str | None) -> None:
        super().__init__("http_error", f"HTTP {status}")
        self.status = status
        self.words = server_words(words) if words else None


class UnsupportedVersion(ProtocolError):
    """The server offered no MCP protocol revision this host speaks; ``offered`` is what it offered
    (sanitized and capped), ``supported`` what this host speaks."""

    def __init__(self, offered: str, supported: tuple[str, ...]) -> None:
        super().__init__("unsupported_version", "no mutually supported MCP protocol version")
        self.offered = server_words(offered)
        self.supported = supported


class TransportFailure(ProtocolError):
    """The HTTP/stream transport failed (or timed out) before a JSON-RPC answer arrived: observed
    locally, never the server's words (a server's own ``-32000`` error is a :class:`JsonRpcError`).

    ``code`` is the SDK's locally synthesized JSON-RPC code when there is one (``-32000`` connection
    closed, ``-32001`` request timeout), else ``None``. ``flood`` names what the server sent instead of
    its answer when its notifications were over the host's bound meanwhile ("the server sent 20,000 log
    notifications; 19,800 dropped"): a timeout amid a flood is not slowness alone.
    """

    def __init__(self, message: str, *, code: int | None = None, flood: str | None = None) -> None:
        super().__init__("transport_failure", message)
        self.code = code
        self.flood = flood


class MalformedResponse(ProtocolError):
    """This host could not read the answer as the protocol requires: a page of the wrong shape, a
    body that is not JSON-RPC (``content_type`` names what came instead), JSON the parser refuses (a
    5,000-digit integer), or a ``Content-Encoding`` this host did not ask for. The failure is local
    (the server sent no error); ``message`` says why without quoting the body."""

    def __init__(self, message: str, *, content_type: str | None = None) -> None:
        super().__init__("malformed_response", message)
        self.content_type = server_words(content_type) if content_type is not None else None


class NotMcpServer(ProtocolError):
    """What answered is not an MCP server, and the host can say what it is (category ``not_mcp``).

    ``found`` names it (:data:`~agent_connector_sdk.core.host._peer.PeerKind`): ``html_page`` (an HTTP
    server answered with an HTML page), ``not_http`` (the port does not speak HTTP), ``plain_http``
    (an ``https://`` address answered in plain HTTP: try ``http://``), ``non_json_output`` (a stdio
    program wrote a line on stdout that is not JSON-RPC). ``sample`` is the start of what it sent
    (sanitized, cut at :data:`~agent_connector_sdk.core.host._peer.SAMPLE_LIMIT` characters) or
    ``None``; ``status`` the HTTP status of an HTML answer, else ``None``. ``str(error)`` says what was
    found without quoting the peer.
    """

    def __init__(self, found: PeerKind, *, sample: str | None = None, status: int | None = None) -> None:
        super().__init__("not_mcp", f"not an MCP server: {peer_description(found)}")
        self.found: PeerKind = found
        self.sample = sanitize_text(sample, SAMPLE_LIMIT) if sample else None
        self.status = status


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
