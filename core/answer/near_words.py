"""How near each of a question's missing words comes to a word the passages do use, by meaning.

    near = nearest_words(["colour", "chicken"], passages, embedder)   # {"colour": 0.97, "chicken": 0.49}

The relevance bar (core/answer/abstain.py) counts a question's content words that no retrieved passage
contains. Spelling alone misses a word the author wrote otherwise ("colour" for "color", "favourite")
or said with a synonym ("reject" for "refuse", "cost" for "expensive"), while an off-topic question
that lands near the posts names a thing the author never wrote about ("chickens", "pocket screws",
"programming language"), and nothing in the passages means it. So each missing word is embedded alone
with the table's model and compared with every word of the passages (three letters or more, as
written): its `nearest` cosine is the best of those. The bar treats a word at least its profile's
`word_match` as found.

Cheap at question time: only the missing words and the passages' distinct words are embedded, and a
word's vector is memoised per process (`word_vectors`): the passages of popular posts come back
question after question, so after the first questions only new words are embedded.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from core.embed import Embedder, VectorMemo
from core.text.words import WORD

# Shorter forms are mostly function words and abbreviations, whose single-word vectors are noise.
MIN_CHARS = 3

#: The process's memo of single words' vectors (passage form), shared by every reader's session.
word_vectors = VectorMemo()


def passage_words(passages: Iterable[str]) -> list[str]:
    """The distinct words of the passages as written (lowercased, at least MIN_CHARS letters), sorted."""
    return sorted({w.lower() for text in passages for w in WORD.findall(text) if len(w) >= MIN_CHARS})


def nearest_words(missing: Sequence[str], passages: Sequence[str], embedder: Embedder) -> dict[str, float]:
    """For each word of `missing`, its best cosine with a word of `passages` (the embedder's vectors);
    {} when there is nothing to compare."""
    vocabulary = passage_words(passages)
    if not missing or not vocabulary:
        return {}
    asked = word_vectors.embed(embedder, list(missing))
    known = word_vectors.embed(embedder, vocabulary)
    best = (asked @ known.T).max(axis=1)
    return {word: float(np.round(value, 4)) for word, value in zip(missing, best, strict=True)}
