"""OpenAI's embeddings API, or any OpenAI-compatible `/v1/embeddings` server."""

from __future__ import annotations

from collections.abc import Sequence

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
