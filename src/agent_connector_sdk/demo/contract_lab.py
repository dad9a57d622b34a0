"""The contract lab: one FastMCP server that exhibits the five failures the contract pipeline prevents.

=========================  ==========================================================================
failure                    where it lives in the lab
=========================  ==========================================================================
object promised, array     ``inventory_snapshot`` publishes an object ``outputSchema`` and returns an
returned                   array (the server's ``OutputSelfCheck`` withholds it); ``list_regions`` is
                           the honest twin: an array schema and an array result
``""`` cursor              ``empty_cursor_pages=True``: ``tools/list`` pages are chained by the cursors
                           ``""`` and ``"page-3"`` — a client that treats ``""`` as "end" misses tools
token mirrored into a      ``fetch_report`` annotates its ``api_token`` argument with ``x-mcp-header``;
header                     host admission rejects it as ``sensitive_header``, the others stay usable
Unicode routing value      ``route_shipment`` routes on ``Mcp-Param-Region``; ``"Zürich west"`` must
in a raw header            travel base64-wrapped, and the header gate refuses any disagreement
``production`` suggested   ``deploy_plan`` / ``deployments://{environment}/status`` complete
to an analyst              ``environment``; ``production`` needs the ``deploy:production`` scope, and
                           the ``production_rollback`` prompt (and so its completions) needs it too
=========================  ==========================================================================

Plus ``flaky_search`` (a tool's own failure → a conforming ``isError`` result), ``nested_route`` (an
``x-mcp-header`` under a nested object: rejected by the default *strict* admission profile, accepted by
``profile="spec"``), ``content_gallery`` (one block of each of the five content types) and the practice
tool ``search_evidence``: ``query``, a bounded ``limit``, a safe ``region`` routing header (Unicode
values travel base64-wrapped), unknown properties rejected; it returns an array of ``{uri, title,
score}`` with the compatibility text block and one ``resource_link`` per item. Restricted evidence
(``evidence:restricted`` scope) never reaches a caller without that scope — not in the output, not in
the completions of the ``cite_evidence`` prompt. ``contract_lab_app`` serves it through
``gated_http_app``; ``agent_connector_sdk.demo.lab_service`` serves it behind search with disclosure.
"""

from __future__ import annotations

import base64
import json
import logging
import struct
from collections.abc import Collection
from dataclasses import dataclass
from typing import Annotated, Any

import mcp_types
from fastmcp import FastMCP
from fastmcp.exceptions import FastMCPError, NotFoundError, ToolError
from fastmcp.server.auth import AuthProvider
from fastmcp.server.dependencies import get_access_token
from fastmcp.tools.base import RawStructuredToolResult, Tool, ToolResult
from fastmcp.utilities.authorization import require_scopes
from pydantic import BaseModel, Field

from agent_connector_sdk import __version__
from agent_connector_sdk.core.contracts import RateLimiter
from agent_connector_sdk.mcp import compat
from agent_connector_sdk.mcp.server import AuthorizedCompletions, Suggestion, gated_http_app, invalid_cursor

__all__ = [
    "ENVIRONMENTS",
    "EVIDENCE",
    "EVIDENCE_SCOPE",
    "PRODUCTION_SCOPE",
    "REGIONS",
    "Evidence",
    "contract_lab_app",
    "contract_lab_completions",
    "contract_lab_server",
    "visible_evidence",
]

REGIONS = ("eu-central", "eu-west", "us-east", "ap-south")
PRODUCTION_SCOPE = "deploy:production"
ENVIRONMENTS = ("development", "staging", "production")
_ENVIRONMENT_SCOPES: dict[str, str | None] = {
    "development": None,
    "staging": None,
    "production": PRODUCTION_SCOPE,
}
"""The scope each environment needs, for its completion *and* its status resource (one table, so a
resource never serves what its completion hides)."""
_OPEN_OBJECT = {"type": "object", "properties": {}}
EVIDENCE_SCOPE = "evidence:restricted"
"""Callers without this scope never see restricted evidence (tool output or completion)."""
MAX_EVIDENCE_LIMIT = 20


@dataclass(frozen=True, slots=True)
class Evidence:
    """One item the practice tool can find. ``restricted`` items need :data:`EVIDENCE_SCOPE`."""

    uri: str
    title: str
    region: str
    restricted: bool = False


EVIDENCE: tuple[Evidence, ...] = (
    Evidence("evidence://audit/2026-q2", "Quarterly access audit", "eu-central"),
    Evidence("evidence://incident/4711", "Incident 4711 timeline: Zürich west outage", "eu-central"),
    Evidence("evidence://postmortem/routing", "Post-mortem: header routing drift", "eu-west"),
    Evidence("evidence://contract/carrier", "Carrier contract (confidential)", "us-east", restricted=True),
    Evidence("evidence://payroll/2026", "Payroll extract (confidential)", "ap-south", restricted=True),
)

_EVIDENCE_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 200, "description": "Words to look for."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_EVIDENCE_LIMIT,
            "default": 5,
            "description": "At most this many items.",
        },
        "region": {
            "type": "string",
            "maxLength": 64,
            "x-mcp-header": "Region",
            "description": "Routing region (mirrored into Mcp-Param-Region; any Unicode text).",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}
_EVIDENCE_OUTPUT: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "uri": {"type": "string"},
            "title": {"type": "string"},
            "score": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "required": ["uri", "title", "score"],
        "additionalProperties": False,
    },
}


# The lab's tools that only read say so, through tools/list and through search alike: a host confirms
# only the tools that may write (route_shipment, nested_route carry no hints, so they "may write").
_READ_ONLY = mcp_types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)


class Route(BaseModel):
    region: str
    priority: int
    express: bool
    carrier: str


class _RawTool(Tool):
    """A tool whose result is given verbatim (FastMCP's function tools only return object content)."""

    payload: Any = None
    fails: bool = False

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        if self.fails:
            raise ToolError("search backend unavailable")
        text = mcp_types.TextContent(type="text", text=_json(self.payload))
        return RawStructuredToolResult(content=[text], structured_content=self.payload)


class _NotReadable(FastMCPError, NotFoundError):
    """A resource this caller may not read. FastMCP logs a ``FastMCPError`` at its own ``log_level``
    (here DEBUG: a routine refusal, not a server error) and answers a ``NotFoundError`` with the
    uniform -32602 "Resource not found" and ``data.uri``."""


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _caller_scopes() -> frozenset[str]:
    token = get_access_token()
    return frozenset(token.scopes) if token is not None else frozenset()


def visible_evidence(scopes: frozenset[str] | set[str]) -> list[Evidence]:
    """The evidence a caller holding ``scopes`` may see (restricted items need :data:`EVIDENCE_SCOPE`)."""
    return [item for item in EVIDENCE if not item.restricted or EVIDENCE_SCOPE in scopes]


def _score(item: Evidence, words: list[str]) -> float:
    text = f"{item.title} {item.uri}".casefold()
    hits = sum(1 for word in words if word in text)
    return round(hits / len(words), 3) if words else 0.0


class _EvidenceSearch(Tool):
    """``search_evidence``: the practice tool (see the module docstring)."""

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        words = [word.casefold() for word in str(arguments["query"]).split()]
        limit = int(arguments.get("limit", 5))
        # ``region`` only routes (gateways read Mcp-Param-Region); it does not filter. Authorization
        # comes first: restricted items are dropped before scoring, so nothing about them (not even how
        # many matched) reaches a caller without the scope.
        scored = [(item, _score(item, words)) for item in visible_evidence(_caller_scopes())]
        scored = sorted((pair for pair in scored if pair[1] > 0), key=lambda pair: (-pair[1], pair[0].uri))
        items = [{"uri": item.uri, "title": item.title, "score": score} for item, score in scored[:limit]]
        content: list[Any] = [mcp_types.TextContent(type="text", text=_json(items))]
        content.extend(
            mcp_types.ResourceLink(type="resource_link", uri=item["uri"], name=item["title"])
            for item in items
        )
        return RawStructuredToolResult(content=content, structured_content=items)


# A 1x1 transparent PNG and a 44-byte silent WAV header: real media, tiny.
_PNG_1X1 = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
    )
).decode("ascii")
# PCM WAV, mono, 8 kHz, 16-bit, zero samples: RIFF header, fmt chunk, empty data chunk.
_WAV_SILENT = base64.b64encode(
    b"RIFF"
    + struct.pack("<I", 36)
    + b"WAVEfmt "
    + struct.pack("<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16)
    + b"data"
    + struct.pack("<I", 0)
).decode("ascii")


class _ContentGallery(Tool):
    """``content_gallery``: one block of each of the five content types (no output schema)."""

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(
            content=[
                mcp_types.TextContent(type="text", text="one block of each content type follows"),
                mcp_types.ImageContent(type="image", data=_PNG_1X1, mime_type="image/png"),
                mcp_types.AudioContent(type="audio", data=_WAV_SILENT, mime_type="audio/wav"),
                mcp_types.ResourceLink(
                    type="resource_link", uri="deployments://staging/status", name="staging status"
                ),
                mcp_types.EmbeddedResource(
                    type="resource",
                    resource=mcp_types.TextResourceContents(
                        uri="deployments://development/status",
                        mime_type="application/json",
                        text=_json({"environment": "development", "healthy": True}),
                    ),
                ),
            ]
        )


def contract_lab_server(
    *,
    auth: AuthProvider | None = None,
    empty_cursor_pages: bool = False,
    list_page_size: int | None = None,
    name: str = "contract-lab",
) -> FastMCP[Any]:
    """Build the lab's FastMCP server (no gates; wrap it with ``gated_http_app``).

    ``empty_cursor_pages`` replaces FastMCP's listing with the ``""``-chained pages; ``list_page_size``
    turns on FastMCP's own pagination instead (do not combine them).
    """
    server: FastMCP[Any] = FastMCP(name, version=__version__, auth=auth, list_page_size=list_page_size)

    @server.tool
    def route_shipment(
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
        priority: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Priority"})] = 0,
        express: Annotated[bool, Field(json_schema_extra={"x-mcp-header": "Express"})] = False,
    ) -> Route:
        """Route a shipment; gateways route on the Mcp-Param-Region header."""
        return Route(region=region, priority=priority, express=express, carrier="lab-post")

    @server.tool(annotations=_READ_ONLY)
    def fetch_report(
        report_id: str,
        api_token: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Api-Token"})],
    ) -> str:
        """Fetch a report (mirrors its token into a header: hosts must refuse this descriptor)."""
        return f"report {report_id}"

    server.add_tool(
        _RawTool(
            name="list_regions",
            annotations=_READ_ONLY,
            description="Regions, as the array the output schema promises.",
            parameters=_OPEN_OBJECT,
            output_schema={"type": "array", "items": {"type": "string"}},
            payload=list(REGIONS),
        )
    )
    server.add_tool(
        _RawTool(
            name="inventory_snapshot",
            annotations=_READ_ONLY,
            description="Promises an object, returns an array (the server's output check withholds it).",
            parameters=_OPEN_OBJECT,
            output_schema={
                "type": "object",
                "properties": {"items": {"type": "array"}},
                "required": ["items"],
            },
            payload=[{"sku": "A-1", "count": 3}],
        )
    )
    server.add_tool(
        _RawTool(
            name="flaky_search",
            annotations=_READ_ONLY,
            description="Always fails; its failure must still conform to the array output schema.",
            parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
            output_schema={"type": "array", "items": {"type": "string"}},
            fails=True,
        )
    )
    server.add_tool(
        _RawTool(
            name="nested_route",
            description="x-mcp-header under a nested object: strict admission rejects, spec accepts.",
            parameters={
                "type": "object",
                "properties": {
                    "target": {
                        "type": "object",
                        "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
                    }
                },
            },
            payload={"ok": True},
            output_schema={"type": "object"},
        )
    )

    server.add_tool(
        _EvidenceSearch(
            name="search_evidence",
            annotations=_READ_ONLY,
            title="Search evidence",
            description="Practice tool: find evidence items; routes on Mcp-Param-Region.",
            parameters=_EVIDENCE_INPUT,
            output_schema=_EVIDENCE_OUTPUT,
        )
    )
    server.add_tool(
        _ContentGallery(
            name="content_gallery",
            annotations=_READ_ONLY,
            description="Returns one text, image, audio, resource_link and embedded resource block.",
            parameters=_OPEN_OBJECT,
        )
    )

    @server.prompt
    def cite_evidence(uri: str) -> str:
        """Cite one evidence item (its ``uri`` completes to the items this caller may see)."""
        return f"Cite {uri} and summarize what it shows."

    @server.prompt
    def deploy_plan(environment: str, service: str) -> str:
        """Plan a deployment of ``service`` to ``environment``."""
        return f"Plan the deployment of {service} to {environment}."

    @server.prompt(auth=require_scopes(PRODUCTION_SCOPE))
    def production_rollback(release: str) -> str:
        """Roll production back to ``release`` (only callers holding deploy:production see this prompt)."""
        return f"Roll production back to {release}."

    @server.resource("deployments://{environment}/status", mime_type="application/json")
    def deployment_status(environment: str) -> str:
        """The status of one deployment environment (production needs the deploy:production scope)."""
        # Only the known environments, each needing the scope its completion needs: a caller who is
        # not offered `production` by completion may not read it either.
        scope = _ENVIRONMENT_SCOPES.get(environment, "")
        if environment not in _ENVIRONMENT_SCOPES or (scope is not None and scope not in _caller_scopes()):
            # FastMCP answers the uniform "Resource not found" (-32602, data.uri) for this, never
            # "forbidden": a refusal must not confirm what exists.
            raise _NotReadable("no such environment for this caller", log_level=logging.DEBUG)
        return _json({"environment": environment, "healthy": True})

    if empty_cursor_pages:
        _page_tools_with_empty_cursor(server)
    return server


def contract_lab_completions(
    *, rate_limiter: RateLimiter | None = None, trusted_proxies: Collection[str] = ()
) -> AuthorizedCompletions:
    """The lab's completion provider: ``production`` only for callers holding ``deploy:production``.
    ``trusted_proxies`` (addresses or CIDR blocks) may name unauthenticated callers by X-Forwarded-For."""
    completions = AuthorizedCompletions(rate_limiter=rate_limiter, trusted_proxies=trusted_proxies)
    environments = [
        Suggestion(name, auth=require_scopes(scope) if scope is not None else None)
        for name, scope in _ENVIRONMENT_SCOPES.items()
    ]
    completions.prompt("deploy_plan", "environment", environments)
    completions.prompt(
        "cite_evidence",
        "uri",
        [
            Suggestion(item.uri, auth=require_scopes(EVIDENCE_SCOPE) if item.restricted else None)
            for item in EVIDENCE
        ],
    )
    completions.resource("deployments://{environment}/status", "environment", environments)
    # The prompt itself is guarded: callers who cannot see it get no suggestions for it at all.
    completions.prompt("production_rollback", "release", ["2026.07.1", "2026.07.2", "2026.08.0"])
    # Enough services to exercise the 100-value cap with a correct total/hasMore.
    completions.prompt("deploy_plan", "service", [f"service-{index:03d}" for index in range(150)])
    return completions


def contract_lab_app(
    *,
    auth: AuthProvider | None = None,
    rate_limiter: RateLimiter | None = None,
    empty_cursor_pages: bool = False,
    **http_app_kwargs: Any,
) -> Any:
    """The lab served through ``gated_http_app`` (header parity, argument validation, output check,
    authorized completion), with DNS-rebinding protection on for loopback binds: ``Host`` and ``Origin``
    must name the loopback interface unless ``allowed_hosts=[...]`` / ``allowed_origins=[...]`` (passed
    on to ``http_app``) allow more."""
    server = contract_lab_server(auth=auth, empty_cursor_pages=empty_cursor_pages)
    return gated_http_app(
        server, completions=contract_lab_completions(rate_limiter=rate_limiter), **http_app_kwargs
    )


def _page_tools_with_empty_cursor(server: FastMCP[Any]) -> None:
    """Serve ``tools/list`` in three pages chained by the cursors ``""`` and ``"page-3"``."""
    full_listing = compat.fastmcp_list_handler(server, "tools/list")
    chain: dict[str | None, tuple[slice, str | None]] = {
        None: (slice(0, 2), ""),
        "": (slice(2, 4), "page-3"),
        "page-3": (slice(4, None), None),
    }

    async def handler(ctx: Any, params: mcp_types.PaginatedRequestParams | None) -> mcp_types.ListToolsResult:
        cursor = params.cursor if params is not None else None
        if cursor not in chain:
            raise invalid_cursor()
        window, following = chain[cursor]
        listing: mcp_types.ListToolsResult = await full_listing(ctx, None)
        return listing.model_copy(update={"tools": listing.tools[window], "next_cursor": following})

    low_level = compat.low_level_server(server)
    low_level.add_request_handler("tools/list", mcp_types.PaginatedRequestParams, handler)
