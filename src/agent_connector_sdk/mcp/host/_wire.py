"""What the host reads off the wire itself: a byte cap while reading, HTTP error words, raw pages.

:class:`HttpGuard` sits in the HTTP client a Streamable HTTP transport builds on connect (the same
factory-wrapping technique as :mod:`._param_headers`) and, for every POST response:

* caps the bytes read at ``max_message_bytes`` and the JSON values at ``max_message_values`` (a
  :class:`ValueCounter` over the raw bytes) *while reading*, per message: an SSE response is many
  messages, so its values are counted per event (:class:`EventValueCounter`), each event's size is the
  SDK's event limit (``max_message_bytes``) and the stream as a whole is bounded by
  ``max_stream_bytes``: a response announcing more
  (``Content-Length``), or streaming more, fails at the cap instead of being buffered whole. It asks
  for ``Accept-Encoding: identity``, so the bytes counted are the bytes parsed (a compressed body,
  which could expand without bound, is refused). The SDK reports the interrupted read as a parse error
  or a closed stream; :meth:`HttpGuard.watch` tells the host that it was this cap, so the refusal is
  :class:`~agent_connector_sdk.core.host.bounds.BoundExceeded` (``max_message_bytes``), never a transport
  error blamed on the server;
* keeps the status and the server's own words of the last HTTP error answer (a JSON-RPC error's
  ``code`` and ``message``, else the first line of the body): the SDK folds every error status into
  one JSON-RPC stand-in (and a 401 whose body is a JSON-RPC ``-32001`` looks exactly like a local
  timeout), so this is how a host says "HTTP 401: <the server's message>". An error body of any size
  is read up to :data:`ERROR_BODY_BYTES` and the SDK is handed that prefix, never a failed read
  (reverse proxies' error pages are often larger than the cap);
* records a ``Content-Encoding`` the host did not ask for (the body is refused unread: the size
  counted must be the size parsed) and sets the SDK's SSE event limit to ``max_message_bytes``, so
  each of these is named as what it is (:mod:`._translate`), not as a size or transport failure.

Raw pages: the host session reads ``tools/list`` pages through
:func:`~agent_connector_sdk.mcp.compat.send_unvalidated_request` (no SDK result model: one malformed
descriptor must not cost its neighbours; each is judged alone by the Admit gate).
"""

from __future__ import annotations

import contextvars
import json
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final, cast

import fastmcp
import httpx2
from fastmcp.client.transports.http import StreamableHttpTransport

from agent_connector_sdk.mcp import html_title
from agent_connector_sdk.mcp.compat import McpHttpClientFactory, transport_client_factory

__all__ = [
    "ERROR_BODY_BYTES",
    "EventValueCounter",
    "HttpError",
    "HttpGuard",
    "StdioLineCap",
    "ValueCounter",
    "Watch",
    "error_words",
    "read_error",
]

ERROR_BODY_BYTES: Final = 16 * 1024
"""How much of an HTTP error answer's body is read for the server's own words."""


class _MessageTooLarge(httpx2.StreamError):
    """Raised inside the SDK's read when a response crosses the byte cap (the SDK catches
    ``StreamError`` and reports a failed read; the host then reports the cap)."""


@dataclass(frozen=True, slots=True)
class HttpError:
    """An HTTP error answer: its status and the server's own words (raw: sanitize before showing);
    ``code`` is the JSON-RPC error code when the body held a JSON-RPC error object."""

    status: int
    message: str | None
    code: int | None = None
    html: bool = False
    """The answer was an HTML page (``message`` is then its ``<title>``)."""


@dataclass(slots=True)
class Watch:
    """What happened to the responses of one watched operation (see :meth:`HttpGuard.watch`)."""

    capped: str | None = None
    """The bound that cut a response short (``max_message_bytes`` or ``max_message_values``)."""
    errors: list[HttpError] = field(default_factory=list)
    encoding: str | None = None
    """A ``Content-Encoding`` the host did not ask for (the body was refused unread)."""


_WATCH: contextvars.ContextVar[Watch | None] = contextvars.ContextVar(
    "agent_connector_sdk_http_watch", default=None
)


_STRING_REST: Final = re.compile(rb'[^"\\]*+(?:\\.[^"\\]*+)*+', re.DOTALL)
"""The inside of a string from where it is read: up to its closing quote, or to the chunk's end (where
a lone backslash, escaping the next chunk's first byte, is left unmatched). Possessive: no backtracking."""
_OUTSIDE_RUN: Final = re.compile(rb'[^"]*+(?:"[^"\\]*+(?:\\.[^"\\]*+)*+"[^"]*+)*+', re.DOTALL)
"""Bytes outside strings and whole strings, up to a string the chunk does not close (or its end)."""
_WHOLE_STRING: Final = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)


class ValueCounter:
    """Counts JSON values in a byte stream fed in chunks, without parsing it: ``{``, ``[`` and ``,``
    outside strings (a container, and each member after a container's first). Malformed JSON is counted
    all the same (the parser refuses it later).

    Every step is a regex match or a byte count in C (a run of whole strings and what lies between them
    is matched at once, its strings cut out and its structural bytes counted): a Python step per chunk,
    not per structural byte, which was most of the host's cost of reading a large search answer.
    ``tests/mcp/host/test_wire_counter.py`` checks it against a byte-by-byte reading."""

    __slots__ = ("_escaped", "_in_string", "count")

    def __init__(self) -> None:
        self.count = 0
        self._in_string = False
        self._escaped = False

    def feed(self, chunk: bytes) -> int:
        position, end = 0, len(chunk)
        if self._escaped and chunk:
            position, self._escaped = 1, False  # the escaped byte itself
        if self._in_string:
            position = cast(re.Match[bytes], _STRING_REST.match(chunk, position)).end()
            if position >= end:
                return self.count  # still inside the string
            if chunk[position] == 0x5C:  # a backslash ending the chunk: it escapes the next byte
                self._escaped = True
                return self.count
            position += 1  # the closing quote
            self._in_string = False
        stop = cast(re.Match[bytes], _OUTSIDE_RUN.match(chunk, position)).end()
        run = chunk[position:stop]
        if 0x22 in run:
            run = _WHOLE_STRING.sub(b"", run)
        self.count += run.count(b"{") + run.count(b"[") + run.count(b",")
        if stop < end:  # a quote opening a string this chunk does not close
            self._in_string = True
            if cast(re.Match[bytes], _STRING_REST.match(chunk, stop + 1)).end() < end:
                self._escaped = True  # it ends with a lone backslash
        return self.count


_BLANK_LINE: Final = re.compile(rb"(?>\r\n|\r|\n)(?>\r\n|\r|\n)")
"""A line end followed by another (CR, LF or CRLF; atomic, so a CRLF is never read as two): the
blank line that ends an SSE event."""


class EventValueCounter:
    """:class:`ValueCounter` per SSE event: the count starts again at each blank line (an event's
    end), so ``max_values`` holds per message however many events a stream carries. An event that
    starts and ends inside one chunk and is shorter than ``max_values`` bytes cannot hold more values
    than that (each value costs at least one byte) and is not counted byte by byte: a stream of many
    small events costs one regex scan per chunk."""

    __slots__ = ("_carry", "_counter", "_fresh", "max_values")

    def __init__(self, max_values: int) -> None:
        self.max_values = max_values
        self._counter = ValueCounter()
        self._fresh = True  # nothing of the open event was counted yet
        self._carry = b""  # the previous chunk's trailing line ends (a blank line may straddle chunks)

    def feed(self, chunk: bytes) -> int:
        """Feed a chunk; the most values one event held in it (for the open event: so far)."""
        data = self._carry + chunk if self._carry else chunk
        position = 0
        most = 0
        for boundary in _BLANK_LINE.finditer(data):
            segment = data[position : boundary.start()]
            if not self._fresh or len(segment) > self.max_values:
                most = max(most, self._counter.feed(segment))
            self._counter, self._fresh = ValueCounter(), True
            position = boundary.end()
        if position < len(data):
            most = max(most, self._counter.feed(data[position:]))
            self._fresh = False
        tail = len(data) - len(data.rstrip(b"\r\n"))
        self._carry = data[max(position, len(data) - min(tail, 4)) :] if tail else b""
        return most


class _CappedStream(httpx2.AsyncByteStream):
    """A response body read through the caps: ``limit`` bytes in all (``bound`` names it:
    ``max_message_bytes`` for a JSON body, ``max_stream_bytes`` for an SSE stream, whose events are
    each capped by the SDK's event size limit) and ``max_values`` JSON values per message (per event
    when ``events``)."""

    def __init__(
        self,
        inner: Any,
        limit: int,
        on_cap: Any,
        refuse: bool,
        max_values: int | None = None,
        *,
        bound: str = "max_message_bytes",
        events: bool = False,
    ) -> None:
        self._inner = inner
        self._limit = limit
        self._on_cap = on_cap
        self._refuse = refuse
        self._max_values = max_values
        self._bound = bound
        self._events = events

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._refuse:
            self._on_cap(self._bound)
            raise _MessageTooLarge("the response is over the host's byte cap")
        seen = 0
        counter: ValueCounter | EventValueCounter | None = None
        if self._max_values is not None:
            counter = EventValueCounter(self._max_values) if self._events else ValueCounter()
        async for chunk in self._inner:
            seen += len(chunk)
            if seen > self._limit:
                self._on_cap(self._bound)
                raise _MessageTooLarge("the response is over the host's byte cap")
            if (
                counter is not None
                and self._max_values is not None
                and counter.feed(chunk) > self._max_values
            ):
                self._on_cap("max_message_values")
                raise _MessageTooLarge("the response holds more JSON values than the host parses")
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


_JSON_CODE: Final = re.compile(rb'"code"\s*:\s*(-?\d{1,12})\s*[,}]')
_JSON_MESSAGE: Final = re.compile(rb'"message"\s*:\s*("(?:[^"\\]|\\.){0,4000}")')


def read_error(body: bytes) -> tuple[int | None, str | None]:
    """``(code, words)`` of an HTTP error body: a JSON-RPC error's ``code`` and ``message``, a JSON
    ``error``/``message``/``detail`` string, else the first non-empty line of the text.

    ``body`` may be a prefix cut at :data:`ERROR_BODY_BYTES`: a JSON-RPC error whose ``data`` runs
    past the cut still gives its code and message (read from the prefix, not parsed whole)."""
    text = body.decode("utf-8", "replace")
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        document = None
    if isinstance(document, dict):
        error = document.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            code = error.get("code")
            return (code if isinstance(code, int) and not isinstance(code, bool) else None), error["message"]
        for key in ("error", "message", "detail"):
            if isinstance(document.get(key), str):
                return None, str(document[key])
    elif document is None and body.lstrip().startswith(b"{"):
        # A JSON body cut short (or otherwise unparsable): its error object's first fields still tell.
        message = _JSON_MESSAGE.search(body)
        if message is not None:
            try:
                words = json.loads(message.group(1))
            except ValueError:
                words = None
            if isinstance(words, str):
                code = _JSON_CODE.search(body)
                return (int(code.group(1)) if code is not None else None), words
    line = next((line.strip() for line in text.splitlines() if line.strip()), None)
    return None, line


def error_words(body: bytes) -> str | None:
    """The server's own message in an error body (:func:`read_error`), a JSON-RPC error's prefixed
    with its code."""
    code, words = read_error(body)
    if code is not None and words is not None:
        return f"JSON-RPC error {code}: {words}"
    return words


class _Replay(httpx2.AsyncByteStream):
    """Bytes already read, handed to the SDK as the response body."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self._body

    async def aclose(self) -> None:
        return None


async def _read_prefix(stream: Any, cap: int) -> bytes:
    """At most ``cap`` bytes of ``stream``; the rest is left unread and the stream closed."""
    body = bytearray()
    try:
        async for chunk in stream:
            body += chunk
            if len(body) >= cap:
                break
    except httpx2.HTTPError:
        pass  # a body that broke off: its words so far are still the server's
    finally:
        await stream.aclose()
    return bytes(body[:cap])


class HttpGuard:
    """The byte cap and HTTP error capture of one ``fastmcp.Client`` (see the module docstring).

    Create it before the client connects (the hook lives in the HTTP client built on connect); on
    other transports it is inert. ``last_error`` is the last HTTP error answer seen on this client.
    """

    def __init__(
        self,
        client: fastmcp.Client[Any],
        max_message_bytes: int,
        max_message_values: int | None = None,
        max_stream_bytes: int | None = None,
    ) -> None:
        self.max_message_bytes = max_message_bytes
        self.max_message_values = max_message_values
        self.max_stream_bytes = max_stream_bytes if max_stream_bytes is not None else max_message_bytes
        self.last_error: HttpError | None = None
        transport = client.transport
        if isinstance(transport, StreamableHttpTransport):
            # One bound for one message, whichever framing carries it (the SDK's default is 1 MiB).
            transport.max_sse_event_size = max_message_bytes
            self._wrap_factory(transport)

    @contextmanager
    def watch(self) -> Iterator[Watch]:
        """Within this block, this task's POSTs report into the returned :class:`Watch` (the SDK runs
        each POST in the sender's context, so a concurrent task's responses never land here)."""
        watch = Watch()
        token = _WATCH.set(watch)
        try:
            yield watch
        finally:
            _WATCH.reset(token)

    def _wrap_factory(self, transport: StreamableHttpTransport) -> None:
        build = transport_client_factory(transport)
        limit = self.max_message_bytes

        async def guard(response: httpx2.Response) -> None:
            if response.request.method != "POST":
                return  # the long-lived GET stream of older revisions is not one message
            watch = _WATCH.get()

            def capped(bound: str) -> None:
                if watch is not None:
                    watch.capped = bound

            length = response.headers.get("content-length", "")
            encoding = response.headers.get("content-encoding", "identity").strip().lower()
            if response.status_code >= 400:
                # Only the server's words are wanted: a prefix of the body, whatever its size.
                body = b""
                if encoding in ("", "identity"):
                    body = await _read_prefix(response.stream, ERROR_BODY_BYTES)
                response.stream = _Replay(body)
                code, words = read_error(body)
                html = "text/html" in response.headers.get("content-type", "").lower()
                if html:
                    words = html_title(body) or words  # a page's first line is mostly its doctype
                error = HttpError(response.status_code, words, code, html)
                self.last_error = error
                if watch is not None:
                    watch.errors.append(error)
                return
            self.last_error = None  # the last answer was not an error: older words no longer apply
            # An SSE stream is many messages: each event is capped by the SDK's event limit (set to
            # max_message_bytes above) and counted for values alone; the stream in all by
            # max_stream_bytes. A JSON body is one message.
            events = response.headers.get("content-type", "").lower().startswith("text/event-stream")
            bound, cap = ("max_message_bytes", limit)
            if events:
                bound, cap = "max_stream_bytes", self.max_stream_bytes
            refuse = length.isdigit() and int(length) > cap
            if encoding not in ("", "identity"):
                # Asked for identity, sent compressed: refused unread (it could expand without bound).
                refuse = True
                if watch is not None:
                    watch.encoding = encoding[:40]
                response.stream = _CappedStream(response.stream, limit, lambda bound: None, refuse)
                return
            response.stream = _CappedStream(
                response.stream, cap, capped, refuse, self.max_message_values, bound=bound, events=events
            )

        def factory(**kwargs: Any) -> httpx2.AsyncClient:
            http_client: httpx2.AsyncClient = build(**kwargs)  # the transport's own choice
            http_client.headers["Accept-Encoding"] = "identity"
            http_client.event_hooks.setdefault("response", []).append(guard)
            return http_client

        transport.httpx_client_factory = cast(McpHttpClientFactory, factory)


@dataclass(slots=True)
class StdioLineCap:
    """The line cap a stdio server's stdout is read through
    (:func:`~agent_connector_sdk.mcp.compat.stdio_line_cap`): one JSON-RPC message is one line, so
    ``limit`` is ``max_message_bytes``."""

    limit: int
    tripped: bool = False
    max_values: int | None = None
    """JSON values per message (:class:`ValueCounter`), as ``max_message_values`` over HTTP."""
    values_tripped: bool = False
    too_deep: bool = False
    """A message nested past every parser ended the stream (named ``max_schema_depth``)."""
    non_json: str | None = None
    """The start of a line the server wrote on stdout that is not JSON-RPC (raw; it ended the
    stream at once, named ``NotMcpServer`` ``non_json_output``)."""

    @staticmethod
    def new_counter() -> ValueCounter:
        return ValueCounter()
