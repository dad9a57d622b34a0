"""What answered when it is not an MCP server: the kinds a host names, and the words for each (pure).

A host that connects to the wrong thing should say what it found, not report a timeout or a transport
class: a web page, a port that does not speak HTTP, plain HTTP where TLS was asked for, a program that
writes text on stdout. The library raises :class:`~agent_connector_sdk.core.host._errors.NotMcpServer`
with one of these kinds; the reviewer's pre-flight (:mod:`agent_connector_sdk.mcp._preflight`) finds
the same kinds before the host stack loads, and both say them with :func:`peer_description`.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = ["PEER_KINDS", "SAMPLE_LIMIT", "PeerKind", "peer_description"]

PeerKind = Literal["html_page", "not_http", "plain_http", "non_json_output"]
"""``html_page``: an HTTP server answered the MCP request with an HTML page (a web server, a file
server, a static site); ``not_http``: something listens at the address but does not speak HTTP;
``plain_http``: an ``https://`` address answered in plain HTTP (no TLS); ``non_json_output``: a stdio
program wrote a line on stdout that is not a JSON-RPC message (the spec: a server MUST NOT write
anything else there)."""

PEER_KINDS: Final[tuple[PeerKind, ...]] = ("html_page", "not_http", "plain_http", "non_json_output")

SAMPLE_LIMIT: Final = 80
"""Characters of what the peer sent that a description quotes (sanitized before it is kept)."""


def peer_description(kind: PeerKind, sample: str | None = None, *, url: str | None = None) -> str:
    """What was found, in the words the reviewer prints and the error's message carries.

    ``sample`` (already sanitized and cut by the caller) is quoted for ``not_http`` and
    ``non_json_output``; ``url`` (an ``https://`` address) gives ``plain_http`` the address to try.
    """
    if kind == "html_page":
        return "an HTML page, not an MCP endpoint"
    if kind == "not_http":
        said = f" (it sent {sample!r})" if sample else ""
        return f"not an HTTP server{said}"
    if kind == "plain_http":
        if url is not None and url[:8].lower() == "https://":
            return f"plain HTTP: try http://{url[8:]}"
        return "plain HTTP: try http://"
    said = f": {sample!r}" if sample else ""
    return f"the program wrote non-JSON to stdout{said}"
