"""One child server as the gateway holds it: a host connection, its admitted catalog, its health.

Each :class:`Child` is a *host* toward its server: one :class:`~agent_connector_sdk.mcp.host.HostSession`
per connection (the host core with the gateway's :class:`~agent_connector_sdk.mcp.host.HostOptions`),
so its tools are discovered page by page, admitted one by one (a rejected descriptor is never exposed)
and every result is consumed against the admitted descriptor before it goes anywhere. ``Mcp-Param-*``
headers toward the child are computed by that core from the call's *arguments* (never copied from the
caller's request), and the child's HTTP client carries only the headers its spec names.

Lifecycle, run by :meth:`Child.supervise` (one task per child):

* ``connecting`` → connect + discover within ``connect_timeout``; success publishes a catalog
  (:mod:`._generations`) and the child is ``up`` — a search-first child once one anchored search of
  it answers too, which the gateway's start-up does not wait for (its supervisor does); failure makes
  it ``down``. A search-first child's hidden tools are found on demand (:meth:`Child.search`,
  :meth:`Child.resolve`; :mod:`._federation`), bounded per search (:data:`SEARCH_SECONDS`,
  :data:`MAX_FOUND`) and in what stays published (:data:`MAX_FEDERATED`);
* ``down``: its tools stay published (the caller can still find them) but every call is refused at
  once with ``child_unavailable``; reconnects back off exponentially (0.5 s doubling to ``max_backoff``);
* ``up``: re-lists every ``refresh`` seconds, and after ``notifications/tools/list_changed`` —
  debounced: notifications are coalesced, and two re-lists of one child are at least
  ``relist_interval`` seconds apart, so a child streaming ``list_changed`` costs at most one re-list
  per interval. A re-list that differs moves the catalog's generation. A transport failure during a
  call makes the child ``down`` and wakes the supervisor.

A slow child's call is abandoned after ``call_timeout`` (``child_timeout``); other children are not
affected because every call runs in its caller's own task. ``degrade_after`` consecutive timeouts
mark the child ``degraded`` in its health (calls still go through: the next answer restores ``up``);
every timeout sets ``last_error``. A quiet child is pinged by the gateway's health watcher
(:mod:`._watch`): an unanswered ping degrades it at once, without any caller's call.

Every state change is one log line on this module's logger (down, up, reconnected, degraded,
recovered, generation moved, tools rejected): child and tool names (sanitized), categories and
counts, never an argument, header or credential value.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

import anyio
import fastmcp
import mcp_types
from fastmcp.client.logging import LogMessage
from fastmcp.client.messages import MessageHandler
from fastmcp.client.transports import StdioTransport
from fastmcp.client.transports.http import StreamableHttpTransport

from agent_connector_sdk.core.contracts import AdmissionReport, Rejection
from agent_connector_sdk.core.host import AdmittedTool, JsonRpcError, ToolResult, TransportFailure
from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.gateway._config import ChildSpec, GatewayConfig, resolve_credentials
from agent_connector_sdk.gateway._errors import CONTRACT_BINDING_META_KEY, REFUSAL_CODES, GatewayError
from agent_connector_sdk.gateway._federation import (
    FEDERATION_SECONDS,
    MAX_SEARCHES,
    Federation,
    Found,
    Progress,
    SearchFront,
    Verifier,
    consumer_for,
    exact_pattern,
    federate,
    merge_listing,
    search_front,
)
from agent_connector_sdk.gateway._generations import (
    ChildCatalog,
    ChildTool,
    build_catalog,
    diff_catalogs,
    gateway_name,
)
from agent_connector_sdk.gateway._locks import LockWatch
from agent_connector_sdk.gateway._reasons import StderrTail, child_target, describe_failure
from agent_connector_sdk.gateway._verified import VerifiedCache
from agent_connector_sdk.mcp import compat
from agent_connector_sdk.mcp.host import HostOptions, HostSession
from agent_connector_sdk.mcp.host.disclosure_consumer import DisclosureConsumerError, SchemaDisclosureConsumer
from agent_connector_sdk.sanitize import sanitize_text

__all__ = ["Child", "ChildHealth", "ChildState"]

# Named as before the file moved: operators filter logs on this name.
logger = logging.getLogger("agent_connector_sdk.gateway.children")

ChildState = Literal["connecting", "up", "down", "closed"]
HealthState = Literal["connecting", "up", "degraded", "down", "closed"]
"""What health shows: the connection state, with ``up`` shown as ``degraded`` while calls time out."""
_FIRST_BACKOFF: Final = 0.5
SEARCH_SECONDS: Final = 10.0
"""Seconds one search of a search-first child may take, its verification included (a caller's search
fans out to every such child; a slower child's answer is left out of that search)."""
MAX_FOUND: Final = 50
"""Entries of one child's search answer that are verified (the rest are not shown)."""
MAX_FEDERATED: Final = 2_000
"""Hidden tools of one child published at once (least recently found or called first withdrawn; a
withdrawn tool is found again by the next search or call that names it)."""
_MAX_FEDERATED_REJECTIONS: Final = 100
"""Rejected hidden tools remembered per child (the most recent)."""
_MAX_MISSES: Final = 1_024
"""Names a call resolved in vain, remembered for ``refresh`` seconds (no second search for them)."""
_PROBE_NAME: Final = "agent-connector-gateway-probe"
"""The name the gateway searches for to learn that a search-first child's search answers."""
_CONNECT_FAILURES: Final = (AgentConnectorError, OSError, RuntimeError)
_CLOSE_BOUND: Final = 6.0
"""Seconds a session gets to close: the ``mcp`` SDK ends a stdio child in at most ~4 s (stdin closed,
2 s, SIGTERM to its process group, 2 s, SIGKILL), which also ends a stopped (SIGSTOP) child."""
_LOGGED_REJECTIONS: Final = 10
"""Rejected tools named in one log line; the rest are counted (``--check`` lists them all)."""


def _shown(text: object, limit: int = 120) -> str:
    """A child-controlled string as it may enter a log line: sanitized and bounded."""
    return sanitize_text(str(text), limit)


@dataclass(frozen=True, slots=True)
class ChildHealth:
    """What ``/healthz`` and ``gateway --check`` show about one child (names and counts, no values)."""

    name: str
    transport: str
    state: HealthState
    generation: int | None
    tools: int
    rejected: int
    last_error: str | None
    protocol_version: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "transport": self.transport,
            "state": self.state,
            "generation": self.generation,
            "tools": self.tools,
            "rejected": self.rejected,
            "last_error": self.last_error,
            "protocol_version": self.protocol_version,
        }


class _ListChanged(MessageHandler):
    """Wakes the child's supervisor on ``notifications/tools/list_changed``."""

    def __init__(self, wake: Callable[[], None]) -> None:
        self._wake = wake

    async def on_tool_list_changed(self, message: mcp_types.ToolListChangedNotification) -> None:
        self._wake()


class Child:
    """One child: spec, connection, catalog and state (see the module docstring).

    ``publish(child, catalog)`` is called with every new catalog (first listing and every generation
    move); the gateway applies it to its server synchronously.
    """

    def __init__(
        self,
        spec: ChildSpec,
        config: GatewayConfig,
        options: HostOptions,
        publish: Callable[[Child, ChildCatalog], None],
        *,
        environ: Mapping[str, str] | None = None,
        lock: LockWatch | None = None,
        cache: VerifiedCache | None = None,
    ) -> None:
        self.spec = spec
        self._lock = lock
        self.config = config
        # A search-first child's hidden tools are held by the host core as disclosed tools: it must
        # remember as many as a listing may hold, or it would forget admitted tools (federation).
        self.options = replace(options, max_disclosed=max(options.max_disclosed, options.bounds.max_tools))
        self._publish = publish
        self._environ = environ
        self.state: ChildState = "connecting"
        self.catalog: ChildCatalog | None = None
        self.last_error: str | None = None
        self.reason: str | None = None
        """Why the child is down, for operators and callers: its URL or command and the cause
        (:func:`~._reasons.describe_failure`; never a stderr line, see :attr:`stderr_line`); or, while
        it is degraded, how many calls timed out."""
        self._stderr: StderrTail | None = None
        self._process: Any = None
        self.session: HostSession | None = None
        self._wake = asyncio.Event()
        self._relist_requested = False
        self.reconnects = 0
        self.listed_at: float | None = None
        self.relists = 0
        """Re-lists done on an open connection (periodic or after ``list_changed``), for operators."""
        self.timeouts = 0
        """Consecutive calls that timed out; ``degrade_after`` of them mark the child degraded."""
        self._was_up = False
        self.last_answer = time.monotonic()
        """When the child last answered (connected, a call, a ping): the health watcher pings after quiet."""
        self.hung = False
        """The health watcher's ping went unanswered (the child is degraded until it answers anything)."""
        self.server_info: tuple[str | None, str | None] = (None, None)
        """The child's ``serverInfo`` name and version as it last said them (untrusted, unsanitized)."""
        # -- a search-first child (see _federation): its hidden tools are found on demand.
        self.front: SearchFront | None = None
        self.cache = cache if cache is not None else VerifiedCache()
        self.enumerate_all = False
        """``gateway --check``: enumerate the hidden catalog completely on connect (never when serving)."""
        self.progress: Progress | None = None
        self.enumeration_searches = MAX_SEARCHES
        self.enumeration_seconds = FEDERATION_SECONDS
        """``--check``'s bounds on this child's enumeration (a bound that stops it makes it partial)."""
        self.federation: Federation | None = None
        """The last complete enumeration (``--check``), with ``partial`` when a bound stopped it."""
        self.searches = 0
        """Searches sent to this child (callers' searches, calls resolved, the probe)."""
        self._listing: AdmissionReport | None = None
        self._page_trace: tuple[str | None, ...] = ()
        self._consumer: tuple[HostSession, SchemaDisclosureConsumer] | None = None
        self._federated: OrderedDict[str, tuple[Found, float]] = OrderedDict()
        self._federated_rejected: OrderedDict[str, Rejection] = OrderedDict()
        self._misses: OrderedDict[str, float] = OrderedDict()
        self._admitted_keys: dict[str, str] = {}
        self.required: frozenset[str] = frozenset()
        """Names of this child's tools that ``[auth.require]`` keys name (set by the gateway)."""
        self.confirmed: set[str] = set()
        """Gateway names of required tools a search-first child was seen to have (admitted or rejected),
        so their keys resolve though the tool is hidden (and not held by the LRU of published ones)."""
        self.requirements_checked = False
        """A search-first child's required names were looked up by anchored exact search (once up)."""

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def degraded(self) -> bool:
        return self.state == "up" and self.timeouts >= self.config.degrade_after

    def health(self) -> ChildHealth:
        catalog = self.catalog
        session = self.session
        return ChildHealth(
            name=self.name,
            transport=self.spec.transport,
            state="degraded" if self.degraded else self.state,
            generation=None if catalog is None else catalog.generation,
            tools=0 if catalog is None else len(catalog.tools),
            rejected=0 if catalog is None else len(catalog.rejected),
            last_error=self.last_error,
            protocol_version=None if session is None else session.protocol_version,
        )

    # -- connection ------------------------------------------------------------------------------
    def _client(self) -> fastmcp.Client[Any]:
        headers, env = resolve_credentials(self.spec, self._environ)
        handler = _ListChanged(self.request_relist)
        transport: Any
        if self.spec.url is not None:
            # Only the spec's headers: nothing of any caller's request is ever put on this client.
            transport = StreamableHttpTransport(self.spec.url, headers=headers)
        else:
            command = self.spec.command
            if self._stderr is None:
                # Its lines still reach our stderr, sanitized, capped and prefixed; the last one is kept.
                self._stderr = StderrTail(label=f"child {self.name}")
            # keep_alive=False: closing the session ends the process (stdin closed, then SIGTERM, then
            # SIGKILL). fastmcp's default keeps it running until the transport itself is closed, so a
            # reconnect or a shutdown would leave the old process behind (a stopped one for good).
            transport = StdioTransport(
                command=command[0],
                args=list(command[1:]),
                env=env or None,
                cwd=self.spec.cwd,
                log_file=self._stderr.file,
                keep_alive=False,
            )
        return fastmcp.Client(
            transport, timeout=self.config.call_timeout, message_handler=handler, log_handler=self._child_log
        )

    async def _child_log(self, message: LogMessage) -> None:
        """A child's ``notifications/message``: only its level is noted. fastmcp's default handler
        writes the message's data into the gateway's log at the child's level, and a child's words
        may quote a caller's argument values (the client opts in to every child's debug logs)."""
        logger.debug("child %s sent a log message at %s", self.name, message.level)

    async def connect(self, *, await_search: bool = True) -> ChildCatalog:
        """Connect, discover and admit; publish the catalog and mark the child ``up``.

        A search-first child is ``up`` once its search answers too (one bounded search); with
        ``await_search=False`` (the gateway's start-up, which must not wait for it) it is published and
        left ``connecting`` for its supervisor to finish (:meth:`finish_connect`). With
        :attr:`enumerate_all` (``--check``) its hidden catalog is then enumerated completely.

        A child that does not finish within ``connect_timeout`` is ``GatewayError("child_timeout")``; any
        other failure is raised as it happened (``TransportFailure``, ``JsonRpcError``,
        ``PaginationError``...). Either way the child is left ``down``."""
        await self._drop_session()
        # The state stays what it was ("connecting" at first, "down" while reconnecting) until this works.
        try:
            options = self.options if self._lock is None else self._lock.options(self.spec, self.options)
            session = HostSession(self._client(), options)  # before connect: the header hook
            session.notifications.label = f"child {self.name}"  # whose flood the summary line names
            self.session = session
            with anyio.fail_after(self.config.connect_timeout):
                # The stdio transport starts the process in this task's context: keep it, to say how
                # it ended (its exit status) if the child goes down.
                with compat.observe_stdio_processes(self._remember_process):
                    await session.connect()
                info = session.client.server_info
                self.server_info = (None, None) if info is None else (info.name, info.version)
                report = await session.discover_tools()
            catalog = self._publish_listing(session, report)
        except TimeoutError as error:
            await self._down("child_timeout", error)
            raise GatewayError(
                "child_timeout", f"child {self.name} did not connect within {self.config.connect_timeout:g} s"
            ) from None
        except (AgentConnectorError, OSError, RuntimeError) as error:
            # Raised as it happened (the family says what failed); the child is down meanwhile.
            await self._down(str(getattr(error, "category", type(error).__name__)), error)
            raise
        if self.front is not None and self.front.search is not None and not await_search:
            return catalog  # "connecting" until its search answers (the supervisor's next step)
        return await self.finish_connect()

    async def finish_connect(self) -> ChildCatalog:
        """The rest of :meth:`connect` on the open session: a search-first child's search must answer
        (one anchored search, within ``connect_timeout``), then the child is ``up``."""
        session = self.session
        assert session is not None and self.catalog is not None
        if self.front is not None and self.front.search is not None:
            verifier = self._verifier()
            assert verifier is not None
            try:
                with anyio.fail_after(self.config.connect_timeout):
                    self.searches += 1
                    await verifier.search(exact_pattern(_PROBE_NAME))
            except TimeoutError as error:
                await self._down("child_timeout", error)
                raise GatewayError(
                    "child_timeout",
                    f"child {self.name}: its search did not answer within {self.config.connect_timeout:g} s",
                ) from None
            except (AgentConnectorError, OSError, RuntimeError) as error:
                await self._down(str(getattr(error, "category", type(error).__name__)), error)
                raise
            if self.enumerate_all:
                await self._enumerate(verifier)
        catalog = self.catalog
        assert catalog is not None
        reconnected = self._was_up
        self.last_answer = time.monotonic()
        self.hung = False
        self.state = "up"
        self.last_error = None
        self.reason = None
        self.timeouts = 0
        self._was_up = True
        (logger.warning if reconnected else logger.info)(
            "child %s %s: %d tools, %d rejected, generation %d, revision %s",
            self.name,
            "reconnected" if reconnected else "up",
            len(catalog.tools),
            len(catalog.rejected),
            catalog.generation,
            _shown(session.protocol_version or "-", 40),
        )
        await self._resolve_required()
        return self.catalog or catalog

    @property
    def requirements_pending(self) -> bool:
        """A search-first child whose required names have not been looked up yet: their keys are
        neither resolved nor unmatched (its tools are held back meanwhile)."""
        return self.front is not None and self.front.search is not None and not self.requirements_checked

    async def _resolve_required(self) -> None:
        """Names resolve or the tools stay closed: every required name a search-first child does not
        list is looked up by one anchored exact search (bounded by :data:`SEARCH_SECONDS` each; as many
        as the operator wrote keys). Found (admitted or rejected) → confirmed; then the gateway judges
        its hold again (a name never found keeps the child's tools held back)."""
        if self.front is None or self.front.search is None:
            return
        unresolved = 0
        for name in sorted(self.required):
            exposed = gateway_name(self.name, name)
            catalog = self.catalog
            if exposed in self.confirmed or (catalog is not None and exposed in catalog.tools):
                continue
            unresolved += 1
            if self.state != "up":
                return  # down meanwhile: the next connect looks again
            self._misses.pop(name, None)  # a fresh look on every connect
            await self.resolve(name)
        if self.requirements_checked and not unresolved:
            return  # nothing was looked up: the gateway's judgement stands
        self.requirements_checked = True
        if self.catalog is not None:
            self._publish(self, self.catalog)  # same catalog: the gateway re-judges its hold

    async def _enumerate(self, verifier: Verifier) -> None:
        """``--check``: the whole hidden catalog, bounded (see :func:`~._federation.federate`); what it
        verified is published in full (a check is one process, not a server)."""
        federation = await federate(
            verifier,
            max_searches=self.enumeration_searches,
            max_seconds=self.enumeration_seconds,
            progress=self.progress,
        )
        self.federation = federation
        now = time.monotonic()
        for name, found in federation.admitted.items():
            self._federated[name] = (found, now)
        for rejection in federation.rejected:
            self._federated_rejected[str(rejection["tool"])] = rejection
        self.confirmed.update(
            gateway_name(self.name, name)
            for name in self.required
            if name in federation.admitted or name in self._federated_rejected
        )
        self._republish()

    def _publish_listing(self, session: HostSession, report: AdmissionReport) -> ChildCatalog:
        """The child's catalog from its admitted listing, published when its generation moved. A
        search-first child's synthetic tools are withheld and the hidden tools found so far (by
        searches and calls, :meth:`search`) kept beside its listed ones: nothing is enumerated here."""
        self._listing = report
        self._page_trace = tuple(session.cursor_trace)
        self.front = search_front(report.admitted)
        return self._republish()

    def _republish(self, *, quiet: bool = False) -> ChildCatalog:
        report = self._listing
        assert report is not None
        previous = self.catalog
        digests: dict[str, str] | None = None
        if self.front is not None:
            rejected = list(self._federated_rejected.values())
            if self.front.search is None:
                rejected.append(
                    {
                        "tool": None,
                        "index": -1,
                        "category": "not_federated",
                        "reason": "a call-by-name proxy without a search: its hidden tools cannot be found",
                        "descriptor": None,
                    }
                )
            federated = {name: found for name, (found, _) in self._federated.items()}
            report, digests = merge_listing(report, self.front, federated, rejected)
        catalog = build_catalog(
            self.name, report, page_trace=self._page_trace, previous=previous, schema_digests=digests
        )
        self.listed_at = time.monotonic()
        if previous is None or catalog.generation != previous.generation:
            self.catalog = catalog
            self._publish(self, catalog)
            if quiet:
                logger.debug("child %s: %d hidden tools published", self.name, len(self._federated))
            else:
                self._log_catalog(previous, catalog)
        else:
            self.catalog = catalog  # same content; the newest evidence (page trace) is kept
        return catalog

    # -- on demand: a search-first child's hidden tools -------------------------------------------------
    def _verifier(self) -> Verifier | None:
        session, front, listing = self.session, self.front, self._listing
        if session is None or front is None or listing is None:
            return None
        if self._consumer is None or self._consumer[0] is not session:
            consumer = consumer_for(session, front, self.name)
            if consumer is None:
                return None
            self._consumer = (session, consumer)
            self._admitted_keys = {}  # a new session's core holds nothing yet
        # Every name the child lists — admitted, rejected or synthetic: a hidden entry with one of them
        # is ambiguous (and a hidden "call_tool" never becomes a proxy of a proxy).
        listed = frozenset(listing.admitted) | {r["tool"] for r in listing.rejected if r["tool"] is not None}
        return Verifier(
            session,
            self._consumer[1],
            child=self.name,
            cache=self.cache,
            listed=listed,
            admitted=self._admitted_keys,
        )

    async def search(self, pattern: str) -> list[str]:
        """The caller's ``pattern`` sent to this child's own search (a search-first child that is up):
        every entry of its answer (at most :data:`MAX_FOUND`) verified and admitted alone, published,
        and their gateway names returned in the child's order. Bounded by :data:`SEARCH_SECONDS`; a
        child that fails or is slow gives nothing (and a transport failure marks it down)."""
        session = self.session
        verifier = self._verifier() if self.state == "up" else None
        if verifier is None or session is None:
            return []
        self.searches += 1
        try:
            with anyio.fail_after(SEARCH_SECONDS):
                entries = (await verifier.search(pattern))[:MAX_FOUND]
                outcomes = await verifier.admit_all(entries)
        except TimeoutError:
            logger.info("child %s: a search took over %g s, its answer left out", self.name, SEARCH_SECONDS)
            return []
        except DisclosureConsumerError as error:
            logger.info("child %s: a search was refused (%s)", self.name, error.category)
            return []
        except TransportFailure as failure:
            self.mark_down("transport_failure", session, failure)
            return []
        except AgentConnectorError as error:
            logger.info("child %s: a search failed (%s)", self.name, _shown(error.category, 60))
            return []
        return self._take(outcomes, session)

    def _take(self, outcomes: list[Found | Rejection], session: HostSession) -> list[str]:
        """Record what a search verified; republish when anything changed. Synchronous: no request
        sees half of it."""
        if session is not self.session:
            return []  # the child reconnected meanwhile: the next search finds them on the new session
        now = time.monotonic()
        changed = False
        names: list[str] = []
        for outcome in outcomes:
            seen = outcome.name if isinstance(outcome, Found) else str(outcome["tool"])
            if seen in self.required:
                self.confirmed.add(gateway_name(self.name, seen))  # the child has it: its key resolves
            if isinstance(outcome, Found):
                known = self._federated.pop(outcome.name, None)
                # Any change of the contract, not only of the schemas: a hint or description flipped
                # under the same schema digest is a new tool to publish (and a bound call goes stale).
                changed = (
                    changed
                    or known is None
                    or known[0].schema_sha256 != outcome.schema_sha256
                    or known[0].descriptor != outcome.descriptor
                )
                changed = changed or self._federated_rejected.pop(outcome.name, None) is not None
                self._federated[outcome.name] = (outcome, now)
                names.append(outcome.name)
                continue
            name = str(outcome["tool"])
            changed = changed or self._federated.pop(name, None) is not None
            if self._federated_rejected.get(name) != outcome:
                self._federated_rejected.pop(name, None)
                self._federated_rejected[name] = outcome
                changed = True
        while len(self._federated) > MAX_FEDERATED:
            self._federated.popitem(last=False)
            changed = True
        while len(self._federated_rejected) > _MAX_FEDERATED_REJECTIONS:
            self._federated_rejected.popitem(last=False)
            changed = True
        catalog = self._republish(quiet=True) if changed else self.catalog
        tools = {} if catalog is None else catalog.tools
        return [exposed for name in names if (exposed := gateway_name(self.name, name)) in tools]

    async def resolve(self, name: str) -> ChildTool | None:
        """The hidden tool named ``name`` at this child, found by one anchored exact search, verified and
        published before anything runs; ``None`` when the child has no such admitted tool."""
        missed = self._misses.get(name)
        if missed is not None and time.monotonic() - missed < self.config.refresh:
            return None
        found = await self.search(exact_pattern(name))
        exposed = gateway_name(self.name, name)
        catalog = self.catalog
        if exposed in found and catalog is not None and exposed in catalog.tools:
            self._misses.pop(name, None)
            return catalog.tools[exposed]
        if self.state == "up":
            self._misses[name] = time.monotonic()
            while len(self._misses) > _MAX_MISSES:
                self._misses.popitem(last=False)
        return None

    @property
    def federated(self) -> int:
        """Hidden tools published now."""
        return len(self._federated)

    def _log_catalog(self, previous: ChildCatalog | None, catalog: ChildCatalog) -> None:
        """One line when the generation moved, one when the rejected set changed (names, categories)."""
        if previous is not None:
            before = {name: tool.descriptor_sha256 for name, tool in previous.tools.items()}
            diff = diff_catalogs(before, catalog)
            logger.warning(
                "child %s generation moved %d -> %d: %d added, %d changed, %d removed, %d rejected",
                self.name,
                previous.generation,
                catalog.generation,
                len(diff.added),
                len(diff.changed),
                len(diff.removed),
                len(catalog.rejected),
            )
        if catalog.rejected and (previous is None or previous.rejected != catalog.rejected):
            named = ", ".join(
                f"{_shown(r.tool if r.tool is not None else '(no name)', 130)} ({r.category})"
                for r in catalog.rejected[:_LOGGED_REJECTIONS]
            )
            more = len(catalog.rejected) - _LOGGED_REJECTIONS
            logger.warning(
                "child %s tools rejected (%d): %s%s",
                self.name,
                len(catalog.rejected),
                named,
                f" and {more} more" if more > 0 else "",
            )

    async def relist(self) -> ChildCatalog:
        """Re-list now (the generation moves only if the catalog differs)."""
        session = self.session
        if session is None or self.state != "up":
            return await self.connect()
        self.relists += 1
        if self._lock is not None:  # an updated lock file applies from this listing on
            self._lock.refresh()
            session.use_lock_entry(self._lock.entry(self.spec))
        try:
            with anyio.fail_after(self.config.connect_timeout):
                report = await session.discover_tools()
            return self._publish_listing(session, report)
        except TimeoutError as error:
            await self._down("child_timeout", error)
            raise GatewayError("child_timeout", f"child {self.name} did not re-list in time") from None
        except (AgentConnectorError, OSError, RuntimeError) as error:
            await self._down(str(getattr(error, "category", type(error).__name__)), error)
            raise

    async def _down(self, category: str, error: BaseException | None = None) -> None:
        process = self._process
        if process is not None and error is not None:
            # The pipe closes before the process is reaped: give its exit status a moment to arrive.
            with anyio.move_on_after(0.5):
                while process.returncode is None:
                    await anyio.sleep(0.02)
        self._set_down(category, error)
        await self._drop_session()

    def _remember_process(self, process: Any) -> None:
        self._process = process

    def _set_down(self, category: str, error: BaseException | None) -> None:
        """Mark the child down with its reason; one log line when it was not down already for the same
        reason (a child failing every reconnect is logged once, not once per backoff step)."""
        if self.state == "closed":
            return
        reason = self._explain(error)
        if self.state != "down" or self.reason != reason or self.last_error != category:
            stderr = f"; its last stderr line: {self.stderr_line}" if self.stderr_line else ""
            logger.warning(
                "child %s down: %s (%s)%s", self.name, reason or "no reason known", category, stderr
            )
        self.state = "down"
        self.last_error = category
        self.reason = reason
        self.timeouts = 0

    def _explain(self, error: BaseException | None) -> str | None:
        if isinstance(error, GatewayError) and error.category == "invalid_config":
            # A configuration the child cannot be reached with: the message says what (a variable's
            # name, never its value).
            return _shown(f"{child_target(self.spec)}: {error.message}", 300)
        if error is None:
            return None
        process = self._process
        status = None if process is None else process.returncode
        return describe_failure(self.spec, error, exit_status=status if isinstance(status, int) else None)

    @property
    def stderr_line(self) -> str | None:
        """A stdio child's last non-empty stderr line (sanitized, bounded): for the operator's log and
        evidence only — a child's stderr may quote what callers sent it."""
        return None if self._stderr is None else self._stderr.last_line

    async def _drop_session(self) -> None:
        session, self.session = self.session, None
        if session is None:
            return
        with contextlib.suppress(Exception):
            with anyio.move_on_after(_CLOSE_BOUND):
                await session.close()

    def request_relist(self) -> None:
        self._relist_requested = True
        self._wake.set()

    def mark_down(
        self, category: str, session: HostSession | None = None, error: BaseException | None = None
    ) -> None:
        """A call saw the transport fail: stop sending calls here and let the supervisor reconnect.
        ``session``: the session the call used; a failure on a session already replaced (a call that
        outlived a reconnect) says nothing about the new one."""
        if session is not None and session is not self.session:
            return
        if self.state == "up":
            self._set_down(category, error)
            self._wake.set()

    # -- the supervisor ----------------------------------------------------------------------------
    async def supervise(self) -> None:
        """Keep the child connected and its catalog current until cancelled (or closed).

        Re-lists are debounced: a ``list_changed`` wakes the loop, which waits until ``relist_interval``
        has passed since the last listing (notifications meanwhile only set the same flag), then
        re-lists once. A periodic ``refresh`` re-lists too. A reconnect is a listing of its own."""
        delay = _FIRST_BACKOFF
        while self.state != "closed":
            if self.state == "connecting" and self.session is not None and self.catalog is not None:
                # Published at start-up without waiting for its search: now it must answer.
                try:
                    await self.finish_connect()
                except _CONNECT_FAILURES:
                    await self._sleep(delay)
                    delay = min(delay * 2, self.config.max_backoff)
                    continue
            if self.state != "up":
                try:
                    await self.connect()
                    delay = _FIRST_BACKOFF
                    self.reconnects += 1
                except _CONNECT_FAILURES:
                    await self._sleep(delay)
                    delay = min(delay * 2, self.config.max_backoff)
                    continue
            due = (self.listed_at or time.monotonic()) + self.config.refresh
            while self.state == "up" and not self._relist_requested and time.monotonic() < due:
                await self._sleep(due - time.monotonic())
            if self.state != "up":
                continue  # a call saw the transport fail: reconnect (that lists afresh)
            # Coalesce: whatever arrives until the interval has passed is answered by one re-list.
            earliest = (self.listed_at or 0.0) + self.config.relist_interval
            if time.monotonic() < earliest:
                await asyncio.sleep(earliest - time.monotonic())
            if self.state == "up":
                self._relist_requested = False
                with contextlib.suppress(*_CONNECT_FAILURES):
                    await self.relist()
                    # A required name not found yet is looked up again at each refresh (one search
                    # per such key): a tool the child adds later is then guarded and its hold lifted.
                    if self.requirements_checked and self.state == "up":
                        await self._resolve_required()

    async def _sleep(self, seconds: float) -> None:
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout=max(seconds, 0.0))

    async def close(self) -> None:
        self.state = "closed"
        self._wake.set()
        await self._drop_session()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # -- calls -----------------------------------------------------------------------------------------
    async def call(self, tool: ChildTool, arguments: Mapping[str, Any] | None) -> ToolResult:
        """Call ``tool`` through the host core: Invoke (arguments, ``Mcp-Param-*`` from the body),
        Execute at the child, Consume (the result against the admitted descriptor).

        Gateway refusals are ``GatewayError``: ``child_unavailable`` (down or reconnecting),
        ``child_timeout`` (no answer within ``call_timeout``), ``tool_changed`` (the child's catalog moved
        past this tool). The host's own families pass through as raised: ``TransportFailure`` (the child
        is then marked down), ``JsonRpcError`` (the child's error), ``ContractError`` (Invoke or Consume
        refused)."""
        session = self.session
        if self.state != "up" or session is None:
            why = f" ({self.reason})" if self.reason else ""
            raise GatewayError("child_unavailable", f"child {self.name} is {self.state}{why}")
        target: AdmittedTool | str = tool.name
        binding: dict[str, Any] | None = None
        if tool.schema_sha256 is not None:
            # A hidden tool: verified again (one anchored search; its disclosure is cached by contract)
            # when the session no longer holds it (a reconnect) or it was last verified over ``refresh``
            # seconds ago, so a change at the child is seen before the call runs.
            held = self._federated.get(tool.name)
            if held is not None:
                self._federated.move_to_end(tool.name)  # least recently found *or called* goes first
            stale = held is None or time.monotonic() - held[1] > self.config.refresh
            if stale or session.disclosed_tool(tool.name, tool.schema_sha256) is None:
                await self.resolve(tool.name)
                session = self.session
                if self.state != "up" or session is None:
                    raise GatewayError("child_unavailable", f"child {self.name} is {self.state}")
        catalog = self.catalog
        current = None if catalog is None else catalog.tools.get(tool.exposed)
        if current is None or current.descriptor_sha256 != tool.descriptor_sha256:
            raise GatewayError("tool_changed", f"{tool.exposed} changed at child {self.name}")
        if tool.schema_sha256 is not None:
            # The host core's copy admitted from the verified disclosure, called by name.
            admitted = session.disclosed_tool(tool.name, tool.schema_sha256)
            if admitted is None:
                raise GatewayError(
                    "tool_changed", f"{tool.exposed} could not be verified at child {self.name}"
                )
            target = admitted
            held = self._federated.get(tool.name)
            if held is not None and held[0].contract_sha256 is not None:
                # Bound to the contract the child stated when it was verified: a child that judges the
                # binding (another gateway) refuses the call if the tool changed behind it since.
                binding = {CONTRACT_BINDING_META_KEY: held[0].contract_sha256}
        if session.tools_changed:
            # The child said its tools changed. Re-listing is the supervisor's (debounced) job, not
            # every call's: the host session would otherwise re-list before each call of a storm.
            # Until that re-list, calls are judged against the contract the gateway admitted.
            session.tools_changed = False
            self.request_relist()
        before = session.notifications.tally.snapshot()
        try:
            with anyio.fail_after(self.config.call_timeout):
                result = await session.call(target, arguments, meta=binding)
        except TimeoutError:
            self._timed_out(session)
            # A child flooding notifications is not silent: say what it sent instead of its answer.
            flood = session.notifications.tally.since(before).summary()
            sent = f" ({flood})" if flood is not None else ""
            raise GatewayError(
                "child_timeout",
                f"child {self.name} did not answer within {self.config.call_timeout:g} s{sent}",
            ) from None
        except TransportFailure as failure:
            if failure.code == mcp_types.REQUEST_TIMEOUT:
                self._timed_out(session)
            else:
                self.mark_down("transport_failure", session, failure)
            raise
        except JsonRpcError as error:
            self._answered(session)
            if binding is not None and error.code == REFUSAL_CODES["tool_changed"]:
                # The child judged our binding stale: the tool changed there. Verified again first next
                # time (searched, its disclosure read if its contract moved); this call does not run.
                held = self._federated.get(tool.name)
                if held is not None:
                    self._federated[tool.name] = (held[0], float("-inf"))
                raise GatewayError("tool_changed", f"{tool.exposed} changed at child {self.name}") from None
            raise
        except AgentConnectorError:
            self._answered(session)  # the child answered (an error, or a result its contract refuses)
            raise
        self._answered(session)
        return result

    def _timed_out(self, session: HostSession) -> None:
        if session is not self.session or self.state != "up":
            return
        self.timeouts += 1
        self.last_error = "child_timeout"  # every timeout shows, degraded or not yet
        if self.timeouts == self.config.degrade_after:
            self.reason = _shown(
                f"child_timeout ({self.timeouts} consecutive calls got no answer within "
                f"{self.config.call_timeout:g} s)",
                300,
            )
            logger.warning("child %s degraded: %s", self.name, self.reason)

    def ping_timed_out(self, session: HostSession) -> None:
        """The health watcher's ``ping`` got no answer within ``call_timeout`` (:mod:`._watch`): a child
        that cannot answer a ping is hung, so it is degraded at once."""
        if session is not self.session or self.state != "up":
            return
        was_degraded = self.degraded
        self.timeouts = max(self.timeouts + 1, self.config.degrade_after)
        self.last_error = "child_timeout"
        self.hung = True
        if not was_degraded:
            self.reason = f"child_timeout (no answer to a ping within {self.config.call_timeout:g} s)"
            logger.warning("child %s degraded: %s", self.name, self.reason)

    def heard_from(self, session: HostSession) -> None:
        """The child answered the health watcher's ``ping``: alive. That ends a degradation the
        watcher caused (:meth:`ping_timed_out`), not one of calls timing out: a child that answers
        pings while its calls time out has slow tools, and only a call's answer says otherwise."""
        if session is not self.session:
            return
        self.last_answer = time.monotonic()
        if self.hung:
            self._answered(session)

    def _answered(self, session: HostSession) -> None:
        if session is not self.session:
            return
        self.last_answer = time.monotonic()
        self.hung = False
        if not self.timeouts:
            return
        if self.degraded:
            logger.warning("child %s recovered: answered after %d timed-out calls", self.name, self.timeouts)
            self.last_error = None
            self.reason = None
        self.timeouts = 0
