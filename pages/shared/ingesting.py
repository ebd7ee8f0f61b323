"""Ingesting from the app: progress, the report, undo, uploads and the LLM stages' review."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from core.config import Settings
from core.ingest import IngestReport, ingest_posts
from core.models import LeftOutDraft, ParseError, ParseResult, Post
from core.parse import ImportOptions, parse_bytes
from core.store import Change, Store, UndoRefused
from pages.shared.state import KNOWN_ERRORS, flash, get_embedder_cached, get_store, owner_unlocked
from pages.shared.text import md_escape, plural

UNDO_HELP = (
    "Puts back only the posts this change touched, as they were before it. Refused when anything has "
    "changed those posts since, so nobody's later work is lost."
)
RECENT_CHANGES = 10


def undo_button(settings: Settings) -> None:
    """'Undo last change' for the newest change in the table's change log (an ingestion, re-ingestion,
    deletion or chunk edit, from the app or the command line), then the recent changes, each with its
    own Undo: the log lives with the tables, so all of it survives a reload."""
    if not owner_unlocked():
        return
    store = get_store(settings)
    try:
        changes = store.changes(limit=RECENT_CHANGES)
        titles = store.post_titles() if changes else {}
    except KNOWN_ERRORS:
        return
    pending = [c for c in changes if not c.undone]
    if pending:
        change = pending[0]
        help_text = f"Made {_when(change.at)} UTC; touched {md_escape(change.touched(titles))}. {UNDO_HELP}"
        if st.button(f"Undo last change ({change.label})", help=help_text, key="undo_last"):
            _undo(store, change)
    if not changes:
        return
    with st.expander(f"Recent changes ({len(changes)})", key="recent_changes"):  # keyed: stays open
        for change in changes:
            left, right = st.columns([5, 1], vertical_alignment="center")
            posts = plural(len(change.post_ids), "post")
            state = f" · undone {_when(change.undone_at)} UTC" if change.undone_at else ""
            left.markdown(f"**{md_escape(change.label)}** · {_when(change.at)} UTC · {posts}{state}")
            left.caption(md_escape(change.touched(titles)))  # which posts: the label may only count them
            if not change.undone and right.button(
                "Undo", key=f"undo_{change.change_id}", help=UNDO_HELP, width="stretch"
            ):
                _undo(store, change)


def _when(at: str) -> str:
    return at[:16].replace("T", " ")


def _undo(store: Store, change: Change) -> None:
    try:
        store.undo(change.change_id)
    except UndoRefused as exc:
        st.warning(f"Not undone: {md_escape(exc)}")
        return
    except KNOWN_ERRORS as exc:
        st.error(f"Undo failed: {md_escape(exc)}")
        return
    flash(f"Undone: {change.label}.")
    st.rerun()


def run_ingestion(
    posts: Sequence[Post],
    settings: Settings,
    *,
    errors: Sequence[ParseError] = (),
    warnings: Sequence[ParseError] = (),
    force: bool = False,
    label: str = "ingestion",
    llm: Any = None,
    drafts: Sequence[LeftOutDraft] = (),
) -> IngestReport | None:
    """Ingest under st.status with a progress bar, logged as one change (`label`) for undo; `drafts`
    (ParseResult.drafts): a stored post its file now marks as a draft is removed (core ingest_posts).

    `llm` (core.prepare.LLMPrepOptions) turns on the LLM preparation stages.
    """
    try:
        store = get_store(settings)
        # A table not created yet: let ingest pick the default for its posts' language (core/embed/).
        embedder = get_embedder_cached(settings) if store.model_id() else None
    except KNOWN_ERRORS as exc:
        st.error(f"Cannot ingest: {md_escape(exc)}")
        return None
    report: IngestReport | None = None
    stages = " with the LLM stages" if llm else ""
    with st.status(f"Ingesting {plural(len(posts), 'post')}{stages}…", expanded=True) as status:
        bar = st.progress(0.0, text="Starting…")

        def progress(done: int, total: int, message: str) -> None:
            bar.progress(done / total if total else 1.0, text=f"{done}/{total} posts: {message}")

        try:
            report = ingest_posts(
                list(posts),
                settings,
                store=store,
                embedder=embedder,
                progress=progress,
                errors=errors,
                warnings=warnings,
                force=force,
                llm=llm,
                label=label,
                drafts=drafts,
            )
        except KNOWN_ERRORS as exc:
            status.update(label="Ingestion failed", state="error")
            st.error(md_escape(exc))
        else:
            state = "complete" if report.ok else "error"
            status.update(label=f"Ingested: {report.summary()}", state=state, expanded=False)
    if report is not None:
        st.session_state["last_report"] = report
    return report


def show_report(report: IngestReport) -> None:
    """The summary as numbers, then one line per file or post that failed."""
    cols = st.columns(6)
    numbers = [
        ("New", report.count("new")),
        ("Updated", report.count("updated")),
        ("Unchanged", report.count("unchanged")),
        ("Failed", report.failed),
        ("Chunks embedded", report.chunks_embedded),
        ("Chunks reused", report.chunks_reused),
    ]
    for col, (name, value) in zip(cols, numbers, strict=True):
        col.metric(name, value)
    for error in report.errors:
        st.warning(f"{md_escape(error.source)}: {md_escape(error.message)}")
    for warning in report.warnings:
        st.info(f"{md_escape(warning.source)}: {md_escape(warning.message)}")
    for outcome in report.outcomes:
        if outcome.status == "failed":
            st.warning(f"{md_escape(outcome.source or outcome.post_id)}: {md_escape(outcome.message)}")
        elif outcome.status == "removed":  # the author unpublished it: said, since it leaves the table
            st.info(f"{md_escape(outcome.source)} ({md_escape(outcome.post_id)}): removed, now a draft")


def parse_uploads(
    files: Iterable[tuple[str, bytes]], collection: str | None = None, options: ImportOptions | None = None
) -> ParseResult:
    """Parse uploaded files (name, bytes); a bad file becomes a ParseError, the others are still read
    (each in the reader process, within its time limit: core/parse/isolate.py). `options`: what blog
    exports yield beside published posts."""
    result = ParseResult()
    for name, data in files:
        try:
            parsed = parse_bytes(name, data, collection=collection or None, options=options)
        except Exception as exc:
            result.errors.append(ParseError(name, f"could not be read: {exc}"))
            continue
        result.extend(parsed)
    return result


def show_llm_usage(report: IngestReport) -> None:
    """Requests and tokens of the LLM stages (tiktoken estimate and the API's usage), then what fell
    back (or failed) for which post."""
    if report.llm is None:
        return
    stats = report.llm
    cols = st.columns(4)
    numbers = [
        ("LLM requests", stats.calls),
        ("From cache", stats.cached),
        ("Tokens (estimate)", stats.estimated_tokens),
        ("Tokens (API)", stats.usage.total_tokens),
    ]
    for col, (name, value) in zip(cols, numbers, strict=True):
        col.metric(name, value)
    for outcome in report.outcomes:
        if outcome.llm == "failed":
            st.warning(f"{md_escape(outcome.title)}: {md_escape(outcome.note)}")
        elif outcome.note:
            st.caption(f"{md_escape(outcome.title)} ({md_escape(outcome.llm)}): {md_escape(outcome.note)}")


def rewrite_frame(proposal: Any) -> pd.DataFrame:
    """A proposal's sentence-level diff as a table: paragraph, sentence, before, after."""
    return pd.DataFrame(
        [
            {"¶": c.paragraph, "sentence": c.id, "before": c.before, "after": c.after}
            for c in proposal.changes
        ],
        columns=["¶", "sentence", "before", "after"],
    )
