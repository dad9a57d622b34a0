"""The one enumeration planner behind every capped search (pure): fake searches answer its patterns.

Each fake is a search tool as a child could run it: case-insensitive honouring ``(?-i:…)`` (FastMCP's,
ours: Python's ``re`` and Rust's ``regex``), case-sensitive, folding case whatever the pattern says, a
liar inventing names, one repeating or rotating its answers. The planner must find every name whenever
that is provable, say why when it is not, and stop within its bounds whatever the answers.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest

from agent_connector_sdk.core.contracts import MAX_TOOL_NAME_LENGTH
from agent_connector_sdk.core.search import (
    MAX_ENUMERATION_SEARCHES,
    EnumerationPlanner,
    Region,
    SearchCase,
    region_pattern,
)
from agent_connector_sdk.core.search._enumeration import END, MAX_NAME_LENGTH, NAME_CHARACTERS, OTHER
from agent_connector_sdk.core.search._regex import compile_pattern

Search = Callable[[str], list[str]]

GROUPS = ["repos", "issues", "actions", "orgs", "users", "pulls", "git", "apps"]


def _text(name: str) -> str:
    return f"{name} does things with q and a_b"


def python_search(names: list[str], cap: int, *, flags: str = "(?i)") -> Search:
    """Python's ``re`` over "name description", first ``cap`` matches in catalog order."""

    def search(pattern: str) -> list[str]:
        matcher = re.compile(flags + pattern)
        return [name for name in names if matcher.search(_text(name))][:cap]

    return search


def rust_search(names: list[str], cap: int) -> Search:
    """Our ranked search's regex side (Rust's ``regex``, case-insensitive), as the lab's search runs."""

    def search(pattern: str) -> list[str]:
        matcher = compile_pattern(pattern)
        assert matcher is not None, f"the engine refused {pattern!r}"
        return [names[i] for i in matcher.matching([_text(name) for name in names])][:cap]

    return search


def folding_search(names: list[str], cap: int) -> Search:
    """A search that matches case-insensitively whatever the pattern says (drops inline flags)."""

    def search(pattern: str) -> list[str]:
        matcher = re.compile(pattern.replace("(?-i:", "(?:"), re.IGNORECASE)
        return [name for name in names if matcher.search(_text(name))][:cap]

    return search


def drive(plan: EnumerationPlanner, search: Search, *, guard: int = 100_000) -> set[str]:
    found: set[str] = set()
    for _ in range(guard):
        pattern = plan.next()
        if pattern is None:
            return found
        answer = search(pattern)
        plan.record(answer)
        found.update(answer)
    raise AssertionError("the plan did not stop")


def catalog(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    names = {
        f"{rng.choice(GROUPS)}_{rng.choice(['get', 'list', 'set'])}_{rng.randint(0, 9999)}"
        for _ in range(count)
    }
    return sorted(names)


@pytest.mark.parametrize("cap", [1, 2, 5, 50])
@pytest.mark.parametrize(
    "make", [python_search, rust_search, lambda n, c: python_search(n, c, flags="")], ids=["re", "rust", "cs"]
)
def test_every_name_is_found_by_a_case_honouring_search(
    make: Callable[[list[str], int], Search], cap: int
) -> None:
    names = [*catalog(1, 150), "repos", "Repos", "REPOS_get", "a", "a.b", "a-b", "-", ".", "9", "A"]
    random.Random(cap).shuffle(names)
    plan = EnumerationPlanner()
    assert drive(plan, make(names, cap)) == set(names)
    assert plan.done and plan.incomplete is None and plan.refused is None
    assert plan.case is SearchCase.UNKNOWN  # nothing showed folding: planned exact throughout


def test_a_case_sensitive_search_known_as_such_is_planned_exact() -> None:
    names = [*catalog(2, 80), "Zed", "zed", "ZED"]
    plan = EnumerationPlanner(case=SearchCase.EXACT)
    assert drive(plan, python_search(names, 3, flags="")) == set(names)
    assert plan.done and plan.incomplete is None and plan.case is SearchCase.EXACT


@pytest.mark.parametrize("case", [SearchCase.UNKNOWN, SearchCase.EXACT, SearchCase.FOLDED])
def test_a_search_that_folds_case_is_still_enumerated_completely(case: SearchCase) -> None:
    names = [*catalog(3, 120), "Repos_x", "repos_X", "ISSUES", "k1", "K2"]
    random.Random(4).shuffle(names)
    plan = EnumerationPlanner(case=case)
    assert drive(plan, folding_search(names, 4)) == set(names)
    assert plan.done and plan.incomplete is None and plan.refused is None
    assert plan.case is SearchCase.FOLDED  # seen (or known): split by folded symbols


def test_more_case_variants_of_one_name_than_a_folding_search_returns_are_said_incomplete() -> None:
    names = ["ab", "aB", "Ab", "AB", "zz"]
    plan = EnumerationPlanner()
    drive(plan, folding_search(names, 2))
    assert plan.incomplete is not None and "differ only in case" in plan.incomplete
    # The same names through a search that honours the pattern's case: all found, provably.
    exact = EnumerationPlanner()
    assert drive(exact, python_search(names, 2)) == set(names) and exact.incomplete is None


def test_a_liar_inventing_names_under_every_prefix_is_bounded() -> None:
    rng = random.Random(5)
    invented: set[str] = set()

    def liar(pattern: str) -> list[str]:
        matcher = re.compile("(?i)" + pattern)
        head = re.match(r"\^\(\?-i:((?:\\.|[^(\\])*)\(\?:", pattern)
        assert head is not None
        prefix = head.group(1).replace("\\", "")
        answer: list[str] = []
        for _ in range(5_000):  # "cut" at 5 whenever it can invent that many new names in the region
            if len(answer) == 5:
                break
            name = prefix + "".join(rng.choice(NAME_CHARACTERS) for _ in range(rng.randint(0, 3)))
            if name not in invented and matcher.search(_text(name)):
                invented.add(name)
                answer.append(name)
        return answer

    plan = EnumerationPlanner(max_searches=400)
    drive(plan, liar, guard=401)
    assert plan.budget_reached and plan.searches == 400 and not plan.done
    assert plan.next() is None  # stays stopped


def test_a_liar_whose_names_outgrow_a_tool_name_stops_there() -> None:
    def deep(pattern: str) -> list[str]:
        head = re.match(r"\^\(\?-i:((?:\\.|[^(\\])*)\(\?:", pattern)
        assert head is not None
        prefix = head.group(1).replace("\\", "")
        # Two names longer than any tool name, always going on with "a" (inside the region, or none).
        invented = [prefix + "a" + "b" * 200, prefix + "a" + "c" * 200]
        return [name for name in invented if re.search("(?i)" + pattern, _text(name))]

    plan = EnumerationPlanner()
    drive(plan, deep, guard=MAX_ENUMERATION_SEARCHES)
    assert plan.incomplete is not None and "as long as a tool name" in plan.incomplete
    assert plan.searches <= 5 * MAX_NAME_LENGTH  # a few per character, far below the search budget


def test_an_answer_outside_its_region_stops_the_plan() -> None:
    names = ["alpha", "beta", "gamma"]
    plan = EnumerationPlanner()
    drive(plan, lambda pattern: names[:2])  # ignores the pattern
    assert plan.refused is not None and "outside the searched name prefix" in plan.refused
    assert not plan.done and plan.next() is None


def test_repeated_and_rotating_answers_converge() -> None:
    names = catalog(6, 60)
    matches = python_search(names, len(names))
    calls = 0

    def repeating(pattern: str) -> list[str]:
        found = matches(pattern)
        return [name for name in found for _ in range(2)][:6]  # each name twice, cut at 6

    plan = EnumerationPlanner()
    assert drive(plan, repeating) == set(names) and plan.incomplete is None

    def rotating(pattern: str) -> list[str]:
        nonlocal calls
        calls += 1
        found = matches(pattern)
        turn = calls % max(1, len(found))
        return (found[turn:] + found[:turn])[:4]  # a different cut of the same region each time

    plan = EnumerationPlanner()
    assert drive(plan, rotating) == set(names) and plan.incomplete is None and plan.done


@pytest.mark.parametrize("extra", [0, 1])
def test_a_cap_hit_exactly_at_the_boundary(extra: int) -> None:
    cap = 7
    names = catalog(7, 200)[: cap + extra]
    plan = EnumerationPlanner()
    assert drive(plan, python_search(names, cap)) == set(names)
    assert plan.done and plan.incomplete is None
    # Exactly ``cap`` names answer the first search with the cap: it may have been cut, so it is split.
    assert plan.searches > 1


def test_a_region_holding_exactly_the_cap_is_split_and_found() -> None:
    names = [f"repos_{i}" for i in range(5)] + [f"users_{i}" for i in range(5)]
    plan = EnumerationPlanner()
    assert drive(plan, python_search(names, 5)) == set(names) and plan.incomplete is None


def test_names_with_non_ascii_and_special_characters() -> None:
    # Outside the alphabet after the first character (split like any name), and three names starting
    # outside it, fewer than the cap (their run is searched once, not cut).
    names = ["café", "naïve_tool", "tool(1)", "a+b", "x*y", "caf€", "plain", "名前", "[x]", "\u212aelvin"]
    plan = EnumerationPlanner()
    assert drive(plan, python_search(names, 4)) == set(names)
    assert plan.done and plan.incomplete is None
    assert all(compile_pattern(pattern) is not None for pattern in _patterns(names, 4))
    assert drive(EnumerationPlanner(), rust_search(names, 4)) == set(names)
    # A capped run of names that start outside the alphabet cannot be split: said, not guessed.
    foreign = ["é1", "é2", "ö3", "名4", "plain"]
    plan = EnumerationPlanner()
    drive(plan, python_search(foreign, 2))
    assert plan.incomplete is not None and "outside the spec's alphabet" in plan.incomplete


def _patterns(names: list[str], cap: int) -> list[str]:
    plan = EnumerationPlanner()
    search = python_search(names, cap)
    patterns: list[str] = []
    while (pattern := plan.next()) is not None:
        patterns.append(pattern)
        plan.record(search(pattern))
    return patterns


def test_a_first_answer_starts_the_plan_without_searching_again() -> None:
    names = catalog(8, 40)
    search = python_search(names, 5)
    first = search(".*")
    plan = EnumerationPlanner(first=first)
    assert drive(plan, search) | set(first) == set(names)
    assert plan.done and plan.incomplete is None
    from_scratch = EnumerationPlanner()
    drive(from_scratch, search)
    assert from_scratch.searches == plan.searches + 1  # only the first search is saved
    # Below the most seen elsewhere: not cut, nothing to search.
    small = EnumerationPlanner(first=names[:2], most_seen=5)
    assert small.next() is None and small.searches == 0 and small.done


def test_regions_and_their_patterns() -> None:
    region = Region("a.b", frozenset({"-", "x", END, OTHER}))
    pattern = region.pattern
    assert pattern == region_pattern("a.b", region.symbols)
    assert compile_pattern(pattern) is not None
    matcher = re.compile("(?i)" + pattern)
    for name, inside in [("a.b-1", True), ("a.bx", True), ("a.b", True), ("a.bé", True), ("a.bX", False)]:
        assert bool(matcher.search(_text(name))) is inside is region.holds(name), name
    assert not region.holds("aXb") and not matcher.search(_text("aXb"))  # '.' is literal
    assert region.holds_folded("A.BX") and not region.holds_folded("b.bx")


def test_one_set_of_bounds() -> None:
    assert MAX_NAME_LENGTH == MAX_TOOL_NAME_LENGTH
    assert EnumerationPlanner().max_searches == MAX_ENUMERATION_SEARCHES
