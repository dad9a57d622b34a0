"""The pure ranked search (agent_connector_sdk.core.search): tokenizer, regex reachability, ranking
order on a small catalog, abstention, fusion, content addressing."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_connector_sdk.core.search import (
    SearchDocument,
    SearchHit,
    SearchIndex,
    document_from_tool,
    merge_by_rank,
)
from agent_connector_sdk.core.search._words import name_words, stem

CATALOG = (
    SearchDocument(
        "geocode_address",
        description="Turn a street address into coordinates (latitude and longitude).",
        arguments=(("address", "The street address to locate."),),
    ),
    SearchDocument(
        "search_clinical_trials",
        description="Search clinical trials by condition; each site carries its geocode.",
        arguments=(("condition", "The disease or condition."),),
    ),
    SearchDocument(
        "activity/list-watchers-for-repo",
        description="Lists the people watching the specified repository.",
        arguments=(("owner", "The account owner of the repository."), ("repo", "The repository name.")),
    ),
    SearchDocument(
        "repos/delete",
        description="Deleting a repository requires admin access.",
        arguments=(("owner", "The account owner of the repository."), ("repo", "The repository name.")),
    ),
    SearchDocument("getCurrentWeather", title="Current weather", description="The weather now in a city."),
    SearchDocument(
        "issues-create",
        title="Open an issue",
        description="Create an issue in a repository.",
        arguments=(("title", "The issue's title."), ("body", "The issue's text.")),
    ),
)


def _names(hits: tuple[SearchHit, ...]) -> list[str]:
    return [hit.name for hit in hits]


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    return SearchIndex.build(CATALOG)


# ---------------------------------------------------------------- tokenizer


@pytest.mark.parametrize(
    ("identifier", "words"),
    [
        ("list_issues_for_repo", ["list", "issues", "for", "repo"]),
        ("list-issues-for-repo", ["list", "issues", "for", "repo"]),
        ("listIssuesForRepo", ["list", "issues", "for", "repo"]),
        ("ListIssuesForRepo", ["list", "issues", "for", "repo"]),
        ("activity/list-watchers_for-repo", ["activity", "list", "watchers", "for", "repo"]),
        ("XMLHttpRequest", ["xml", "http", "request"]),
        ("getV2Users", ["get", "v", "2", "users"]),
        ("repos.get", ["repos", "get"]),
        ("", []),
    ],
)
def test_names_split_into_words(identifier: str, words: list[str]) -> None:
    assert name_words(identifier) == words


def test_stems_join_forms_of_a_word() -> None:
    assert stem("watching") == stem("watch")
    assert stem("repositories") == stem("repository")
    assert stem("2") == "2"


# ---------------------------------------------------------------- ranking


def test_a_natural_request_finds_the_tool_first(index: SearchIndex) -> None:
    hits = index.search("turn this street address into latitude and longitude", limit=5)
    assert _names(hits)[0] == "geocode_address"


def test_a_word_ranks_the_tool_named_by_it_first(index: SearchIndex) -> None:
    """The issue's example: ``geocode`` returned a clinical-trials tool before ``geocode_address``."""
    assert _names(index.search("geocode", limit=5)) == ["geocode_address", "search_clinical_trials"]


def test_name_words_and_roots_meet_the_request(index: SearchIndex) -> None:
    assert _names(index.search("who is watching this repo", limit=5))[0] == "activity/list-watchers-for-repo"
    assert _names(index.search("delete my repo", limit=5))[0] == "repos/delete"
    assert _names(index.search("what's the weather like", limit=5))[0] == "getCurrentWeather"
    assert _names(index.search("report a new bug", limit=5))[0] == "issues-create"


def test_scores_descend_and_limit_applies(index: SearchIndex) -> None:
    hits = index.search("repository", limit=2)
    assert len(hits) == 2
    assert hits[0].score >= hits[1].score > 0
    assert index.search("repository", limit=0) == ()


# ---------------------------------------------------------------- abstention


@pytest.mark.parametrize(
    "request_text", ["what is the capital of France", "book me a flight to Lisbon", "zzzz qqqq", "", "   "]
)
def test_abstains_when_nothing_is_relevant(index: SearchIndex, request_text: str) -> None:
    assert index.search(request_text, limit=5) == ()


def test_an_empty_catalog_answers_nothing() -> None:
    assert SearchIndex.build([]).search("anything", limit=5) == ()


# ---------------------------------------------------------------- regex


def test_a_regex_returns_exactly_its_matches_ranked(index: SearchIndex) -> None:
    hits = index.search("^repos/|watchers", limit=10)
    assert sorted(_names(hits)) == ["activity/list-watchers-for-repo", "repos/delete"]
    hits = index.search("geocode|address", limit=10)
    assert _names(hits) == ["geocode_address", "search_clinical_trials"]


def test_a_literal_phrase_keeps_every_literal_match(index: SearchIndex) -> None:
    """A phrase no ranking finds relevant is still returned where it occurs literally."""
    assert "activity/list-watchers-for-repo" in _names(index.search("ers-for-re", limit=5))


def test_a_question_is_a_request_and_a_regex_matching_nothing_finds_nothing(index: SearchIndex) -> None:
    assert _names(index.search("who watches my repo?", limit=5))[0] == "activity/list-watchers-for-repo"
    # An anchored name search (how the gateway enumerates a search-first child) stays exact.
    assert index.search("^(?-i:repos/(?:[x]| |$))", limit=5) == ()
    assert _names(index.search("^(?-i:repos/(?:[d]| |$))", limit=5)) == ["repos/delete"]
    # A pattern that does not compile is read as words.
    assert _names(index.search("delete (my repo", limit=5))[0] == "repos/delete"


def test_prose_holding_regex_operators_and_matching_nothing_is_a_request(index: SearchIndex) -> None:
    """Parentheses, a "$" or a "?" mid-text make prose look like a regex; one that matches nothing as a
    regex is read as the request it is, while a short pattern matching nothing still finds nothing."""
    sentence = "Delete my repo (the old one) for good? It costs $5 a month"
    assert _names(index.search(sentence, limit=5))[0] == "repos/delete"
    assert index.search("repo (old one)|zzz", limit=5) == ()


def test_invalid_and_overlong_patterns_do_not_raise(index: SearchIndex) -> None:
    assert index.search("(unclosed", limit=5) == ()
    assert index.search("(?=lookahead)", limit=5) == ()
    assert index.search("a" * 5000, limit=5) == ()


_WORDS = st.sampled_from(
    ["repo", "issue", "geocode", "address", "weather", "watch", "delete", "list", "create", "city", "owner"]
)
_PATTERNS = st.one_of(
    st.lists(_WORDS, min_size=1, max_size=4).map("|".join),
    _WORDS.map(lambda word: f"^{word[:3]}"),
    _WORDS.map(lambda word: f"{word[:2]}.*{word[-2:]}"),
    _WORDS.map(lambda word: f"\\b{word}s?\\b"),
    _WORDS,
)


@settings(max_examples=150, deadline=None)
@given(pattern=_PATTERNS)
def test_every_regex_match_is_reachable(pattern: str) -> None:
    """FastMCP's regex semantics: with room for all, every tool the pattern matches (case-insensitive,
    unanchored, in name, description and arguments) is returned; a pattern with regex operators returns
    exactly those, a plain word those and the tools ranked relevant to it."""
    index = SearchIndex.build(CATALOG)
    expected = {
        document.name
        for document in CATALOG
        if re.search(pattern, document.regex_text(), flags=re.IGNORECASE) is not None
    }
    hits = index.search(pattern, limit=len(CATALOG))
    if expected and any(operator in pattern for operator in "|^*\\"):
        assert set(_names(hits)) == expected
    else:
        assert expected <= set(_names(hits))
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)


# ---------------------------------------------------------------- documents and index identity


def test_document_from_a_tool_descriptor() -> None:
    document = document_from_tool(
        {
            "name": "geocode",
            "annotations": {"title": "Geocode"},
            "description": "Address to coordinates.",
            "inputSchema": {
                "type": "object",
                "properties": {"address": {"type": "string", "description": "Street"}, "country": True},
            },
        }
    )
    assert document == SearchDocument(
        "geocode", "Geocode", "Address to coordinates.", (("address", "Street"), ("country", ""))
    )
    assert document_from_tool({"name": "bare", "inputSchema": "junk", "description": 3}) == SearchDocument(
        "bare"
    )
    with pytest.raises(TypeError):
        document_from_tool({"description": "nameless"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        document.name = "other"  # type: ignore[misc]


def test_the_index_is_content_addressed_and_immutable() -> None:
    first = SearchIndex.build(CATALOG)
    assert SearchIndex.build(list(CATALOG)).digest == first.digest
    changed = (*CATALOG[:-1], dataclasses.replace(CATALOG[-1], description="Something else."))
    assert SearchIndex.build(changed).digest != first.digest
    with pytest.raises(TypeError):
        SearchIndex()
    with pytest.raises(AttributeError):
        first.extra = 1  # type: ignore[attr-defined]


# ---------------------------------------------------------------- fusion


def test_merge_by_rank_fuses_and_deduplicates() -> None:
    assert merge_by_rank([["a", "b", "c"]], limit=10) == ["a", "b", "c"]
    assert merge_by_rank([["a", "b"], ["b", "c"]], limit=10) == ["b", "a", "c"]
    assert merge_by_rank([["a", "b"], ["c", "d"]], limit=3) == ["a", "c", "b"]
    assert merge_by_rank([["a", "a", "b"]], limit=10) == ["a", "b"]
    assert merge_by_rank([[{"x": 1}], [{"x": 1}, {"y": 2}]], limit=10) == [{"x": 1}, {"y": 2}]
    assert merge_by_rank([["a"]], limit=0) == []
    assert merge_by_rank([], limit=5) == []


def test_the_abstention_rule_reads_alike_on_small_and_large_catalogs() -> None:
    """The answer rule weighs the best score relative to the catalog (in units of a word one tool uses),
    so one request is answered, and another abstained on, whether the catalog holds 2 tools or 400."""
    pair = (
        SearchDocument("geocode_address", description="Turn a street address into latitude and longitude."),
        SearchDocument("search_clinical_trials", description="Search clinical trials by condition."),
    )
    padding = tuple(
        SearchDocument(f"tool_{i}", description=f"Manage widget {i} in the inventory of gadget {i % 7}.")
        for i in range(1_000, 1_400)
    )
    for catalog in (pair, pair + padding):
        index = SearchIndex.build(catalog)
        assert _names(index.search("where is 10 Downing Street, lat/long", limit=5))[:1] == [
            "geocode_address"
        ]
        assert index.search("what is the capital of France", limit=5) == ()
        assert index.search("compose a sonnet about the sea in iambic pentameter", limit=5) == ()
