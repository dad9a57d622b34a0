"""Every tool behind a search that caps its results: the searches to run and when to stop.

No I/O of its own: it drives :meth:`SchemaDisclosureConsumer.discover` (the one call that goes out)
and decides from the counts it returns which name regions to search next.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from agent_connector_sdk.core.contracts import MAX_TOOL_NAME_LENGTH
from agent_connector_sdk.core.disclosure_navigation import SchemaNavigation
from agent_connector_sdk.mcp.host.disclosure_consumer import SchemaDisclosureConsumer

__all__ = ["SearchEnumeration"]


# Tool names are 1-128 of [A-Za-z0-9_.-]; the search regex is case-insensitive, so a name's next
# character, folded, is one of these, or the name ends there (the joined text goes on with a space or
# stops), or it is a character outside the spec's alphabet.
_NAME_ALPHABET: Final = "abcdefghijklmnopqrstuvwxyz0123456789_.-"
_END: Final = " "  # the name ends after the prefix (a space never occurs in a spec name)
_OTHER: Final = "*"  # any character outside the alphabet
_ALL_SYMBOLS: Final = frozenset((*_NAME_ALPHABET, _END, _OTHER))
_MAX_SEARCHES: Final = 5_000


def _escaped(name_part: str) -> str:
    """A name prefix as a literal regex (only ``.`` and ``-`` of the name alphabet are special)."""
    return "".join("\\" + c if c in ".-" else c for c in name_part)


def _region_pattern(prefix: str, symbols: frozenset[str]) -> str:
    """The regex for the names that start with ``prefix`` (case-insensitively) and go on with one of
    ``symbols``: FastMCP's text starts with the name, then a space, then description and parameters."""
    alternatives: list[str] = []
    characters = "".join(sorted(c for c in symbols if c in _NAME_ALPHABET))
    if characters:
        alternatives.append("[" + _escaped(characters) + "]")
    if _END in symbols:
        alternatives.append(" |$")
    if _OTHER in symbols:
        # Case-folded then negated by the regex engine: exactly what no alphabet class above matches.
        alternatives.append("[^a-z0-9_.\\- ]")
    return "^" + _escaped(prefix) + "(?:" + "|".join(alternatives) + ")"


def _symbol(name: str, position: int) -> str:
    """The folded symbol of ``name`` after its first ``position`` characters (see :data:`_ALL_SYMBOLS`)."""
    if position >= len(name) or name[position] == " ":
        return _END
    character = name[position].lower() if name[position].isascii() else name[position]
    return character if character in _NAME_ALPHABET else _OTHER


def _partition(symbols: frozenset[str], observed: Mapping[str, int], cap: int) -> list[frozenset[str]]:
    """Split a capped region's next symbols into groups each expected below the cap.

    ``observed`` counts the names the capped search returned per symbol (a lower bound of each
    symbol's true count). Observed symbols are packed greedily into groups of at most half the cap
    (one over that stands alone); the symbols nobody returned form one more group, searched once.
    """
    half = max(1, cap // 2)
    groups: list[tuple[int, set[str]]] = []
    for symbol in sorted(observed, key=lambda s: (-observed[s], s)):
        for index, (load, members) in enumerate(groups):
            if load + observed[symbol] <= half:
                members.add(symbol)
                groups[index] = (load + observed[symbol], members)
                break
        else:
            groups.append((observed[symbol], {symbol}))
    partition = [frozenset(members) for _, members in groups]
    unseen = symbols - set(observed)
    if unseen:
        partition.append(frozenset(unseen))
    return partition


class SearchEnumeration:
    """Every tool behind a search that caps its results (FastMCP's ``max_results``, often 5 or 50).

    FastMCP's regex runs over the tool's name, description and parameters joined by spaces, so a
    pattern anchored with ``^`` selects by the name's start (see :func:`_region_pattern`). A search
    returning fewer entries than the most any search returned was not capped (the cap is at least
    that); one returning as many may have been. A capped region (a name prefix and a set of next
    symbols) is split by what its search returned: the next symbols seen are grouped so each group
    should fall below the cap, the unseen ones are searched together, and a group holding every
    returned name is known capped without a search (one next symbol: the region *is* the longer
    prefix's). So the searches grow with the number of tools over the cap, not with the alphabet
    times the name length. Only the default pattern (``.*``) is enumerated like this: a caller's own
    pattern cannot be combined with a prefix, so a capped one leaves the review ``incomplete`` (said,
    with the numbers, in the report). So does a capped run of names outside the spec's alphabet, and
    the search budget (:data:`_MAX_SEARCHES`).
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
        # Each pending region is capped; ``returned`` is what its search gave (all inside it).
        pending: list[tuple[str, frozenset[str], list[str]]] = [("", _ALL_SYMBOLS, returned)]
        while pending:
            prefix, symbols, names = pending.pop()
            if len(symbols) == 1:
                (symbol,) = symbols
                if symbol not in _NAME_ALPHABET:
                    self.incomplete = "a capped run of names outside the spec's alphabet cannot be split"
                    continue
                if len(prefix) + 1 >= MAX_TOOL_NAME_LENGTH:
                    self.incomplete = "a capped prefix as long as a tool name cannot be split further"
                    continue
                pending.append((prefix + symbol, _ALL_SYMBOLS, names))  # the same region, no search
                continue
            observed: dict[str, int] = {}
            for name in names:
                symbol = _symbol(name, len(prefix))
                if symbol in symbols:
                    observed[symbol] = observed.get(symbol, 0) + 1
            groups = _partition(symbols, observed, self.most)
            if len(groups) < 2:
                # The returned names do not tell this region apart (a name the regex engine folds
                # differently from :func:`_symbol`): no split would make progress.
                self.incomplete = "a capped run of names the search folds differently cannot be split"
                continue
            if self.searches + len(groups) > _MAX_SEARCHES:
                self.incomplete = f"stopped after {self.searches} searches (the review's search budget)"
                return
            for group in groups:
                inside = [name for name in names if _symbol(name, len(prefix)) in group]
                if len(inside) >= self.most:
                    pending.append((prefix, group, inside))  # holds a capped search's every name
                    continue
                found = await self._search(_region_pattern(prefix, group))
                if found and len(found) >= self.most:
                    pending.append((prefix, group, found))
