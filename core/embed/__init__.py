"""Text to unit vectors: the bundled MiniLM (local), multilingual-e5-small (multilingual) or an
OpenAI-compatible API (remote); which one a table uses (choose); cosine → relevance per model (scales);
vectors of passage sentences and questions kept between questions (memo).
"""

from __future__ import annotations

from core.embed.base import (
    Embedder,
    EmbedError,
    chunk_embedded_text,
    content_hash,
    embedded_text,
    normalise_rows,
)
from core.embed.choose import embedder_for_new_table, embedder_for_store, get_embedder
from core.embed.memo import VectorMemo, embed_query, passage_vectors, query_vectors
from core.embed.multilingual import cross_lingual, language_shares, readers_mismatch
from core.embed.scales import relevance_scale, rescale

__all__ = [
    "EmbedError",
    "Embedder",
    "VectorMemo",
    "chunk_embedded_text",
    "content_hash",
    "cross_lingual",
    "embed_query",
    "embedded_text",
    "embedder_for_new_table",
    "embedder_for_store",
    "get_embedder",
    "language_shares",
    "normalise_rows",
    "passage_vectors",
    "query_vectors",
    "readers_mismatch",
    "relevance_scale",
    "rescale",
]
