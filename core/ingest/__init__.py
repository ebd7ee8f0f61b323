"""The ingest pipeline, parse → chunk → keywords → (LLM preparation) → embed → store, and what else
rewrites stored posts: re-chunking (rebuild), model switches (reembed) and chunks.json (exchange).
"""

from __future__ import annotations

from core.ingest.exchange import write_export
from core.ingest.pipeline import edit_chunk, ingest_paths, ingest_posts, prepare_chunks
from core.ingest.rebuild import rebuild_posts
from core.ingest.reembed import reembed
from core.ingest.report import IngestReport, PostOutcome, Progress

__all__ = [
    "IngestReport",
    "PostOutcome",
    "Progress",
    "edit_chunk",
    "ingest_paths",
    "ingest_posts",
    "prepare_chunks",
    "rebuild_posts",
    "reembed",
    "write_export",
]
