"""Every tool behind a search that caps its results: the reviewer's drive of the core's planner.

No I/O of its own: it runs :meth:`SchemaDisclosureConsumer.discover` (the one call that goes out) for
the patterns :class:`~agent_connector_sdk.core.search.EnumerationPlanner` gives, and hands it back the
names each returned.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_connector_sdk.core.disclosure_navigation import SchemaNavigation
from agent_connector_sdk.core.search import MAX_ENUMERATION_SEARCHES, EnumerationPlanner
from agent_connector_sdk.mcp.host.disclosure_consumer import SchemaDisclosureConsumer

__all__ = ["SearchEnumeration"]


class SearchEnumeration:
    """Every tool behind a search that caps its results (FastMCP's ``max_results``, often 5 or 50).

    The caller's patterns are searched as given. When ``.*`` returns as many entries as any search
    did (it may have been cut at the cap), its answer starts the core's
    :class:`~agent_connector_sdk.core.search.EnumerationPlanner`, which splits the names by anchored
    prefixes until every region's search provably returned all its matches (its docstring says why, and
    how the searches grow with the tools over the cap, not the alphabet). Only the default pattern is
    enumerated like this: a caller's own pattern cannot be combined with a prefix, so a capped one leaves
    the review ``incomplete`` (said, with the numbers, in the report). So does what the planner cannot
    split (a capped run of names outside the spec's alphabet, ...) and the one search budget
    (:data:`~agent_connector_sdk.core.search.MAX_ENUMERATION_SEARCHES`, the reviewer's searches
    included).
    """

    def __init__(self, consumer: SchemaDisclosureConsumer, entries: dict[str, SchemaNavigation]) -> None:
        self.consumer = consumer
        self.entries = entries
        self.most = 0
        self.searches = 0
        self.incomplete: str | None = None

    async def _search(self, pattern: str) -> list[str]:
        found = await self.consumer.discover(pattern)
        self.searches += 1
        for entry in found:
            self.entries.setdefault(entry.name, entry)
        self.most = max(self.most, len(found))
        return [entry.name for entry in found]

    async def run(self, patterns: Sequence[str]) -> None:
        results = [await self._search(pattern) for pattern in patterns]
        counts = [len(names) for names in results]
        if ".*" not in patterns and counts and max(counts) >= self.most:
            # A caller's pattern that returned as many as any search did: one broad search (counted,
            # not reviewed) tells whether that was the cap or simply every match.
            probe = await self.consumer.discover(".*")
            self.searches += 1
            self.most = max(self.most, len(probe))
        for pattern, names in zip(patterns, results, strict=True):
            found = len(names)
            if found == 0 or found < self.most:
                continue  # fewer than some search returned: not capped
            if pattern == ".*":
                await self._split(names)
            elif self.incomplete is None:
                self.incomplete = (
                    f"the search returned its most results ({found}) for {pattern!r}, which may be its "
                    "cap; only the default pattern is enumerated"
                )

    async def _split(self, returned: list[str]) -> None:
        # ``returned`` is the answer of ".*" (every name), which starts the plan without a search.
        budget = max(0, MAX_ENUMERATION_SEARCHES - self.searches)
        plan = EnumerationPlanner(first=returned, most_seen=self.most, max_searches=budget)
        while (pattern := plan.next()) is not None:
            found = await self._search(pattern)
            plan.record(found)
        self.most = max(self.most, plan.most_seen)
        if plan.refused is not None:
            self.incomplete = plan.refused
        elif plan.budget_reached:
            self.incomplete = f"stopped after {self.searches} searches (the review's search budget)"
        elif plan.incomplete is not None:
            self.incomplete = plan.incomplete
