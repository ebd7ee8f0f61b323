"""Retrieval over a real LanceDB table with the real bundled embedder."""

from __future__ import annotations

import numpy as np
import pytest

from core.ingest import ingest_posts
from core.models import Block, Hit, Post
from core.search import search
from core.search.retrieve import select

TOPICS = {
    "bees": ("On Bees", "writings", "Our beehives swarmed in May; the queen left with half of the colony."),
    "bread": (
        "Sourdough",
        "recipes",
        "My sourdough starter is fed rye flour twice a day; the loaf proves overnight.",
    ),
    "bikes": (
        "Cycling",
        "writings",
        "I ride my bicycle to work every day, even in the rain, along the canal.",
    ),
    "chess": ("Chess", "games", "The Sicilian Defence is my favourite chess opening against 1.e4."),
}


@pytest.fixture
def table(settings, store, embedder):
    posts = [
        Post(pid, title, [Block(text)], raw=text, source=f"{pid}.txt", collection=coll)
        for pid, (title, coll, text) in TOPICS.items()
    ]
    ingest_posts(posts, settings, store=store, embedder=embedder)
    return store


def hits(*relevances: float) -> list[Hit]:
    return [Hit("p", "t", "c", f"c{i}", "", "x", [], r, i + 1) for i, r in enumerate(relevances)]


@pytest.mark.parametrize(
    ("relevances", "threshold", "lo", "hi", "kept"),
    [
        ([0.9, 0.8, 0.3, 0.2, 0.1], 0.25, 0, 10, 3),  # threshold decides
        ([0.9, 0.2, 0.1, 0.05], 0.25, 3, 10, 3),  # never fewer than min
        ([0.9, 0.8, 0.7, 0.6, 0.5], 0.25, 0, 2, 2),  # never more than max
        ([0.2], 0.25, 5, 10, 1),  # min can't exceed what exists
    ],
)
def test_select_applies_threshold_min_and_max(relevances, threshold, lo, hi, kept):
    candidates = hits(*relevances)
    chosen = select(candidates, threshold, lo, hi)
    assert len(chosen) == kept
    assert [h.passed for h in candidates] == [i < kept for i in range(len(relevances))]


def test_search_finds_the_right_post_first(table, settings, embedder):
    result = search("when did the bees swarm?", settings, store=table, embedder=embedder)
    assert result.hits[0].post_id == "bees"
    rel = [h.relevance for h in result.candidates]
    assert rel == sorted(rel, reverse=True)
    assert all(0.0 <= r <= 1.0 for r in rel)
    assert [h.rank for h in result.candidates] == list(range(1, len(rel) + 1))


def test_relevance_is_one_minus_half_squared_l2(table, settings, embedder):
    question = "favourite chess opening"
    best = search(question, settings, store=table, embedder=embedder, mode="dense").hits[0]
    q = embedder.embed([question])[0]
    stored = next(r for r in table.chunks.to_arrow().to_pylist() if r["chunk_id"] == best.chunk_id)
    v = np.asarray(stored["vector"], dtype=np.float32)
    assert best.relevance == pytest.approx(1 - float(np.sum((q - v) ** 2)) / 2, abs=1e-4)
    # Hybrid keeps that cosine relevance as the chunk's dense contribution.
    hybrid = search(question, settings, store=table, embedder=embedder, mode="hybrid")
    same = next(h for h in hybrid.candidates if h.chunk_id == best.chunk_id)
    assert same.dense_relevance == pytest.approx(best.relevance, abs=1e-6) and same.dense_rank == 1


def test_collection_filter_is_a_prefilter(table, settings, embedder):
    # A question about bees, restricted to a collection that has only the chess post: still a hit.
    result = search("bees swarming", settings, store=table, embedder=embedder, collections=["games"])
    assert [h.post_id for h in result.hits] == ["chess"]


def test_empty_question_is_refused(table, settings, embedder):
    with pytest.raises(ValueError, match="empty"):
        search("   ", settings, store=table, embedder=embedder)


def test_search_on_empty_table_returns_nothing(settings, store, embedder):
    assert search("anything", settings, store=store, embedder=embedder).hits == []
