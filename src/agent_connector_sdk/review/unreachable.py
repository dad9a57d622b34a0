"""Why a server could not be reviewed, in one sentence a person can act on.

:func:`explain_unreachable` turns the host's error for a failed exchange (decided by its class: the
host translated it once) into one sentence (refused, timed out, TLS, wrong path, not an MCP endpoint,
an HTTP error with the server's own words, a protocol version this host does not speak). The
server's words (an HTTP error body's message, a JSON-RPC error message, the versions it offers) are
quoted sanitized and capped (:func:`~agent_connector_sdk.sanitize.sanitize_text`), so they can neither
draw on the terminal nor flood it; a refusal of this host's own (a bound) is never blamed on the
server. The live review raises it as :class:`~agent_connector_sdk.review.errors.ServerUnavailable`.
"""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING, Final, Literal

from agent_connector_sdk.core.host import PeerKind, peer_description
from agent_connector_sdk.errors import iter_causes
from agent_connector_sdk.sanitize import sanitize_text

if TYPE_CHECKING:  # the host stack loads only when a command talks to a server
    from agent_connector_sdk.core.host import ProtocolError
    from agent_connector_sdk.review.errors import UnavailableReason

__all__ = ["explain_unreachable", "not_mcp_sentence", "unavailable_reason", "unreachable_sentence"]

Unreached = Literal["refused", "unresolvable", "unreachable", "program_not_found", "not_executable"]


def unreachable_sentence(reason: Unreached, target: str) -> str:
    """The sentence for a server that cannot be reached or started: the same words whether the
    pre-flight (:mod:`agent_connector_sdk.review.preflight`) or the host's error found it."""
    if reason == "refused":
        return f"connection refused: nothing is listening at {target}"
    if reason == "unresolvable":
        return f"cannot resolve the host of {target}"
    if reason == "unreachable":
        return f"cannot connect to {target}: no route to its host"
    if reason == "program_not_found":
        return f"cannot start {target}: program not found (is it installed and on PATH?)"
    return f"cannot start {target}: permission denied (is the program executable?)"


def not_mcp_sentence(
    found: PeerKind, target: str, sample: str | None = None, *, status: int | None = None
) -> str:
    """``<target> is <what it is>`` for an address that answered but is not an MCP server (the
    :class:`~agent_connector_sdk.core.host._errors.NotMcpServer` kinds); ``sample`` is the peer's own
    words, sanitized and cut again here."""
    said = sanitize_text(sample, 80) if sample else None
    if found == "html_page":
        title = f" ({said!r})" if said else ""
        answered = f"answered HTTP {status} with" if status is not None else "answered with"
        return f"{target} {answered} {peer_description(found)}{title}"
    if found == "non_json_output":
        return f"{target}: {peer_description(found, said)}"
    return f"{target}: {peer_description(found, said, url=target)}"


_WORDS: Final = 200  # characters of the server's own words quoted in one line
_UNRESOLVABLE: Final = (-2, -3, -5)  # EAI_NONAME, EAI_AGAIN, EAI_NODATA


def _quote(words: str | None) -> str:
    return f": {sanitize_text(words, _WORDS)}" if words else ""


def _http_error(target: str, status: int, words: str | None, credentials: bool = False) -> str:
    """``target answered HTTP <status>: <the server's words>`` and, where it helps, what to try
    (``credentials``: a token or an Authorization header was sent, so it was the one refused)."""
    said = _quote(words)
    if status == 401 and credentials:
        return f"{target} answered HTTP 401 (unauthorized){said}; the credentials sent were refused"
    if status == 401:
        return f"{target} answered HTTP 401 (unauthorized){said}; pass credentials with --token or --header"
    if status == 403 and not words:
        return f"{target} answered HTTP 403 (forbidden): check the credentials and the address used"
    if status == 404:
        return f"{target} answered HTTP 404{said or ' Not Found'} (wrong path? FastMCP serves /mcp)"
    return f"{target} answered HTTP {status}{said}"


def _protocol_failure(error: ProtocolError, target: str, timeout: float, credentials: bool) -> str | None:
    """The sentence for one of the host's protocol families (decided by class, never by message)."""
    from mcp_types.version import SUPPORTED_PROTOCOL_VERSIONS

    from agent_connector_sdk.core.host import (
        HttpStatusError,
        JsonRpcError,
        MalformedResponse,
        NotMcpServer,
        TransportFailure,
        UnsupportedVersion,
    )

    if isinstance(error, NotMcpServer):
        return not_mcp_sentence(error.found, target, error.sample, status=error.status)
    ours = ", ".join(SUPPORTED_PROTOCOL_VERSIONS)
    if isinstance(error, UnsupportedVersion):
        theirs = sanitize_text(error.offered, 120)
        return f"{target} speaks MCP protocol version {theirs}; this host speaks {ours}"
    if isinstance(error, HttpStatusError):
        return _http_error(target, error.status, error.words, credentials)
    if isinstance(error, JsonRpcError):
        if error.code == -32022:  # UnsupportedProtocolVersion, with data.supported
            data = error.data if isinstance(error.data, dict) else {}
            theirs = sanitize_text(data.get("supported", "?"), 120)
            return f"{target} supports MCP protocol versions {theirs}; this host speaks {ours}"
        words = f"JSON-RPC error {error.code}{_quote(error.message)}"
        if error.http_status is not None:
            return _http_error(target, error.http_status, words, credentials)
        return f"{target} refused the session: {words}"
    if isinstance(error, MalformedResponse):
        if error.content_type is not None:
            shown = sanitize_text(error.content_type or "no content type", 120)
            return f"not an MCP endpoint: {target} answered with {shown}, not JSON-RPC"
        return f"{target} sent an answer this host cannot read ({sanitize_text(error.message, 300)})"
    if isinstance(error, TransportFailure) and error.code == -32001:
        if error.flood is not None:  # not slowness alone: name what came instead of the answer
            return f"timed out after {timeout:g} s waiting for {target}: {error.flood}"
        return f"timed out after {timeout:g} s waiting for {target} (raise --timeout?)"
    if isinstance(error, TransportFailure) and error.code == -32000:
        return f"the connection to {target} closed before an answer arrived"
    return None


def explain_unreachable(
    error: BaseException, *, target: str, timeout: float, credentials: bool = False
) -> str:
    """One sentence saying why ``target`` could not be reviewed: by the class of the host's error
    (an HTTP status with the server's own words, a JSON-RPC error, a version mismatch, an answer that
    is not JSON-RPC), else by the transport exception underneath (refused, DNS, TLS, timed out,
    program not found). The server's words are quoted sanitized and capped."""
    import httpx2

    from agent_connector_sdk.core.host import ProtocolError, TransportFailure

    causes = list(iter_causes(error))
    for cause in causes:
        if isinstance(cause, ProtocolError):
            sentence = _protocol_failure(cause, target, timeout, credentials)
            if sentence is not None:
                return sentence
    for cause in causes:
        if isinstance(cause, ssl.SSLError | ssl.CertificateError):
            return f"TLS failed for {target}: {type(cause).__name__} (is it https with a valid certificate?)"
    for cause in causes:
        if isinstance(cause, ConnectionRefusedError):
            return unreachable_sentence("refused", target)
        if isinstance(cause, OSError) and cause.errno in _UNRESOLVABLE:
            return unreachable_sentence("unresolvable", target)
    for cause in causes:
        if isinstance(cause, TimeoutError | httpx2.TimeoutException):
            return f"timed out after {timeout:g} s waiting for {target} (raise --timeout?)"
    for cause in causes:
        if isinstance(cause, httpx2.ConnectError | httpx2.NetworkError):
            return f"cannot connect to {target}: {type(cause).__name__}"
    for cause in causes:
        if isinstance(cause, FileNotFoundError):
            return unreachable_sentence("program_not_found", target)
        if isinstance(cause, PermissionError):
            return unreachable_sentence("not_executable", target)
    for cause in causes:
        if isinstance(cause, TransportFailure):
            return f"the connection to {target} failed: {sanitize_text(cause.message, 200)}"
    return f"cannot review {target}: {type(error).__name__}"


def unavailable_reason(error: BaseException) -> UnavailableReason | None:
    """The typed reason behind :func:`explain_unreachable`'s sentence, where it names one (what
    answered instead of an MCP server; refused, unresolvable; a program missing or not executable),
    decided by class as the sentence is."""
    from agent_connector_sdk.core.host import NotMcpServer, ProtocolError, TransportFailure

    causes = list(iter_causes(error))
    for cause in causes:
        if isinstance(cause, NotMcpServer):
            return cause.found
        if isinstance(cause, ProtocolError) and not isinstance(cause, TransportFailure):
            return None  # the server's own answer explains it (an HTTP status, a JSON-RPC error, ...)
    for cause in causes:
        if isinstance(cause, ConnectionRefusedError):
            return "refused"
        if isinstance(cause, OSError) and cause.errno in _UNRESOLVABLE:
            return "unresolvable"
        if isinstance(cause, FileNotFoundError):
            return "program_not_found"
        if isinstance(cause, PermissionError):
            return "not_executable"
    return None
