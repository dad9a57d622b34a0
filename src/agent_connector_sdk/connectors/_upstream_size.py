"""A bound on the size of an upstream API's answer, enforced while the answer is read.

FastMCP's OpenAPI tools read the whole upstream body into memory, then the tool result carries it twice
(``structuredContent`` and its text serialization): a 50 MB answer cost the server ~370 MiB and reached
the caller as 100 MB. :class:`UpstreamSizeBound` is a response hook on the upstream client: inside a
tool call that set a bound (:func:`bounded_upstream`), an answer whose ``Content-Length`` exceeds it is
refused before its body is read, and any other answer is read through a stream that stops at the bound
— counting *decoded* bytes, so a small gzip body cannot inflate past it either (``gzip`` and
``deflate`` are decoded here, with zlib's ``max_length``; requests made inside a bounded call ask for
no other encoding, and an answer in one is refused). Memory while reading stays within the bound plus
one network chunk.
"""

from __future__ import annotations

import contextvars
import zlib
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any, Final

import httpx2

__all__ = [
    "ACCEPTED_ENCODINGS",
    "DEFAULT_MAX_UPSTREAM_BYTES",
    "UpstreamSizeBound",
    "bounded_upstream",
    "current_upstream_bound",
]

DEFAULT_MAX_UPSTREAM_BYTES: Final = 8 * 1024 * 1024
"""Default bound on one upstream answer's decoded body: 8 MiB (``serve --max-upstream-bytes``)."""

ACCEPTED_ENCODINGS: Final = "gzip, deflate"
"""What a bounded call's upstream request accepts: the encodings this module can decode bounded."""

_ZLIB_WBITS: Final = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}

_BOUND: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "agent_connector_upstream_bound", default=None
)


class UpstreamAnswerTooLarge(Exception):
    """The upstream's answer exceeds the bound (or comes in an encoding the bound cannot be checked in).
    Raised inside the upstream client and caught by the connector's tool, which raises the public
    :class:`~agent_connector_sdk.connectors.openapi.UpstreamError` (``upstream_too_large``) instead:
    an internal signal, deliberately not exported."""

    def __init__(self, limit: int, *, encoding: str | None = None) -> None:
        self.limit = limit
        self.encoding = encoding
        if encoding is None:
            reason = f"the upstream's answer is larger than the bound of {limit:,} bytes"
        else:
            reason = f"the upstream answered in an encoding the {limit:,}-byte bound cannot be checked in"
        super().__init__(reason)


@contextmanager
def bounded_upstream(limit: int) -> Iterator[None]:
    """Upstream answers read inside this block are bounded to ``limit`` decoded bytes."""
    token = _BOUND.set(limit)
    try:
        yield
    finally:
        _BOUND.reset(token)


def current_upstream_bound() -> int | None:
    """The bound of the tool call being served, ``None`` outside one."""
    return _BOUND.get()


class _BoundedStream(httpx2.AsyncByteStream):
    """The raw stream, decoded (when encoded) and cut off past ``limit`` bytes."""

    def __init__(self, raw: httpx2.AsyncByteStream, limit: int, wbits: int | None) -> None:
        self._raw = raw
        self._limit = limit
        self._decoder = zlib.decompressobj(wbits) if wbits is not None else None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._raw:
            for piece in self._decoded(chunk):
                seen += len(piece)
                if seen > self._limit:
                    raise UpstreamAnswerTooLarge(self._limit)
                yield piece
        if self._decoder is not None:
            rest = self._decoder.flush()
            if seen + len(rest) > self._limit:
                raise UpstreamAnswerTooLarge(self._limit)
            if rest:
                yield rest

    def _decoded(self, chunk: bytes) -> Iterator[bytes]:
        decoder = self._decoder
        if decoder is None:
            yield chunk
            return
        # Never more than the bound (+1, to notice the excess) out of one call, whatever the ratio.
        data = chunk
        while data:
            try:
                piece = decoder.decompress(data, self._limit + 1)
            except zlib.error:
                raise httpx2.DecodingError("the upstream's compressed body is corrupt") from None
            if piece:
                yield piece
            data = decoder.unconsumed_tail

    async def aclose(self) -> None:
        await self._raw.aclose()


async def _ask_for_decodable_encodings(request: httpx2.Request) -> None:
    """Request hook: inside a bounded call, accept only the encodings the bound can be checked in
    (the client's default may add ``br`` or ``zstd`` when their libraries are installed)."""
    if _BOUND.get() is not None:
        request.headers["accept-encoding"] = ACCEPTED_ENCODINGS


class UpstreamSizeBound:
    """Response hook of the upstream client (installed once per client by :meth:`for_client`): bounds
    every answer read inside :func:`bounded_upstream` (module doc); answers outside one pass untouched."""

    @classmethod
    def for_client(cls, client: httpx2.AsyncClient) -> UpstreamSizeBound:
        hooks = client.event_hooks
        for hook in hooks.get("response", []):
            if isinstance(hook, cls):
                return hook
        bound = cls()
        client.event_hooks = {
            **hooks,
            "request": [*hooks.get("request", []), _ask_for_decodable_encodings],
            "response": [*hooks.get("response", []), bound],
        }
        return bound

    async def __call__(self, response: httpx2.Response) -> None:
        limit = _BOUND.get()
        if limit is None:
            return
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise UpstreamAnswerTooLarge(limit)
        encodings = [part.strip().lower() for part in response.headers.get("content-encoding", "").split(",")]
        encodings = [part for part in encodings if part and part != "identity"]
        if len(encodings) > 1 or (encodings and encodings[0] not in _ZLIB_WBITS):
            raise UpstreamAnswerTooLarge(limit, encoding=",".join(encodings))
        wbits = _ZLIB_WBITS[encodings[0]] if encodings else None
        if wbits is not None:
            del response.headers["content-encoding"]  # decoded here; the response must not decode again
        raw: Any = response.stream
        response.stream = _BoundedStream(raw, limit, wbits)
