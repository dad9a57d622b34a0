"""OpenAPI document -> FastMCP server, and each of its tools -> a schema disclosure.

This adapter is deliberately thin: FastMCP's own OpenAPI support (``FastMCP.from_openapi`` /
``OpenAPIProvider``) turns every operation into a tool, names it, builds its input schema (parameters
plus request body) and its output schema (the 2xx JSON response; non-object responses are wrapped by
FastMCP under ``result`` with ``x-fastmcp-wrap-result``). Nothing here converts OpenAPI to JSON Schema.

What this module adds:

* the mapping from each registered tool name (the *alias*) back to the operation it came from,
  recorded through FastMCP's public ``mcp_component_fn`` hook, so the alias is by construction the
  name FastMCP registered (slugged, truncated to 56 characters, de-duplicated with ``_2``...);
* the tools' schemas read from a real ``tools/list`` over an in-memory MCP session, i.e. exactly the
  form the wire shows (after FastMCP's listing middleware), which is what disclosures must hash;
* :func:`build_tool_disclosures`, ``alias -> SchemaDisclosure`` for every operation tool;
* tool annotations from the HTTP method (:func:`http_method_annotations`): hosts must confirm a tool
  that may write, so a GET must say it is read-only and a DELETE that it is destructive.
* an **upstream header policy** (:class:`UpstreamHeaderPolicy`, a request hook on the upstream client):
  FastMCP's OpenAPI tools copy the MCP caller's HTTP headers onto every upstream request (all but a few
  it strips). The policy sends upstream only what is addressed to that API: the headers the matched
  operation declares (``in: header`` parameters, filled from the call's arguments), the upstream
  client's own configured headers (e.g. the operator's ``Authorization``), what HTTP framing needs
  (``host``, ``content-type``, ``content-length``, ``transfer-encoding``), and the documented
  :data:`FORWARDED_CALLER_HEADERS` allow-list (tracing and language). Everything else the caller sent —
  ``Mcp-Param-*`` and every ``Mcp-*`` header, API keys, cookies, ``X-Forwarded-*``, ``Origin``, custom
  headers — never leaves. ``Mcp-Param-*`` headers are dropped even if an operation declared one.
  A declared header reaches the upstream only when the call's *arguments* fill it: FastMCP copies a
  caller's HTTP header of the same name when the argument is absent, and that copy is dropped (only
  arguments become upstream parameters; they were validated against the published schema, a caller's
  header was not).
* an **upstream error boundary**: an upstream answering a non-2xx status becomes :class:`UpstreamError`
  (category ``upstream_error``), which the server's output check turns into a conforming ``isError``
  result saying the status and a generic message. The upstream's body is logged (bounded, escaped,
  with the call's argument values replaced) and reaches the caller only with
  ``upstream_errors="echo"`` (``serve --upstream-errors=echo``): an error body may carry secrets.
* **failures inside the contract** (:mod:`._openapi_failures`): each tool's output schema also
  describes its failure envelope (category, message, upstream status, the document's declared error
  body), and the tool supplies that envelope for every failed call, so an ``isError`` result conforms;
  a 2xx answer breaking the declared response schema is one such failure (``upstream_contract``, see
  :meth:`_BoundedOpenAPITool.upstream_contract_break`), never a JSON-RPC error;
* **bounded upstream answers** (:mod:`._upstream_size`): ``max_upstream_bytes`` decoded bytes at most,
  enforced while the answer is read (``upstream_too_large``);
* **document checks before any tool exists** (:mod:`._openapi_document`): duplicate ``operationId``s
  and reserved tool names refused, operations reaching an unresolvable ``$ref`` left out with the reason.

Arguments are validated against each tool's published ``inputSchema`` on the server by the Execute gate
(``agent_connector_sdk.mcp.server``), so an ``"issue_number": "notanint"`` never becomes a URL.

Operation IDs containing ``/`` (GitHub's ``issues/list-events-for-timeline``) are given the name
``issues_list_events_for_timeline``: FastMCP's slugging would otherwise delete the slash and glue the
words together (``issueslist_events_for_timeline``).
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal

import fastmcp
import httpx2
from fastmcp.exceptions import ToolError
from fastmcp.server.dependencies import get_http_headers
from fastmcp.server.providers.openapi import OpenAPITool
from fastmcp.tools.base import ToolResult
from fastmcp.utilities.components import FastMCPComponent
from fastmcp.utilities.openapi import HTTPRoute
from mcp_types import ToolAnnotations
from pydantic import ValidationError

from agent_connector_sdk.connectors._openapi_document import (
    document_operations,
    duplicate_operation_ids,
    place,
    unresolvable_references,
    without_operations,
)
from agent_connector_sdk.connectors._openapi_failures import (
    ErrorBodies,
    declared_error_bodies,
    error_body_schema_for,
    failure_content,
    success_schema,
    with_failure_envelope,
)
from agent_connector_sdk.connectors._upstream_size import (
    DEFAULT_MAX_UPSTREAM_BYTES,
    UpstreamAnswerTooLarge,
    UpstreamSizeBound,
    bounded_upstream,
)
from agent_connector_sdk.core.contracts import validate_instance
from agent_connector_sdk.core.schema_disclosure import (
    SchemaDisclosure,
    SourceDigest,
    build_schema_disclosure,
)
from agent_connector_sdk.core.schema_disclosure.cache import DisclosureOrigin
from agent_connector_sdk.errors import AgentConnectorError

__all__ = [
    "FORWARDED_CALLER_HEADERS",
    "UPSTREAM_ERROR_MODES",
    "InvalidOpenAPIDocument",
    "OpenAPIOperationTool",
    "OpenAPIServer",
    "OpenAPIToolsMissing",
    "UpstreamError",
    "UpstreamErrorMode",
    "UpstreamHeaderPolicy",
    "build_openapi_server",
    "build_tool_disclosures",
    "http_method_annotations",
    "list_operation_tools",
    "openapi_operation_tools",
    "tool_disclosure_origins",
]


class InvalidOpenAPIDocument(AgentConnectorError, ValueError):
    """``invalid_document``: the document cannot be served as it is (FastMCP's OpenAPI parser refused
    it, or a check of :mod:`._openapi_document` did). The message names the first offending place and
    rule, never the document's values (the parser's own error lists them all). ``rule`` names the
    connector's own check that refused it (``unique_operation_ids``, ``resolvable_refs``,
    ``reserved_names``), ``None`` for the parser's refusals: what an option can relax."""

    category: Literal["invalid_document"]

    def __init__(self, message: str, *, rule: str | None = None) -> None:
        super().__init__("invalid_document", message)
        self.rule = rule


def _first_problem(error: ValidationError, document: Any) -> str:
    """The most specific of the parser's validation errors as ``place: rule`` (a union's other branches
    add "Field required" noise for ``$ref``; the deepest location is the place to look)."""
    problems = error.errors(include_input=False, include_url=False)
    relevant = [p for p in problems if p["loc"][-1:] != ("$ref",)] or problems
    deepest = max(relevant, key=lambda problem: len(problem["loc"]))
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"invalid OpenAPI document at {document_place(deepest['loc'], document)}: {deepest['msg']}{more}"


def document_place(location: Sequence[Any], document: Any) -> str:
    """A pydantic error location as the document's own place: ``paths./pets.get.parameters[0].schema.type``.

    pydantic puts the parser's model and union-branch names into the location (``Parameter``,
    ``Schema``, ``str-enum[DataType]``...); walking the document alongside keeps only the parts that
    are its keys and indexes, so a property that happens to be called ``Schema`` is kept too."""
    place = ""
    node = document
    for part in location:
        if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            place += f"[{part}]"
            node = node[part]
        elif isinstance(node, dict) and isinstance(part, str) and part in node:
            place += f".{part}" if place else part
            node = node[part]
        # else: a model or union-branch name of the parser, not a place in the document
    return place or "the document's root"


class _QuietParser(logging.Filter):
    """Drops FastMCP's parser error logs while we build: they print the whole pydantic error, with the
    document's values, and the same failure is raised to the caller as one typed error."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < logging.ERROR


_PARSER_LOGGER: Final = "fastmcp.utilities.openapi.parser"


class OpenAPIToolsMissing(AgentConnectorError, LookupError):
    """Operation tools of the server are absent from its ``tools/list`` (category ``tools_missing``).

    Typically a search transform (which replaces the listing with synthetic search tools) was added
    before the tools were listed: list and disclose first, then add the transform.
    """

    category: Literal["tools_missing"]

    def __init__(self, message: str) -> None:
        super().__init__("tools_missing", message)


logger = logging.getLogger(__name__)

UpstreamErrorMode = Literal["generic", "echo"]
UPSTREAM_ERROR_MODES: Final[tuple[UpstreamErrorMode, ...]] = ("generic", "echo")
"""``generic`` (default): the caller learns the status only; ``echo``: also a bounded excerpt of the body."""

MAX_LOGGED_UPSTREAM_BODY: Final = 1_000
"""Most characters of an upstream error body the server log carries (escaped, argument values replaced)."""
MAX_ECHOED_UPSTREAM_BODY: Final = 400
"""Most characters of an upstream error body a caller sees with ``upstream_errors="echo"``."""
_REDACTED: Final = "<argument>"


class UpstreamError(AgentConnectorError, ToolError):
    """The upstream API failed a tool call (the Execute gate): ``upstream_error``, it answered a non-2xx
    ``status``; ``upstream_too_large``, its answer exceeded ``limit`` bytes (``--max-upstream-bytes``)
    and was not read further.

    A ``ToolError``, so the call ends as an ``isError`` result whose ``structuredContent`` is the
    tool's failure envelope (:mod:`._openapi_failures`); its text names the tool and the status or the
    bound, never the upstream's body unless the server was built with ``upstream_errors="echo"``
    (then ``body`` is the parsed body when it conforms to what the document declares for the status).
    """

    gate = "execute"
    category: Literal["upstream_error", "upstream_too_large"]

    def __init__(
        self,
        tool: str,
        status: int | None,
        *,
        echoed_body: str | None = None,
        body: Any = None,
        has_body: bool = False,
        limit: int | None = None,
        reason: str | None = None,
    ) -> None:
        if status is not None:
            category: Literal["upstream_error", "upstream_too_large"] = "upstream_error"
            message = f"upstream_error: the upstream API answered HTTP {status} to tool {tool!r}"
        else:
            category = "upstream_too_large"
            message = f"upstream_too_large: tool {tool!r}: {reason or 'the upstream answer is too large'}"
        text = message if echoed_body is None else f"{message}: {echoed_body}"
        super().__init__(category, message, text=text)
        self.tool = tool
        self.status = status
        self.body = body
        self.has_body = has_body
        self.limit = limit


def _argument_strings(value: Any) -> Iterator[str]:
    """Every scalar in an argument value as text (what an upstream body might echo back)."""
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _argument_strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _argument_strings(item)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        yield str(value)


def _without_argument_values(body: str, arguments: Mapping[str, Any], limit: int) -> str:
    """``body`` cut to ``limit`` characters with every argument value (2+ characters) replaced.

    Upstreams often echo what they were sent (``"item 'acme-secret' not found"``); a log line must not
    carry argument values, so they are replaced longest first. One-character values are left: replacing
    every such character would destroy the text and reveal nothing a reader could not guess.
    """
    text = body[: limit * 4]  # bound the work before replacing; the result is cut to `limit` after
    for value in sorted(set(_argument_strings(arguments)), key=len, reverse=True):
        if len(value) >= 2:
            text = text.replace(value, _REDACTED)
    return text if len(text) <= limit else text[:limit] + "… (truncated)"


# The header names (lowercase) the current tool call's arguments fill; read by UpstreamHeaderPolicy.
_FILLED_HEADERS: contextvars.ContextVar[frozenset[str] | None] = contextvars.ContextVar(
    "agent_connector_filled_headers", default=None
)


@dataclass
class _UpstreamSettings:
    """One server's upstream boundary: the error mode, the answer bound, which arguments fill which
    declared headers, and each tool's declared error bodies."""

    upstream_errors: UpstreamErrorMode
    max_upstream_bytes: int
    # tool name -> {argument name: header name (lowercase)}
    header_arguments: dict[str, dict[str, str]]
    # tool name -> the document's declared error bodies, each a standalone schema (its `$defs` attached)
    error_bodies: dict[str, ErrorBodies] = field(default_factory=dict)


class _BoundedOpenAPITool(OpenAPITool):
    """FastMCP's OpenAPI tool at the upstream boundary (module doc): it tells the header policy which
    declared headers the arguments fill, bounds the upstream's answer, turns an upstream error status
    (or an answer over the bound) into :class:`UpstreamError`, and models every failure of the call in
    its output schema (:meth:`failure_structured_content`).

    Installed by switching the class of each tool FastMCP builds to a per-server subclass (from the
    ``mcp_component_fn`` hook; the subclass adds no fields): FastMCP offers no tool-class option, and
    re-implementing ``run`` would copy its request building.
    """

    upstream: ClassVar[_UpstreamSettings]

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        settings = self.upstream
        header_arguments = settings.header_arguments.get(self.name, {})
        filled = frozenset(
            header for argument, header in header_arguments.items() if arguments.get(argument) is not None
        )
        token = _FILLED_HEADERS.set(filled)
        try:
            with bounded_upstream(settings.max_upstream_bytes):
                return await super().run(arguments)
        except UpstreamAnswerTooLarge as too_large:
            logger.warning("upstream answer refused: tool %s: %s", json.dumps(self.name), too_large)
            raise UpstreamError(self.name, None, limit=too_large.limit, reason=str(too_large)) from None
        except httpx2.HTTPStatusError as error:
            raise self._status_error(error.response, arguments) from None
        finally:
            _FILLED_HEADERS.reset(token)

    def _status_error(self, response: httpx2.Response, arguments: Mapping[str, Any]) -> UpstreamError:
        settings = self.upstream
        status = response.status_code
        body = _response_text(response)
        logger.warning(
            "upstream error: tool %s got HTTP %d; body (bounded, argument values replaced): %s",
            json.dumps(self.name),
            status,
            json.dumps(
                _without_argument_values(body, arguments, MAX_LOGGED_UPSTREAM_BODY), ensure_ascii=True
            ),
        )
        if settings.upstream_errors != "echo":
            return UpstreamError(self.name, status)
        echoed = _without_argument_values(body, {}, MAX_ECHOED_UPSTREAM_BODY)
        declared = error_body_schema_for(settings.error_bodies.get(self.name, {}), status)
        parsed = _json_or_absent(response) if declared is not None else _ABSENT
        conforms = parsed is not _ABSENT and validate_instance(declared, parsed) is None
        return UpstreamError(
            self.name, status, echoed_body=echoed, body=parsed if conforms else None, has_body=conforms
        )

    def failure_structured_content(self, failure: BaseException | None, category: str, text: str) -> Any:
        """This tool's failure envelope for a failed call (``None`` when it publishes no output schema):
        the output check sends it as the ``isError`` result's ``structuredContent``."""
        if self.output_schema is None:
            return None
        if isinstance(failure, UpstreamError):
            return failure_content(
                failure.category, text, status=failure.status, body=failure.body, has_body=failure.has_body
            )
        return failure_content(category, text)

    def upstream_contract_break(self, structured: Any) -> tuple[str, str] | None:
        """Where the upstream's answer (the tool's value) breaks the response schema the document
        declares: ``(JSON pointer, schema keyword)``, names only; ``None`` when it conforms."""
        if self.output_schema is None:
            return None
        failure = validate_instance(success_schema(self.output_schema), structured)
        if failure is None or failure.kind != "instance":
            return None
        return failure.path, failure.keyword


_ABSENT: Final = object()


def _json_or_absent(response: httpx2.Response) -> Any:
    try:
        return response.json()
    except (ValueError, UnicodeDecodeError, httpx2.ResponseNotRead):
        return _ABSENT


def _bounded_tool_class(settings: _UpstreamSettings) -> type[_BoundedOpenAPITool]:
    return type("BoundedOpenAPITool", (_BoundedOpenAPITool,), {"upstream": settings})


def _response_text(response: httpx2.Response) -> str:
    try:
        return response.text
    except (UnicodeDecodeError, httpx2.ResponseNotRead):
        return "(undecodable body)"


@dataclass(frozen=True)
class OpenAPIServer:
    """A FastMCP server built from an OpenAPI document, plus where each of its tools came from.

    ``operations`` maps each registered tool name (alias) to its operation: the ``operationId``, or
    ``"METHOD /path"`` for an operation without one. ``refused`` maps each operation that became no
    tool to why (e.g. a ``$ref`` that resolves to nothing). ``routes`` maps the alias to ``(METHOD, path)``;
    ``source_schemas`` to the ``(input_schema, output_schema)`` objects FastMCP derived from the document
    (what a :class:`DisclosureOrigin` vouches for: a tool whose schemas are replaced later is not).
    ``http_client`` is the client the tools call the upstream API with; :meth:`aclose` closes it if
    :func:`build_openapi_server` created it.
    """

    server: fastmcp.FastMCP
    operations: Mapping[str, str]
    routes: Mapping[str, tuple[str, str]]
    http_client: httpx2.AsyncClient
    owns_http_client: bool
    source_schemas: Mapping[str, tuple[Any, Any]] = field(default_factory=dict)
    refused: Mapping[str, str] = field(default_factory=dict)

    def tools_of(self, name: str) -> list[str]:
        """The tools ``name`` stands for: the tool of that name, and every tool derived from an operation
        whose ``operationId`` is ``name`` (each of several, when duplicates were allowed)."""
        return [alias for alias, operation in self.operations.items() if name in (alias, operation)]

    async def aclose(self) -> None:
        """Close the upstream HTTP client if this object created it (a caller's client stays open)."""
        if self.owns_http_client:
            await self.http_client.aclose()


@dataclass(frozen=True)
class OpenAPIOperationTool:
    """One operation as the MCP wire shows it: its identity and its tool's exact schemas."""

    operation: str
    alias: str
    method: str
    path: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None


FORWARDED_CALLER_HEADERS: Final = frozenset({"traceparent", "tracestate", "accept-language"})
"""Caller headers the upstream may still receive: W3C trace context and the caller's language."""

_FRAMING_HEADERS: Final = frozenset({"host", "content-type", "content-length", "transfer-encoding"})
_NEVER_FORWARDED_PREFIX: Final = "mcp-param-"


class _OperationPath:
    """One operation's path template as the policy matches it: ``.*`` + the template (each ``{param}``
    one or more non-``/`` characters) + an optional ``/`` — a base URL's own path may precede it. The
    regex is compiled on first use (1,223 compilations were 0.3 s of a GitHub ``serve`` start-up)."""

    __slots__ = ("_compiled", "headers", "method", "source")

    def __init__(self, method: str, path: str, headers: frozenset[str]) -> None:
        self.method = method
        self.headers = headers
        parts = _template_parts(path)
        self.source = (
            ".*" + "".join("[^/]+" if part.startswith("{") else re.escape(part) for part in parts) + "/?"
        )
        self._compiled: re.Pattern[str] | None = None

    def matches(self, path: str) -> bool:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.source)
        return compiled.fullmatch(path) is not None


def _template_parts(path: str) -> list[str]:
    """Literal text and ``{param}`` parts, alternating; *any* part starting with ``{`` matches as a
    parameter (also the rest of an unclosed ``{``, which may hold a ``/``)."""
    return re.split(r"(\{[^}/]*\})", path)


def _literal_anchor(path: str) -> tuple[int, str] | None:
    """``(d, segment)``: the template's last ``/``-separated segment without a ``{`` and its distance
    ``d`` from the end, or ``None`` when it has none a request path can be indexed by.

    Why it indexes exactly: no part of the match regex but the leading ``.*`` can match a ``/`` (a
    literal segment has none, ``{param}`` is ``[^/]+``), so a request path matching the template ends
    with ``"/" + segment_1 + ... + "/" + segment_k`` (plus at most one ``/``), slashes aligned: the
    request path's ``/``-separated piece ``d`` from its end *is* that literal segment. The first
    segment (``""`` before a leading ``/``, or text glued to the ``.*``) cannot serve."""
    if any(part.startswith("{") for part in _template_parts(path)[::2]):
        return None  # an unclosed "{" swallows text up to the end, slashes included: never literal
    segments = path.split("/")
    for distance, segment in enumerate(reversed(segments)):
        if distance == len(segments) - 1:  # segments[0]: no "/" before it
            return None
        if "{" not in segment:
            return distance, segment
    return None


class UpstreamHeaderPolicy:
    """Request hook of the upstream client: strip every header not addressed to the API (module doc).

    One policy per client (:meth:`for_client` installs it once and returns it); :meth:`add_operation`
    declares an operation's header parameters. A request matching several path templates (``/a/{x}``
    and ``/a/list``) keeps the union of their declared headers — still only declared ones.

    Finding the operations a request matches costs a few dict probes, not one regex per operation: an
    index by method and literal anchor (:func:`_literal_anchor`) names the candidates, each checked by
    its full regex; templates with no anchor are always checked. Exactly the operations a scan of every
    template would find (``tests/connectors/test_header_policy_index.py`` checks both).
    """

    def __init__(self, client: httpx2.AsyncClient) -> None:
        self._client = client
        # Keyed by (METHOD, path template): rebuilding a server on the same client replaces, never grows.
        self._operations: dict[tuple[str, str], _OperationPath] = {}
        self._index: dict[tuple[str, int, str], list[_OperationPath]] | None = None
        self._unanchored: list[_OperationPath] = []
        self._distances: tuple[int, ...] = ()

    @classmethod
    def for_client(cls, client: httpx2.AsyncClient) -> UpstreamHeaderPolicy:
        """The client's policy, installed as its last request hook if it has none yet."""
        hooks = client.event_hooks
        for hook in hooks.get("request", []):
            if isinstance(hook, cls):
                return hook
        policy = cls(client)
        client.event_hooks = {**hooks, "request": [*hooks.get("request", []), policy]}
        return policy

    def add_operation(self, method: str, path: str, header_names: Iterable[str]) -> None:
        verb = method.upper()
        self._operations[(verb, path)] = _OperationPath(
            verb, path, frozenset(n.lower() for n in header_names)
        )
        self._index = None  # rebuilt on the next request (once per build, not per operation)

    def __len__(self) -> int:
        """Operations known (one per method and path template)."""
        return len(self._operations)

    def _build_index(self) -> dict[tuple[str, int, str], list[_OperationPath]]:
        index: dict[tuple[str, int, str], list[_OperationPath]] = {}
        unanchored: list[_OperationPath] = []
        for (_, template), operation in self._operations.items():
            anchor = _literal_anchor(template)
            if anchor is None:
                unanchored.append(operation)
            else:
                index.setdefault((operation.method, *anchor), []).append(operation)
        self._unanchored = unanchored
        self._distances = tuple(sorted({distance for _, distance, _ in index}))
        self._index = index
        return index

    def declared_headers(self, method: str, path: str) -> frozenset[str]:
        """Header names the operations matching ``method path`` declare (lowercase)."""
        index = self._index if self._index is not None else self._build_index()
        verb = method.upper()
        candidates: dict[int, _OperationPath] = {}
        # A trailing "/" may be the template's optional one: look the path up with and without it.
        for variant in (path, path[:-1]) if path.endswith("/") else (path,):
            pieces = variant.split("/")
            for distance in self._distances:
                if distance >= len(pieces) - 1:
                    break
                for operation in index.get((verb, distance, pieces[-1 - distance]), ()):
                    candidates[id(operation)] = operation
        for operation in self._unanchored:
            candidates[id(operation)] = operation
        declared: set[str] = set()
        for operation in candidates.values():
            if operation.method == verb and operation.matches(path):
                declared |= operation.headers
        return frozenset(declared)

    def declared_headers_by_scan(self, method: str, path: str) -> frozenset[str]:
        """:meth:`declared_headers` by matching every template (the reference the index is tested against)."""
        declared: set[str] = set()
        for operation in self._operations.values():
            if operation.method == method.upper() and operation.matches(path):
                declared |= operation.headers
        return frozenset(declared)

    async def __call__(self, request: httpx2.Request) -> None:
        declared = self.declared_headers(request.method, request.url.path)
        filled = _FILLED_HEADERS.get()
        if filled is not None:
            # Inside a tool call: a declared header the arguments did not fill is a caller's header
            # FastMCP copied in — only arguments become upstream parameters.
            declared &= filled
        elif get_http_headers():
            # Some other request made while serving an MCP caller (not through our tool class): it
            # cannot say which headers its arguments filled, so no declared header passes (fail closed).
            declared = frozenset()
        configured = {name.lower() for name in self._client.headers}
        kept = declared | configured | _FRAMING_HEADERS | FORWARDED_CALLER_HEADERS
        for name in {name.lower() for name in request.headers}:
            if name not in kept or name.startswith(_NEVER_FORWARDED_PREFIX):
                del request.headers[name]


def _operation_of(route: HTTPRoute) -> str:
    return route.operation_id or f"{route.method.upper()} {route.path}"


def _readable_names(document: Mapping[str, Any]) -> dict[str, str]:
    """``operationId -> name`` for IDs with ``/``, which FastMCP's slugging would delete outright."""
    names: dict[str, str] = {}
    paths = document.get("paths")
    if not isinstance(paths, Mapping):
        return names
    for item in paths.values():
        if not isinstance(item, Mapping):
            continue
        for operation in item.values():
            operation_id = operation.get("operationId") if isinstance(operation, Mapping) else None
            if isinstance(operation_id, str) and "/" in operation_id:
                names[operation_id] = operation_id.replace("/", "_")
    return names


_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def http_method_annotations(method: str) -> ToolAnnotations:
    """MCP tool annotations an HTTP method's semantics justify (RFC 9110 §9.2).

    GET, HEAD and OPTIONS are *safe* (read-only, so no write confirmation); DELETE is destructive and
    idempotent; PUT is idempotent (it may still replace data, so ``destructiveHint`` keeps its
    spec default, true); POST and PATCH promise nothing beyond "not read-only". Every operation
    reaches an external API, so ``openWorldHint`` is true. These are hints derived from the method,
    not from the upstream's real behaviour: a host treats them as the spec says (untrusted unless the
    server is trusted), and an unknown method gets the "may write" reading.
    """
    verb = method.upper()
    if verb in _SAFE_METHODS:
        return ToolAnnotations(
            readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=True
        )
    if verb == "DELETE":
        return ToolAnnotations(
            readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=True
        )
    if verb == "PUT":
        return ToolAnnotations(readOnlyHint=False, idempotentHint=True, openWorldHint=True)
    return ToolAnnotations(readOnlyHint=False, openWorldHint=True)


def _first_server_url(document: Mapping[str, Any]) -> str:
    servers = document.get("servers")
    first = servers[0] if isinstance(servers, list) and servers else None
    url = first.get("url") if isinstance(first, dict) else None
    if not isinstance(url, str) or not url or "{" in url:
        raise ValueError("the document has no concrete servers[0].url; pass base_url or client")
    return url


def build_openapi_server(
    document: dict[str, Any],
    *,
    base_url: str | None = None,
    client: httpx2.AsyncClient | None = None,
    name: str = "OpenAPI",
    version: str | None = None,
    timeout: float = 30.0,
    upstream_errors: UpstreamErrorMode = "generic",
    max_upstream_bytes: int = DEFAULT_MAX_UPSTREAM_BYTES,
    allow_duplicate_operation_ids: bool = False,
    strict_refs: bool = False,
    reserved_names: Collection[str] = (),
    raw: bytes | None = None,
) -> OpenAPIServer:
    """Build a FastMCP server exposing every operation of ``document`` as a tool.

    Upstream requests go through ``client`` if given (the caller owns and closes it); otherwise a
    client is created for ``base_url``, or for the document's first ``servers`` URL, and closed by
    :meth:`OpenAPIServer.aclose`. ``document`` is not modified. ``name`` and ``version`` become the
    server's ``serverInfo`` (e.g. the document's ``info.title`` and ``info.version``). Either way the
    client gets the :class:`UpstreamHeaderPolicy` request hook and the answer bound (once per client),
    so upstream requests carry only the headers addressed to the API.

    ``upstream_errors`` decides what a caller learns when the upstream answers an error status:
    ``"generic"`` the status and a generic message, ``"echo"`` also a bounded excerpt of the body (see
    :class:`UpstreamError`; the log always has a bounded excerpt with argument values replaced).
    ``max_upstream_bytes`` bounds each upstream answer's decoded body (a larger one is an
    ``upstream_too_large`` error result, read no further than the bound).

    Every tool with an output schema publishes its failures too (:mod:`._openapi_failures`): an
    ``isError`` result carries a conforming failure envelope.

    Refused (:class:`InvalidOpenAPIDocument`, naming the places): two operations with one
    ``operationId`` (OpenAPI requires uniqueness; with ``allow_duplicate_operation_ids`` both become
    tools and :meth:`OpenAPIServer.tools_of` names both for the ID), and an operation whose tool name
    is one of ``reserved_names`` (e.g. a search transform's ``search_tools``/``call_tool``). An operation
    reaching a ``$ref`` that resolves to nothing becomes no tool (``OpenAPIServer.refused`` says why),
    or the whole document is refused with ``strict_refs``. ``raw``, the document's exact bytes when
    known, lets the reference check skip a document that has no ``$ref`` at all.

    The client is always passed to FastMCP explicitly: a client FastMCP creates itself is closed when
    the server's first lifespan ends, so a second session (e.g. a second in-memory ``Client``) fails
    with "Cannot reopen a client instance" (FastMCP 4.2.3).
    """
    if client is not None and base_url is not None:
        raise ValueError("pass either client or base_url, not both")
    if upstream_errors not in UPSTREAM_ERROR_MODES:
        raise ValueError(f"upstream_errors must be one of {', '.join(UPSTREAM_ERROR_MODES)}")
    if type(max_upstream_bytes) is not int or max_upstream_bytes < 1:
        raise ValueError("max_upstream_bytes must be a positive integer")
    duplicates = {} if allow_duplicate_operation_ids else duplicate_operation_ids(document)
    if duplicates:
        operation_id, places = next(iter(duplicates.items()))
        more = f" (and {len(duplicates) - 1} more duplicate IDs)" if len(duplicates) > 1 else ""
        raise InvalidOpenAPIDocument(
            f"duplicate operationId {_shown_name(operation_id)}: {' and '.join(places)}{more}; "
            "OpenAPI requires operationIds to be unique",
            rule="unique_operation_ids",
        )
    refused, document = _without_unresolvable(document, strict=strict_refs, raw=raw)
    owns_client = client is None
    if client is None:
        client = httpx2.AsyncClient(
            base_url=base_url if base_url is not None else _first_server_url(document), timeout=timeout
        )
    operations: dict[str, str] = {}
    routes: dict[str, tuple[str, str]] = {}
    source_schemas: dict[str, tuple[Any, Any]] = {}
    header_policy = UpstreamHeaderPolicy.for_client(client)
    UpstreamSizeBound.for_client(client)
    settings = _UpstreamSettings(
        upstream_errors=upstream_errors, max_upstream_bytes=max_upstream_bytes, header_arguments={}
    )
    bounded_tool = _bounded_tool_class(settings)
    by_route = {(op.method, op.path): op.operation for op in document_operations(document)}

    def record(route: HTTPRoute, component: FastMCPComponent) -> None:
        # Called by FastMCP after it has fixed the component's final (unique) name.
        if isinstance(component, OpenAPITool):
            component.__class__ = bounded_tool
            settings.header_arguments[component.name] = {
                argument: spec["openapi_name"].lower()
                for argument, spec in route.parameter_map.items()
                if spec.get("location") == "header" and "openapi_name" in spec
            }
            component.annotations = http_method_annotations(route.method)
            if component.output_schema is not None:
                declared = by_route.get((route.method.upper(), route.path), {})
                bodies, defs = declared_error_bodies(document, declared)
                component.output_schema = with_failure_envelope(component.output_schema, bodies, defs)
                if bodies:
                    settings.error_bodies[component.name] = {
                        status: {**body, "$defs": defs} if defs else body for status, body in bodies.items()
                    }
            operations[component.name] = _operation_of(route)
            routes[component.name] = (route.method.upper(), route.path)
            source_schemas[component.name] = (component.parameters, component.output_schema)
            header_policy.add_operation(
                route.method, route.path, (p.name for p in route.parameters if p.location == "header")
            )

    parser_log = logging.getLogger(_PARSER_LOGGER)
    quiet = _QuietParser()
    parser_log.addFilter(quiet)
    try:
        server = fastmcp.FastMCP.from_openapi(
            document,
            client=client,
            name=name,
            version=version,
            mcp_component_fn=record,
            mcp_names=_readable_names(document),
        )
    except ValueError as error:
        if isinstance(error.__cause__, ValidationError):
            raise InvalidOpenAPIDocument(_first_problem(error.__cause__, document)) from None
        raise
    finally:
        parser_log.removeFilter(quiet)
    taken = sorted(set(reserved_names) & set(operations))
    if taken:
        method, path = routes[taken[0]]
        raise InvalidOpenAPIDocument(
            f"operation {place(method, path)} would be the tool {_shown_name(taken[0])}, a name the "
            "server reserves for its own tools (give the operation another operationId)",
            rule="reserved_names",
        )
    return OpenAPIServer(
        server=server,
        operations=operations,
        routes=routes,
        http_client=client,
        owns_http_client=owns_client,
        source_schemas=source_schemas,
        refused=refused,
    )


def _shown_name(text: str, limit: int = 200) -> str:
    """A document-chosen name for a message: JSON-quoted (so control characters show escaped), capped."""
    return json.dumps(text[:limit], ensure_ascii=False)


def _without_unresolvable(
    document: dict[str, Any], *, strict: bool, raw: bytes | None
) -> tuple[dict[str, str], dict[str, Any]]:
    """``(refused, document)``: each operation reaching a ``$ref`` that resolves to nothing, by name,
    with why, and the document without them (``strict``: the first such operation refuses it all)."""
    if raw is not None and b"$ref" not in raw:
        return {}, document
    problems = unresolvable_references(document)
    if not problems:
        return {}, document
    names = {(op.method, op.path): op.name for op in document_operations(document)}
    if strict:
        (method, path), reason = next(iter(problems.items()))
        raise InvalidOpenAPIDocument(f"operation {place(method, path)}: {reason}", rule="resolvable_refs")
    refused = {names[key]: reason for key, reason in problems.items()}
    return refused, without_operations(document, set(problems))


async def list_operation_tools(openapi_server: OpenAPIServer) -> list[OpenAPIOperationTool]:
    """The server's operation tools with the schemas a client receives from ``tools/list``.

    Lists over an in-memory MCP session (the real protocol path, middleware included). Raises
    :class:`OpenAPIToolsMissing` if an operation tool is not listed (e.g. hidden by a search transform).
    """
    async with fastmcp.Client(openapi_server.server) as session:
        listed = await session.list_tools()
    tools: list[OpenAPIOperationTool] = []
    seen: set[str] = set()
    for tool in listed:
        operation = openapi_server.operations.get(tool.name)
        if operation is None:
            continue
        method, path = openapi_server.routes[tool.name]
        seen.add(tool.name)
        tools.append(
            OpenAPIOperationTool(
                operation=operation,
                alias=tool.name,
                method=method,
                path=path,
                input_schema=tool.input_schema,
                output_schema=tool.output_schema,
            )
        )
    missing = sorted(set(openapi_server.operations) - seen)
    if missing:
        raise OpenAPIToolsMissing(
            f"{len(missing)} operation tools not in tools/list (first: {missing[0]}); "
            "list them before adding a search transform"
        )
    return tools


async def openapi_operation_tools(document: dict[str, Any]) -> list[OpenAPIOperationTool]:
    """Every operation of ``document`` as its FastMCP tool shows it on the wire (no upstream calls)."""
    # A loopback base URL: the server is only listed, never asked to call the API.
    openapi_server = build_openapi_server(document, base_url="http://127.0.0.1")
    try:
        return await list_operation_tools(openapi_server)
    finally:
        await openapi_server.aclose()


async def build_tool_disclosures(
    openapi_server: OpenAPIServer, source: bytes | SourceDigest
) -> dict[str, SchemaDisclosure]:
    """``alias -> SchemaDisclosure`` for every operation tool of ``openapi_server``.

    ``source`` is the OpenAPI document's exact bytes, or their :class:`SourceDigest` (hash a large
    document once and reuse it). Call this before adding a search transform to the server. A tool
    whose schemas break a disclosure bound raises ``SchemaDisclosureError`` (never a partial result).
    """
    digest = source if isinstance(source, SourceDigest) else SourceDigest.of(source)
    return {
        tool.alias: build_schema_disclosure(
            operation=tool.operation,
            alias=tool.alias,
            source=digest,
            input_schema=tool.input_schema,
            output_schema=tool.output_schema,
        )
        for tool in await list_operation_tools(openapi_server)
    }


def tool_disclosure_origins(
    openapi_server: OpenAPIServer, source: bytes | SourceDigest
) -> dict[str, DisclosureOrigin]:
    """``alias -> DisclosureOrigin`` for every operation tool: what a registry needs to build each
    tool's disclosure on its first read, from the schemas the read sees.

    Nothing is listed or hashed here beyond ``source`` (start-up cost and memory do not grow with the
    tools' schemas); ``register_schema_resources`` accepts the result in place of built disclosures.
    Byte for byte, a lazily built disclosure equals what :func:`build_tool_disclosures` returns. Each
    origin vouches for the schema objects FastMCP derived from ``source`` (``source_schemas``): a tool
    whose schemas are replaced later is refused as stale, never disclosed under this source.
    """
    digest = source if isinstance(source, SourceDigest) else SourceDigest.of(source)
    schemas = openapi_server.source_schemas
    return {
        alias: DisclosureOrigin(operation, digest.sha256, source_schemas=schemas.get(alias))
        for alias, operation in openapi_server.operations.items()
    }
