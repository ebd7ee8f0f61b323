"""OpenAI's embeddings API, or any OpenAI-compatible `/v1/embeddings` server (TEI, vLLM, Infinity, Ollama).

Texts go in batches of `embed_batch_size`, at most `embed_concurrency` batches in flight at once (a
thread each: the client is thread-safe and waits on the network, not the CPU), and the vectors come back
in the texts' order. Retries are the openai client's own (core/llm/client.py: timeouts, dropped
connections, 408/409/429/5xx, `max_retries` times with exponential backoff honouring Retry-After; a
connection that cannot be made at all fails at once); an error
that survives them fails the whole call, so an ingest never stores part of a window.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from core.config import Settings
from core.embed.base import EmbedError, normalise_rows


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
        self.concurrency = max(1, settings.embed_concurrency)
        suffix = f"@{self._dimensions}" if self._dimensions else ""
        self.model_id = f"openai:{self._model}{suffix}"
        self.dim = self._dimensions or 0  # learned from the first answer when not fixed

    def _batch(self, batch: list[str]) -> list[list[float]]:
        import openai

        from core.llm import to_llm_error

        kwargs = {"dimensions": self._dimensions} if self._dimensions else {}
        try:
            response = self._client.embeddings.create(model=self._model, input=batch, **kwargs)
        except openai.OpenAIError as err:
            error = to_llm_error(err, self._settings, self._model, self._base_url)
            raise EmbedError(f"embedding failed: {error}") from None
        rows = [item.embedding for item in sorted(response.data, key=lambda d: d.index)]
        if len(rows) != len(batch):
            raise EmbedError(
                f"embedding failed: the server returned {len(rows)} vectors for {len(batch)} texts"
            )
        return rows

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        batches = [list(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        if not batches:
            return np.zeros((0, self.dim), dtype=np.float32)
        if len(batches) == 1 or self.concurrency == 1:
            results = [self._batch(b) for b in batches]
        else:
            with ThreadPoolExecutor(min(self.concurrency, len(batches)), thread_name_prefix="embed") as pool:
                results = list(pool.map(self._batch, batches))  # in order; the first error is raised
        try:
            vectors = normalise_rows(np.array([row for rows in results for row in rows], dtype=np.float32))
        except ValueError:
            raise EmbedError("embedding failed: the server returned vectors of different lengths") from None
        self.dim = vectors.shape[1]
        return vectors

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts)
