"""``serve``'s assembly: from the settings a person chose to the gated app and the words announcing it.

The command (:func:`agent_connector_sdk.cli.app.serve`) parses and checks what needs no server stack
(ports, which options go together, a readable document); :func:`request_bounds` checks the rest and
refuses a bind that would serve without authentication to anyone who can reach it;
:func:`build_served_app` builds the contract lab or the OpenAPI document's tools (alone, or as one
replica sharing state). Running it is :mod:`agent_connector_sdk.serving.process`'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from agent_connector_sdk.connectors import DEFAULT_MAX_UPSTREAM_BYTES, OpenAPISource
from agent_connector_sdk.mcp.server import RequestBounds
from agent_connector_sdk.serving.errors import ServingError
from agent_connector_sdk.serving.process import open_bind_refusal

if TYPE_CHECKING:
    # A type only: the OpenAPI assembly loads when a document is served, not for the lab.
    from agent_connector_sdk.serving.openapi_app import ToolAuth

__all__ = ["BuiltLab", "ServeSettings", "ServedApp", "ServedParts", "build_served_app", "request_bounds"]


@dataclass(frozen=True, kw_only=True)
class ServeSettings:
    """What to serve and how (``serve``'s options, one field each)."""

    openapi: Path | None = None
    upstream: str | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    no_auth: bool = False
    state: str | None = None
    replica_id: str | None = None
    upstream_errors: Literal["generic", "echo"] = "generic"
    auth_config: Path | None = None
    trusted_proxies: list[str] | None = None
    read_timeout: float = 10.0
    max_in_flight: int = 64
    max_in_flight_per_caller: int = 8
    max_upstream_bytes: int = DEFAULT_MAX_UPSTREAM_BYTES
    allow_duplicate_operation_ids: bool = False
    strict_refs: bool = False
    insecure_open_bind: bool = False

    @property
    def unauthenticated(self) -> bool:
        """The lab with ``--no-auth``, or a document without ``--auth-config``."""
        if self.openapi is None:
            return self.no_auth
        return self.auth_config is None


@dataclass(frozen=True)
class ServedApp:
    """The ASGI app, and what it serves in words (``serving … at URL``)."""

    app: Any
    what: str


def request_bounds(settings: ServeSettings) -> RequestBounds:
    """The gates' request bounds, after the checks that need the server stack; also refuses a bind the
    settings do not make safe (public demo tokens, or no authentication, on a non-loopback host)."""
    from agent_connector_sdk.mcp.server import trusted_networks

    for proxy in settings.trusted_proxies or ():
        try:
            trusted_networks([proxy])
        except ValueError:
            shown = json.dumps(proxy)[:80]
            raise ServingError(f"--trusted-proxies {shown} is not an address or CIDR block") from None
    try:
        bounds = RequestBounds(
            max_in_flight=settings.max_in_flight,
            max_in_flight_per_caller=settings.max_in_flight_per_caller,
            body_timeout_seconds=settings.read_timeout,
            trusted_proxies=tuple(settings.trusted_proxies or ()),
        )
    except ValueError as error:  # e.g. "max_in_flight must be a positive integer"
        raise ServingError(f"--{str(error).replace('_', '-')}") from None
    if settings.upstream is not None:
        parts = urlsplit(settings.upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ServingError(f"--upstream {json.dumps(settings.upstream)[:80]} is not an http(s) URL")
    refusal = bind_refusal(settings)
    if refusal is not None:
        raise ServingError(refusal)
    return bounds


def bind_refusal(settings: ServeSettings) -> str | None:
    """:func:`~agent_connector_sdk.serving.process.open_bind_refusal` for these settings."""
    return open_bind_refusal(
        settings.host,
        lab=settings.openapi is None,
        unauthenticated=settings.unauthenticated,
        insecure_open_bind=settings.insecure_open_bind,
        openapi=settings.openapi is not None,
    )


@dataclass(frozen=True)
class ServedParts:
    """What ``serve`` composes from the floors above the assemblies, passed in by the command line so
    this assembly depends on neither: the contract lab (``demo``) and the ``--auth-config`` reader (the
    gateway's JWT settings; it raises :class:`ServingError` naming the option). ``load_document`` reads
    ``--openapi`` (the CLI's reader: its refusals name the file)."""

    load_document: Callable[[str], OpenAPISource]
    build_lab: Callable[..., BuiltLab]
    load_auth: Callable[[Path], ToolAuth]


@dataclass(frozen=True)
class BuiltLab:
    """The contract lab's app, its demo bearer tokens (analyst, operator) and its pinned tools."""

    app: Any
    tokens: tuple[str, str]
    pinned_tools: frozenset[str]


def build_served_app(settings: ServeSettings, bounds: RequestBounds, parts: ServedParts) -> ServedApp:
    """The contract lab or the OpenAPI document's tools, alone or as one replica sharing ``--state``
    (default ``$AGENT_CONNECTOR_STATE``); every refusal is one :class:`ServingError` line."""
    from agent_connector_sdk.state import StateConfigError, state_url_from_env

    shared = settings.state if settings.state is not None else state_url_from_env()
    try:
        if settings.openapi is not None:
            document = parts.load_document(str(settings.openapi))
            auth = parts.load_auth(settings.auth_config) if settings.auth_config is not None else None
            return _openapi_app(settings, document, shared, bounds, auth)
        lab = parts.build_lab(
            demo_tokens=not settings.no_auth,
            state=shared,
            replica_id=settings.replica_id,
            trusted_proxies=bounds.trusted_proxies,
            request_bounds=bounds,
        )
    except StateConfigError as error:
        raise ServingError(f"--state: {error.message}") from None
    except ValueError as error:  # build_replica_app's own argument checks (e.g. --replica-id)
        raise ServingError(str(error)) from None
    what = f"{_lab_tool_count(lab.app, lab.pinned_tools)} tools of the contract lab behind search"
    if not settings.no_auth:
        analyst, operator = lab.tokens
        what += f" (demo bearer tokens: analyst {analyst}, operator {operator})"
    return ServedApp(lab.app, what)


def _lab_tool_count(app: Any, pinned: frozenset[str]) -> int:
    """The lab's tools: those pinned in its plain listing and those behind search (each disclosed)."""
    from agent_connector_sdk.mcp.schema_disclosure_provider import SchemaDisclosureRegistry

    server = getattr(app, "app", app).state.fastmcp_server  # a replica wraps the gated app
    registry = SchemaDisclosureRegistry.of(server)
    return len(pinned | (registry.aliases() if registry is not None else frozenset()))


def _openapi_app(
    settings: ServeSettings,
    document: OpenAPISource,
    shared: str | None,
    bounds: RequestBounds,
    auth: ToolAuth | None,
) -> ServedApp:
    from agent_connector_sdk.serving.openapi_app import build_openapi_app
    from agent_connector_sdk.serving.process import built_to_last

    with built_to_last():  # ~25 % of a large document's start-up was the collector's
        app, tools = build_openapi_app(
            document,
            upstream=settings.upstream,
            state=shared,
            replica_id=settings.replica_id,
            upstream_errors=settings.upstream_errors,
            request_bounds=bounds,
            auth=auth,
            max_upstream_bytes=settings.max_upstream_bytes,
            allow_duplicate_operation_ids=settings.allow_duplicate_operation_ids,
            strict_refs=settings.strict_refs,
        )
    return ServedApp(app, f"{tools:,} OpenAPI tool{'' if tools == 1 else 's'} behind search")
