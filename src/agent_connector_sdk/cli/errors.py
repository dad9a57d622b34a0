"""One clear line for every way a command cannot do its job (exit code 2), never a traceback.

:class:`CliError` is what commands raise for bad input; :func:`explain_unreachable` turns whatever
the transport stack raised while talking to a server into one sentence a person can act on
(refused, timed out, TLS, wrong path, not an MCP endpoint, an HTTP error with the server's own words,
a protocol version this host does not speak). The server's words (an HTTP error body's message, a
JSON-RPC error message, the versions it offers) are quoted sanitized and capped
(:func:`~agent_connector_sdk.sanitize.sanitize_text`), so they can neither draw on the terminal nor
flood it; a refusal of this host's own (a bound) is never blamed on the server.
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final, Literal, TypeVar

from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.sanitize import sanitize_text

__all__ = [
    "CliCategory",
    "CliError",
    "ServerUnavailable",
    "explain_unreachable",
    "iter_causes",
    "needs_status_probe",
    "read_operator_file",
    "write_operator_file",
]

EXIT_USAGE: Final = 2

_T = TypeVar("_T")

CliCategory = Literal["usage", "server_unavailable"]


class CliError(AgentConnectorError):
    """Bad input or an unusable environment: printed as ``agent-connector: <message>``, exit 2.

    Category ``usage`` (the command line or a file it names cannot be used) unless a subclass says
    otherwise.
    """

    category: CliCategory
    exit_code: int = EXIT_USAGE

    def __init__(self, message: str, *, category: CliCategory = "usage") -> None:
        super().__init__(category, message)


class ServerUnavailable(CliError):
    """The server could not be reviewed at all (see :func:`explain_unreachable`); ``server_unavailable``."""

    def __init__(self, message: str) -> None:
        super().__init__(message, category="server_unavailable")


_WORDS: Final = 200  # characters of the server's own words quoted in one line
_UNSUPPORTED_VERSION: Final = re.compile(r"Unsupported protocol version from the server: (.*)", re.S)
_NO_MUTUAL_VERSION: Final = re.compile(
    r"No mutually supported modern protocol version \(server: (.*), client", re.S
)
_CONTENT_TYPE: Final = re.compile(r"Unexpected content type:\s*([A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+)")


def iter_causes(error: BaseException) -> Iterator[BaseException]:
    """``error`` and everything it was raised from or during, exception groups flattened."""
    seen: set[int] = set()
    stack = [error]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                stack.append(linked)


def needs_status_probe(error: BaseException) -> bool:
    """The SDK reports any HTTP error status as the same -32603 "Server returned an error response",
    so the status itself (401 vs 500) has to be asked for separately."""
    from mcp.shared.exceptions import MCPError

    return any(
        isinstance(cause, MCPError) and cause.message == "Server returned an error response"
        for cause in iter_causes(error)
    )


def _quote(words: str | None) -> str:
    return f": {sanitize_text(words, _WORDS)}" if words else ""


def _http_error(target: str, status: int, words: str | None) -> str:
    """``target answered HTTP <status>: <the server's words>`` and, where it helps, what to try."""
    said = _quote(words)
    if status == 401:
        return f"{target} answered HTTP 401 (unauthorized){said}; pass credentials with --token or --header"
    if status == 403 and not words:
        return f"{target} answered HTTP 403 (forbidden): check the credentials and the address used"
    if status == 404:
        return f"{target} answered HTTP 404{said or ' Not Found'} (wrong path? FastMCP serves /mcp)"
    return f"{target} answered HTTP {status}{said}"


def _version_mismatch(causes: list[BaseException], target: str) -> str | None:
    from mcp.shared.exceptions import MCPError
    from mcp_types.version import SUPPORTED_PROTOCOL_VERSIONS

    ours = ", ".join(SUPPORTED_PROTOCOL_VERSIONS)
    for cause in causes:
        text = str(cause) if isinstance(cause, RuntimeError) else ""
        found = _UNSUPPORTED_VERSION.match(text) or _NO_MUTUAL_VERSION.match(text)
        if found:
            theirs = sanitize_text(found.group(1), 120)
            return f"{target} speaks MCP protocol version {theirs}; this host speaks {ours}"
        if isinstance(cause, MCPError) and cause.code == -32022:  # UnsupportedProtocolVersion
            data = cause.data if isinstance(cause.data, dict) else {}
            theirs = sanitize_text(data.get("supported", "?"), 120)
            return f"{target} supports MCP protocol versions {theirs}; this host speaks {ours}"
    return None


def explain_unreachable(
    error: BaseException,
    *,
    target: str,
    timeout: float,
    http_status: int | None = None,
    http_words: str | None = None,
) -> str:
    """One sentence saying why ``target`` could not be reviewed, from the exception chain
    (``http_status``/``http_words``: the HTTP error answer and the server's own words in it, as the host
    saw them on the wire or a plain POST to the endpoint answered)."""
    import httpx2
    from mcp.shared.exceptions import MCPError

    causes = list(iter_causes(error))
    version = _version_mismatch(causes, target)
    if version is not None:
        return version
    if http_status is not None and http_status >= 400 and any(isinstance(c, MCPError) for c in causes):
        # The SDK folds every HTTP error into one JSON-RPC stand-in (a 401 whose body is a JSON-RPC
        # -32001 looks like a local timeout): the status and the server's words say what happened.
        return _http_error(target, http_status, http_words)
    for cause in causes:
        if isinstance(cause, ssl.SSLError | ssl.CertificateError):
            return f"TLS failed for {target}: {type(cause).__name__} (is it https with a valid certificate?)"
    for cause in causes:
        if isinstance(cause, ConnectionRefusedError):
            return f"connection refused: nothing is listening at {target}"
        if isinstance(cause, OSError) and cause.errno in (-2, -3, -5):  # EAI_NONAME, EAI_AGAIN, EAI_NODATA
            return f"cannot resolve the host of {target}"
    for cause in causes:
        if isinstance(cause, TimeoutError | httpx2.TimeoutException):
            return f"timed out after {timeout:g} s waiting for {target} (raise --timeout?)"
        if isinstance(cause, MCPError) and cause.code == -32001:
            return f"timed out after {timeout:g} s waiting for {target} (raise --timeout?)"
    for cause in causes:
        if isinstance(cause, MCPError):
            text = cause.message or ""
            found = _CONTENT_TYPE.search(text)
            if found:
                return f"not an MCP endpoint: {target} answered with {found.group(1)}, not JSON-RPC"
            if text.startswith("Failed to parse JSON response"):
                return f"not an MCP endpoint: {target} answered JSON that is not JSON-RPC"
            if text == "Not Found" or cause.code == -32601:
                return f"wrong path: {target} answered 404 Not Found (FastMCP serves /mcp)"
            if cause.code == -32000:
                return f"the connection to {target} closed before an answer arrived"
            return f"{target} refused the session: JSON-RPC error {cause.code}{_quote(cause.message)}"
    for cause in causes:
        if isinstance(cause, httpx2.HTTPStatusError):
            return _http_error(target, cause.response.status_code, None)
    for cause in causes:
        if isinstance(cause, httpx2.ConnectError | httpx2.NetworkError):
            return f"cannot connect to {target}: {type(cause).__name__}"
    for cause in causes:
        if isinstance(cause, FileNotFoundError):
            return f"cannot start {target}: program not found (is it installed and on PATH?)"
        if isinstance(cause, PermissionError):
            return f"cannot start {target}: permission denied (is the program executable?)"
    return f"cannot review {target}: {type(error).__name__}"


def unreadable_file(path: Path, error: OSError) -> CliError:
    """The one line for an input file that cannot be read (missing, a directory, no permission)."""
    if isinstance(error, FileNotFoundError):
        return CliError(f"{path}: no such file")
    if isinstance(error, IsADirectoryError):
        return CliError(f"{path}: is a directory, not a file")
    return CliError(f"{path}: cannot read ({_os_reason(error)})")


def require_readable_file(path: Path) -> None:
    """Fail on an input file that cannot be opened, before a command loads its heavy stack (the file
    is read again, whole, where it is parsed; this only opens it)."""
    try:
        with path.open("rb"):
            pass
    except OSError as error:
        raise unreadable_file(path, error) from None


def read_operator_file(path: Path, what: str, parse: Callable[[bytes], _T]) -> _T:
    """A file the operator named (a pin file, a contract lock, ...), parsed by its format's own reader.

    Unreadable, or refused by ``parse`` (its format's error: a value-free message), is one line naming
    the file and why, as a usage error (exit 2).
    """
    try:
        data = path.read_bytes()
    except OSError as error:
        raise CliError(f"{path}: cannot read the {what} ({_os_reason(error)})") from None
    try:
        return parse(data)
    except AgentConnectorError as error:  # PinFileError, LockFileError, ...
        raise CliError(f"{path}: {error.message}") from None


def write_operator_file(path: Path, text: str, what: str) -> None:
    """Write a file the operator named (UTF-8); unwritable: one line naming the file and why (exit 2)."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise CliError(f"{path}: cannot write the {what} ({_os_reason(error)})") from None


def _os_reason(error: OSError) -> str:
    return error.strerror or type(error).__name__
