"""The ranked search index over a catalog's tools (pure, immutable).

Ranking: BM25F over five fields of a tool — its name's words, title, description, argument names and
argument descriptions — each weighted and length-normalized on its own, over Snowball stems. A request
is read as *concepts*, one per content word: the word's stem, its spelled-out abbreviation, its related
words (:data:`~._words.RELATED_WORDS`) and the catalog terms sharing its root, each at a weight; a
concept scores a tool by its best term (so synonyms never count twice). The catalog's own vocabulary
decides which expansions exist at all.

Abstention: a request is answered only when its best tool scores well enough for how much of the
request the catalog's vocabulary knows (the idf mass of its concepts; a word the catalog never uses
carries the most): see :data:`ANSWER_MARGIN`. "What's the weather in Paris" against a code-hosting
catalog knows little and matches weakly, and gets no entries.

Regex: see :mod:`._regex`. A pattern with regex operators returns exactly the tools it matches (none
when it matches none), ranked by the words it names; a plain phrase returns the tools it matches
literally together with the ranked ones; a pattern that does not compile is read as natural language.
"""

from __future__ import annotations

import hashlib
import heapq
import math
from array import array
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from agent_connector_sdk.core.search._document import SearchDocument
from agent_connector_sdk.core.search._regex import (
    MAX_PATTERN_CHARS,
    compile_pattern,
    looks_like_regex,
    pattern_words,
)
from agent_connector_sdk.core.search._words import (
    ABBREVIATIONS,
    RELATED_WORDS,
    STOP_WORDS,
    name_words,
    stem,
    terms,
    text_terms,
    text_words,
)

__all__ = ["SearchHit", "SearchIndex"]


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One ranked result: the tool's name and its relevance (higher is better; 0 for a tool returned
    only because a regex matched it)."""

    name: str
    score: float


# (field weight, length normalization b). The name speaks for the tool; argument descriptions often
# repeat boilerplate ("The account owner of the repository") across hundreds of tools.
_NAME: Final = (3.0, 0.3)
_TITLE: Final = (2.0, 0.3)
_DESCRIPTION: Final = (1.0, 0.6)
_ARGUMENT_NAMES: Final = (0.7, 0.5)
_ARGUMENT_DESCRIPTIONS: Final = (0.3, 0.6)
_FIELDS: Final = (_NAME, _TITLE, _DESCRIPTION, _ARGUMENT_NAMES, _ARGUMENT_DESCRIPTIONS)
_K1: Final = 1.2

# Weights of a concept's terms besides the word's own stem.
_ABBREVIATION_WEIGHT: Final = 1.0
_ROOT_WEIGHT: Final = 0.7
_RELATED_WEIGHT: Final = 0.45
_MAX_ROOT_NEIGHBOURS: Final = 6
_MIN_ROOT: Final = 4
# Endings a stem may still carry that name the doer or the act of the same root (Snowball keeps them).
_DERIVATIONAL_SUFFIXES: Final = ("er", "or", "ion", "ment", "ing", "al", "ic")
# The name's words covered by the request lift a tool: (1 + this * covered share) times its score. A
# request naming every word of a tool's name ("list the pull requests" -> pulls_list) is about that tool.
_NAME_COVERAGE_LIFT: Final = 1.5
_RERANKED: Final = 64
_MAX_LITERAL_WORDS: Final = 4
# A pattern of at least this many space-separated words that matches nothing reads as a request.
_MIN_PROSE_WORDS: Final = 4

_MAX_QUERY_CONCEPTS: Final = 32
# A request is answered when ln(1 + its best tool's score relative to the catalog) + (the share of the
# request's information the catalog knows at all) reaches ANSWER_MARGIN. The relative score is in units
# of the idf of a word only one tool uses (a perfect match of such a word scores about 2 of them), so the
# rule reads alike on catalogs of 2 or 10,000 tools. A request in the catalog's vocabulary needs only a
# modest match (relative score >= 0.5 when every word is known); one mostly in words the catalog never
# uses needs a strong one (>= 1.5 at half known, >= 3 at none). Fitted (one number: the margin; the
# two terms weigh alike) on the even-indexed requests of bench/search_quality.py's two sets, for the
# most abstention with both answer rates >= 0.95; checked on the odd-indexed ones, which the benchmark
# reports apart.
ANSWER_MARGIN: Final = 1.4
# Results scoring under this share of the best one are noise at the tail of a ranking.
_TAIL_SHARE: Final = 0.08

_RELATED_BY_STEM: Final[dict[str, frozenset[str]]] = {}
for _group in RELATED_WORDS:
    _stems = frozenset(stem(word) for word in _group)
    for _stem in _stems:
        _RELATED_BY_STEM[_stem] = _RELATED_BY_STEM.get(_stem, frozenset()) | _stems


def _field_terms(document: SearchDocument) -> tuple[Sequence[str], ...]:
    argument_names, argument_descriptions = _argument_terms(document.arguments)
    return (
        terms(name_words(document.name)),
        text_terms(document.title),
        terms(text_words(document.description)),
        argument_names,
        argument_descriptions,
    )


@lru_cache(maxsize=4_096)
def _argument_terms(arguments: tuple[tuple[str, str], ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The terms of argument names and of their descriptions (memoized: the operations of one API
    share their parameter lists by the hundred, ``owner``/``repo`` on most of GitHub's)."""
    names: list[str] = []
    descriptions: list[str] = []
    for argument, description in arguments:
        names.extend(text_terms(argument))
        descriptions.extend(text_terms(description))
    return tuple(names), tuple(descriptions)


def _digest(documents: tuple[SearchDocument, ...]) -> str:
    hasher = hashlib.sha256()
    for document in documents:
        for part in (document.name, document.title, document.description):
            hasher.update(part.encode("utf-8", "surrogatepass"))
            hasher.update(b"\x00")
        for argument, description in document.arguments:
            hasher.update(argument.encode("utf-8", "surrogatepass"))
            hasher.update(b"\x01")
            hasher.update(description.encode("utf-8", "surrogatepass"))
            hasher.update(b"\x01")
        hasher.update(b"\x02")
    return hasher.hexdigest()


class SearchIndex:
    """An immutable ranked index of a catalog's tools. Build with :meth:`build`; query with
    :meth:`search`. ``digest`` identifies the documents it was built from (equal catalogs, equal
    digests), so callers can cache one index per catalog content."""

    __slots__ = (
        "_digest",
        "_idf",
        "_lowered_texts",
        "_name_terms",
        "_names",
        "_postings",
        "_regex_texts",
        "_unit_idf",
        "_unknown_idf",
        "_vocabulary",
    )

    _names: tuple[str, ...]
    _name_terms: tuple[frozenset[str], ...]
    _regex_texts: tuple[str, ...]
    _lowered_texts: tuple[str, ...]
    _postings: dict[str, tuple[array[int], array[float]]]
    _idf: dict[str, float]
    _vocabulary: tuple[str, ...]
    _unknown_idf: float
    _unit_idf: float
    _digest: str

    def __init__(self) -> None:
        raise TypeError("use SearchIndex.build(documents)")

    @classmethod
    def build(cls, documents: Iterable[SearchDocument]) -> SearchIndex:
        """Index ``documents`` (in catalog order: ties rank in this order)."""
        kept = tuple(documents)
        for document in kept:
            if not isinstance(document, SearchDocument):
                raise TypeError("SearchIndex.build takes SearchDocument values")
        fields = [_field_terms(document) for document in kept]
        count = len(kept)
        average = [
            max(1.0, sum(len(per_doc[field]) for per_doc in fields) / count) if count else 1.0
            for field in range(len(_FIELDS))
        ]
        position_lists: defaultdict[str, list[int]] = defaultdict(list)
        saturation_lists: defaultdict[str, list[float]] = defaultdict(list)
        saturate = _K1 + 1.0
        for position, per_doc in enumerate(fields):
            weighted: dict[str, float] = {}
            get = weighted.get
            for field, field_terms in enumerate(per_doc):
                if not field_terms:
                    continue
                weight, b = _FIELDS[field]
                norm = weight / (1.0 - b + b * len(field_terms) / average[field])
                # Each occurrence adds the field's weight: the term frequency, weighted, without
                # counting first (a Counter per field costs more than the whole sum).
                for term in field_terms:
                    weighted[term] = get(term, 0.0) + norm
            for term, tf in weighted.items():
                position_lists[term].append(position)
                saturation_lists[term].append(tf * saturate / (tf + _K1))
        # Compact arrays (4 + 8 bytes a posting), not lists of boxed numbers.
        doc_ids = {term: array("i", ids) for term, ids in position_lists.items()}
        saturations = {term: array("d", values) for term, values in saturation_lists.items()}
        del position_lists, saturation_lists
        index = object.__new__(cls)
        index._names = tuple(document.name for document in kept)
        index._name_terms = tuple(frozenset(per_doc[0]) for per_doc in fields)
        index._regex_texts = tuple(document.regex_text() for document in kept)
        index._lowered_texts = tuple(text.lower() for text in index._regex_texts)
        index._postings = {term: (doc_ids[term], saturations[term]) for term in doc_ids}
        index._idf = {
            term: math.log(1.0 + (count - len(ids) + 0.5) / (len(ids) + 0.5)) for term, ids in doc_ids.items()
        }
        index._vocabulary = tuple(sorted(doc_ids))
        index._unknown_idf = math.log(1.0 + (count + 0.5) / 0.5)
        index._unit_idf = math.log(1.0 + (count - 0.5) / 1.5)  # a term one tool holds
        index._digest = _digest(kept)
        return index

    @property
    def digest(self) -> str:
        """SHA-256 (hex) of the indexed documents, in order."""
        return self._digest

    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"SearchIndex({len(self._names)} tools, {self._digest[:12]})"

    # ------------------------------------------------------------------ search

    def search(self, text: str, *, limit: int) -> tuple[SearchHit, ...]:
        """The tools relevant to ``text``, best first, at most ``limit``; ``()`` when none is.

        ``text`` is a regex (FastMCP semantics: case-insensitive, unanchored, over name, description
        and arguments; every match is returned, ranked) or natural language (ranked, abstaining when
        nothing in the catalog is relevant). See the module documentation for how the two combine.
        """
        if limit <= 0 or not self._names or not isinstance(text, str):
            return ()
        if looks_like_regex(text):
            matcher = compile_pattern(text)
            if matcher is not None:
                # A regex: exactly the tools it matches (none: nothing), ranked by the words it names.
                matched = matcher.matching(self._regex_texts)
                if matched or not _is_prose(text):
                    scores, _ = self._score_concepts(self._concepts(pattern_words(text)))
                    return self._hits(self._best(matched, scores, limit), scores, limit)
                # Prose that happens to hold an operator ("(PMI)", "$2000", a "?" mid-text) and matches
                # nothing as a regex is a request: the ranking reads it (a regex matching something
                # keeps FastMCP's semantics: every match returned).
        matched = self._literal_matches(text)
        concepts = self._concepts(text)
        scores, best = self._score_concepts(concepts)
        answered = best is not None and _answers(scores[best], concepts, self._unit_idf)
        if not answered:
            scores = {}
        candidates = set(matched)
        candidates.update(scores)
        if not candidates:
            return ()
        ranked = self._best(candidates, scores, limit)
        if answered and best is not None:
            floor = scores[best] * _TAIL_SHARE
            literal = frozenset(matched)
            ranked = [p for p in ranked if p in literal or scores.get(p, 0.0) >= floor]
        return self._hits(ranked, scores, limit)

    def _literal_matches(self, text: str) -> list[int]:
        """The tools a short phrase (no regex operators, at most :data:`_MAX_LITERAL_WORDS` words)
        matches as FastMCP's regex search would: found case-insensitively in the regex text. A plain
        substring test over the lower-cased texts; a phrase with ``.`` (any character, as a regex) takes
        the regex engine. Longer text is a request: the ranking reads it (scanning every tool's text for
        a sentence would cost more than the ranking, and find what the ranking finds)."""
        if not text or len(text) > MAX_PATTERN_CHARS or len(text.split()) > _MAX_LITERAL_WORDS:
            return []
        if "." in text:
            matcher = compile_pattern(text)
            return matcher.matching(self._regex_texts) if matcher is not None else []
        needle = text.lower()
        return [position for position, haystack in enumerate(self._lowered_texts) if needle in haystack]

    def _best(self, candidates: Iterable[int], scores: dict[int, float], limit: int) -> list[int]:
        """Candidates by score, then the unscored (literal or regex matches) in catalog order: enough of
        them for ``limit`` distinct names (a dedicated selection, not a sort of every candidate)."""
        pool = set(candidates)
        scored = [position for position in pool if position in scores]
        wanted = limit * 4 + 16  # names repeat rarely; the tail filter drops a few more
        if len(scored) > wanted:
            top = heapq.nlargest(wanted, scored, key=scores.__getitem__)
            if len({self._names[position] for position in top}) < limit:
                top = scored
        else:
            top = scored
        top.sort(key=lambda position: (-scores[position], position))
        unscored = sorted(position for position in pool if position not in scores)
        return top + unscored[: limit * 4 + 16]

    def _hits(self, ranked: list[int], scores: dict[int, float], limit: int) -> tuple[SearchHit, ...]:
        hits: list[SearchHit] = []
        seen: set[str] = set()
        for position in ranked:
            name = self._names[position]
            if name in seen:
                continue
            seen.add(name)
            hits.append(SearchHit(name, round(scores.get(position, 0.0), 6)))
            if len(hits) >= limit:
                break
        return tuple(hits)

    def _concepts(self, text: str) -> list[tuple[float, dict[str, float]]]:
        """``(information, {term: weight})`` per content word of ``text``."""
        concepts: list[tuple[float, dict[str, float]]] = []
        seen: set[str] = set()
        for word in text_words(text):
            if word in STOP_WORDS or len(concepts) >= _MAX_QUERY_CONCEPTS:
                continue
            own = stem(word)
            if own in seen:
                continue
            seen.add(own)
            expansion: dict[str, float] = {}
            self._offer(expansion, own, 1.0)
            for spelled in ABBREVIATIONS.get(word, ()):
                self._offer(expansion, stem(spelled), _ABBREVIATION_WEIGHT)
            for root_term in self._root_neighbours(own):
                self._offer(expansion, root_term, _ROOT_WEIGHT)
            for related in _RELATED_BY_STEM.get(own, ()):
                self._offer(expansion, related, _RELATED_WEIGHT)
            information = self._idf.get(own, self._unknown_idf)
            if own not in self._idf and expansion:
                # A word the catalog spells otherwise (abbreviated, another form of the root) counts
                # as the best-known term it brought in, not as a word the catalog never uses.
                information = max(self._idf[term] for term in expansion)
            concepts.append((information, expansion))
        return concepts

    def _offer(self, expansion: dict[str, float], term: str, weight: float) -> None:
        if term in self._postings and expansion.get(term, 0.0) < weight:
            expansion[term] = weight

    def _root_neighbours(self, own: str) -> list[str]:
        """Catalog terms sharing ``own``'s root: terms it begins (``repo`` -> ``repositori``) and terms
        that begin it (``watcher`` -> ``watch``), nearest in length first, a few."""
        if len(own) < _MIN_ROOT or not own.isalpha():
            return []
        found: list[str] = []
        vocabulary = self._vocabulary
        start = bisect_left(vocabulary, own)
        for position in range(start, min(start + 64, len(vocabulary))):
            term = vocabulary[position]
            if not term.startswith(own):
                break
            if term != own:
                found.append(term)
        for suffix in _DERIVATIONAL_SUFFIXES:
            # "watcher" -> "watch", "collaborator" -> "collabor": the root the catalog spells.
            root = own[: -len(suffix)]
            if own.endswith(suffix) and len(root) >= _MIN_ROOT and root in self._postings:
                found.append(root)
        found.sort(key=lambda term: (abs(len(term) - len(own)), term))
        return found[:_MAX_ROOT_NEIGHBOURS]

    def _score_concepts(
        self, concepts: list[tuple[float, dict[str, float]]]
    ) -> tuple[dict[int, float], int | None]:
        """Per tool, the BM25F score (each concept by its best term), name-lifted; and the best tool."""
        scores: dict[int, float] = {}
        for _, expansion in concepts:
            if len(expansion) == 1:
                ((term, weight),) = expansion.items()
                ids, saturation = self._postings[term]
                factor = weight * self._idf[term]
                get = scores.get
                for position, value in zip(ids, saturation, strict=True):
                    scores[position] = get(position, 0.0) + factor * value
                continue
            best: dict[int, float] = {}
            for term, weight in expansion.items():
                ids, saturation = self._postings[term]
                factor = weight * self._idf[term]
                known = best.get
                for position, value in zip(ids, saturation, strict=True):
                    contribution = factor * value
                    if contribution > known(position, 0.0):
                        best[position] = contribution
            get = scores.get
            for position, contribution in best.items():
                scores[position] = get(position, 0.0) + contribution
        if not scores:
            return scores, None
        return scores, self._lift_named(scores, concepts)

    def _lift_named(self, scores: dict[int, float], concepts: list[tuple[float, dict[str, float]]]) -> int:
        """Lift the best few tools by the share of their name's words the request covers; the best."""
        weights: dict[str, float] = {}
        for _, expansion in concepts:
            for term, weight in expansion.items():
                if weights.get(term, 0.0) < weight:
                    weights[term] = weight
        for position in heapq.nlargest(_RERANKED, scores, key=scores.__getitem__):
            name_terms = self._name_terms[position]
            if name_terms:
                covered = sum(weights.get(term, 0.0) for term in name_terms) / len(name_terms)
                scores[position] *= 1.0 + _NAME_COVERAGE_LIFT * covered
        return max(scores, key=scores.__getitem__)


def _answers(best_score: float, concepts: list[tuple[float, dict[str, float]]], unit_idf: float) -> bool:
    """Whether a request whose best tool scores ``best_score`` is answered (see :data:`ANSWER_MARGIN`);
    ``known`` is the share of its information in words the catalog uses (a concept with any term in the
    index)."""
    total = sum(information for information, _ in concepts)
    if total <= 0 or unit_idf <= 0:
        return False
    known = sum(information for information, expansion in concepts if expansion) / total
    return math.log1p(best_score / unit_idf) + known >= ANSWER_MARGIN


def _is_prose(text: str) -> bool:
    """Whether ``text`` reads as a sentence (several words apart) rather than an agent's pattern."""
    return sum(1 for word in text.split() if sum(character.isalpha() for character in word) >= 2) >= (
        _MIN_PROSE_WORDS
    )
