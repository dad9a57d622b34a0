"""The semantic component fused with the lexical ranking: against a small deterministic stand-in model
(always), and against the ``semantic`` extra's WordLlama model when it is installed."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import ClassVar

import pytest

from agent_connector_sdk.core.search import FusedSearchIndex, SearchDocument, SearchIndex, semantic_text

CATALOG = (
    SearchDocument("rent_listings", description="Find flats and houses to rent by city and budget."),
    SearchDocument("hotel_booking", description="Book a hotel room in a city for some nights."),
    SearchDocument("weather_now", description="The current weather in a city."),
    SearchDocument("buy_listings", description="Houses for sale by city and budget."),
    # Neighbours, so that a word four tools use tells something (idf) and a request is answered.
    *(
        SearchDocument(f"widget_{n}", description=f"Manage widget {n} in the inventory of gadget {n % 7}.")
        for n in range(1_000, 1_040)
    ),
)


class ConceptModel:
    """A deterministic stand-in: a text's 'meaning' is the set of concepts its words belong to; a
    document ranks by how many concepts it shares with the request (ties in catalog order)."""

    CONCEPTS: ClassVar[dict[str, str]] = {
        "apartment": "home",
        "studio": "home",
        "flat": "home",
        "flats": "home",
        "rent": "rent",
    }

    def __init__(self) -> None:
        self.texts: list[str] = []

    def ranker(self, texts: Sequence[str]) -> ConceptModel:
        self.texts = list(texts)
        return self

    def _meaning(self, text: str) -> set[str]:
        return {
            self.CONCEPTS[word] for word in text.lower().replace(".", " ").split() if word in self.CONCEPTS
        }

    def rank(self, text: str, limit: int) -> list[int]:
        wanted = self._meaning(text)
        shared = [len(wanted & self._meaning(document)) for document in self.texts]
        return sorted(range(len(self.texts)), key=lambda position: -shared[position])[:limit]


def test_the_model_reads_the_name_words_title_and_description_opening() -> None:
    model = ConceptModel()
    FusedSearchIndex.build(CATALOG, model)
    assert model.texts[0] == semantic_text(CATALOG[0])
    assert model.texts[0].startswith("rent listings. ") and "flats and houses" in model.texts[0]


def test_the_model_reorders_a_natural_language_answer() -> None:
    """Lexically "a studio or houses within my budget" ranks the sale listings first (the shorter text
    on "houses" and "budget"); the model's "home" concept (a studio, flats) lifts the rental listings
    above them. The fused scores descend, and every lexical answer stays in (the model may add more)."""
    request = "a studio or houses within my budget"
    lexical = SearchIndex.build(CATALOG).search(request, limit=5)
    fused = FusedSearchIndex.build(CATALOG, ConceptModel()).search(request, limit=5)
    assert [hit.name for hit in lexical[:2]] == ["buy_listings", "rent_listings"]
    assert [hit.name for hit in fused[:2]] == ["rent_listings", "buy_listings"]
    assert [hit.score for hit in fused] == sorted((hit.score for hit in fused), reverse=True)
    assert {hit.name for hit in fused} >= {hit.name for hit in lexical}


def test_abstention_and_regex_answers_stay_lexical() -> None:
    index = FusedSearchIndex.build(CATALOG, ConceptModel())
    # Nothing relevant: the model's ranking (it always ranks something) never turns it into an answer.
    assert index.search("compose a sonnet about the sea in iambic pentameter", limit=5) == ()
    # A regex: exactly the tools it matches, as the lexical index returns them.
    assert index.search("hotel|weather", limit=5) == index.lexical.search("hotel|weather", limit=5)
    assert {hit.name for hit in index.search("hotel|weather", limit=5)} == {"hotel_booking", "weather_now"}
    assert index.search("anything", limit=0) == ()


@pytest.mark.skipif(importlib.util.find_spec("wordllama") is None, reason="the 'semantic' extra is absent")
def test_the_wordllama_model_loads_offline_and_fuses() -> None:
    from agent_connector_sdk.mcp.search_semantic import WordLlamaModel

    model = WordLlamaModel()
    ranker = model.ranker([semantic_text(document) for document in CATALOG])
    ranked = list(ranker.rank("is it going to rain in Porto today", 4))
    assert sorted(ranked) == [0, 1, 2, 3] and ranked[0] == 2
    index = FusedSearchIndex.build(CATALOG, model)
    assert index.search("what's the weather in Porto", limit=5)[0].name == "weather_now"
    assert index.search("compose a sonnet about the sea in iambic pentameter", limit=5) == ()
