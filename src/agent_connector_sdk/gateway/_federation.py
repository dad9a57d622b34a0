"""No proxy of a proxy: a search-first child's hidden tools, federated one by one.

A child behind a search transform (FastMCP's ``RegexSearchTransform``, our own ``serve --openapi``, the
contract lab) lists only two synthetic tools: a search tool and a ``call_tool`` proxy that runs any tool
*by name*. Republished as ``NAME_call_tool``, that proxy would be a hole: a caller could reach, through
it, a tool the gateway's admission rejected or its ``[auth.require]`` guards, and the result would be
checked against the proxy's own (empty) contract. So the gateway never republishes a child's synthetic
tools (:func:`search_front` finds them by shape, whatever their names). Instead, as a disclosure-aware
host, it federates the hidden tools **on demand** — never by enumerating the catalog while serving:

1. **finds** tools through the child's own search: a caller's search is sent to it, and a call naming
   an unseen tool searches that one name (:func:`exact_pattern`, anchored and case-sensitive);
2. **verifies** each navigation entry's disclosure (manifest and fragments read and reconstructed
   against the entry's digests, by :class:`~agent_connector_sdk.mcp.host.SchemaDisclosureConsumer`),
   unless the same contract was verified before (:class:`~._verified.VerifiedCache`, keyed by what the
   entry states: a hit cannot answer for other bytes);
3. **admits** each reconstructed descriptor alone in the child's host core (the same policy, poisoning
   and lock rules as a listed tool; a refusal is a rejection with its category), and refuses a name
   the child also lists (``ambiguous_name``: one name, one contract);

(:class:`Verifier` does 2 and 3) and the gateway publishes each admitted tool as ``NAME_tool`` like any
listed one: the same authorization, Consume and generation rules, called directly by its name at the
child (FastMCP resolves a hidden tool by name) through the host core's admitted copy of its schemas.

**Complete enumeration** is for ``gateway --check`` only (:func:`federate`): the core's
:class:`~agent_connector_sdk.core.search.EnumerationPlanner` (:class:`PrefixPlan` here) partitions the
tool names by anchored, case-exact prefixes (a regex search matches a tool's text, which starts with its
name), splitting any query whose answer may have been cut at the search's result limit, until every
name is covered by a query that provably returned all its matches (its docstring says why that is
sound, and how a search that folds case whatever the pattern says is still enumerated). Bounded in
searches and time ("partial: N of at least M" when a bound stops it) and resumable through the cache.
A search that does not behave like an anchored name search (an entry outside the query's prefix) stops
it (``not_federated``) rather than guess. The search's own time budget (FastMCP stops a regex search
after about a second) is the assumption left: anchored prefixes keep each search far below it.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Final, TypeVar, cast

import anyio

from agent_connector_sdk.core.contracts import AdmissionReport, Rejection, json_pointer
from agent_connector_sdk.core.contracts.errors import AdmissionError
from agent_connector_sdk.core.disclosure_navigation import SchemaNavigation
from agent_connector_sdk.core.host import JsonRpcError
from agent_connector_sdk.core.search import MAX_ENUMERATION_SEARCHES, EnumerationPlanner
from agent_connector_sdk.errors import AgentConnectorError, iter_causes
from agent_connector_sdk.gateway._errors import GatewayError
from agent_connector_sdk.gateway._verified import VerifiedCache, contract_key, descriptor_of
from agent_connector_sdk.mcp.host import HostSession
from agent_connector_sdk.mcp.host.disclosure_consumer import (
    CallerScope,
    DisclosureConsumerError,
    SchemaDisclosureConsumer,
    SelectedTool,
)

__all__ = [
    "FEDERATION_SECONDS",
    "MAX_KEPT",
    "MAX_NAMES",
    "MAX_SEARCHES",
    "Federation",
    "Found",
    "PrefixPlan",
    "Progress",
    "SearchFront",
    "Verifier",
    "consumer_for",
    "exact_pattern",
    "federate",
    "merge_listing",
    "search_front",
]

T = TypeVar("T")

MAX_SEARCHES: Final = MAX_ENUMERATION_SEARCHES
"""At most this many searches per enumeration (the core planner's one bound, shared with the reviewer:
a child answering adversarially cannot loop forever); past it the enumeration is partial."""
FEDERATION_SECONDS: Final = 1800.0
"""At most this long for one complete enumeration (``--check``); past it the result is partial."""
MAX_NAMES: Final = 200_000
"""At most this many distinct names per enumeration (the names are what it holds per tool: ~20 MB at
the bound; a child inventing names stops here, partial)."""
MAX_KEPT: Final = 2_000
"""Admitted tools (and, apart, rejections) an enumeration hands back; the rest are counted only
(the verified disclosures themselves stay in the verified cache, bounded there)."""
_MAX_ADMITTED_KEYS: Final = 10_000
_READS_PER_DISCLOSURE: Final = 3
_READS_IN_FLIGHT: Final = 2
"""At most 2 disclosures verified at once, 3 reads each in flight: 6 requests, under the child's
allowance with room for the search and the callers' calls (a throttled read is retried after the
child's wait, and costs the whole disclosure's reads again). A
gated child admits 8 requests per caller at a time (``RequestBounds.max_in_flight_per_caller``), the
gateway's calls share that allowance, and a request the client has finished still counts at the server
until its stream closes: measured, three disclosures of one read each already met the child's limit
(HTTP 429) on a loaded machine."""
_CAUSES_PER_FAILURE: Final = 8
_THROTTLE_RETRIES: Final = 8
_THROTTLE_WAIT: Final = (0.05, 2.0)  # seconds: the child's retryAfterMs, clamped
_DEFAULT_THROTTLE_WAIT: Final = 0.25  # seconds, for an HTTP 429/503 that says no retryAfterMs


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
class PrefixPlan(EnumerationPlanner):
    """The core's enumeration planner as ``--check`` drives it: an answer outside its searched region
    stops federation (``not_federated``: nothing is guessed)."""

    def record(self, names: Sequence[str]) -> None:
        super().record(names)
        if self.refused is not None:
            raise GatewayError("not_federated", f"the child's {self.refused.removeprefix('the ')}")


# ---------------------------------------------------------------------------------- federation
@dataclass(frozen=True, slots=True)
class Found:
    """One hidden tool a child's search returned, verified and admitted in the child's host core: the
    host core's copy of its descriptor and the child's disclosure digest it was verified against."""

    name: str
    descriptor: Mapping[str, Any]
    schema_sha256: str
    contract_sha256: str | None = None
    """The contract fingerprint the child's navigation entry stated (``None``: it stated none): what a
    call of this tool binds to at the child (``CONTRACT_BINDING_META_KEY``)."""


@dataclass(frozen=True, slots=True)
class Federation:
    """A complete (or bounded) enumeration of a child's hidden catalog, for ``--check``: the admitted
    tools, the rejections, and ``partial`` — why it stopped before the end (``None``: complete).

    Memory is bounded whatever the catalog's size: ``admitted`` and ``rejected`` keep the last
    :data:`MAX_KEPT` of each (by name order); ``admitted_total`` and ``rejected_total`` count them all."""

    admitted: dict[str, Found]
    rejected: list[Rejection]
    searches: int
    partial: str | None = None
    admitted_total: int = -1
    rejected_total: int = -1

    def __post_init__(self) -> None:
        if self.admitted_total < 0:
            object.__setattr__(self, "admitted_total", len(self.admitted))
        if self.rejected_total < 0:
            object.__setattr__(self, "rejected_total", len(self.rejected))


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
    # One task per entry: the walk's bound grows with the group (each exception is visited once).
    causes = iter_causes(group, limit=_CAUSES_PER_FAILURE * (1 + len(group.exceptions)))
    return next((error for error in causes if isinstance(error, AgentConnectorError)), None)


def _rejection(tool: str | None, category: str, reason: str) -> Rejection:
    return {"tool": tool, "index": -1, "category": category, "reason": reason, "descriptor": None}


def exact_pattern(name: str) -> str:
    """The anchored, case-sensitive search that finds the tool named exactly ``name`` and no other."""
    # Any string a caller names, escaped whole; '-' needs no escape outside a class.
    return "^(?-i:" + re.escape(name).replace("\\-", "-") + "(?: |$))"


def consumer_for(session: HostSession, front: SearchFront, child: str) -> SchemaDisclosureConsumer | None:
    """The disclosure consumer that searches ``front``'s search tool (``None``: it has no search)."""
    if front.search is None:
        return None
    return SchemaDisclosureConsumer(
        session,
        scope=CallerScope("gateway", child),
        search_tool=front.search,
        max_in_flight=_READS_PER_DISCLOSURE,
    )


class Verifier:
    """Verifies and admits navigation entries of one child's search, one by one (module docstring):
    the disclosure read through ``cache`` (content-addressed: a known contract is not read again), the
    digests checked by the consumer, the descriptor admitted alone by the session's host core.

    ``listed``: the names the child lists itself; a hidden entry with one of them is refused
    ``ambiguous_name`` (one name, one contract). At most :data:`_READS_IN_FLIGHT` disclosures at once."""

    def __init__(
        self,
        session: HostSession,
        consumer: SchemaDisclosureConsumer,
        *,
        child: str,
        cache: VerifiedCache,
        listed: frozenset[str],
        admitted: dict[str, str] | None = None,
    ) -> None:
        self.session = session
        self.admitted = admitted if admitted is not None else {}
        """Name → the contract key this session's core admitted it under (the fast path's proof)."""
        self.consumer = consumer
        self.child = child
        self.cache = cache
        self.listed = listed
        self._limiter = anyio.Semaphore(_READS_IN_FLIGHT)

    async def search(self, pattern: str) -> list[SchemaNavigation]:
        return await _throttled(partial(self.consumer.discover, pattern))

    def settled(self, entry: SchemaNavigation) -> tuple[Found | Rejection | None, str]:
        """What :meth:`admit` answers for ``entry`` without reading or admitting anything — a refusal by
        its shape, or the tool this connection already verified and admitted under this very contract
        key — else ``None`` (it must be read or admitted); and the entry's contract key."""
        name, digest = entry.name, entry.schema_sha256
        if name in self.listed:
            return _rejection(
                name, "ambiguous_name", "the child both lists and hides a tool of this name"
            ), ""
        if digest is None or entry.manifest_uri is None or entry.fragment_count is None:
            return _rejection(name, "undisclosable", "the child discloses no schema for it"), ""
        key = contract_key(entry)
        held = self.session.disclosed_tool(name, digest)
        if held is not None and self.admitted.get(name) == key and self.cache.touch(self.child, key):
            # This very contract was verified and admitted on this connection: nothing to read or
            # decode (a warm search costs no descriptor work).
            return Found(name, held.descriptor, digest, entry.contract_sha256), key
        return None, key

    async def admit(self, entry: SchemaNavigation) -> Found | Rejection:
        """One entry: a :class:`Found` tool or its rejection (raises only a transport/protocol failure)."""
        known, key = self.settled(entry)
        if known is not None:
            return known
        return await self._admit_afresh(entry, key)

    async def _admit_afresh(self, entry: SchemaNavigation, key: str) -> Found | Rejection:
        name, digest = entry.name, entry.schema_sha256
        assert digest is not None  # settled() refused an entry without one
        try:
            descriptor = await self.cache.recall(self.child, key, entry)
            if descriptor is None:
                async with self._limiter:
                    disclosed = await _throttled(
                        partial(
                            self.consumer.verify,
                            SelectedTool(entry, self.consumer.scope, self.consumer.generation),
                        )
                    )
                descriptor = descriptor_of(entry, disclosed.input_schema, disclosed.output_schema)
                await self.cache.remember(self.child, key, descriptor)
            # Admitted again even when the core holds this name and schema digest: the entry's other
            # fields (description, hints) may have changed, and the core must hold what it states.
            known = (
                None
                if entry.headers is None
                else {json_pointer(header.argument): header.header for header in entry.headers}
            )
            held = self.session.admit_disclosed(descriptor, schema_sha256=digest, known_headers=known)
        except (AdmissionError, DisclosureConsumerError) as error:
            self.admitted.pop(name, None)
            return _rejection(name, str(error.category), error.message)
        if len(self.admitted) >= _MAX_ADMITTED_KEYS:
            self.admitted.clear()  # forgetting costs one admission again, never a wrong answer
        self.admitted[name] = key
        return Found(name, held.descriptor, digest, entry.contract_sha256)

    async def admit_all(self, entries: Sequence[SchemaNavigation]) -> list[Found | Rejection]:
        """Every entry, concurrently (bounded), results in the entries' order; the first transport or
        protocol failure is raised as itself (a TransportFailure, a JsonRpcError...), never a group."""
        results: list[Found | Rejection | None] = [None] * len(entries)
        # What is settled without I/O (a warm search: every entry) is answered here, in this task;
        # only the rest costs a task each.
        pending: list[tuple[int, SchemaNavigation, str]] = []
        for index, entry in enumerate(entries):
            results[index], key = self.settled(entry)
            if results[index] is None:
                pending.append((index, entry, key))

        async def one(index: int, entry: SchemaNavigation, key: str) -> None:
            results[index] = await self._admit_afresh(entry, key)

        try:
            async with anyio.create_task_group() as group:
                for index, entry, key in pending:
                    group.start_soon(one, index, entry, key)
        except BaseExceptionGroup as failures:
            first = _first_error(failures)
            if first is None:
                raise
            raise first from None
        return [result for result in results if result is not None]


Progress = Callable[[int, int, int], None]
"""``progress(verified, found, searches)``: ``found`` is a lower bound of the catalog's size."""


async def federate(
    verifier: Verifier,
    *,
    max_searches: int = MAX_SEARCHES,
    max_seconds: float = FEDERATION_SECONDS,
    max_names: int = MAX_NAMES,
    keep: int = MAX_KEPT,
    progress: Progress | None = None,
) -> Federation:
    """Enumerate the child's hidden catalog completely (module docstring), verifying what each search
    finds as it goes — for ``gateway --check``, never on a serving path.

    Bounded: at most ``max_searches`` searches, ``max_seconds`` seconds and ``max_names`` distinct
    names; a bound that stops it makes the result ``partial`` ("N of at least M", and why). Bounded in
    memory: it holds the names seen and the last ``keep`` tools and rejections, and counts the rest.
    Resumable: what was verified is kept in the verifier's cache (and its shared tier, when the gateway
    has one: across runs and replicas), so the next run reads only what it did not verify. A search
    that does not behave like an anchored name search stops it too (``not_federated``: nothing is
    guessed)."""
    if verifier.consumer is None or verifier.session is None:  # pragma: no cover - typed away
        raise AssertionError
    plan = PrefixPlan(max_searches=max_searches)
    admitted: OrderedDict[str, Found] = OrderedDict()
    rejected: OrderedDict[str, Rejection] = OrderedDict()
    admitted_total = rejected_total = 0
    seen: set[str] = set()
    partial_reason: str | None = None
    with anyio.move_on_after(max_seconds) as deadline:
        try:
            while (pattern := plan.next()) is not None:
                found = await verifier.search(pattern)
                plan.record([entry.name for entry in found])
                fresh = [entry for entry in found if entry.name not in seen]
                if len(seen) + len(fresh) > max_names:
                    partial_reason = f"the name bound ({max_names} names) was reached"
                    break
                seen.update(entry.name for entry in fresh)
                for outcome in await verifier.admit_all(fresh):
                    if isinstance(outcome, Found):
                        admitted_total += 1
                        _keep(admitted, outcome.name, outcome, keep)
                    else:
                        rejected_total += 1
                        _keep(rejected, str(outcome["tool"]), outcome, keep)
                if progress is not None:
                    progress(admitted_total + rejected_total, len(seen), plan.searches)
        except (GatewayError, DisclosureConsumerError) as error:
            reason = f"the child's search cannot be enumerated: {error.message}"
            return Federation({}, [_rejection(None, "not_federated", reason)], plan.searches)
    if deadline.cancelled_caught:
        partial_reason = f"the time bound ({max_seconds:g} s) was reached"
    elif partial_reason is None and plan.budget_reached:
        partial_reason = f"the search bound ({max_searches} searches) was reached"
    elif partial_reason is None and plan.incomplete is not None:
        partial_reason = plan.incomplete
    if partial_reason is not None:
        done = admitted_total + rejected_total
        partial_reason = f"partial: {done} of at least {len(seen)} ({partial_reason})"
    ordered = {name: admitted[name] for name in sorted(admitted)}
    return Federation(
        ordered,
        [rejected[name] for name in sorted(rejected)],
        plan.searches,
        partial_reason,
        admitted_total=admitted_total,
        rejected_total=rejected_total,
    )


def _keep(held: OrderedDict[str, T], name: str, item: T, keep: int) -> None:
    held[name] = item
    while len(held) > keep:
        held.popitem(last=False)


def merge_listing(
    report: AdmissionReport,
    front: SearchFront,
    federated: Mapping[str, Found],
    rejected: Sequence[Rejection] = (),
) -> tuple[AdmissionReport, dict[str, str]]:
    """The child's catalog as the gateway judges it: the listed tools without the synthetic ones (each
    a ``synthetic_proxy`` rejection with its reason), then the ``federated`` tools found so far, then
    the federated ``rejected``. A name both listed and hidden (``ambiguous_name`` among ``rejected``)
    is published under neither contract. Also returns the federated tools' disclosure digests."""
    ambiguous = {r["tool"] for r in rejected if r["category"] == "ambiguous_name"}
    admitted = {
        name: d for name, d in report.admitted.items() if name not in front.withheld and name not in ambiguous
    }
    out = list(report.rejected)
    for name in sorted(front.withheld):
        if name in report.admitted:
            out.append(
                _rejection(
                    name, "synthetic_proxy", "the child's own search/call tool: its tools are federated"
                )
            )
    digests: dict[str, str] = {}
    for name, found in federated.items():
        if name not in admitted and name not in ambiguous:
            admitted[name] = cast(dict[str, Any], found.descriptor)
            digests[name] = found.schema_sha256
    out.extend(rejected)
    return AdmissionReport(admitted=admitted, rejected=out), digests
