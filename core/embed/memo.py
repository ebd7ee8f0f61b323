"""Vectors of short texts already embedded in this process, kept for the next question.

Extractive answers embed the sentences of the best chunks for every question (core/answer/extractive.py);
readers' questions land on the same popular posts again and again, so most of those sentences were
embedded a moment ago. On 2 cores that embedding was most of an answer's CPU time, and under many
readers at once the answers queued behind it. A bounded, thread-safe LRU keyed by (model, text) gives
the same vectors without the work.

Questions get a small memo of their own (`embed_query`): one question is embedded by the search and
again by the extractive answer (and popular questions come back from other readers); py-spy put query
embedding at about a third of the app's CPU under 8 readers at once before it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from core.embed.base import Embedder

DEFAULT_ITEMS = 50_000  # 384-d float32: ~77 MB at most


DEFAULT_QUESTIONS = 2_048


class VectorMemo:
    """`embed(embedder, texts)`: the embedder's vectors for `texts`, computing only those not seen before.

    `queries=True` memoises the question form (`embedder.query`, e.g. e5's "query: " prefix) instead.
    """

    def __init__(self, max_items: int = DEFAULT_ITEMS, *, queries: bool = False) -> None:
        self.max_items = max_items
        self.queries = queries
        self._vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def embed(self, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
        keys = [(embedder.model_id, text) for text in texts]
        compute = (getattr(embedder, "query", None) if self.queries else None) or embedder.embed
        found: dict[tuple[str, str], np.ndarray] = {}
        with self._lock:
            for key in keys:
                vector = self._vectors.get(key)
                if vector is not None:
                    self._vectors.move_to_end(key)
                    found[key] = vector
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        if missing:
            computed = np.asarray(compute([text for _, text in missing]), dtype=np.float32)
            with self._lock:
                for key, vector in zip(missing, computed, strict=True):
                    self._vectors[key] = found[key] = vector
                    self._vectors.move_to_end(key)
                while len(self._vectors) > self.max_items:
                    self._vectors.popitem(last=False)
        with self._lock:
            self.hits += len(keys) - len(missing)
            self.misses += len(missing)
        if not keys:
            return np.zeros((0, int(getattr(embedder, "dim", 0) or 0)), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def holds(self, embedder: Embedder, text: str) -> bool:
        """Whether `text`'s vector under `embedder`'s model is kept (without counting a hit)."""
        with self._lock:
            return (embedder.model_id, text) in self._vectors

    def put(self, embedder: Embedder, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Keep `vectors` (one row per text) computed elsewhere, e.g. read back from a table."""
        with self._lock:
            for text, vector in zip(texts, vectors, strict=True):
                self._vectors[embedder.model_id, text] = np.asarray(vector, dtype=np.float32)
                self._vectors.move_to_end((embedder.model_id, text))
            while len(self._vectors) > self.max_items:
                self._vectors.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()
            self.hits = self.misses = 0


#: The process's memo of passage sentences and headings (shared by every reader's session).
passage_vectors = VectorMemo()
#: The process's memo of question vectors.
query_vectors = VectorMemo(DEFAULT_QUESTIONS, queries=True)


def embed_query(embedder: Embedder, question: str) -> np.ndarray:
    """The question's vector (`query` form when the embedder has one), memoised per (model, question)."""
    return query_vectors.embed(embedder, [question])[0]  # a copy: the memo's own stays unchanged
