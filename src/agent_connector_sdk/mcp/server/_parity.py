"""Header parity: the one checker of a ``tools/call``'s ``Mcp-Param-*`` headers against its body.

Why it exists: the ``mcp`` SDK validates these headers against a schema cache that FastMCP 4.2 fills
from ``tools/list``; a tool hidden by a search transform is never listed, so a mismatched header reaches
it with HTTP 200. :class:`HeaderParityGate` checks *every* tool a FastMCP server can run; a disagreement
is refused with JSON-RPC ``-32020`` (``data = {tool, header, category}``, names only), which the callers
(:mod:`._resolution` inside FastMCP's tool resolution, :mod:`.asgi` before the app for the
handshake-era transports) answer with HTTP 400.

This module knows nothing about FastMCP's dispatch or ASGI: it is given the tool (and, through a search
transform's ``call_tool`` proxy, the proxied tool with ``arguments.arguments``, see
:func:`unwrap_proxy`), the arguments and the raw header pairs, and returns a verdict. The proxied
tool's headers are optional (the spec asks a client for the headers of the tool it names, and the
proxy's schema annotates nothing), but each one sent must agree with the inner arguments. Each request
yields exactly one audit event, to the gate's callable :class:`~agent_connector_sdk.audit.AuditSink`;
events name headers and categories, never values.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any, Final

from fastmcp import FastMCP
from fastmcp.tools import Tool
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agent_connector_sdk.audit import AuditEvent, AuditSink, BoundedAuditSink
from agent_connector_sdk.core.contracts import MCP_PARAM_HEADER_PREFIX, validate_parameter_headers
from agent_connector_sdk.core.contracts.errors import AdmissionError, HeaderMismatch
from agent_connector_sdk.mcp import compat

__all__ = [
    "HeaderParityGate",
    "HeaderRefusal",
    "ProxiedCall",
    "gate_applies",
    "search_proxy_name",
    "unwrap_proxy",
]

_PARAM_PREFIX: Final = MCP_PARAM_HEADER_PREFIX.lower()

# Named as before the file moved: operators filter logs on this name.
_logger = logging.getLogger("agent_connector_sdk.mcp.server.parity")

HeaderRefusal = tuple[str, dict[str, Any]]
"""``(message, data)`` of a -32020 refusal; ``data`` is ``{tool, header, category}`` (names only)."""

ProxiedCall = tuple[str, Mapping[str, Any]]
"""``(target name, target arguments)`` of a call made through a search transform's ``call_tool`` proxy."""


class _LoggingAuditSink:
    """Default sink: a bounded in-memory record (``.recent``) plus this module's logger (JSON, so no name
    in an event can forge a log line)."""

    def __init__(self) -> None:
        self.recent = BoundedAuditSink()

    def __call__(self, event: AuditEvent, /) -> None:
        self.recent(event)
        level = logging.INFO if event.get("event") == "parameter_headers_refused" else logging.DEBUG
        if _logger.isEnabledFor(level):  # the dump costs more than the check itself; skip it when unread
            _logger.log(level, "header parity %s", json.dumps(dict(event), sort_keys=True))


def _proxy_names(server: FastMCP[Any]) -> list[str]:
    return [
        proxy
        for proxy in (compat.search_proxy_tool_name(transform) for transform in server.transforms)
        if proxy is not None
    ]


def search_proxy_name(server: FastMCP[Any]) -> str | None:
    """The name of ``server``'s (first) search ``call_tool`` proxy, or ``None`` without a search transform.

    A refusal of a direct call names it: a client that cannot send a hidden tool's headers calls the
    tool through the proxy instead, where they are not required.
    """
    names = _proxy_names(server)
    return names[0] if names else None


def unwrap_proxy(server: FastMCP[Any], name: str, arguments: Mapping[str, Any]) -> ProxiedCall | None:
    """The proxied call when ``name`` is a ``call_tool`` proxy of one of ``server``'s search transforms.

    ``None`` for any other tool, and for a proxy call whose ``name`` is not a string, whose
    ``arguments`` is not an object, or whose target is itself a proxy (the proxy refuses that itself).
    The one place that reads a proxy call's shape: both entry points use it.
    """
    proxies = frozenset(_proxy_names(server))
    if name not in proxies:
        return None
    target = arguments.get("name")
    inner = arguments.get("arguments") if arguments.get("arguments") is not None else {}
    if not isinstance(target, str) or not isinstance(inner, Mapping) or target in proxies:
        return None
    return target, inner


def gate_applies(headers: Iterable[tuple[str, str]]) -> bool:
    """Whether a call with these headers is subject to parity: Mcp-Param headers exist from 2026-07-28
    on; an older protocol's call is checked only when it carries one anyway (an intermediary may route
    on it, so it must still agree with the body)."""
    for name, value in headers:
        folded = name.lower()
        if folded.startswith(_PARAM_PREFIX) or (
            folded == "mcp-protocol-version" and value in MODERN_PROTOCOL_VERSIONS
        ):
            return True
    return False


class HeaderParityGate:
    """The one header-parity checker (see the module docstring).

    ``audit`` receives one event per checked request (default: a bounded record at ``.audit.recent``
    plus the module logger).
    """

    def __init__(self, *, audit: AuditSink | None = None) -> None:
        self.audit: AuditSink = _LoggingAuditSink() if audit is None else audit

    def check(
        self,
        tool: Tool,
        arguments: Mapping[str, Any],
        headers: list[tuple[str, str]],
        proxied: tuple[Tool, Mapping[str, Any]] | None = None,
        *,
        proxy_name: str | None = None,
    ) -> HeaderRefusal | None:
        """Check one ``tools/call`` of ``tool``, then (when it passes) the ``proxied`` tool with its
        arguments; emit one event (the verdict that decided) and return the refusal, if any.

        The proxied tool's headers are checked when sent but not required: the client computed them
        from the proxy's schema, which annotates nothing (the spec's rule; see
        ``validate_parameter_headers(require_headers=False)``). ``proxy_name``, the server's search
        proxy, is named in a direct call's ``missing`` refusal as the other way to call the tool.
        """
        events: list[AuditEvent] = []
        refusal = _tool_refusal(tool, arguments, headers, events)
        if refusal is None and proxied is not None:
            refusal = _tool_refusal(proxied[0], proxied[1], headers, events, require_headers=False)
            events[-1] = {**events[-1], "via": tool.name}
        elif refusal is not None and proxied is None and proxy_name not in (None, tool.name):
            message, data = refusal
            if data["category"] == "missing":
                refusal = (
                    f"{message}, or call the tool through {proxy_name!r} (which needs no Mcp-Param headers)",
                    data,
                )
        if events:
            self.audit(events[-1])
        return refusal


def _tool_refusal(
    tool: Tool,
    arguments: Mapping[str, Any],
    headers: list[tuple[str, str]],
    events: list[AuditEvent],
    *,
    require_headers: bool = True,
) -> HeaderRefusal | None:
    """The pure verdict of one tool (``contracts._headers.validate_parameter_headers``); its event goes
    to ``events.append`` (a local sink: :meth:`HeaderParityGate.check` passes only the deciding event on
    to the gate's sink)."""
    descriptor = {"name": tool.name, "inputSchema": tool.parameters}
    try:
        validate_parameter_headers(
            descriptor, arguments, headers, audit=events.append, require_headers=require_headers
        )
    except HeaderMismatch as mismatch:
        return mismatch.message, {"tool": tool.name, "header": mismatch.header, "category": mismatch.category}
    except AdmissionError as invalid:
        # Fail closed: the tool's own annotations are invalid, so no header can be checked against
        # them (conforming clients drop such a tool; only a non-conforming caller gets here).
        return invalid.message, {"tool": tool.name, "header": None, "category": invalid.category}
    return None
