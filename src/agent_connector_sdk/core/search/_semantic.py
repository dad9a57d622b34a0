"""An optional semantic component fused with the lexical ranking (pure: the model is injected).

The lexical :class:`~._index.SearchIndex` decides *whether* a request is answered (its abstention rule)
and what a regex matches; a sentence-similarity model, when one is given, only re-orders a natural
language answer: the lexical ranking and the model's ranking are merged by weighted reciprocal rank,
so scores on different scales never meet. Loading a model is I/O and lives in an adapter
(:mod:`agent_connector_sdk.mcp.search_semantic`); here is only what a model must offer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final, Protocol

from agent_connector_sdk.core.search._document import SearchDocument
from agent_connector_sdk.core.search._index import SearchHit, SearchIndex
from agent_connector_sdk.core.search._regex import compile_pattern, looks_like_regex
from agent_connector_sdk.core.search._words import name_words

__all__ = ["FusedSearchIndex", "SemanticModel", "SemanticRanker", "semantic_text"]

# Weighted reciprocal rank fusion: a place in the lexical list counts 1 / (K + rank), one in the
# model's list SEMANTIC_WEIGHT / (K + rank). A small K lets the first places decide; the model weighs
# less than the lexical ranking (alone it ranks below it on the GitHub set). Chosen on the even-indexed
# requests of bench/search_quality.py's two sets; the odd-indexed ones are reported apart.
FUSION_K: Final = 5
SEMANTIC_WEIGHT: Final = 0.6
# How many of each ranking are merged (the lexical side asks for at least this many).
_FUSED_DEPTH: Final = 50
# What a model reads of a description: its opening says what the tool does; the rest is detail.
_DESCRIPTION_CHARS: Final = 300


class SemanticRanker(Protocol):
    """A model's view of one catalog: the documents' positions most similar to a request, best first."""

    def rank(self, text: str, limit: int) -> Sequence[int]: ...


class SemanticModel(Protocol):
    """A sentence-similarity model: given the catalog's texts (:func:`semantic_text`, in order), a
    ranker over them."""

    def ranker(self, texts: Sequence[str]) -> SemanticRanker: ...


def semantic_text(document: SearchDocument) -> str:
    """What the model reads of a tool: its name's words, title and the opening of its description."""
    return (
        f"{' '.join(name_words(document.name))}. {document.title} {document.description[:_DESCRIPTION_CHARS]}"
    )


class FusedSearchIndex:
    """A :class:`SearchIndex` with a semantic ranking fused in for natural-language requests."""

    __slots__ = ("_lexical", "_ranker")

    def __init__(self, lexical: SearchIndex, ranker: SemanticRanker) -> None:
        self._lexical = lexical
        self._ranker = ranker

    @classmethod
    def build(cls, documents: Iterable[SearchDocument], model: SemanticModel) -> FusedSearchIndex:
        kept = tuple(documents)
        return cls(SearchIndex.build(kept), model.ranker([semantic_text(document) for document in kept]))

    @property
    def lexical(self) -> SearchIndex:
        return self._lexical

    def search(self, text: str, *, limit: int) -> tuple[SearchHit, ...]:
        """As :meth:`SearchIndex.search`; a natural-language answer re-ordered with the model's ranking
        (scores are the fused ones). A regex's answer and an abstention are the lexical ones, as is."""
        lexical = self._lexical.search(text, limit=max(limit, _FUSED_DEPTH))
        if not lexical or (looks_like_regex(text) and compile_pattern(text) is not None):
            return lexical[:limit]
        fused: dict[str, float] = {}
        for rank, hit in enumerate(lexical):
            fused[hit.name] = fused.get(hit.name, 0.0) + 1.0 / (FUSION_K + rank + 1)
        names = self._lexical.names
        for rank, position in enumerate(self._ranker.rank(text, _FUSED_DEPTH)):
            name = names[position]
            fused[name] = fused.get(name, 0.0) + SEMANTIC_WEIGHT / (FUSION_K + rank + 1)
        ordered = sorted(fused, key=lambda name: -fused[name])  # stable: ties keep the lexical order
        return tuple(SearchHit(name, round(fused[name], 6)) for name in ordered[:limit])
