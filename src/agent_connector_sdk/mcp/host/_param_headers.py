"""Deliver computed ``Mcp-Param-*`` headers on exactly one ``tools/call`` POST of a ``fastmcp.Client``.

The host core computes the headers itself (``contracts._headers.parameter_headers``: our stricter
encoding, one header per annotation) and needs them on the HTTP request that carries *this* call and
on no other. The ``mcp`` SDK cannot do it: it mirrors ``x-mcp-header`` only for tools it listed itself
(a search transform hides them) and with the spec's looser encoding.

The technique:

1. :class:`ParamHeaderChannel` wraps the Streamable HTTP transport's ``httpx_client_factory`` so every
   HTTP client the transport builds (on connect) carries one ``httpx2`` request hook of this channel;
2. :meth:`ParamHeaderChannel.sending` puts the headers in a context variable for the duration of one
   call. The SDK's write stream runs each POST in the sender's context, so the value reaches exactly
   this task's POST and no other task's;
3. the hook acts only for its own channel and only on a POST whose JSON-RPC body is a ``tools/call`` of
   the named tool (header routing is not trusted): it deletes every ``Mcp-Param-*`` header already on
   the request (e.g. the SDK's own mirroring) and sets ours, once each.

Other transports (in-memory, stdio) carry no HTTP headers; the channel is then inert, and the host
reports its header gates as not applicable.

Fails closed: when the transport is Streamable HTTP, the client is connected and its HTTP client was
not built by our factory (the channel was created after connecting), headers cannot be delivered, and
:meth:`~ParamHeaderChannel.require_deliverable` refuses *before* anything is sent.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, cast

import fastmcp
import httpx2
from fastmcp.client.transports.http import StreamableHttpTransport

from agent_connector_sdk.core.contracts.errors import HeaderValueError
from agent_connector_sdk.mcp.compat import McpHttpClientFactory, transport_client_factory

__all__ = [
    "ParamHeaderChannel",
]

_MCP_PARAM_PREFIX: Final = "mcp-param-"


@dataclass(frozen=True)
class _Pending:
    channel: ParamHeaderChannel
    tool: str
    headers: Mapping[str, str]


_PENDING: contextvars.ContextVar[_Pending | None] = contextvars.ContextVar(
    "agent_connector_sdk_param_headers", default=None
)


def _is_tools_call_for(request: httpx2.Request, tool: str) -> bool:
    """True when this POST's JSON-RPC body is a ``tools/call`` of ``tool``."""
    if request.method != "POST":
        return False
    try:
        body = json.loads(request.content)
    except (ValueError, RecursionError, httpx2.RequestNotRead):
        return False
    if not isinstance(body, dict) or body.get("method") != "tools/call":
        return False
    params = body.get("params")
    return isinstance(params, dict) and params.get("name") == tool


class ParamHeaderChannel:
    """Per-call ``Mcp-Param-*`` headers for one ``fastmcp.Client`` (see the module docstring).

    Create it before the client connects: the hook lives in the HTTP client the transport builds on
    connect. Several channels may share one client; each hook serves only its own channel's calls.
    """

    def __init__(self, client: fastmcp.Client[Any]) -> None:
        self._client = client
        self._clients_built = 0
        transport = client.transport
        self._http = isinstance(transport, StreamableHttpTransport)
        if isinstance(transport, StreamableHttpTransport):
            self._wrap_factory(transport)

    @property
    def carries_headers(self) -> bool:
        """True when the client's transport is Streamable HTTP (other transports have no headers)."""
        return self._http

    def require_deliverable(self, headers: Mapping[str, str]) -> None:
        """Refuse, before anything is sent, headers this channel could not put on the wire.

        Raises ``HeaderValueError('undeliverable')`` (Invoke gate) when ``headers`` is non-empty, the
        transport is Streamable HTTP and the connected client's HTTP client was not built by our
        factory (the channel was created after connecting), so the call would travel without them.
        """
        if headers and self._http and self._clients_built == 0 and self._client.is_connected():
            raise HeaderValueError(
                "undeliverable",
                "Mcp-Param-* headers cannot be delivered: the client connected before the header hook "
                "was installed",
            )

    @contextmanager
    def sending(self, tool: str, headers: Mapping[str, str]) -> Iterator[None]:
        """Within this block, the ``tools/call`` POST of ``tool`` from this task carries ``headers``.

        Checks :meth:`require_deliverable` first (the host core checks it earlier, before auditing).
        """
        self.require_deliverable(headers)
        token = _PENDING.set(_Pending(self, tool, dict(headers)))
        try:
            yield
        finally:
            _PENDING.reset(token)

    def _wrap_factory(self, transport: StreamableHttpTransport) -> None:
        build = transport_client_factory(transport)

        async def stamp_param_headers(request: httpx2.Request) -> None:
            pending = _PENDING.get()
            if pending is None or pending.channel is not self:
                return
            if not _is_tools_call_for(request, pending.tool):
                return
            # Whatever stamped Mcp-Param-* before us (the SDK's own x-mcp-header mirroring) is
            # replaced: one header per annotation, encoded by our stricter codec.
            for existing in [key for key in request.headers if key.lower().startswith(_MCP_PARAM_PREFIX)]:
                del request.headers[existing]
            for name, value in pending.headers.items():
                request.headers[name] = value

        def factory(**kwargs: Any) -> httpx2.AsyncClient:
            http_client: httpx2.AsyncClient = build(**kwargs)  # the transport's own choice
            http_client.event_hooks.setdefault("request", []).append(stamp_param_headers)
            self._clients_built += 1
            return http_client

        transport.httpx_client_factory = cast(McpHttpClientFactory, factory)
