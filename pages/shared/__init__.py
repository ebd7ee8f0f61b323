"""Streamlit glue shared by the pages (the work itself is done by core/): settings and cached
resources, the owner gate and rate limit (state), safe text (text), tables (tables), ingesting
from the app with undo (ingesting), and serving many readers: the answer line, the place in line and
the conversation in the URL (serving)."""

from __future__ import annotations

from pages.shared.entry import through_entry
from pages.shared.ingesting import (
    parse_uploads,
    rewrite_frame,
    run_ingestion,
    show_llm_usage,
    show_report,
    undo_button,
)
from pages.shared.serving import (
    answer_gate,
    clear_on_first,
    conversation_id,
    conversations,
    forget_conversation,
    owner_key,
    place_in_line_message,
    session_alive,
    show_place_in_line,
    start_conversation,
    warm_answers,
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
    may_spend_model,
    require_owner,
    show_flash,
    sidebar_status,
    without_model_spending,
)
from pages.shared.tables import chunks_frame, column_config, explain, header_width, hits_frame, table_key
from pages.shared.text import md_escape, plural, safe_answer, safe_answer_stream

__all__ = [
    "KNOWN_ERRORS",
    "advanced_controls",
    "answer_gate",
    "base_settings",
    "chunks_frame",
    "clear_on_first",
    "column_config",
    "conversation_id",
    "conversations",
    "explain",
    "flash",
    "forget_conversation",
    "get_embedder_cached",
    "get_store",
    "header_width",
    "hits_frame",
    "keep_advanced_state",
    "limiter",
    "may_spend_model",
    "md_escape",
    "owner_key",
    "parse_uploads",
    "place_in_line_message",
    "plural",
    "require_owner",
    "rewrite_frame",
    "run_ingestion",
    "safe_answer",
    "safe_answer_stream",
    "session_alive",
    "show_flash",
    "show_llm_usage",
    "show_place_in_line",
    "show_report",
    "sidebar_status",
    "start_conversation",
    "table_key",
    "through_entry",
    "undo_button",
    "warm_answers",
    "without_model_spending",
]
