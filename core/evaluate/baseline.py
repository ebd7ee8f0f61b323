"""The naive answerer that `inkwell eval --answers --answer-mode naive` compares the real one with: the
best two sentences of the retrieved chunks by cosine with the question plus word overlap, in reading
order. About thirty lines by design: an answerer that cannot beat it is not worth its rules."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.answer import ExtractiveAnswer, Quote
from core.answer.quotable import readable, sentence_units, share
from core.embed import Embedder, embed_query, passage_vectors
from core.models import Hit
from core.text.words import content_words

NAIVE_HITS = 10
NAIVE_SENTENCES = 2


def naive_answer(question: str, hits: Sequence[Hit], embedder: Embedder) -> ExtractiveAnswer:
    """The two readable sentences of the best NAIVE_HITS hits scoring highest on cosine + the share of
    the question's content words they hold; verbatim, in reading order (hit rank, then position)."""
    found = [
        (h, i, start, text)
        for h, hit in enumerate(hits[:NAIVE_HITS])
        for i, (start, text) in enumerate(sentence_units(hit.text))
        if readable(text)
    ]
    if not found:
        return ExtractiveAnswer(question, [], embedder.model_id)
    cosines = passage_vectors.embed(embedder, [t for *_, t in found]) @ embed_query(embedder, question)
    asked = content_words(question)
    scores = [float(c) + share(asked, content_words(t)) for c, (*_, t) in zip(cosines, found, strict=True)]
    best = sorted(np.argsort(scores)[::-1][:NAIVE_SENTENCES])
    quotes = []
    for k in best:
        h, i, start, text = found[k]
        hit = hits[h]
        quotes.append(
            Quote(text, hit.post_id, hit.title, hit.chunk_id, start, i, scores[k], float(cosines[k]))
        )
    return ExtractiveAnswer(question, quotes, embedder.model_id, best_similarity=float(max(cosines)))
