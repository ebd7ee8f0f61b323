"""Chunks and hits as tables, with the column layout every page shares."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from core.models import Chunk, Hit

HIT_FIELDS = {f.name for f in dataclasses.fields(Hit)}
# Streamlit cuts a header to its column's width ("dense ran…", "sco…"): columns whose header is longer
# than their values get a width that shows it (the app's serif font, measured in Chromium: ~7 px a
# character, plus the sort/menu padding).
HEADER_PX_PER_CHAR = 7.0
HEADER_PADDING_PX = 30


def header_width(label: str, minimum: int = 64) -> int:
    """Pixels for a column whose header must be readable in full."""
    return max(minimum, round(HEADER_PX_PER_CHAR * len(label)) + HEADER_PADDING_PX)


def chunks_frame(chunks: Sequence[Chunk]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"#": c.index, "section": c.section, "tokens": c.tokens, "keywords": c.keywords, "text": c.text}
            for c in chunks
        ]
    )


def explain(hit: Hit, threshold: float) -> str:
    """Why a retrieval candidate was or wasn't used (threshold and min/max chunk rules)."""
    above = hit.relevance >= threshold
    if hit.passed:
        return "above threshold" if above else "below threshold, kept by min chunks"
    return "above threshold, cut by max chunks" if above else "below threshold"


def hits_frame(hits: Sequence[Hit | dict], threshold: float | None = None) -> pd.DataFrame:
    """Hits (or their `to_json()` dicts) as a table; with `threshold`, also whether and why each passed."""
    rows = []
    for item in hits:
        hit = item if isinstance(item, Hit) else Hit(**{k: v for k, v in item.items() if k in HIT_FIELDS})
        row = {
            "rank": hit.rank,
            "relevance": float(hit.relevance),
            "title": hit.title,
            "section": hit.section,
            "keywords": list(hit.keywords),
            "text": hit.text,
        }
        if threshold is not None:
            row = {**row, "passed": hit.passed, "why": explain(hit, threshold)}
        rows.append(row)
    return pd.DataFrame(rows)


def table_key(prefix: str, ids: Iterable[str]) -> str:
    """A selectable table's widget key that changes with its rows, so a selection (row positions) never
    carries over to different rows after a filter, a delete or an undo."""
    digest = hashlib.sha256("\n".join(ids).encode()).hexdigest()[:12]
    return f"{prefix}_{digest}"


def column_config() -> dict[str, Any]:
    """Column widths and types shared by every chunk/hit table (columns a table lacks are ignored)."""
    cc = st.column_config
    return {
        "#": cc.NumberColumn("#", width="small"),
        "rank": cc.NumberColumn("rank", width="small"),
        "relevance": cc.ProgressColumn(
            "relevance", min_value=0.0, max_value=1.0, format="%.3f", width=header_width("relevance", 100)
        ),
        "passed": cc.CheckboxColumn("used", width="small"),
        "why": cc.TextColumn("why", width="medium"),
        "title": cc.TextColumn("title", width="medium"),
        "collection": cc.TextColumn("collection", width=header_width("collection")),
        "section": cc.TextColumn("section", width="small"),
        "tokens": cc.NumberColumn("tokens", width="small"),
        "keywords": cc.ListColumn("keywords", width="medium"),
        "text": cc.TextColumn("text", width="large"),
    }
