"""Grounding check: which sentences of an answer are supported by the excerpts it was given.

Each answer sentence is compared with every excerpt that went into the context in two ways: the
cosine similarity of their embeddings (same model as retrieval), and word overlap (the share of the
sentence's content words found in the excerpt). A sentence is supported when either passes its
threshold; the excerpts that do are its support. Small local models invent details, so the chat marks
unsupported sentences and reports the supported fraction instead of presenting them as the author's.

Sentences of fewer than MIN_WORDS content words ("Thanks for asking.") are not judged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from core.chunk import split_sentences
from core.embed import Embedder
from core.keywords import STOPWORDS
from core.models import Hit

SIMILARITY_THRESHOLD = 0.6
OVERLAP_THRESHOLD = 0.6
MIN_WORDS = 3
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")


@dataclass
class SentenceSupport:
    sentence: str
    judged: bool  # False for sentences too short to judge
    supported: bool
    similarity: float = 0.0  # best cosine similarity to an excerpt
    overlap: float = 0.0  # best share of content words found in an excerpt
    chunk_ids: list[str] = field(default_factory=list)  # the excerpts that support it

    def to_json(self) -> dict:
        return {
            "sentence": self.sentence,
            "judged": self.judged,
            "supported": self.supported,
            "similarity": round(self.similarity, 4),
            "overlap": round(self.overlap, 4),
            "chunk_ids": self.chunk_ids,
        }


@dataclass
class Grounding:
    sentences: list[SentenceSupport]

    @property
    def judged(self) -> list[SentenceSupport]:
        return [s for s in self.sentences if s.judged]

    @property
    def supported_fraction(self) -> float | None:
        """Share of judged sentences that are supported; None when no sentence could be judged."""
        judged = self.judged
        return sum(s.supported for s in judged) / len(judged) if judged else None

    @property
    def unsupported(self) -> list[SentenceSupport]:
        return [s for s in self.judged if not s.supported]

    def summary(self) -> str:
        judged = self.judged
        if not judged:
            return "no sentence to check"
        supported = sum(s.supported for s in judged)
        return f"{supported} of {len(judged)} sentences supported by the excerpts"

    def to_json(self) -> dict:
        fraction = self.supported_fraction
        return {
            "supported_fraction": None if fraction is None else round(fraction, 4),
            "sentences": [s.to_json() for s in self.sentences],
        }


def content_words(text: str) -> set[str]:
    return {w for w in (m.lower() for m in _WORD.findall(text)) if w not in STOPWORDS and len(w) > 1}


def check_grounding(
    answer: str,
    hits: Sequence[Hit],
    embedder: Embedder,
    *,
    similarity_threshold: float = SIMILARITY_THRESHOLD,
    overlap_threshold: float = OVERLAP_THRESHOLD,
) -> Grounding:
    sentences = [s.strip() for s in split_sentences(answer) if s.strip()]
    words = [content_words(s) for s in sentences]
    judged = [i for i, w in enumerate(words) if len(w) >= MIN_WORDS]
    results = [SentenceSupport(s, judged=False, supported=False) for s in sentences]
    if not judged:
        return Grounding(results)
    if not hits:
        for i in judged:
            results[i].judged = True
        return Grounding(results)

    # One embedding call for sentences and excerpts together (vectors are unit length).
    vectors = embedder.embed([sentences[i] for i in judged] + [h.text for h in hits])
    similarity = vectors[: len(judged)] @ vectors[len(judged) :].T
    hit_words = [content_words(h.text) for h in hits]
    for row, i in enumerate(judged):
        overlap = np.array([len(words[i] & hw) / len(words[i]) for hw in hit_words])
        passes = (similarity[row] >= similarity_threshold) | (overlap >= overlap_threshold)
        result = results[i]
        result.judged = True
        result.similarity = float(similarity[row].max())
        result.overlap = float(overlap.max())
        result.supported = bool(passes.any())
        result.chunk_ids = [hits[j].chunk_id for j in np.flatnonzero(passes)]
    return Grounding(results)
