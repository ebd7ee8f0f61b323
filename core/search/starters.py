"""Starter questions for the empty chat, suggested from the posts' most central chunks.

    suggest_starters(store, count=4) -> [Starter(question, chunk_id, post_id, title, basis), …]

How: the posts' vectors (the mean of their chunks') are grouped into `count` clusters (k-means, started
from the points farthest apart, so the same table gives the same suggestions); in each cluster the
chunk closest to the cluster's centre, one per post, is the most central passage on that subject. Each
is turned into a question by a fixed template from what the chunk itself names, so a suggestion never
claims something the post does not say:

- its section heading, when the heading is itself a question ("Why did I start?"): asked as written;
- else its section heading and its post's title, both quoted as written: "What do you say about
  “<heading>” in “<title>”?" (a heading alone is often too vague to search for: "The wood");
- else its post's title: "What is your post “<title>” about?";
- a chunk that tops up a small blog (below) and has no heading: its best keyword, "What do you say
  about “<keyword>” in “<title>”?", since the post's title question is already taken.

Headings, titles and keywords are quoted, since they are names or phrases of any kind ("The books that
shaped me", "afraid of feedback") that do not read as part of a sentence.

A blog with fewer posts than the Settings page's least number of starters (3) is topped up from its
posts' other chunks, the most central first, so two posts still give three questions; a single chunk
gives one, and the page says that more must be typed.

The owner reviews and edits them on the Settings page before anything is saved.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.store import Store

KMEANS_ROUNDS = 25
MAX_HEADING_WORDS = 8  # a longer "heading" is a sentence, not a subject
# The Settings page saves 3-6 starters (core/answer/owner.py MIN_STARTERS; search sits below answer).
MIN_SUGGESTIONS = 3
MAX_TOP_UP = 50  # chunks read to top up: the suggestions are few, and their questions repeat quickly


@dataclass(frozen=True)
class Starter:
    question: str
    chunk_id: str
    post_id: str
    title: str
    basis: str  # "question heading" | "heading" | "keyword" | "title": what the question was made from


def suggest_starters(store: Store, count: int = 4) -> list[Starter]:
    """Up to `count` questions, one per cluster of posts, from each cluster's most central chunk; with
    fewer posts than `count` and MIN_SUGGESTIONS, topped up to that many from other chunks of the same
    posts (fewer only when the chunks do not give that many different questions)."""
    meta, vectors = store.chunk_vectors()
    if not len(vectors) or count < 1:
        return []
    vectors = _normalised(vectors)
    post_ids = meta["post_id"].to_pylist()
    posts = list(dict.fromkeys(post_ids))
    index = {p: i for i, p in enumerate(posts)}
    rows = np.array([index[p] for p in post_ids])
    post_vectors = _normalised(np.stack([vectors[rows == i].mean(axis=0) for i in range(len(posts))]))
    labels, centres = kmeans(post_vectors, min(count, len(posts)))
    chunk_ids = meta["chunk_id"].to_pylist()
    chosen: list[str] = []
    used: set[str] = set()  # one chunk per post
    spare: list[tuple[float, int]] = []  # (-closeness to its cluster's centre, chunk row) of the others
    for cluster in _by_size(labels):
        members = np.flatnonzero(labels[rows] == cluster)  # the chunks of this cluster's posts
        closeness = vectors[members] @ centres[cluster]
        order = np.argsort(-closeness)
        pick = next((int(members[i]) for i in order if post_ids[members[i]] not in used), None)
        if pick is not None:
            chosen.append(chunk_ids[pick])
            used.add(post_ids[pick])
        spare.extend((-float(closeness[i]), int(members[i])) for i in order if int(members[i]) != pick)
    found = store.get_chunks(chosen)
    starters = _distinct([_starter(found[c]) for c in chosen if c in found])
    # Fewer posts than the Settings page's least number of starters (a new blog): top up from the same
    # posts' other chunks, the most central first, so a blog of two posts can still fill the field.
    want = min(count, MIN_SUGGESTIONS)
    if len(starters) < want and spare:
        extra = [chunk_ids[i] for _, i in sorted(spare)[:MAX_TOP_UP]]
        more = store.get_chunks(extra)
        for chunk_id in extra:
            if len(starters) >= want:
                break
            if chunk_id in more:
                starters = _distinct([*starters, _starter(more[chunk_id], topping_up=True)])
    return starters


def _distinct(starters: list[Starter]) -> list[Starter]:
    """The first starter of each question (ignoring case): two chunks may name the same heading."""
    unique: dict[str, Starter] = {}
    for starter in starters:
        unique.setdefault(starter.question.lower(), starter)
    return list(unique.values())


def kmeans(points: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Cluster unit vectors by cosine into `k` groups: (each point's label, the unit centres).
    Deterministic: seeded with the point nearest the mean, then each next the farthest from the seeds."""
    centre = points.mean(axis=0)
    seeds = [int(np.argmax(points @ centre))]
    while len(seeds) < k:
        nearest = (points @ points[seeds].T).max(axis=1)
        seeds.append(int(np.argmin(nearest)))
    centres = points[seeds].copy()
    labels = np.zeros(len(points), dtype=int)
    for _ in range(KMEANS_ROUNDS):
        new = np.argmax(points @ centres.T, axis=1)
        if _ and np.array_equal(new, labels):
            break
        labels = new
        for c in range(k):
            if np.any(labels == c):
                centres[c] = points[labels == c].mean(axis=0)
        centres = _normalised(centres)
    return labels, centres


def _by_size(labels: np.ndarray) -> list[int]:
    """Cluster numbers, the biggest first (the subject most posts are about leads)."""
    sizes = np.bincount(labels)
    return [int(c) for c in sorted(range(len(sizes)), key=lambda c: (-sizes[c], c)) if sizes[c]]


def _normalised(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def _starter(chunk: dict, *, topping_up: bool = False) -> Starter:
    keywords = chunk.get("keywords") if topping_up else None
    question, basis = question_for(chunk.get("section") or "", chunk.get("title") or "", keywords)
    return Starter(question, chunk["chunk_id"], chunk["post_id"], chunk.get("title") or "", basis)


def question_for(section: str, title: str, keywords: list[str] | None = None) -> tuple[str, str]:
    """A question from what a chunk names (see the module docstring), and what it was made from; its
    best keyword is used, with none of the heading's, only when `keywords` are given."""
    heading = " ".join(section.split()).strip(" .:;-–—")
    named = " ".join(title.split())
    if heading and heading.lower() != named.lower() and len(heading.split()) <= MAX_HEADING_WORDS:
        if heading.endswith("?"):
            return heading, "question heading"
        if named:
            return f"What do you say about “{heading}” in “{named}”?", "heading"
        return f"What have you written about “{heading}”?", "heading"
    best = next((k.strip() for k in keywords or [] if k and k.strip()), "")
    if best and named:
        return f"What do you say about “{best}” in “{named}”?", "keyword"
    return f"What is your post “{named}” about?", "title"
