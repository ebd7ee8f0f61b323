"""Ingest (owner only): paste a post or upload files, preview their chunks, ingest; manage stored posts."""

from __future__ import annotations

import datetime as dt

import streamlit as st

from core import app_state
from core.ingest import prepare_chunks
from core.parse import FORMATS, parse_text

UPLOAD_TYPES = ["md", "markdown", "txt", "html", "htm", "json", "jsonl"]
PREVIEW_POSTS = 20  # a preview of hundreds of uploaded posts would bury the page
PREVIEW_NOTE = (
    "Keywords in a preview are picked without the rest of the posts, so a few may change on ingest."
)

settings = app_state.base_settings()
md = app_state.md_escape

st.title("Ingest posts")
app_state.show_flash()
if not app_state.require_owner("Ingesting and deleting posts"):
    st.stop()

store = app_state.get_store(settings)


def preview(posts: list) -> None:
    """Each post's chunks as they would be stored (chunking and keywords, before embedding)."""
    if len(posts) > PREVIEW_POSTS:
        st.caption(f"Showing the first {PREVIEW_POSTS} of {len(posts)} posts.")
    for post in posts[:PREVIEW_POSTS]:
        try:
            chunks = prepare_chunks(post, settings)
        except app_state.KNOWN_ERRORS as exc:
            st.warning(f"{md(post.title)}: {md(exc)}")
            continue
        label = f"{md(post.title)} · {md(post.collection)} · {len(chunks)} chunks"
        with st.expander(label, expanded=len(posts) == 1):
            st.caption(
                f"id {md(post.post_id)} · from {md(post.source)}"
                + (f" · {md(post.date)}" if post.date else "")
            )
            st.dataframe(
                app_state.chunks_frame(chunks), hide_index=True, column_config=app_state.column_config()
            )
    if posts:
        st.caption(PREVIEW_NOTE)


paste_tab, upload_tab, posts_tab = st.tabs(["Paste a post", "Upload files", "Stored posts"])

# Paste -----------------------------------------------------------------------------------------------
with paste_tab:
    left, middle, right = st.columns([3, 2, 1])
    title = left.text_input("Title", key="paste_title")
    collection = middle.text_input("Collection", value="writings", key="paste_collection")
    fmt = right.selectbox("Format", FORMATS, index=FORMATS.index("markdown"), key="paste_format")
    date = st.date_input("Date (optional)", value=None, min_value=dt.date(1900, 1, 1), key="paste_date")
    text = st.text_area("Text", height=260, key="paste_text", placeholder="Paste the post here…")
    col_preview, col_ingest = st.columns(2)
    want_preview = col_preview.button("Preview chunks", key="paste_preview", width="stretch")
    want_ingest = col_ingest.button("Ingest post", key="paste_ingest", type="primary", width="stretch")
    if want_preview or want_ingest:
        post = None
        try:
            post = parse_text(
                text, title, collection=collection, date=date.isoformat() if date else "", format=fmt
            )
        except ValueError as exc:
            st.error(f"Cannot use this text: {md(exc)}")
        if post is not None and want_preview:
            preview([post])
        if post is not None and want_ingest:
            report = app_state.run_ingestion([post], settings, label=f"ingest of “{post.title}”")
            if report is not None:
                app_state.show_report(report)

# Upload ----------------------------------------------------------------------------------------------
with upload_tab:
    files = st.file_uploader(
        "Posts: Markdown (front matter welcome), text, HTML pages, JSON or JSONL; bundles too",
        type=UPLOAD_TYPES,
        accept_multiple_files=True,
        key="upload_files",
    )
    upload_collection = st.text_input(
        "Collection for these files (optional)",
        key="upload_collection",
        help="Empty: each post's own collection (front matter or JSON field), else 'writings'.",
    )
    if files:
        parsed = app_state.parse_uploads([(f.name, f.getvalue()) for f in files], upload_collection.strip())
        st.caption(f"{len(files)} files → {len(parsed.posts)} posts, {len(parsed.errors)} problems.")
        for error in parsed.errors:
            st.warning(f"{md(error.source)}: {md(error.message)}")
        col_preview, col_ingest = st.columns(2)
        if col_preview.button("Preview chunks", key="upload_preview", width="stretch"):
            preview(parsed.posts)
        if col_ingest.button(
            f"Ingest {len(parsed.posts)} posts", key="upload_ingest", type="primary", width="stretch"
        ):
            report = app_state.run_ingestion(
                parsed.posts, settings, errors=parsed.errors, label=f"ingest of {len(files)} files"
            )
            if report is not None:
                app_state.show_report(report)

# Stored posts ----------------------------------------------------------------------------------------
with posts_tab:
    try:
        rows = store.list_posts()
    except app_state.KNOWN_ERRORS as exc:
        st.error(f"Cannot list the posts: {md(exc)}")
        rows = []
    if not rows:
        st.info("No posts are stored yet.")
    else:
        table = st.dataframe(
            [
                {
                    k: r.get(k)
                    for k in ("title", "collection", "date", "format", "n_chunks", "source", "post_id")
                }
                for r in rows
            ],
            hide_index=True,
            on_select="rerun",
            selection_mode="multi-row",
            key=app_state.table_key("posts_table", [r["post_id"] for r in rows]),
            column_config={"n_chunks": st.column_config.NumberColumn("chunks")},
        )
        selected = [rows[i]["post_id"] for i in table.selection.rows if i < len(rows)]
        st.caption(f"{len(rows)} posts; select rows to delete or re-ingest them ({len(selected)} selected).")
        col_delete, col_reingest = st.columns(2)
        if col_delete.button("Delete selected", key="delete_posts", disabled=not selected, width="stretch"):
            before = store.versions()
            try:
                deleted = store.delete_posts(selected)
            except app_state.KNOWN_ERRORS as exc:
                st.error(f"Delete failed: {md(exc)}")
            else:
                app_state.remember_undo(store, before, f"deletion of {deleted} posts")
                app_state.flash(f"Deleted {deleted} posts.")
                st.rerun()
        if col_reingest.button(
            "Re-ingest selected",
            key="reingest_posts",
            disabled=not selected,
            width="stretch",
            help="Re-chunk and re-embed from the stored text (unchanged chunks reuse their vectors).",
        ):
            posts, skipped = app_state.rebuild_posts(store, selected)
            for reason in skipped:
                st.warning(f"Skipped {md(reason)}")
            if posts:
                report = app_state.run_ingestion(
                    posts, settings, force=True, label=f"re-ingest of {len(posts)} posts"
                )
                if report is not None:
                    app_state.show_report(report)

st.divider()
app_state.undo_button(settings)
