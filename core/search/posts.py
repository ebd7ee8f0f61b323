"""Document-level views: one vector per post, and "which posts are about X".

A post's vector is the mean of its chunks' vectors, L2-normalised (chunk vectors are unit length, so
this is the direction of the post's centroid). It is computed from the chunks table when asked for,
not stored: every write that changes a post's chunks (ingest, chunk edit, delete, re-embed, import,
undo) is a write to the chunks table, so vectors computed from it are always current without touching
any write path or migrating old tables, and an ingest pays nothing for a view it may never use. The
price is one read of the vector column per call (bench/posts.py measures it). No cache keyed on the
table version: undo of a first ingest drops the table, and a re-created table counts its versions from
1 again, so a version number alone does not identify the content.

`posts_about` ranks posts for a question. Scorings (`SCORINGS`), each 0..1:
- "combined" (default): ½ · retrieval + ½ · post similarity ÷ the best post similarity, so 1.0 = the
  best post by both;
- "retrieval": the post's best chunk relevance in the configured retrieval (hybrid by default): the
  chunk-based post ranking `inkwell eval` scores;
- "post": the cosine similarity of the post vector and the question;
- "chunk": the cosine similarity of the post's best chunk (exact, over every chunk).
Measured on the demo eval set (bench/posts.py, 15 queries, post-level qrels), nDCG@10: combined
0.879, retrieval 0.875, chunk 0.847, post 0.817. Post vectors alone rank worse than chunks (a post's
mean blurs the one passage a question is about); added to the retrieval they tie with it (one query
moves), and are kept in the default because they also credit a post for being about X throughout.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from core.config import POST_SCORINGS, Settings
from core.embed import Embedder, embed_query, embedder_for_store, normalise_rows, relevance_scale, rescale
from core.models import Hit
from core.search.retrieve import search
from core.store import Store

SCORINGS = POST_SCORINGS
DEFAULT_SCORING = "combined"
# The post vector's share of the combined score; equal weights, not tuned (0.25 and 0.5 measured the
# same on the demo set, 0.75 worse: see bench/posts.py).
POST_WEIGHT = 0.5


@dataclass
class PostVectors:
    """Post vectors and the chunk vectors they came from (chunk i belongs to post `chunk_post[i]`)."""

    post_ids: list[str]
    vectors: np.ndarray  # (posts, dim), unit rows
    titles: list[str]
    collections: list[str]
    dates: list[str]
    n_chunks: np.ndarray  # chunks per post
    chunk_ids: list[str]
    chunk_post: np.ndarray  # index into post_ids, one per chunk
    chunk_vectors: np.ndarray  # (chunks, dim)

    def vector(self, post_id: str) -> np.ndarray | None:
        try:
            return self.vectors[self.post_ids.index(post_id)]
        except ValueError:
            return None


@dataclass
class PostMatch:
    """A post ranked for a question: `relevance` 0..1 (per the scoring), and its best chunk."""

    post_id: str
    title: str
    collection: str
    date: str
    relevance: float
    post_similarity: float  # post vector · question
    chunk_similarity: float  # nearest chunk vector · question
    retrieval_relevance: float  # best chunk relevance in the search (0: not among its candidates)
    n_chunks: int
    best_chunk_id: str
    best_section: str = ""
    best_text: str = ""
    rank: int = 0

    def to_json(self) -> dict:
        return {
            "rank": self.rank,
            "post_id": self.post_id,
            "title": self.title,
            "collection": self.collection,
            "date": self.date,
            "relevance": round(float(self.relevance), 6),
            "post_similarity": round(float(self.post_similarity), 6),
            "chunk_similarity": round(float(self.chunk_similarity), 6),
            "retrieval_relevance": round(float(self.retrieval_relevance), 6),
            "n_chunks": self.n_chunks,
            "best_chunk": {
                "chunk_id": self.best_chunk_id,
                "section": self.best_section,
                "text": self.best_text,
            },
        }


def mean_vectors(chunk_vectors: np.ndarray, chunk_post: np.ndarray, n_posts: int) -> np.ndarray:
    """Each group's vectors averaged and L2-normalised: (n_posts, dim). Posts here; the router groups by
    collection."""
    sums = np.zeros((n_posts, chunk_vectors.shape[1]), dtype=np.float32)
    # Unbuffered add: a post's chunks need not be adjacent in the table (updates rewrite rows elsewhere).
    # Measured on 5,183 chunks: no slower than sorting + reduceat, and without their copies.
    np.add.at(sums, chunk_post, chunk_vectors)
    counts = np.bincount(chunk_post, minlength=n_posts).reshape(-1, 1)
    return normalise_rows(sums / np.maximum(counts, 1).astype(np.float32))


def post_vectors(store: Store, collections: Sequence[str] | None = None) -> PostVectors:
    """Every post's vector, computed from the chunks table as it is now (optionally some collections)."""
    meta, matrix = store.chunk_vectors(collections)
    chunk_posts = meta["post_id"].to_pylist()
    post_ids = list(dict.fromkeys(chunk_posts))
    position = {post_id: i for i, post_id in enumerate(post_ids)}
    chunk_post = np.fromiter((position[p] for p in chunk_posts), dtype=np.int64, count=len(chunk_posts))
    first = {}
    for i, post_id in enumerate(chunk_posts):
        first.setdefault(post_id, i)
    titles, colls, dates = (meta[c].to_pylist() for c in ("title", "collection", "date"))
    dim = matrix.shape[1] if matrix.size else 0
    return PostVectors(
        post_ids=post_ids,
        vectors=mean_vectors(matrix, chunk_post, len(post_ids))
        if post_ids
        else np.zeros((0, dim), np.float32),
        titles=[titles[first[p]] or p for p in post_ids],
        collections=[colls[first[p]] or "" for p in post_ids],
        dates=[dates[first[p]] or "" for p in post_ids],
        n_chunks=np.bincount(chunk_post, minlength=len(post_ids)),
        chunk_ids=meta["chunk_id"].to_pylist(),
        chunk_post=chunk_post,
        chunk_vectors=matrix,
    )


def combine(
    scoring: str, post_similarity: np.ndarray, chunk_similarity: np.ndarray, retrieval: np.ndarray
) -> np.ndarray:
    if scoring == "post":
        return post_similarity
    if scoring == "chunk":
        return chunk_similarity
    if scoring == "retrieval":
        return retrieval
    if scoring == "combined":
        best = float(post_similarity.max(initial=0.0))
        relative = post_similarity / best if best > 0 else post_similarity
        return POST_WEIGHT * relative + (1 - POST_WEIGHT) * retrieval
    raise ValueError(f"scoring must be one of {', '.join(SCORINGS)}, not {scoring!r}")


def rank_posts(
    question_vector: np.ndarray,
    views: PostVectors,
    scoring: str = DEFAULT_SCORING,
    k: int | None = None,
    retrieval: Mapping[str, tuple[float, str]] | None = None,
    scale: tuple[float, float] = (0.0, 1.0),
) -> list[PostMatch]:
    """The best `k` posts of `views` (None: all) for a question vector, without chunk text.

    Cosines are put on the model's relevance `scale` first (core/embed/: e5's crowded cosines).

    `retrieval` maps post ids to (relevance, chunk id) of their best chunk in a search; posts missing
    from it score 0 there. The best chunk shown is the search's when there is one, else the nearest.
    """
    if not views.post_ids:
        return []
    found = retrieval or {}
    query = np.asarray(question_vector, dtype=np.float32)
    post_sim = np.clip(rescale(views.vectors @ query, scale), 0.0, 1.0)
    chunk_sim_all = np.clip(rescale(views.chunk_vectors @ query, scale), 0.0, 1.0)
    # Nearest chunk per post: chunks sorted by post, then by similarity (best first); each post's first.
    order = np.lexsort((-chunk_sim_all, views.chunk_post))
    grouped = views.chunk_post[order]
    first = np.r_[True, grouped[1:] != grouped[:-1]]
    nearest = np.empty(len(views.post_ids), dtype=np.int64)
    nearest[grouped[first]] = order[first]
    chunk_sim = chunk_sim_all[nearest]
    searched = np.array([found.get(p, (0.0, ""))[0] for p in views.post_ids], dtype=np.float32)
    scores = combine(scoring, post_sim, chunk_sim, searched)
    # Ties go to the better nearest chunk, then the earlier post (stable output).
    ranked = np.lexsort((np.arange(len(scores)), -chunk_sim, -scores))
    return [
        PostMatch(
            post_id=views.post_ids[j],
            title=views.titles[j],
            collection=views.collections[j],
            date=views.dates[j],
            relevance=float(scores[j]),
            post_similarity=float(post_sim[j]),
            chunk_similarity=float(chunk_sim[j]),
            retrieval_relevance=float(searched[j]),
            n_chunks=int(views.n_chunks[j]),
            best_chunk_id=found.get(views.post_ids[j], (0.0, ""))[1] or views.chunk_ids[nearest[j]],
            rank=rank,
        )
        for rank, j in enumerate(ranked[:k].tolist(), start=1)
    ]


def best_by_post(hits: Sequence[Hit]) -> dict[str, tuple[float, str]]:
    """Each post's best (relevance, chunk id) among search hits."""
    best: dict[str, tuple[float, str]] = {}
    for hit in hits:
        if hit.post_id not in best or hit.relevance > best[hit.post_id][0]:
            best[hit.post_id] = (float(hit.relevance), hit.chunk_id)
    return best


def posts_about(
    question: str,
    settings: Settings,
    *,
    store: Store | None = None,
    embedder: Embedder | None = None,
    k: int = 10,
    collections: Sequence[str] | None = None,
    scoring: str = DEFAULT_SCORING,
) -> list[PostMatch]:
    """The `k` posts most about `question`, best first, each with its best chunk's section and text."""
    if not question.strip():
        raise ValueError("the question is empty")
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {', '.join(SCORINGS)}, not {scoring!r}")
    store = store or Store(settings.data_dir)
    embedder = embedder or embedder_for_store(settings, store.model_id())
    store.check_model(embedder.model_id)
    views = post_vectors(store, collections)
    if not views.post_ids:
        return []
    vector = embed_query(embedder, question)  # once, for both the search and the ranking
    retrieval = None
    if scoring in ("combined", "retrieval"):
        # Every candidate of the search, not only those passing the answer's threshold rules.
        result = search(
            question, settings, store=store, embedder=embedder, collections=collections, query_vector=vector
        )
        retrieval = best_by_post(result.candidates)
    scale = relevance_scale(embedder.model_id)
    matches = rank_posts(vector, views, scoring, k, retrieval, scale)
    chunks = store.get_chunks([m.best_chunk_id for m in matches])
    for match in matches:
        chunk = chunks.get(match.best_chunk_id, {})
        match.best_section = chunk.get("section") or ""
        match.best_text = chunk.get("text") or ""
    return matches
