"""Re-embed every stored chunk with the configured embedder (after changing models).

Chunks keep their text, sections and keywords; only vectors change. The table is overwritten in
one commit after all vectors are computed, so an interrupted run changes nothing.
"""

from __future__ import annotations

import numpy as np

from core.config import Settings
from core.embed import Embedder, content_hash, embedded_text, get_embedder
from core.ingest.report import Progress
from core.store import Store, StoreError

BATCH = 256
READ_ROUNDS = 5


def reembed(
    settings: Settings,
    *,
    store: Store | None = None,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> int:
    """Re-embed all chunks; returns how many were embedded.

    Chunks written by another process while the vectors were computed would be lost by the overwrite,
    so the chunks table's version is checked before it: if it moved, the chunks are read again and
    only texts not embedded yet are embedded (READ_ROUNDS times at most).
    """
    store = store or Store(settings.data_dir)
    embedder = embedder or get_embedder(settings)
    done: dict[str, np.ndarray] = {}  # embedded text -> vector, kept across rounds
    for _ in range(READ_ROUNDS):
        version = store.versions().chunks
        rows = store.list_chunks()
        if not rows:
            return 0
        texts = [
            embedded_text(r["section"] or "", r["text"], r["keywords"] or [], r["title"] or "") for r in rows
        ]
        missing = list(dict.fromkeys(t for t in texts if t not in done))
        for start in range(0, len(missing), BATCH):
            batch = missing[start : start + BATCH]
            done.update(zip(batch, embedder.embed(batch), strict=True))
            if progress:
                progress(min(start + BATCH, len(missing)), len(missing), "chunks re-embedded")
        if store.versions().chunks == version:
            break
    else:
        raise StoreError("other writers kept changing the chunks during the re-embed; run it again")
    for row, text in zip(rows, texts, strict=True):
        row.pop("_distance", None)
        row["embed_hash"] = content_hash(embedder.model_id, text)
        row["vector"] = done[text].tolist()
    store.overwrite_chunks(rows, embedder.model_id, len(done[texts[0]]))
    store.optimize()
    return len(rows)
