"""Function words per language ("die", "man" in German; "comment", "plus" in French), from the
`stop-words` package's lists, for telling a word a question shares with English passages by accident
from one it shares by meaning.

    function_words("de")  # frozenset({"die", "man", …}); empty for a language without a list

core/text/language.py keeps its own short lists: they score which language a text is in, and must
stay small and balanced across languages; these are long and uneven.
"""

from __future__ import annotations

from functools import lru_cache

from stop_words import StopWordError, get_stop_words


@lru_cache(maxsize=32)
def function_words(language: str) -> frozenset[str]:
    """The lower-case function words of an ISO 639-1 language (empty when the package has no list)."""
    try:
        return frozenset(w.lower() for w in get_stop_words(language))
    except StopWordError:
        return frozenset()
