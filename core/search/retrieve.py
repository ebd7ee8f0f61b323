"""Retrieval: dense (cosine), keyword (BM25) or hybrid search, then the seed's selection rules.

Modes (`settings.retrieval_mode`, or `mode=` per call):

- dense: the question is embedded with the table's model and the `top_k` nearest chunks are taken.
  Relevance is 1 − cosine distance, which for unit vectors equals the seed's 1 − L2²/2 (rescaled
  for models whose cosines crowd near 1, such as multilingual e5: the model profile's `relevance_scale`,
  core/embed/scales.py).
- fts: the `top_k` best chunks by BM25 over LanceDB's full-text index (title, section, text and
  keywords; English stemming and stop words). BM25 has no fixed scale, so relevance is the score
  divided by the best score for this question: the top keyword hit has relevance 1.0.
- hybrid: both searches, each `top_k` deep with the same collection prefilter, merged. Every
  candidate gets a cosine relevance (computed from its stored vector when only the keyword search
  found it) and a BM25 score (0 when it is not among the keyword top_k). Two fusions
  (`settings.fusion`):
  - "score" (default): relevance = ½ · cosine / best cosine + ½ · BM25 / best BM25, the bests taken
    over this question's candidates. 1.0 = the best match of both searches; a chunk the keyword
    search missed scores at most 0.5, so the threshold still cuts (at 0.25: chunks the keywords
    missed and whose cosine is under half the best). Measured (bench/bench.py, SciFact, 300
    queries): nDCG@10 0.734 against 0.709 for RRF and 0.648 dense; on the demo set 0.875 against
    0.871 and 0.847. Equal weights were not tuned (0.5–0.7 on the dense side all beat RRF on SciFact).
  - "rrf": reciprocal rank fusion, fused = Σ over the lists holding the chunk of 1 / (rrf_k + rank)
    (Cormack et al. 2009, rrf_k = 60), relevance = fused / its best possible value n / (rrf_k + 1)
    for the n lists that returned anything (1.0 = first in both; 0.5 = first in one, missed by the
    other). Rank-only, so with rrf_k = 60 and top_k = 50 every candidate scores ≥ 0.27 and the
    default threshold never cuts.

Keyword feedback, for a question in another language than the posts (hybrid mode, with
a model that matches across languages: multilingual e5 or OpenAI's): BM25 on "Ceviz bankı ne kadar
sürdü?" finds next to nothing in English posts, so the stored keywords of the FEEDBACK_HITS nearest
passages are added to its keyword search (pseudo-relevance feedback, as in RM3; the posts' language is
the one recorded at ingest, the question's from core.text.detect_language). Measured on the demo set
with e5 (bench/multilingual.py, nDCG@10, hybrid): Turkish 0.809 → 0.855, German 0.869 → 0.877, French
0.819 → 0.874; English questions unchanged (they never get feedback). Every depth from 2 to 5 beat none
in all three languages (in sample: the same 15 questions). `Retrieval.feedback` lists the terms added.

Relevance always orders the candidates (answers also show it to the model and sort by it), so the
threshold rules keep their meaning as a cut of one ranked list: keep relevance >= `threshold`, but
never fewer than `min_chunks` nor more than `max_chunks`, best first. Every mode's relevance is 0..1,
but a threshold tuned for one mode does not carry over to another. Each candidate carries its dense
and keyword contributions (`Hit.scores()`), so the inspector can show why a chunk was or wasn't used.

An optional reranker (`settings.reranker`, core/search/rerank.py; off by default) runs after fusion and
before the threshold rules: the best `rerank_top_n` candidates take its 0..1 score as relevance and
its order, the rest stay below them (see core/search/rerank.py); a failing reranker leaves the fused order
with a note.

Keyword search never breaks a search: a question of only stop words or punctuation simply matches
nothing, and if LanceDB's full-text search fails, hybrid and fts fall back to dense search alone
(`Retrieval.mode` says which ran, `Retrieval.notes` why).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from core.config import RETRIEVAL_MODES, Settings
from core.embed import Embedder, cross_lingual, embed_query, embedder_for_store, relevance_scale, rescale
from core.models import Hit
from core.search.rerank import rerank
from core.store import KeywordSearchError, Store
from core.store.corpus import corpus_language
from core.text import UNDETERMINED, detect_language

# Score fusion's weight of the dense side (the keyword side gets the rest); see the module docstring.
DENSE_WEIGHT = 0.5
# Keyword feedback: the keywords of this many nearest passages join a question asked in another
# language than the posts (see the module docstring).
FEEDBACK_HITS = 3


@dataclass
class Retrieval:
    question: str
    hits: list[Hit]  # the chunks that passed, best first
    candidates: list[Hit]  # all candidates, each with `passed`
    collections: list[str] = field(default_factory=list)
    seconds: float = 0.0
    mode: str = "dense"  # the mode that actually ran (fts falls back to dense on errors)
    notes: list[str] = field(default_factory=list)
    # Keywords of the nearest passages added to the keyword search (a question in another language).
    feedback: list[str] = field(default_factory=list)


def _clamp(value: float) -> float:
    return max(0.0, min(1.0, value))


def to_hit(row: dict, rank: int, scale: tuple[float, float] = (0.0, 1.0)) -> Hit:
    """A dense search row as a hit (relevance = 1 − cosine distance, on the model's `scale`)."""
    relevance = _clamp(rescale(1.0 - float(row["_distance"]), scale)) if "_distance" in row else 0.0
    return Hit(
        post_id=row["post_id"],
        title=row.get("title") or row["post_id"],
        collection=row.get("collection") or "",
        chunk_id=row["chunk_id"],
        section=row.get("section") or "",
        text=row.get("text") or "",
        keywords=list(row.get("keywords") or []),
        relevance=relevance,
        rank=rank,
        date=row.get("date") or "",
        url=row.get("url") or "",
    )


def rrf_scores(rankings: Sequence[Sequence[str]], k: int = 60) -> dict[str, float]:
    """Reciprocal rank fusion: Σ 1 / (k + rank) over the rankings (rank starts at 1) holding each id."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return scores


def rrf_best(n_rankings: int, k: int = 60) -> float:
    """The highest fused score possible: first in every ranking."""
    return n_rankings / (k + 1)


def score_fusion(
    dense: dict[str, float], keyword: dict[str, float], dense_weight: float = DENSE_WEIGHT
) -> dict[str, float]:
    """Weighted sum of each score divided by its best: w · cos / best cos + (1 − w) · bm25 / best bm25.

    `dense` holds every candidate's cosine relevance; `keyword` the BM25 scores of those the keyword
    search returned (missing = 0). Negative or zero bests contribute nothing.
    """
    best_dense = max(dense.values(), default=0.0)
    best_keyword = max(keyword.values(), default=0.0)
    fused = {}
    for key in dense.keys() | keyword.keys():
        d = dense.get(key, 0.0) / best_dense if best_dense > 0 else 0.0
        k = keyword.get(key, 0.0) / best_keyword if best_keyword > 0 else 0.0
        fused[key] = dense_weight * max(d, 0.0) + (1 - dense_weight) * max(k, 0.0)
    return fused


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
    mode: str | None = None,
    query_vector: np.ndarray | None = None,
) -> Retrieval:
    """`query_vector`: the question already embedded with `embedder`'s `query` (callers that need it
    before the search, such as the router, pass it so the question is embedded once)."""
    started = time.perf_counter()
    if not question.strip():
        raise ValueError("the question is empty")
    mode = mode or settings.retrieval_mode
    if mode not in RETRIEVAL_MODES:
        raise ValueError(f"retrieval mode must be one of {', '.join(RETRIEVAL_MODES)}, not {mode!r}")
    store = store or Store(settings.data_dir)
    notes: list[str] = []

    vector: np.ndarray | None = None
    dense_rows: list[dict] = []
    scale = (0.0, 1.0)
    dense_first = mode in ("dense", "hybrid")
    if dense_first:
        embedder, vector, dense_rows, scale = _dense(
            question, settings, store, embedder, collections, query_vector
        )

    keyword_rows: list[dict] = []
    feedback: list[str] = []
    if mode in ("fts", "hybrid"):
        if dense_rows and asked_in_another_language(question, settings, embedder, store):
            feedback = feedback_terms(dense_rows[:FEEDBACK_HITS], question)
        try:
            keyword_rows = store.keyword_search(" ".join([question, *feedback]), settings.top_k, collections)
        except KeywordSearchError as exc:
            notes.append(f"{exc}; using dense search only")
            feedback, mode = [], "dense"
    if mode == "dense" and not dense_first:  # keyword search failed: dense search instead
        embedder, vector, dense_rows, scale = _dense(
            question, settings, store, embedder, collections, query_vector
        )

    candidates = _fuse(mode, dense_rows, keyword_rows, vector, settings.fusion, settings.rrf_k, scale)
    # The reranker (off by default) reorders the head; relevance stays 0..1 for the rules below.
    candidates, rerank_notes = rerank(question, candidates, settings)
    notes.extend(rerank_notes)
    hits = select(candidates, settings.threshold, settings.min_chunks, settings.max_chunks)
    return Retrieval(
        question,
        hits,
        candidates,
        list(collections or []),
        time.perf_counter() - started,
        mode,
        notes,
        feedback,
    )


def _dense(
    question: str,
    settings: Settings,
    store: Store,
    embedder: Embedder | None,
    collections: Sequence[str] | None,
    query_vector: np.ndarray | None,
) -> tuple[Embedder, np.ndarray, list[dict], tuple[float, float]]:
    """The embedder (the table's when none is given), the question's vector in the model's query form
    (e5: "query: "), its top_k rows and the model's relevance scale (its profile, core/embed/scales.py)."""
    embedder = embedder or embedder_for_store(settings, store.model_id())
    store.check_model(embedder.model_id)
    vector = embed_query(embedder, question) if query_vector is None else query_vector
    rows = store.vector_search(vector, settings.top_k, collections)
    return embedder, vector, rows, relevance_scale(embedder.model_id)


def asked_in_another_language(
    question: str, settings: Settings, embedder: Embedder | None, store: Store | None = None
) -> bool:
    """A question in another language than the posts' main one, with a model that matches across
    languages (with MiniLM the nearest passages of a translated question are mostly wrong)."""
    if embedder is None or not cross_lingual(embedder.model_id):
        return False
    asked = detect_language(question)
    if asked == UNDETERMINED:
        return False
    return asked != (corpus_language(store or Store(settings.data_dir), settings.local_home) or "en")


def feedback_terms(rows: Sequence[dict], question: str) -> list[str]:
    """The stored keywords of the nearest passages that the question does not already hold."""
    asked = question.casefold()
    terms = dict.fromkeys(k for row in rows for k in (row.get("keywords") or []) if k.casefold() not in asked)
    return list(terms)


def _fuse(
    mode: str,
    dense_rows: list[dict],
    keyword_rows: list[dict],
    vector: np.ndarray | None,
    fusion: str,
    rrf_k: int,
    scale: tuple[float, float] = (0.0, 1.0),
) -> list[Hit]:
    """Candidates from both searches with each one's contributions, sorted by relevance, ranked."""
    by_id: dict[str, Hit] = {}
    for rank, row in enumerate(dense_rows, start=1):
        hit = to_hit(row, rank, scale)
        hit.dense_relevance, hit.dense_rank = hit.relevance, rank
        by_id[hit.chunk_id] = hit
    for rank, row in enumerate(keyword_rows, start=1):
        hit = by_id.get(row["chunk_id"])
        if hit is None:
            hit = by_id[row["chunk_id"]] = to_hit(row, rank)
            if vector is not None and row.get("vector") is not None:
                # Not among the dense top_k: its cosine relevance still counts (and explains).
                stored = np.asarray(row["vector"], dtype=np.float32)
                hit.dense_relevance = _clamp(rescale(float(stored @ vector), scale))
        hit.keyword_score, hit.keyword_rank = float(row["_score"]), rank

    hits = list(by_id.values())
    if mode == "fts":
        best = max((h.keyword_score or 0.0 for h in hits), default=0.0)
        for hit in hits:
            hit.relevance = _clamp((hit.keyword_score or 0.0) / best) if best > 0 else 0.0
    elif mode == "hybrid" and fusion == "rrf":
        rankings = [[row["chunk_id"] for row in rows] for rows in (dense_rows, keyword_rows) if rows]
        fused = rrf_scores(rankings, rrf_k)
        best = rrf_best(len(rankings), rrf_k)
        for hit in hits:
            hit.fused_score = fused[hit.chunk_id]
            hit.relevance = _clamp(hit.fused_score / best)
    elif mode == "hybrid":
        fused = score_fusion(
            {h.chunk_id: h.dense_relevance or 0.0 for h in hits},
            {h.chunk_id: h.keyword_score for h in hits if h.keyword_score is not None},
        )
        for hit in hits:
            hit.fused_score = fused[hit.chunk_id]
            hit.relevance = _clamp(hit.fused_score)
    # Ties (common with RRF) go to the better cosine, then the better BM25 score.
    hits.sort(key=lambda h: (-h.relevance, -(h.dense_relevance or 0.0), -(h.keyword_score or 0.0)))
    for rank, hit in enumerate(hits, start=1):
        hit.rank = rank
    return hits
