"""FastMCP adapter that serves schema disclosures behind a search transform.

Intended use (the README shows the same)::

    search = RegexSearchTransform(search_result_serializer=describe_schema_tools)
    server.add_transform(search)
    register_schema_resources(server, search, disclosures)   # disclosures: alias -> SchemaDisclosure

* :func:`describe_schema_tools` is a FastMCP ``SearchResultSerializer``: each matched tool becomes a
  bounded ``schema-navigation`` entry (digests, fragment count, manifest URI, argument summary), never
  its schemas.
* :func:`register_schema_resources` registers the manifest and fragment resource templates of the
  wire contract. **Every read re-authorizes** through ``catalog.get_tool_catalog(ctx)`` (middleware,
  visibility, session rules and component auth all apply to the caller) and re-hashes the visible
  tool's current schemas; policy lives in :mod:`agent_connector_sdk.mcp.schema_disclosure_navigation`.

Why a ``ResourceTemplate`` subclass rather than ``@server.resource``: FastMCP's template matching drops
a ``#fragment``, splits off the query string and percent-decodes the captured values before a function
template sees them, so a function handler could not tell ``…/manifest?x`` or ``…/fragments/%31`` from
the canonical URI. ``_read`` receives the URI exactly as the request carried it (``resources/read``
params are a plain ``str`` in the ``mcp`` SDK, not a normalized URL), which is what we compare.

Every refusal — unknown, disabled, unauthorized, stale, non-canonical or malformed — is the same
JSON-RPC error FastMCP itself returns for a URI no resource matches (``-32602``,
``Resource not found: '<uri>'``, ``data.uri``), so a guessed URI is no oracle. Only the refusal
category is logged. Nothing here creates credentials, HTTP clients or sessions.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from fastmcp import FastMCP
from fastmcp.exceptions import FastMCPError
from fastmcp.resources.base import ResourceContent, ResourceResult
from fastmcp.resources.template import ResourceTemplate
from fastmcp.server.dependencies import get_context
from fastmcp.server.transforms.catalog import CatalogTransform
from fastmcp.tools.base import Tool
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import PrivateAttr

from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.mcp.schema_disclosure import (
    FRAGMENT_URI_TEMPLATE,
    MANIFEST_URI_TEMPLATE,
    SchemaDisclosure,
)
from agent_connector_sdk.mcp.schema_disclosure_navigation import (
    DisclosureReadRefused,
    VerifiedSchemaSnapshots,
    VisibleToolSchemas,
    authorize_disclosure_read,
    build_navigation_entry,
    parse_disclosure_uri,
)

__all__ = [
    "SchemaDisclosureRegistry",
    "SchemaResourceRegistrationError",
    "describe_schema_tools",
    "disclosure_not_found",
    "register_schema_resources",
]

logger = logging.getLogger(__name__)

_MIME_TYPE: Final = "application/json"

RegistrationCategory = Literal["foreign_catalog", "invalid_disclosure", "alias_mismatch", "unknown_tool"]


class SchemaResourceRegistrationError(AgentConnectorError, ValueError):
    """``register_schema_resources`` (or a registry update) was given mismatched input.

    ``category``: ``foreign_catalog`` (the catalog is not a transform attached to this server),
    ``invalid_disclosure`` (a value is not a ``SchemaDisclosure``), ``alias_mismatch`` (a disclosure
    keyed under another alias than its manifest's), ``unknown_tool`` (no tool of that name on the
    server).
    """

    category: RegistrationCategory

    def __init__(self, category: RegistrationCategory, message: str) -> None:
        super().__init__(category, message, text=f"{category}: {message}")


def _title(tool: Tool) -> str | None:
    if tool.title:
        return tool.title
    if tool.annotations is not None and tool.annotations.title:
        return tool.annotations.title
    return None


def describe_schema_tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """FastMCP ``SearchResultSerializer``: one ``schema-navigation`` entry per matched tool.

    The search transform hands over the caller's visible tools with the schemas as the wire shows them
    (after FastMCP's listing middleware, e.g. ``$ref`` inlining), and the entries' digests are computed
    from exactly those — the same objects every disclosure read re-hashes. Returns a list of dicts,
    which is what the search tool's output schema (``str | list[dict]``) admits.
    """
    return [
        build_navigation_entry(
            name=tool.name,
            title=_title(tool),
            description=tool.description,
            input_schema=tool.parameters,
            output_schema=tool.output_schema,
        )
        for tool in tools
    ]


class _DisclosureNotFound(FastMCPError, MCPError):
    """The refusal raised from a read handler.

    An ``MCPError`` so FastMCP passes code, message and data to the wire unchanged; also a
    ``FastMCPError`` with a DEBUG ``log_level`` so FastMCP logs it quietly (a bare ``MCPError`` from a
    handler is logged with a full traceback at ERROR, and guessed URIs must not flood the logs).
    """

    def __init__(self, uri: str) -> None:
        MCPError.__init__(self, INVALID_PARAMS, f"Resource not found: {uri!r}", {"uri": uri})
        self.log_level = logging.DEBUG


def disclosure_not_found(uri: str) -> MCPError:
    """The uniform refusal: byte for byte what FastMCP answers for a URI no resource matches
    (``-32602``, ``Resource not found: '<uri>'``, ``data.uri``)."""
    return _DisclosureNotFound(uri)


class SchemaDisclosureRegistry:
    """The disclosures one server serves, keyed by alias. Returned by :func:`register_schema_resources`.

    ``replace`` publishes a new disclosure after a tool's schema changed (old URIs stop reading at
    once, because reads compare against the tool's current schemas anyway); ``remove`` withdraws one.
    Both apply the registration checks.
    """

    def __init__(self, server: FastMCP[Any], catalog: CatalogTransform) -> None:
        self._server = server
        self._catalog = catalog
        self._disclosures: dict[str, SchemaDisclosure] = {}
        self._snapshots = VerifiedSchemaSnapshots()

    @property
    def catalog(self) -> CatalogTransform:
        return self._catalog

    def aliases(self) -> frozenset[str]:
        return frozenset(self._disclosures)

    def get(self, alias: str) -> SchemaDisclosure | None:
        return self._disclosures.get(alias)

    def replace(self, alias: str, disclosure: SchemaDisclosure) -> None:
        self._admit({alias: disclosure})

    def remove(self, alias: str) -> None:
        self._disclosures.pop(alias, None)
        self._snapshots.forget(alias)

    def _admit(self, disclosures: Mapping[str, SchemaDisclosure]) -> None:
        for alias, disclosure in disclosures.items():
            if not isinstance(disclosure, SchemaDisclosure):
                raise SchemaResourceRegistrationError("invalid_disclosure", "values must be SchemaDisclosure")
            if disclosure.manifest.alias != alias:
                raise SchemaResourceRegistrationError(
                    "alias_mismatch", f"disclosure for {disclosure.manifest.alias!r} is keyed under {alias!r}"
                )
        missing = sorted(set(disclosures) - _server_tool_names(self._server, disclosures.keys()))
        if missing:
            raise SchemaResourceRegistrationError(
                "unknown_tool", f"the server has no tool named {missing[0]!r}"
            )
        self._disclosures.update(disclosures)

    async def read(self, uri: str) -> str:
        """Authorize and serve one read for the current request's caller, or raise the uniform refusal."""
        try:
            # Always resolve the caller's catalog first, whatever the URI: an unknown alias and an
            # unauthorized one then cost the same work, so timing does not reveal which aliases exist.
            visible = await self._catalog.get_tool_catalog(get_context())
            tool = _tool_named(visible, uri)
            return authorize_disclosure_read(
                uri, disclosures=self._disclosures, visible_tool=tool, snapshots=self._snapshots
            )
        except DisclosureReadRefused as refusal:
            logger.info("schema disclosure read refused: %s", refusal.category)
            raise disclosure_not_found(uri) from None


def _tool_named(tools: Sequence[Tool], uri: str) -> VisibleToolSchemas | None:
    """The visible tool whose exact name is the URI's alias segment (cheap prefix split, policy re-checks)."""
    address = parse_disclosure_uri(uri)
    if address is None:
        return None
    for tool in tools:
        if tool.name == address.alias:
            return VisibleToolSchemas(tool.name, tool.parameters, tool.output_schema)
    return None


def _run_coroutine_blocking(coroutine: Any) -> Any:
    """Run a coroutine to completion from sync code, also when the caller is inside an event loop.

    Registration is synchronous (the intended one-liner has no ``await``) but FastMCP's provider lookups
    are coroutines; inside a running loop they run on a private loop in a helper thread.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    outcome: dict[str, Any] = {}

    def runner() -> None:
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as error:  # re-raised in the calling thread
            outcome["error"] = error

    thread = threading.Thread(target=runner, name="schema-disclosure-registration")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def _server_tool_names(server: FastMCP[Any], wanted: Any) -> set[str]:
    """Which of ``wanted`` names a tool any of the server's providers has (before auth and visibility:
    registration is about the server's inventory, not about any caller)."""
    names = list(wanted)

    async def lookup() -> set[str]:
        found: set[str] = set()
        for provider in server.providers:
            for name in names:
                if name not in found and await provider.get_tool(name) is not None:
                    found.add(name)
        return found

    result: set[str] = _run_coroutine_blocking(lookup())
    return result


class _DisclosureTemplate(ResourceTemplate):
    """A resource template whose reads go through the registry with the raw, unnormalized URI."""

    _registry: SchemaDisclosureRegistry | None = PrivateAttr(default=None)

    def bind(self, registry: SchemaDisclosureRegistry) -> _DisclosureTemplate:
        self._registry = registry
        return self

    async def _read(self, uri: str, params: dict[str, Any]) -> ResourceResult:
        registry = self._registry
        if registry is None:  # never bound: fail closed with the uniform refusal
            raise disclosure_not_found(uri)
        body = await registry.read(uri)
        return ResourceResult(contents=[ResourceContent(body, mime_type=_MIME_TYPE)])


def _template(
    uri_template: str, name: str, description: str, registry: SchemaDisclosureRegistry
) -> ResourceTemplate:
    params = [part[1:-1] for part in uri_template.split("/") if part.startswith("{")]
    template = _DisclosureTemplate(
        uri_template=uri_template,
        name=name,
        description=description,
        mime_type=_MIME_TYPE,
        parameters={
            "type": "object",
            "properties": {param: {"type": "string"} for param in params},
            "required": params,
        },
        # Our own check is stricter than FastMCP's path-traversal screen, and that screen would refuse
        # the legal tool names "." and ".." with a different code path.
        security=None,
    )
    return template.bind(registry)


def register_schema_resources(
    server: FastMCP[Any],
    catalog: CatalogTransform,
    disclosures: Mapping[str, SchemaDisclosure],
) -> SchemaDisclosureRegistry:
    """Register the manifest and fragment resource templates for ``disclosures`` (alias → disclosure).

    ``catalog`` must be the search (catalog) transform attached to ``server``: reads resolve the caller's
    visible tools through ``catalog.get_tool_catalog(ctx)``. Refuses mismatched input with
    :class:`SchemaResourceRegistrationError` (a foreign catalog, a disclosure keyed under another alias,
    a disclosure for a tool the server does not have). Returns the live registry.
    """
    if not isinstance(catalog, CatalogTransform) or not any(t is catalog for t in server.transforms):
        raise SchemaResourceRegistrationError(
            "foreign_catalog", "catalog is not a transform attached to this server"
        )
    registry = SchemaDisclosureRegistry(server, catalog)
    registry._admit(disclosures)
    server.add_template(
        _template(
            MANIFEST_URI_TEMPLATE,
            "schema-disclosure-manifest",
            "Manifest of a tool's disclosed schemas (identity, digests, fragment count).",
            registry,
        )
    )
    server.add_template(
        _template(
            FRAGMENT_URI_TEMPLATE,
            "schema-disclosure-fragment",
            "One bounded fragment of a tool's canonical schema document.",
            registry,
        )
    )
    return registry
