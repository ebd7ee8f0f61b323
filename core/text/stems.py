"""Word stems (Snowball, via `snowballstemmer`): "criticized", "criticism" and "critical" share "critic",
"differently" and "different" share "differ".

A lemmatiser (simplemma, core/answer/quotable.py) maps inflections to one word but keeps derivations
apart, so a question asking what the author would do "differently" found no "different" in the posts.
The no-answer gate (core/answer/abstain.py) compares stems too.

    stemmer_for("en")("differently")  # "differ"; None for a language Snowball has no stemmer for
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import snowballstemmer

from core.text.language import LANGUAGE_NAMES


@lru_cache(maxsize=16)
def stemmer_for(language: str) -> Callable[[str], str] | None:
    """A function from a lower-case word to its stem, for an ISO 639-1 code (None when unsupported)."""
    name = LANGUAGE_NAMES.get(language, "").lower()
    if name not in snowballstemmer.algorithms():
        return None
    stemmer = snowballstemmer.stemmer(name)
    return lru_cache(maxsize=50_000)(stemmer.stemWord)
