"""Retrieval: embed the question with the table's model, search by cosine, apply the seed's rules.

The rules: take the `top_k` nearest chunks, keep those with relevance >= `threshold`, but never fewer
than `min_chunks` nor more than `max_chunks`, best first. Relevance is 1 − cosine distance, which for
unit vectors equals the seed's 1 − L2²/2. Every candidate is returned with whether it passed, so the
inspector can show why a chunk was or wasn't used.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from core.config import Settings
from core.embed import Embedder, embedder_for_store
from core.models import Hit
from core.store import Store


@dataclass
class Retrieval:
    question: str
    hits: list[Hit]  # the chunks that passed, best first
    candidates: list[Hit]  # all top_k candidates, each with `passed`
    collections: list[str] = field(default_factory=list)
    seconds: float = 0.0


def to_hit(row: dict, rank: int) -> Hit:
    return Hit(
        post_id=row["post_id"],
        title=row.get("title") or row["post_id"],
        collection=row.get("collection") or "",
        chunk_id=row["chunk_id"],
        section=row.get("section") or "",
        text=row.get("text") or "",
        keywords=list(row.get("keywords") or []),
        relevance=max(0.0, min(1.0, 1.0 - float(row["_distance"]))),
        rank=rank,
        date=row.get("date") or "",
    )


def select(candidates: list[Hit], threshold: float, min_chunks: int, max_chunks: int) -> list[Hit]:
    """Mark which candidates pass the seed's rules; candidates must be sorted best first."""
    passing = sum(1 for h in candidates if h.relevance >= threshold)
    keep = min(max(passing, min_chunks), max_chunks, len(candidates))
    for i, hit in enumerate(candidates):
        hit.passed = i < keep
    return candidates[:keep]


def search(
    question: str,
    settings: Settings,
    *,
    store: Store | None = None,
    embedder: Embedder | None = None,
    collections: Sequence[str] | None = None,
) -> Retrieval:
    started = time.perf_counter()
    if not question.strip():
        raise ValueError("the question is empty")
    store = store or Store(settings.data_dir)
    embedder = embedder or embedder_for_store(settings, store.model_id())
    store.check_model(embedder.model_id)
    vector = embedder.embed([question])[0]
    rows = store.vector_search(vector, settings.top_k, collections)
    candidates = [to_hit(row, rank) for rank, row in enumerate(rows, start=1)]
    candidates.sort(key=lambda h: -h.relevance)
    for rank, hit in enumerate(candidates, start=1):
        hit.rank = rank
    hits = select(candidates, settings.threshold, settings.min_chunks, settings.max_chunks)
    return Retrieval(question, hits, candidates, list(collections or []), time.perf_counter() - started)
