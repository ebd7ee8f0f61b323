"""Cutting posts into chunks (paragraph-aware or fixed windows) and giving each 1–6 keywords."""

from __future__ import annotations

from core.chunk.chunker import chunk_id, chunk_post
from core.chunk.fixed import fixed_chunks
from core.chunk.keywords import (
    MAX_KEYWORD_CHARS,
    MAX_KEYWORD_WORDS,
    MAX_KEYWORDS,
    STOPWORDS,
    KeywordError,
    add_keywords,
    check_keywords,
    extract_keywords,
    post_terms,
)
from core.chunk.paragraph import paragraph_chunks

__all__ = [
    "MAX_KEYWORDS",
    "MAX_KEYWORD_CHARS",
    "MAX_KEYWORD_WORDS",
    "STOPWORDS",
    "KeywordError",
    "add_keywords",
    "check_keywords",
    "chunk_id",
    "chunk_post",
    "extract_keywords",
    "fixed_chunks",
    "paragraph_chunks",
    "post_terms",
]
