"""Streamlit glue shared by the pages (the work itself is done by core/): settings and cached
resources, the owner gate and rate limit (state), safe text (text), tables (tables) and ingesting
from the app with undo (ingesting)."""

from __future__ import annotations

from pages.shared.ingesting import (
    parse_uploads,
    remember_undo,
    rewrite_frame,
    run_ingestion,
    show_llm_usage,
    show_report,
    undo_button,
)
from pages.shared.state import (
    KNOWN_ERRORS,
    advanced_controls,
    base_settings,
    flash,
    get_embedder_cached,
    get_store,
    keep_advanced_state,
    limiter,
    require_owner,
    show_flash,
    sidebar_status,
)
from pages.shared.tables import chunks_frame, column_config, explain, header_width, hits_frame, table_key
from pages.shared.text import md_escape, plural, safe_answer, safe_answer_stream

__all__ = [
    "KNOWN_ERRORS",
    "advanced_controls",
    "base_settings",
    "chunks_frame",
    "column_config",
    "explain",
    "flash",
    "get_embedder_cached",
    "get_store",
    "header_width",
    "hits_frame",
    "keep_advanced_state",
    "limiter",
    "md_escape",
    "parse_uploads",
    "plural",
    "remember_undo",
    "require_owner",
    "rewrite_frame",
    "run_ingestion",
    "safe_answer",
    "safe_answer_stream",
    "show_flash",
    "show_llm_usage",
    "show_report",
    "sidebar_status",
    "table_key",
    "undo_button",
]
