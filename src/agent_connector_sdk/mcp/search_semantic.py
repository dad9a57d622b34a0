"""The semantic component of the ranked search: WordLlama's static embeddings, offline.

Install the ``semantic`` extra (``pip install 'agent-connector-mcp[semantic]'``). The weights and the
tokenizer ship inside the ``wordllama`` wheel (MIT, ~19 MB); they are loaded from the package's own
folder with downloads disabled, so nothing is fetched at run time. Use with
:class:`agent_connector_sdk.core.search.FusedSearchIndex`::

    index = FusedSearchIndex.build(documents, WordLlamaModel())
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from agent_connector_sdk.errors import AgentConnectorError

__all__ = ["SemanticExtraMissing", "WordLlamaModel"]


class SemanticExtraMissing(AgentConnectorError, ImportError):
    """The ``semantic`` extra is not installed (category ``semantic_extra_missing``)."""

    category: Literal["semantic_extra_missing"]

    def __init__(self, message: str) -> None:
        super().__init__("semantic_extra_missing", message)


class WordLlamaModel:
    """A :class:`~agent_connector_sdk.core.search.SemanticModel` over WordLlama's bundled embeddings."""

    __slots__ = ("_lock", "_model")

    def __init__(self) -> None:
        try:
            import numpy  # type: ignore[import-not-found,unused-ignore]  # noqa: F401  (similarities)
            import wordllama  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError as error:  # pragma: no cover - depends on the environment
            raise SemanticExtraMissing(
                "the semantic search needs the 'semantic' extra: pip install 'agent-connector-mcp[semantic]'"
            ) from error
        folder = Path(wordllama.__file__).parent
        # Its default load() looks for the tokenizer elsewhere, then downloads: point it at the wheel.
        self._model: Any = wordllama.WordLlama.load(cache_dir=folder, disable_download=True)
        self._lock = threading.Lock()

    def ranker(self, texts: Sequence[str]) -> _WordLlamaRanker:
        with self._lock:
            embeddings = self._model.embed(list(texts), norm=True) if texts else None
        return _WordLlamaRanker(self._model, self._lock, embeddings)


class _WordLlamaRanker:
    __slots__ = ("_embeddings", "_lock", "_model")

    def __init__(self, model: Any, lock: threading.Lock, embeddings: Any) -> None:
        self._model = model
        self._lock = lock
        self._embeddings = embeddings

    def rank(self, text: str, limit: int) -> Sequence[int]:
        import numpy  # type: ignore[import-not-found,unused-ignore]

        if self._embeddings is None or limit <= 0 or not text.strip():
            return []
        with self._lock:
            query = self._model.embed([text], norm=True)[0]
        similarities = self._embeddings @ query
        count = min(limit, len(similarities))
        top = numpy.argpartition(-similarities, count - 1)[:count]
        return [int(position) for position in top[numpy.argsort(-similarities[top], kind="stable")]]
