"""Send computed ``Mcp-Param-*`` headers on exactly one ``tools/call`` POST of a ``fastmcp.Client``.

Both host-side adapters (``ContractClient`` and ``SchemaDisclosureConsumer``) compute the headers
themselves with ``contracts.headers.build_parameter_headers`` — our stricter encoding, one header per
annotation — and need them on the HTTP request that carries *this* call and on no other. The ``mcp``
SDK cannot do it for them: it mirrors ``x-mcp-header`` only for tools it listed itself (a search
transform hides them) and with the spec's looser encoding.

The technique, owned here so the two adapters cannot drift:

1. :class:`ParamHeaderChannel` wraps the Streamable HTTP transport's ``httpx_client_factory`` so every
   HTTP client the transport builds (on connect) carries one ``httpx2`` request hook of this channel;
2. :meth:`ParamHeaderChannel.prepare` is the Invoke step both adapters run before sending: it
   validates the arguments (schema, and that they are JSON data at all), builds the headers and
   checks they can be delivered;
3. :meth:`ParamHeaderChannel.sending` puts the headers in a context variable for the duration of one
   call. The SDK's write stream runs each POST in the sender's context, so the value reaches exactly
   this task's POST and no other task's;
4. the hook acts only for its own channel and only on a POST whose JSON-RPC body is a ``tools/call`` of
   the named tool (header routing is not trusted): it deletes every ``Mcp-Param-*`` header already on
   the request (e.g. the SDK's own mirroring) and sets ours, once each.

Other transports (in-memory, stdio) carry no HTTP headers; the channel is then inert.

Fails closed: when the transport is Streamable HTTP, the client is connected and its HTTP client was
not built by our factory (the channel was created after connecting), headers cannot be delivered, and
:meth:`~ParamHeaderChannel.require_deliverable` (run by ``prepare`` and ``sending``) refuses *before*
anything is sent, instead of letting the call travel without them.

Also here: what a transport failure looks like through the SDK (:data:`TRANSPORT_EXCEPTIONS`,
:func:`is_local_transport_error`), shared by both adapters' error translation.
"""

from __future__ import annotations

import contextvars
import json
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, cast

import anyio
import fastmcp
import httpx2
import mcp_types
from fastmcp.client.transports.http import StreamableHttpTransport
from mcp.shared._httpx_utils import McpHttpClientFactory, create_mcp_http_client
from mcp.shared.exceptions import MCPError

from agent_connector_sdk.mcp.contracts.errors import ArgumentError, HeaderValueError
from agent_connector_sdk.mcp.contracts.headers import build_parameter_headers
from agent_connector_sdk.mcp.contracts.pointers import json_pointer
from agent_connector_sdk.mcp.contracts.validation import validate_arguments

__all__ = [
    "TRANSPORT_EXCEPTIONS",
    "ParamHeaderChannel",
    "is_local_transport_error",
]

_MCP_PARAM_PREFIX: Final = "mcp-param-"

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


@dataclass(frozen=True)
class _Pending:
    channel: ParamHeaderChannel
    tool: str
    headers: Mapping[str, str]


_PENDING: contextvars.ContextVar[_Pending | None] = contextvars.ContextVar(
    "agent_connector_sdk_param_headers", default=None
)


_MAX_ARGUMENT_DEPTH: Final = 256


def _require_json_data(value: Any) -> None:
    """Refuse anything in ``value`` that is not JSON data (iteratively: no recursion limit to hit)."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if len(path) > _MAX_ARGUMENT_DEPTH:
            raise ArgumentError(
                "invalid_arguments", "arguments are nested too deeply", path=json_pointer(path)
            )
        if item is None or isinstance(item, str | bool | int):
            continue
        if isinstance(item, float):
            if math.isfinite(item):
                continue
        elif isinstance(item, dict):
            if all(isinstance(key, str) for key in item):
                stack.extend((member, (*path, key)) for key, member in item.items())
                continue
        elif isinstance(item, list):
            stack.extend((member, (*path, index)) for index, member in enumerate(item))
            continue
        # Only the location and the Python type name: never the value.
        raise ArgumentError(
            "invalid_arguments",
            f"value at '{json_pointer(path)}' is not JSON data ({type(item).__name__})",
            path=json_pointer(path),
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

    def prepare(
        self,
        descriptor: Mapping[str, Any],
        arguments: Mapping[str, Any] | None,
        audit: list[dict[str, Any]],
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """The Invoke gate both adapters run before sending: ``(arguments as a dict, headers)``.

        Refuses with the contracts' typed errors, before anything is sent: arguments that are not a
        JSON object or fail ``descriptor``'s input schema (``validate_arguments``); arguments holding
        anything that is not JSON data — a non-string key, a tuple, a set, bytes, a non-finite float,
        an arbitrary object (``ArgumentError('invalid_arguments')`` with the path; otherwise the SDK
        would silently rewrite it, e.g. NaN to ``null``, or fail untyped while serializing);
        annotated values that cannot become headers (``build_parameter_headers``, which appends its
        audit event — names only — to ``audit``); headers this channel cannot deliver
        (:meth:`require_deliverable`).
        """
        validate_arguments(descriptor, arguments)
        args = dict(arguments or {})
        _require_json_data(args)
        headers = build_parameter_headers(descriptor, args, audit)
        self.require_deliverable(headers)
        return args, headers

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

        Checks :meth:`require_deliverable` first (callers that audit refusals call it themselves,
        earlier).
        """
        self.require_deliverable(headers)
        token = _PENDING.set(_Pending(self, tool, dict(headers)))
        try:
            yield
        finally:
            _PENDING.reset(token)

    def _wrap_factory(self, transport: StreamableHttpTransport) -> None:
        original = transport.httpx_client_factory
        verify_factory = transport._make_verify_factory() if original is None else None

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
            # Mirrors the transport's own choice: its factory, else its verify factory, else the SDK's
            # default (the latter two set follow_redirects themselves and do not take the keyword).
            if original is not None:
                http_client = original(**kwargs)
            else:
                kwargs.pop("follow_redirects", None)
                http_client = (verify_factory or create_mcp_http_client)(**kwargs)
            http_client.event_hooks.setdefault("request", []).append(stamp_param_headers)
            self._clients_built += 1
            return http_client

        transport.httpx_client_factory = cast(McpHttpClientFactory, factory)
