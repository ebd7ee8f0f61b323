"""Re-embed every stored chunk with the configured embedder (after changing models).

Chunks keep their text, sections and keywords; only vectors change. The table is overwritten in
one commit after all vectors are computed, so an interrupted run changes nothing.
"""

from __future__ import annotations

from core.config import Settings
from core.embed import Embedder, content_hash, embedded_text, get_embedder
from core.ingest.report import Progress
from core.store import Store

BATCH = 256


def reembed(
    settings: Settings,
    *,
    store: Store | None = None,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> int:
    """Re-embed all chunks; returns how many were embedded."""
    store = store or Store(settings.data_dir)
    embedder = embedder or get_embedder(settings)
    rows = store.list_chunks()
    if not rows:
        return 0
    texts = [
        embedded_text(r["section"] or "", r["text"], r["keywords"] or [], r["title"] or "") for r in rows
    ]
    vectors = []
    for start in range(0, len(texts), BATCH):
        vectors.extend(embedder.embed(texts[start : start + BATCH]))
        if progress:
            progress(min(start + BATCH, len(texts)), len(texts), "chunks re-embedded")
    for row, text, vector in zip(rows, texts, vectors, strict=True):
        row.pop("_distance", None)
        row["embed_hash"] = content_hash(embedder.model_id, text)
        row["vector"] = vector.tolist()
    store.overwrite_chunks(rows, embedder.model_id, len(vectors[0]))
    store.optimize()
    return len(rows)
