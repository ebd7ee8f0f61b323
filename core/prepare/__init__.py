"""Optional LLM preparation at ingest: rewriting vague references (rewrite), LLM chunk boundaries
(chunks) and LLM keywords (keywords), at most two cached requests per post (requests, run).
"""

from __future__ import annotations

from core.prepare.options import LLMPrepOptions, Prepared
from core.prepare.run import prepare_post, prepare_posts, preview_rewrite, preview_rewrites

__all__ = [
    "LLMPrepOptions",
    "Prepared",
    "prepare_post",
    "prepare_posts",
    "preview_rewrite",
    "preview_rewrites",
]
