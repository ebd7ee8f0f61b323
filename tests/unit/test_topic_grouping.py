"""Grouping readers' questions (core/search/topics.py): average linkage gives the groups of the plain
whole-matrix algorithm it replaced (each step merges the most similar pair, the first row then column
among equals), and a question's vector is embedded once, not on every grouping: kept in the process and
in the question log's table, which deletes it with its question."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from core.search.topics import average_linkage, find_topics, question_vectors
from core.store import Store
from core.store.questions import Asked, QuestionLog


def plain_average_linkage(vectors: np.ndarray, threshold: float) -> list[list[int]]:
    """The reference: every step scans the whole similarity matrix for its most similar pair."""
    n = len(vectors)
    sim = (vectors @ vectors.T).astype(np.float64)
    np.fill_diagonal(sim, -np.inf)
    sizes, members, alive = np.ones(n), [[i] for i in range(n)], np.ones(n, dtype=bool)
    while alive.sum() > 1:
        i, j = divmod(int(np.argmax(sim)), n)
        if sim[i, j] < threshold:
            break
        merged = (sizes[i] * sim[i] + sizes[j] * sim[j]) / (sizes[i] + sizes[j])
        sim[i], sim[:, i] = merged, merged
        sim[j], sim[:, j] = -np.inf, -np.inf
        sim[i, i] = -np.inf
        sizes[i] += sizes[j]
        members[i] += members[j]
        alive[j] = False
    return sorted([sorted(members[i]) for i in np.flatnonzero(alive)], key=lambda g: (-len(g), g[0]))


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    rows = rng.normal(size=(n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.mark.parametrize(
    ("n", "dim", "threshold"),
    [
        (1, 8, 0.3),
        (2, 8, -1.0),
        (60, 8, 0.3),
        (300, 16, 0.2),
        (300, 16, -1.0),
        (300, 384, 0.05),
        (200, 4, 0.6),
    ],
)
def test_average_linkage_groups_as_the_whole_matrix_scan(n, dim, threshold):
    vectors = unit_rows(np.random.default_rng(n + dim), n, dim)
    assert average_linkage(vectors, threshold) == plain_average_linkage(vectors, threshold)


def test_average_linkage_breaks_ties_as_the_whole_matrix_scan():
    """Repeated vectors make equal similarities everywhere: the same pair must merge first."""
    base = unit_rows(np.random.default_rng(7), 20, 8)
    vectors = np.concatenate([base, base, base[:5], base[:5]])
    for threshold in (0.99, 0.5, 0.0):
        assert average_linkage(vectors, threshold) == plain_average_linkage(vectors, threshold)
    assert average_linkage(np.zeros((0, 8), dtype=np.float32), 0.5) == []


class CountingEmbedder:
    """Vectors from the letters of each text (no model); counts the texts it is asked to embed."""

    model_id = "counting-test-model"
    dim = 26

    def __init__(self) -> None:
        self.texts = 0

    def embed(self, texts):
        self.texts += len(texts)
        rows = np.ones((len(texts), self.dim), dtype=np.float32) * 0.01
        for row, text in zip(rows, texts, strict=True):
            for letter in text.lower():
                if "a" <= letter <= "z":
                    row[ord(letter) - 97] += 1
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    query = embed


def test_a_new_question_embeds_one_question_not_all_of_them():
    """The Readers page groups again on each new question: it embedded every question each time (1,500
    questions, ~15 s on 2 cores)."""
    question_vectors.clear()
    embedder = CountingEmbedder()
    questions = [f"How do I keep {animal} in {season}?" for animal in ("hens", "goats", "bees")
                 for season in ("winter", "summer")]  # fmt: skip
    first = find_topics(questions, embedder, threshold=0.5)
    assert embedder.texts == len(questions)
    again = find_topics(["Where do swallows nest?", *questions], embedder, threshold=0.5)
    assert embedder.texts == len(questions) + 1
    assert sum(t.count for t in again) == sum(t.count for t in first) + 1


def test_the_logs_kept_vectors_spare_embedding_after_a_restart(tmp_path):
    """The first grouping in a fresh server process embedded every question again (~15 s for 1,500)."""
    log = QuestionLog(Store(tmp_path / "db"))
    questions = ["How do I keep hens in winter?", "What do goats eat?", "Where do swallows nest?"]
    for question in questions:
        log.add(Asked(question, "en", "none", True, (), 0.2, "chat"))
    question_vectors.clear()
    first = CountingEmbedder()
    grouped = find_topics(questions, first, threshold=0.5, log=log)
    assert first.texts == 3
    question_vectors.clear()  # a new process: only the table remembers
    again = CountingEmbedder()
    regrouped = find_topics([*questions, "Can bees sting twice?"], again, threshold=0.5, log=log)
    assert again.texts == 1  # the new question alone
    question_vectors.clear()
    fresh = find_topics([*questions, "Can bees sting twice?"], CountingEmbedder(), threshold=0.5)
    assert [(t.name, t.questions) for t in regrouped] == [(t.name, t.questions) for t in fresh]
    assert sum(t.count for t in regrouped) == sum(t.count for t in grouped) + 1


def test_kept_vectors_go_with_their_questions(tmp_path):
    """Retention and purge delete the questions' vectors too: nothing of a question outlives it."""
    now = [datetime(2026, 6, 1, tzinfo=UTC)]
    log = QuestionLog(Store(tmp_path / "db"), retention_days=30, now=lambda: now[0])
    log.add(Asked("What do goats eat?", "en", "none", True, (), 0.2, "chat"), at=now[0] - timedelta(days=20))
    log.add(Asked("How do I keep hens?", "en", "none", True, (), 0.2, "chat"), at=now[0])
    embedder = CountingEmbedder()
    texts = ["What do goats eat?", "How do I keep hens?"]
    log.keep_vectors(embedder.model_id, texts, embedder.embed(texts))
    assert set(log.vectors(embedder.model_id, texts)) == set(texts)
    assert log.vectors("another-model", texts) == {}
    now[0] += timedelta(days=15)  # the goats question is past the retention
    log.query()
    assert set(log.vectors(embedder.model_id, texts)) == {"How do I keep hens?"}
    log.purge()
    assert log.vectors(embedder.model_id, texts) == {}
    QuestionLog(Store(tmp_path / "off"), enabled=False).keep_vectors(
        embedder.model_id, texts, embedder.embed(texts)
    )
    assert QuestionLog(Store(tmp_path / "off")).vectors(embedder.model_id, texts) == {}
