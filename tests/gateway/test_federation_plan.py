"""The enumeration plan of a search-first child (pure): every name is found through a search that
provably returned all its matches, whatever the search's result limit; a search that does not behave
like an anchored name search stops federation instead of guessing."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest

from agent_connector_sdk.gateway import GatewayError
from agent_connector_sdk.gateway._federation import PrefixPlan, search_front

CHARS = "abcXYZ019_.-"


def regex_search(names: list[str], limit: int) -> Callable[[str], list[str]]:
    """FastMCP's RegexSearchTransform, as far as the plan relies on it: a case-insensitive regex
    searched in "name description params", the first ``limit`` matches in catalog order."""

    def search(pattern: str) -> list[str]:
        matcher = re.compile(f"(?i){pattern}")
        texts = ((name, f"{name} does things with {name[::-1]} and a_b") for name in names)
        return [name for name, text in texts if matcher.search(text)][:limit]

    return search


def enumerate_all(search: Callable[[str], list[str]]) -> tuple[set[str], int]:
    plan = PrefixPlan()
    found: set[str] = set()
    while (pattern := plan.next()) is not None:
        names = search(pattern)
        plan.record(names)
        found.update(names)
    return found, plan.searches


@pytest.mark.parametrize("seed", range(20))
def test_every_name_is_found_whatever_the_result_limit(seed: int) -> None:
    rng = random.Random(seed)
    names = sorted(
        {"".join(rng.choice(CHARS) for _ in range(rng.randint(1, 6))) for _ in range(rng.randint(0, 120))}
    )
    # Names that are prefixes of others, and the same name in another case.
    names += [name + "x" for name in names[:5]] + [
        name.upper() for name in names[5:8] if name.upper() not in names
    ]
    names = list(dict.fromkeys(names))
    rng.shuffle(names)
    limit = rng.randint(2, 9)
    found, searches = enumerate_all(regex_search(names, limit))
    assert found == set(names)
    assert searches <= 40 * max(1, len(names))


def test_a_github_sized_catalog_takes_a_bounded_number_of_searches() -> None:
    rng = random.Random(7)
    groups = ["repos", "issues", "actions", "orgs", "users", "pulls", "git", "apps", "teams", "checks"]
    verbs = ["get", "list", "create", "update", "delete", "add", "remove", "set"]

    def name() -> str:
        tail = "".join(rng.choice("abcdefghij_") for _ in range(rng.randint(3, 14)))
        return f"{rng.choice(groups)}_{rng.choice(verbs)}_{tail}"

    names = list(dict.fromkeys(name() for _ in range(1300)))
    found, searches = enumerate_all(regex_search(names, 50))
    assert found == set(names)
    assert searches < 1500


def test_an_unanchored_search_stops_federation() -> None:
    names = ["alpha", "beta", "gamma"]

    def substring_search(pattern: str) -> list[str]:
        return names[:2]  # ignores the pattern: answers names outside the searched prefix

    with pytest.raises(GatewayError, match="outside the searched name prefix"):
        enumerate_all(substring_search)


def test_a_search_that_keeps_answering_as_much_as_it_can_is_bounded() -> None:
    def same_name_search(pattern: str) -> list[str]:
        return (
            ["a", "A"]
            if pattern.startswith("^a") or pattern.startswith("^(") or pattern.startswith("^[")
            else []
        )

    with pytest.raises(GatewayError):
        enumerate_all(same_name_search)


def test_search_front_finds_the_synthetic_tools_by_shape_whatever_their_names() -> None:
    call = {
        "name": "run_any",
        "inputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}},
            "required": ["name"],
        },
    }
    search = {
        "name": "find",
        "inputSchema": {
            "type": "object",
            "properties": {"pattern": {"type": "string"}},
            "required": ["pattern"],
        },
    }
    plain = {"name": "zen", "inputSchema": {"type": "object", "properties": {}}}
    front = search_front({"run_any": call, "find": search, "zen": plain})
    assert front is not None
    assert (front.proxies, front.search, front.search_argument) == (frozenset({"run_any"}), "find", "pattern")
    assert front.withheld == {"run_any", "find"}
    # A search tool alone reaches nothing: published like any tool.
    assert search_front({"find": search, "zen": plain}) is None
