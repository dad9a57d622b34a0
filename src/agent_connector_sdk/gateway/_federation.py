"""No proxy of a proxy: a search-first child's hidden tools, federated one by one.

A child behind a search transform (FastMCP's ``RegexSearchTransform``, our own ``serve --openapi``, the
contract lab) lists only two synthetic tools: a search tool and a ``call_tool`` proxy that runs any tool
*by name*. Republished as ``NAME_call_tool``, that proxy would be a hole: a caller could reach, through
it, a tool the gateway's admission rejected or its ``[auth.require]`` guards, and the result would be
checked against the proxy's own (empty) contract. So the gateway never republishes a child's synthetic
tools (:func:`search_front` finds them by shape, whatever their names). Instead, as a disclosure-aware
host, it:

1. **enumerates** the child's hidden catalog through its search tool — :class:`PrefixPlan` partitions
   the tool names by anchored, case-sensitive prefixes (a regex search matches a tool's text, which
   starts with its name), splitting any query whose answer may have been cut at the search's result
   limit, until every name is covered by a query that provably returned all its matches;
2. **verifies** each navigation entry's disclosure (manifest and fragments read and reconstructed
   against the entry's digests, by :class:`~agent_connector_sdk.mcp.host.SchemaDisclosureConsumer`);
3. **admits** each reconstructed descriptor alone in the child's host core (the same policy, poisoning
   and lock rules as a listed tool; a refusal is a rejection with its category);

and the gateway publishes each admitted tool as ``NAME_tool`` like any listed one: the same
authorization, Consume and generation rules, called directly by its name at the child (FastMCP resolves
a hidden tool by name) through the host core's admitted copy of its schemas.

A re-list (refresh, ``list_changed``, reconnect) enumerates again; an entry whose identity (digests,
fragment count, hints) is unchanged is not read again (the digests bind the bytes), and within one
connection not admitted again either. Calls never re-list.

Soundness of the enumeration: a query answered with fewer entries than some query ever returned was not
cut by the result limit (which is at least that many), so it returned every match; only a query that
returned as many as the most seen is split. A search that does not behave like an anchored name search
(an entry outside the query's prefix) stops federation (``not_federated``) rather than guess. The
search's own time budget (FastMCP stops a regex search after about a second) is the assumption left:
anchored prefixes keep each search far below it.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Final, TypeVar, cast

import anyio

from agent_connector_sdk.core.contracts._admission import AdmissionReport, Rejection
from agent_connector_sdk.core.contracts._pointers import json_pointer
from agent_connector_sdk.core.contracts.errors import AdmissionError
from agent_connector_sdk.core.disclosure_navigation import SchemaNavigation
from agent_connector_sdk.core.host._errors import JsonRpcError
from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.gateway._errors import GatewayError
from agent_connector_sdk.mcp.host._session import HostSession
from agent_connector_sdk.mcp.host.disclosure_consumer import (
    CallerScope,
    DisclosureConsumerError,
    SchemaDisclosureConsumer,
    SelectedTool,
)

__all__ = [
    "MAX_SEARCHES",
    "Federation",
    "PrefixPlan",
    "SearchFront",
    "federate",
    "merge_listing",
    "search_front",
]

T = TypeVar("T")

MAX_SEARCHES: Final = 20_000
"""At most this many searches per enumeration (a child answering adversarially cannot loop forever)."""
_CONCURRENT_DISCLOSURES: Final = 1
_READS_IN_FLIGHT: Final = 4
"""One disclosure at a time, at most 4 of its reads in flight. A gated child admits 8 requests per caller
at a time (``RequestBounds.max_in_flight_per_caller``), the gateway's calls share that allowance, and a
request the client has finished still counts at the server until its stream closes: measured, three
disclosures of one read each already met the child's limit (HTTP 429) on a loaded machine."""
_THROTTLE_RETRIES: Final = 8
_THROTTLE_WAIT: Final = (0.05, 2.0)  # seconds: the child's retryAfterMs, clamped
_DEFAULT_THROTTLE_WAIT: Final = 0.25  # seconds, for an HTTP 429/503 that says no retryAfterMs
_END: Final = ""  # the symbol "the name ends here"
_ALPHABET: Final = (*"-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz", _END)
"""A tool name's characters and the end of the name. Searches are case-sensitive (``(?-i:…)`` inside
the search's own case-insensitive pattern), so a name prefix selects exactly the names that have it."""


# ------------------------------------------------------------------------------- synthetic tools
@dataclass(frozen=True, slots=True)
class SearchFront:
    """A child's synthetic tools: its call-by-name ``proxies`` (never republished) and its ``search``
    tool with the argument it takes (``pattern`` for a regex search), if it has one."""

    proxies: frozenset[str]
    search: str | None
    search_argument: str | None

    @property
    def withheld(self) -> frozenset[str]:
        return self.proxies | ({self.search} if self.search is not None else frozenset())


def _properties(descriptor: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    schema = descriptor.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    required = schema.get("required") if isinstance(schema, Mapping) else None
    return (
        dict(properties) if isinstance(properties, Mapping) else {},
        {item for item in required if isinstance(item, str)} if isinstance(required, list) else set(),
    )


def _is_call_proxy(descriptor: Mapping[str, Any]) -> bool:
    """A tool that runs another tool by name: FastMCP's ``call_tool`` shape (``name`` + ``arguments``)."""
    properties, required = _properties(descriptor)
    return set(properties) == {"name", "arguments"} and "name" in required


def _search_argument(descriptor: Mapping[str, Any]) -> str | None:
    """``pattern`` (regex) or ``query`` (ranked) for a search tool's one required string argument."""
    properties, required = _properties(descriptor)
    if len(properties) != 1 or set(properties) != required:
        return None
    (name,) = properties
    return name if name in ("pattern", "query") else None


def search_front(admitted: Mapping[str, Mapping[str, Any]]) -> SearchFront | None:
    """The synthetic tools of a search-first child's listing, or ``None`` when it lists no
    call-by-name proxy (a plain search tool alone reaches nothing and is published like any tool)."""
    proxies = frozenset(name for name, descriptor in admitted.items() if _is_call_proxy(descriptor))
    if not proxies:
        return None
    searches = sorted(
        (argument, name)
        for name, descriptor in admitted.items()
        if name not in proxies and (argument := _search_argument(descriptor)) is not None
    )
    if not searches:
        return SearchFront(proxies, None, None)
    argument, name = searches[-1]  # "pattern" sorts after "query": a regex search is preferred
    return SearchFront(proxies, name, argument)


# ---------------------------------------------------------------------------------- enumeration
@dataclass(frozen=True, slots=True)
class _Node:
    prefix: str
    symbols: tuple[str, ...]

    @property
    def pattern(self) -> str:
        chars = [symbol for symbol in self.symbols if symbol != _END]
        branches = []
        if chars:
            # '-' first in a class is literal; '.' and '_' are literal in a class.
            branches.append("[" + "".join(sorted(chars, key=lambda c: c != "-")) + "]")
        if _END in self.symbols:
            branches.append(" |$")  # the searchable text is "name description …"
        return "^(?-i:" + re.escape(self.prefix).replace("\\-", "-") + "(?:" + "|".join(branches) + "))"

    def covers(self, name: str) -> bool:
        if not name.startswith(self.prefix):
            return False
        rest = name[len(self.prefix) :]
        return (rest[:1] if rest else _END) in self.symbols


@dataclass
class PrefixPlan:
    """Which searches cover every tool name (pure; see the module docstring for why it is sound).

    ``next()`` gives the next pattern to search; ``record(names)`` takes the names it returned."""

    pending: deque[_Node] = field(default_factory=lambda: deque([_Node("", _ALPHABET)]))
    most_seen: int = 0
    searches: int = 0
    _current: _Node | None = None

    def next(self) -> str | None:
        if not self.pending:
            return None
        self.searches += 1
        if self.searches > MAX_SEARCHES:
            raise GatewayError(
                "not_federated", f"the child's catalog needs more than {MAX_SEARCHES} searches"
            )
        self._current = self.pending.popleft()
        return self._current.pattern

    def record(self, names: Sequence[str]) -> None:
        node = self._current
        assert node is not None, "record() follows next()"
        stray = [name for name in names if not node.covers(name)]
        if stray:
            raise GatewayError(
                "not_federated", "the child's search answered a tool outside the searched name prefix"
            )
        self.most_seen = max(self.most_seen, len(names))
        if len(names) < self.most_seen or not names:
            return  # not cut by the result limit: every match was returned
        if len(node.symbols) > 1:
            half = len(node.symbols) // 2
            self.pending.extend(
                (_Node(node.prefix, node.symbols[:half]), _Node(node.prefix, node.symbols[half:]))
            )
        elif node.symbols[0] != _END:
            self.pending.append(_Node(node.prefix + node.symbols[0], _ALPHABET))
        # else: the one tool named exactly the prefix (names are unique): nothing left to split.


# ---------------------------------------------------------------------------------- federation
@dataclass(frozen=True, slots=True)
class Federation:
    """The federated part of a child's catalog: admitted descriptors (name → the host core's copy), the
    child's disclosure digest per admitted name, rejections, and the verified descriptors to reuse."""

    admitted: dict[str, Mapping[str, Any]]
    schema_digests: dict[str, str]
    rejected: list[Rejection]
    verified: dict[tuple[Any, ...], dict[str, Any]]
    searches: int


def _identity(entry: SchemaNavigation) -> tuple[Any, ...]:
    hints = (
        None
        if entry.annotations is None
        else tuple(sorted(entry.annotations.model_dump(exclude_none=True).items()))
    )
    return (
        entry.name,
        entry.title,
        entry.description,
        entry.input_schema_sha256,
        entry.output_schema_sha256,
        entry.schema_sha256,
        entry.fragment_count,
        entry.manifest_uri,
        hints,
    )


async def _throttled(operation: Callable[[], Awaitable[T]]) -> T:
    """``operation()``, again after the child's ``retryAfterMs`` when it answers that it is throttling
    this caller (a rate or in-flight limit: ``data.retryAfterMs``, or HTTP 429/503), a bounded number
    of times."""
    for _ in range(_THROTTLE_RETRIES):
        try:
            return await operation()
        except JsonRpcError as error:
            wait = error.retry_after_ms
            if wait is None and error.http_status not in (429, 503):
                raise
            seconds = _DEFAULT_THROTTLE_WAIT if wait is None else wait / 1000
            await anyio.sleep(min(max(seconds, _THROTTLE_WAIT[0]), _THROTTLE_WAIT[1]))
    return await operation()


def _first_error(group: BaseExceptionGroup[Any]) -> AgentConnectorError | None:
    for error in group.exceptions:
        if isinstance(error, AgentConnectorError):
            return error
        if isinstance(error, BaseExceptionGroup):
            nested = _first_error(error)
            if nested is not None:
                return nested
    return None


def _rejection(tool: str | None, category: str, reason: str) -> Rejection:
    return {"tool": tool, "index": -1, "category": category, "reason": reason, "descriptor": None}


def _descriptor(entry: SchemaNavigation, input_schema: Any, output_schema: Any) -> dict[str, Any]:
    """The wire-shaped descriptor of a hidden tool: what its navigation entry says, and the schemas its
    verified disclosure reconstructed."""
    descriptor: dict[str, Any] = {"name": entry.name, "inputSchema": input_schema}
    if entry.title is not None:
        descriptor["title"] = entry.title
    if entry.description is not None:
        descriptor["description"] = entry.description
    if output_schema is not None:
        descriptor["outputSchema"] = output_schema
    if entry.annotations is not None:
        hints = entry.annotations.model_dump(exclude_none=True)
        if hints:
            descriptor["annotations"] = hints
    return descriptor


async def federate(
    session: HostSession,
    front: SearchFront,
    *,
    child: str,
    verified: Mapping[tuple[Any, ...], dict[str, Any]] | None = None,
) -> Federation:
    """Enumerate, verify and admit the hidden tools of the child on ``session`` (module docstring).

    ``verified``: the previous federation's verified descriptors by entry identity (not read again).
    A child whose search cannot be enumerated soundly gives one ``not_federated`` rejection and no
    tools; a transport or protocol failure is raised as itself (the child is then down)."""
    if front.search is None or front.search_argument != "pattern":
        reason = "a call-by-name proxy without a regex search: its hidden tools cannot be enumerated"
        return Federation({}, {}, [_rejection(None, "not_federated", reason)], {}, 0)
    consumer = SchemaDisclosureConsumer(
        session, scope=CallerScope("gateway", child), search_tool=front.search
    )
    plan = PrefixPlan()
    entries: dict[str, SchemaNavigation] = {}
    try:
        while (pattern := plan.next()) is not None:
            found = await _throttled(partial(consumer.discover, pattern))
            plan.record([entry.name for entry in found])
            for entry in found:
                entries.setdefault(entry.name, entry)
    except (GatewayError, DisclosureConsumerError) as error:
        reason = f"the child's search cannot be enumerated: {error.message}"
        return Federation({}, {}, [_rejection(None, "not_federated", reason)], {}, plan.searches)

    previous = verified or {}
    kept: dict[tuple[Any, ...], dict[str, Any]] = {}
    results: dict[str, tuple[Mapping[str, Any], str] | Rejection] = {}
    limiter = anyio.Semaphore(_CONCURRENT_DISCLOSURES)

    async def admit_one(entry: SchemaNavigation) -> None:
        name, digest = entry.name, entry.schema_sha256
        if digest is None or entry.manifest_uri is None or entry.fragment_count is None:
            results[name] = _rejection(name, "undisclosable", "the child discloses no schema for it")
            return
        identity = _identity(entry)
        admitted = session.core.disclosed_tool(name, digest)
        descriptor = previous.get(identity)
        if admitted is not None and descriptor is not None:
            kept[identity] = descriptor  # same connection, same bytes: admitted already
            results[name] = (admitted.descriptor, digest)
            return
        try:
            if descriptor is None:
                async with limiter:
                    disclosed = await consumer.verify(
                        SelectedTool(entry, consumer.scope, consumer.generation)
                    )
                descriptor = _descriptor(entry, disclosed.input_schema, disclosed.output_schema)
            known = (
                None
                if entry.headers is None
                else {json_pointer(header.argument): header.header for header in entry.headers}
            )
            admitted = session.core.admit_disclosed(descriptor, schema_sha256=digest, known_headers=known)
        except (AdmissionError, DisclosureConsumerError) as error:
            results[name] = _rejection(name, str(error.category), error.message)
            return
        kept[identity] = descriptor
        results[name] = (admitted.descriptor, digest)

    try:
        async with anyio.create_task_group() as group:
            for entry in entries.values():
                group.start_soon(admit_one, entry)
    except BaseExceptionGroup as failures:
        # The first failure of the exchange as itself (a TransportFailure, a JsonRpcError...), never
        # a bare group the gateway's supervisor would not recognise.
        first = _first_error(failures)
        if first is None:
            raise
        raise first from None

    admitted_tools: dict[str, Mapping[str, Any]] = {}
    digests: dict[str, str] = {}
    rejected: list[Rejection] = []
    for name in sorted(results):  # a deterministic order, whatever order the searches found them in
        outcome = results[name]
        if isinstance(outcome, tuple):
            admitted_tools[name], digests[name] = outcome
        else:
            rejected.append(outcome)
    return Federation(admitted_tools, digests, rejected, kept, plan.searches)


def merge_listing(report: AdmissionReport, front: SearchFront, federation: Federation) -> AdmissionReport:
    """The child's catalog as the gateway judges it: the listed tools without the synthetic ones (each
    a ``synthetic_proxy`` rejection with its reason), then the federated tools (a listed name wins)."""
    admitted = {name: d for name, d in report.admitted.items() if name not in front.withheld}
    rejected = list(report.rejected)
    for name in sorted(front.withheld):
        if name in report.admitted:
            rejected.append(
                _rejection(
                    name, "synthetic_proxy", "the child's own search/call tool: its tools are federated"
                )
            )
    for name, descriptor in federation.admitted.items():
        admitted.setdefault(name, cast(dict[str, Any], descriptor))
    rejected.extend(federation.rejected)
    return AdmissionReport(admitted=admitted, rejected=rejected)
