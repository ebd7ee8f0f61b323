"""Word stems (Snowball, via `snowballstemmer`): "criticized", "criticism" and "critical" share "critic",
"differently" and "different" share "differ".

A lemmatiser (simplemma, core/answer/quotable.py) maps inflections to one word but keeps derivations
apart, so a question asking what the author would do "differently" found no "different" in the posts.
The no-answer gate (core/answer/abstain.py) compares stems too.

    stemmer_for("en")("differently")  # "differ"; None for a language Snowball has no stemmer for
"""

from __future__ import annotations

import threading
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
    # A Snowball stemmer keeps the word it works on in itself: two readers' threads stemming at once
    # get each other's stems, or an IndexError. One stemmer per language, one word at a time.
    lock = threading.Lock()

    @lru_cache(maxsize=50_000)
    def stem(word: str) -> str:
        with lock:
            return stemmer.stemWord(word)

    return stem
