"""Embedding a window of chunks in slices: progress after each, and a time limit per window.

Embedding is where a huge input spends its time (a 19 MB post is some 16,500 chunks: about 13 minutes
with the built-in model on two cores), after the reader process's time limit (core/parse/isolate.py)
has long been met. So the pipeline embeds through `TimedEmbedder`: a slice of `SLICE` texts at a time,
reporting how far it is, and refusing a window still unfinished after `limit` seconds. The pipeline
writes a post of `SLICE` chunks or more in a window of its own, so the refusal names that post only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from core.embed import Embedder

SLICE = 256  # texts per embedding call: a progress line every few seconds with the built-in model
POST_TIME_LIMIT = 600.0  # seconds one window (a huge post alone) may take to embed


class EmbedTimeout(ValueError):
    """A window took longer than its time limit to embed (a ValueError: the pipeline then writes its
    posts one by one, so only the post at fault fails)."""


class TimedEmbedder:
    """`inner`, embedding in slices; `on_slice(embedded, total)` after each one. A call still unfinished
    after `limit` seconds (None: no limit) raises EmbedTimeout before its next slice."""

    def __init__(
        self,
        inner: Embedder,
        limit: float | None,
        on_slice: Callable[[int, int], None] | None = None,
        slice_size: int = SLICE,
    ) -> None:
        self.inner = inner
        self.limit = limit
        self.on_slice = on_slice
        self.slice_size = slice_size
        self.model_id = inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        started = time.monotonic()
        parts: list[np.ndarray] = []
        for start in range(0, len(texts), self.slice_size):
            elapsed = time.monotonic() - started
            if start and self.limit is not None and elapsed > self.limit:
                raise EmbedTimeout(
                    f"took longer than {self.limit:g} s to embed ({start:,} of {len(texts):,} chunks "
                    "embedded); skipped: ingest it with a longer --time-limit"
                )
            parts.append(np.asarray(self.inner.embed(texts[start : start + self.slice_size])))
            if self.on_slice:
                self.on_slice(start + len(parts[-1]), len(texts))
        return np.concatenate(parts) if parts else np.asarray(self.inner.embed(texts))

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.query(texts)

    def __getattr__(self, name: str) -> Any:  # anything else the wrapped embedder offers
        return getattr(self.inner, name)
