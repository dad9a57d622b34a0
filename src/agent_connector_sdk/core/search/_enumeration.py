"""Every tool behind a search that caps its results: which searches to run, and when to stop (pure).

One planner for every caller that enumerates a capped search (the gateway's ``--check`` and ``--lock``,
the reviewer): it writes patterns and reads the names each one returned; the caller runs the searches.

**Regions.** A search tool's regex runs over a tool's text, which starts with its name and goes on with
a space (FastMCP's ``RegexSearchTransform``, our own ranked search), so an anchored pattern selects
tools by their name's start. A :class:`Region` is a name prefix and a set of next *symbols*: a character
of the spec's name alphabet (``[A-Za-z0-9_.-]``), :data:`END` (the name ends there) or :data:`OTHER` (a
character outside the alphabet). The first region holds every name.

**Soundness.** An answer with fewer entries than some answer ever had was not cut by the result limit
(which is at least that many), so it holds every match; only an answer with as many as the most seen
may have been cut, and its region is split. The split follows what the answer showed: the next symbols
seen are packed into groups each expected below the cap, the unseen ones are searched together, and a
group already holding as many names as the most seen is known to be cut without a search (a region of
one symbol *is* the longer prefix's region). So the searches grow with the number of tools over the
cap, not with the alphabet times the name length.

**Case.** Patterns are case-exact, written ``^(?-i:…)`` inside the search's own flags: a case-sensitive
search and a case-insensitive one that honours the inline flag (Python's ``re``, Rust's ``regex``, so
FastMCP's search and ours) both answer exactly the region. What the planner knows of the search is a
:class:`SearchCase`. ``UNKNOWN`` (the default) plans case-exact and watches: an answer holding a name
of the region only up to case shows a search that folds case whatever the pattern says, and from then
on the plan splits by folded symbols (``a`` and ``A`` together), so such a search is enumerated
completely too — except when more names than it returns at once differ only in case, which no search
of it can tell apart (said in :attr:`EnumerationPlanner.incomplete`).

**Bounds.** At most :data:`MAX_ENUMERATION_SEARCHES` searches (a search answering adversarially cannot
loop: each answer must lie inside its region, and regions only shrink), prefixes no longer than a name
(:data:`MAX_NAME_LENGTH`). An answer outside its region (the search does not behave like an anchored
name search) stops the plan (:attr:`EnumerationPlanner.refused`): nothing is guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Final

__all__ = [
    "END",
    "MAX_ENUMERATION_SEARCHES",
    "MAX_NAME_LENGTH",
    "NAME_CHARACTERS",
    "OTHER",
    "EnumerationPlanner",
    "Region",
    "SearchCase",
    "region_pattern",
]

MAX_ENUMERATION_SEARCHES: Final = 20_000
"""At most this many searches per enumeration, whoever enumerates: past it the enumeration is
incomplete (the gateway says "partial: N of at least M", the reviewer "incomplete"). One split costs
about one search per cap-full of tools (six at worst), so this covers the gateway's bound of 200,000
names at a cap of 50 and tens of thousands of tools at a cap of 5, while a search answering
adversarially stops within minutes."""
MAX_NAME_LENGTH: Final = 128
"""The spec's longest tool name (equal to the admission's bound, a test keeps them equal): a capped
prefix this long cannot be split further."""
NAME_CHARACTERS: Final = "-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
"""The spec's tool name alphabet."""
END: Final = " "
"""The symbol "the name ends here" (a space never occurs in a spec name: the search's text goes on
with one after the name, or stops)."""
OTHER: Final = "*"
"""The symbol "a character outside the name alphabet" (never split further)."""

_ALL_SYMBOLS: Final = frozenset((*NAME_CHARACTERS, END, OTHER))


class SearchCase(Enum):
    """What the planner knows of the search's case (module docstring)."""

    EXACT = "exact"
    """Answers follow the pattern's case (a case-sensitive search, or one honouring ``(?-i:…)``)."""
    FOLDED = "folded"
    """The search matches case-insensitively whatever the pattern says."""
    UNKNOWN = "unknown"
    """Planned exact; the first answer showing folding turns the plan to ``FOLDED``."""


def _escaped(text: str) -> str:
    """Name characters as regex literals (of the alphabet only ``.`` and ``-`` are special)."""
    return "".join("\\" + c if c in ".-" else c for c in text)


def region_pattern(prefix: str, symbols: Iterable[str]) -> str:
    """The case-exact regex for the names starting with ``prefix`` and going on with one of
    ``symbols``."""
    chosen = set(symbols)
    alternatives: list[str] = []
    characters = "".join(sorted(c for c in chosen if c in NAME_CHARACTERS))
    if characters:
        alternatives.append("[" + _escaped(characters) + "]")
    if END in chosen:
        alternatives.append(" |$")
    if OTHER in chosen:
        alternatives.append("[^\\-.0-9A-Z_a-z ]")
    return "^(?-i:" + _escaped(prefix) + "(?:" + "|".join(alternatives) + "))"


def _symbol(name: str, position: int) -> str:
    """The symbol of ``name`` after its first ``position`` characters."""
    if position >= len(name) or name[position] == " ":
        return END
    character = name[position]
    return character if character in NAME_CHARACTERS else OTHER


def _key(symbol: str, folded: bool) -> str:
    """What a folding search cannot tell apart shares a key (``a`` and ``A``)."""
    return symbol.lower() if folded and symbol.isascii() and symbol.isalpha() else symbol


def _folded_key(name: str, position: int) -> str:
    """The key of ``name``'s symbol at ``position`` as a folding search sees it (a Kelvin sign is a
    ``k`` to Unicode case folding)."""
    if position < len(name) and name[position] != " ":
        folded = name[position].casefold()
        if len(folded) == 1 and folded in NAME_CHARACTERS:
            return folded
    return _key(_symbol(name, position), True)


@dataclass(frozen=True, slots=True)
class Region:
    """The names starting with ``prefix`` whose next symbol is one of ``symbols``."""

    prefix: str
    symbols: frozenset[str]

    @property
    def pattern(self) -> str:
        return region_pattern(self.prefix, self.symbols)

    def holds(self, name: str) -> bool:
        """Whether ``name`` is in the region, case-exactly."""
        return name.startswith(self.prefix) and _symbol(name, len(self.prefix)) in self.symbols

    def holds_folded(self, name: str) -> bool:
        """Whether ``name`` is in the region up to case (as a folding search matches it)."""
        size = len(self.prefix)
        if len(name) < size or any(
            a.casefold() != b.casefold() for a, b in zip(name[:size], self.prefix, strict=True)
        ):
            return False
        keys = {_key(symbol, True) for symbol in self.symbols}
        return _folded_key(name, size) in keys

    def folded(self) -> Region:
        """The region a folding search answers for this one's pattern (every case of its symbols)."""
        closed = {c for s in self.symbols for c in {s, s.lower(), s.upper()} if c in _ALL_SYMBOLS}
        return Region(self.prefix, frozenset(closed))


def _partition(keys: Sequence[str], observed: dict[str, int], most: int) -> list[list[str]]:
    """Split a capped region's keys into groups each expected below the cap.

    ``observed`` counts the names the capped answer held per key (a lower bound of each key's true
    count). Observed keys are packed greedily into groups of at most half the most seen (one over that
    stands alone); the keys nobody returned form one more group. When that makes one group only (an
    answer repeating names), the keys are halved instead: every split makes progress.
    """
    half = max(1, most // 2)
    groups: list[tuple[int, list[str]]] = []
    for key in sorted(observed, key=lambda k: (-observed[k], k)):
        for index, (load, members) in enumerate(groups):
            if load + observed[key] <= half:
                members.append(key)
                groups[index] = (load + observed[key], members)
                break
        else:
            groups.append((observed[key], [key]))
    partition = [members for _, members in groups]
    unseen = [key for key in keys if key not in observed]
    if unseen:
        partition.append(unseen)
    if len(partition) < 2:
        middle = len(keys) // 2
        partition = [list(keys[:middle]), list(keys[middle:])]
    return partition


class EnumerationPlanner:
    """The searches that enumerate every name behind a capped search (module docstring): sans-I/O,
    the caller runs each search.

    ``next()`` gives the next pattern (``None`` when done or stopped); ``record(names)`` takes the
    names its search returned (in the order returned; repeats allowed). ``first``: the answer of a
    search over every name the caller already ran (``.*``), so the plan starts from it without
    searching again; ``most_seen``: the most entries any of the caller's searches returned (a lower
    bound of the cap).

    When it stops: :attr:`refused` says why the search cannot be enumerated (an answer outside its
    region); :attr:`budget_reached` that ``max_searches`` ran out; :attr:`incomplete` why a region
    could not be split (the names in it that the searches returned were still recorded).
    """

    def __init__(
        self,
        *,
        case: SearchCase = SearchCase.UNKNOWN,
        max_searches: int = MAX_ENUMERATION_SEARCHES,
        first: Sequence[str] | None = None,
        most_seen: int = 0,
    ) -> None:
        self.case = case
        self.max_searches = max_searches
        self.most_seen = most_seen
        self.searches = 0
        self.refused: str | None = None
        self.incomplete: str | None = None
        self.budget_reached = False
        root = Region("", _ALL_SYMBOLS)
        # Regions to search (names None) or known cut (the names an answer already put in them).
        self._pending: list[tuple[Region, tuple[str, ...] | None]] = [(root, None)]
        self._current: Region | None = None
        if first is not None:
            self._pending.clear()
            self._take(root, first)

    @property
    def _folding(self) -> bool:
        return self.case is SearchCase.FOLDED

    def observe(self, count: int) -> None:
        """A count another search of the same tool returned (the cap is at least that)."""
        self.most_seen = max(self.most_seen, count)

    def next(self) -> str | None:
        """The next pattern to search, or ``None``: done, or stopped (see the class docstring)."""
        self._current = None
        if self.refused is not None:
            return None
        while self._pending:
            region, known = self._pending.pop()
            if known is not None:
                self._split(region, known)
                continue
            if self.searches >= self.max_searches:
                self._pending.append((region, None))
                self.budget_reached = True
                return None
            self.searches += 1
            self._current = region
            return region.pattern
        return None

    @property
    def done(self) -> bool:
        """Whether every region was searched (complete unless :attr:`incomplete` says otherwise)."""
        return not self._pending and self.refused is None and not self.budget_reached

    def record(self, names: Sequence[str]) -> None:
        """The names the last pattern of :meth:`next` returned."""
        region = self._current
        if region is None:
            raise RuntimeError("record() follows a next() that gave a pattern")
        self._current = None
        self._take(region, names)

    def _take(self, region: Region, names: Sequence[str]) -> None:
        outside = [name for name in names if not region.holds(name)]
        if outside:
            if not all(region.holds_folded(name) for name in outside):
                self.refused = "the search answered a tool outside the searched name prefix"
                self._pending.clear()
                return
            if not self._folding:
                self._fold()
        if self._folding:
            region = region.folded()
        self.most_seen = max(self.most_seen, len(names))
        if not names or len(names) < self.most_seen:
            return  # not cut by the result limit: every match was returned
        self._split(region, tuple(dict.fromkeys(names)))

    def _fold(self) -> None:
        """The search folds case: every pending region becomes the region it answers for."""
        self.case = SearchCase.FOLDED
        seen: set[tuple[str, frozenset[str]]] = set()
        pending: list[tuple[Region, tuple[str, ...] | None]] = []
        for region, known in self._pending:
            closed = region.folded()
            identity = (closed.prefix.casefold(), closed.symbols)
            if identity not in seen:
                seen.add(identity)
                pending.append((closed, known))
        self._pending = pending

    def _split(self, region: Region, names: tuple[str, ...]) -> None:
        """``region`` may hold more than its answer ``names`` (distinct, all inside it)."""
        folding = self._folding
        position = len(region.prefix)
        keys = sorted({_key(symbol, folding) for symbol in region.symbols})
        if len(keys) == 1:
            self._extend(region, keys[0], names)
            return
        reader = _folded_key if folding else _symbol
        key_of = {name: reader(name, position) for name in names}
        observed: dict[str, int] = {}
        for key in key_of.values():
            observed[key] = observed.get(key, 0) + 1
        for group in _partition(keys, observed, self.most_seen):
            members = set(group)
            part = Region(region.prefix, frozenset(s for s in region.symbols if _key(s, folding) in members))
            inside = tuple(name for name in names if key_of[name] in members)
            if len(inside) >= self.most_seen:
                self._pending.append((part, inside))  # holds a cut answer's every name: cut too
            else:
                self._pending.append((part, None))

    def _extend(self, region: Region, key: str, names: tuple[str, ...]) -> None:
        """A cut region of one symbol *is* the region of the longer prefix, when there is one: known
        cut with the same names, split without a search."""
        if key == END:
            if self._folding:
                self.incomplete = (
                    "more names that differ only in case than the search returns at once cannot be "
                    "told apart by a search that folds case"
                )
            # else: the one tool named exactly the prefix (names are unique): nothing left to split.
            return
        if key == OTHER:
            self.incomplete = "a capped run of names outside the spec's alphabet cannot be split"
            return
        if len(region.prefix) + 1 > MAX_NAME_LENGTH:
            self.incomplete = "a capped prefix as long as a tool name cannot be split further"
            return
        self._pending.append((Region(region.prefix + key, _ALL_SYMBOLS), names))
