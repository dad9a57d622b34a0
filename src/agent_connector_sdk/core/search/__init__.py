"""Ranked tool search, pure: one implementation for every search-first surface (no I/O).

* :class:`SearchDocument` — what the ranking reads of a tool; :func:`document_from_tool` builds one
  from an MCP tool descriptor (the ``tools/list`` shape).
* :class:`SearchIndex` — ``SearchIndex.build(documents)`` once per catalog content (its ``digest``
  identifies it), then ``index.search(text, limit=n)`` per request: a regex keeps FastMCP's semantics
  (every tool it matches is reachable) but comes back ranked; natural language is ranked (BM25F over
  name words, title, description and arguments, stemmed, with the catalog's own vocabulary) and
  abstains — returns ``()`` — when nothing in the catalog is relevant.
* :class:`SearchHit` — ``(name, score)``, best first.
* :func:`merge_by_rank` — reciprocal rank fusion of ranked lists (listed and federated results).
* :class:`EnumerationPlanner` — every tool behind a search that caps its results: the anchored searches
  to run and when to stop (sans-I/O; the gateway's ``--check`` and the reviewer drive it), with one set
  of bounds (:data:`MAX_ENUMERATION_SEARCHES`) and what it knows of the search's case (:class:`SearchCase`).
* :class:`FusedSearchIndex` — optional: a :class:`SemanticModel` (e.g. the ``semantic`` extra's
  :class:`agent_connector_sdk.mcp.search_semantic.WordLlamaModel`) fused into natural-language answers;
  answering, abstaining and regex matches stay the lexical index's.

Index only what the caller may see: an index built over another caller's tools would let a hidden
tool shape a score or a count.
"""

from __future__ import annotations

from agent_connector_sdk.core.search._document import SearchDocument, document_from_tool
from agent_connector_sdk.core.search._enumeration import (
    MAX_ENUMERATION_SEARCHES,
    EnumerationPlanner,
    Region,
    SearchCase,
    region_pattern,
)
from agent_connector_sdk.core.search._fusion import merge_by_rank
from agent_connector_sdk.core.search._index import SearchHit, SearchIndex
from agent_connector_sdk.core.search._semantic import (
    FusedSearchIndex,
    SemanticModel,
    SemanticRanker,
    semantic_text,
)

__all__ = [
    "MAX_ENUMERATION_SEARCHES",
    "EnumerationPlanner",
    "FusedSearchIndex",
    "Region",
    "SearchCase",
    "SearchDocument",
    "SearchHit",
    "SearchIndex",
    "SemanticModel",
    "SemanticRanker",
    "document_from_tool",
    "merge_by_rank",
    "region_pattern",
    "semantic_text",
]
