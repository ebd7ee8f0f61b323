"""The Ingest page's "From the web" tab: add a feed, sitemap or site by its address, see each remembered
source's last sync (time and result), and "Sync now" (optionally pruning the posts a sitemap no longer
lists), with a progress bar while pages are fetched and posts embedded (core/ingest/web/)."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core.config import Settings
from core.ingest.report import Progress
from core.ingest.web import SourceOutcome, ingest_url, sync_sources
from core.store.sources import Sources
from pages.shared.ingesting import show_report
from pages.shared.state import KNOWN_ERRORS, flash, get_embedder_cached, get_store
from pages.shared.text import md_escape, plural

PRUNE_HELP = (
    "Delete the posts a sitemap, site, folder or export file no longer lists (they are named in the "
    "result, and undoable). A feed lists only its newest posts, so nothing is pruned by one."
)

FORGET_HELP = (
    "Stop syncing this address. Its posts stay; delete them under Stored posts if you want them gone."
)


def web_sources_tab(settings: Settings, blocked: str = "") -> None:
    """The whole tab: the address form, the remembered sources, Sync now, and the last run's report.
    `blocked`: why nothing may be ingested now (said instead of reading or syncing)."""
    left, right = st.columns([3, 1])
    url = left.text_input(
        "Address of a feed, sitemap, site or page",
        key="web_url",
        placeholder="https://blog.example/feed.xml",
    )
    collection = right.text_input("Collection", value="writings", key="web_collection")
    if st.button("Add and ingest", key="web_add", type="primary") and not url.strip():
        st.warning("Give the address of a feed, sitemap, site or page first.")
    elif st.session_state.get("web_add") and url.strip():
        _run(
            settings,
            blocked,
            "Reading " + url.strip(),
            lambda store, embedder, progress: [
                ingest_url(
                    url.strip(),
                    settings,
                    collection=collection.strip() or None,
                    store=store,
                    embedder=embedder,
                    progress=progress,
                )
            ],
        )
    try:
        sources = Sources(get_store(settings)).all()
    except KNOWN_ERRORS as exc:
        st.error(f"Cannot read the sources: {md_escape(exc)}")
        return
    if not sources:
        st.caption("No sources yet. An address added here is remembered and synced with **Sync now**.")
        return
    st.markdown(f"**{plural(len(sources), 'source')}**")
    for index, source in enumerate(sources):
        mark = "✅" if source.ok else "⚠️"
        when = source.synced_at[:16].replace("T", " ") + " UTC" if source.synced_at else "never synced"
        line, forget = st.columns([9, 1], vertical_alignment="center")
        line.markdown(
            f"{mark} {md_escape(source.url)} · {md_escape(source.kind)} · last sync {when}"
            + (f" · {md_escape(source.result)}" if source.result else "")
        )
        forget.button(
            "Forget",
            key=f"web_forget_{index}",
            help=FORGET_HELP,
            on_click=_forget,
            args=(settings, source.url),
            width="stretch",
        )
    prune = st.checkbox("Remove posts gone from the source (prune)", key="web_prune", help=PRUNE_HELP)
    if st.button("Sync now", key="web_sync"):
        _run(
            settings,
            blocked,
            f"Syncing {plural(len(sources), 'source')}",
            lambda store, embedder, progress: (
                sync_sources(
                    settings, store=store, embedder=embedder, prune=prune, progress=progress
                ).outcomes
            ),
        )
    for outcome in st.session_state.get("web_outcomes", []):
        _show(outcome)


def _forget(settings: Settings, url: str) -> None:
    """The Forget button (an `on_click`, so the list drawn after it no longer has the source)."""
    try:
        forgotten = Sources(get_store(settings)).remove(url)
    except KNOWN_ERRORS as exc:
        flash(f"Cannot forget {md_escape(url)}: {md_escape(exc)}", "error")
        return
    if forgotten:
        flash(f"Forgot {md_escape(url)}; its posts stay.")


def _run(
    settings: Settings,
    blocked: str,
    label: str,
    work: Callable[..., list[SourceOutcome]],
) -> None:
    """Run `work(store, embedder, progress)` under a status with a progress bar; keep its outcomes.
    Not when `blocked` (the reason, shown)."""
    if blocked:
        st.error(md_escape(blocked))
        return
    try:
        store = get_store(settings)
        embedder = get_embedder_cached(settings) if store.model_id() else None
    except KNOWN_ERRORS as exc:
        st.error(f"Cannot ingest: {md_escape(exc)}")
        return
    with st.status(f"{md_escape(label)}…", expanded=True) as status:
        bar = st.progress(0.0, text="Starting…")

        def progress(done: int, total: int, message: str) -> None:
            bar.progress(min(1.0, done / total) if total else 1.0, text=f"{done}/{total}: {message}")

        reporter: Progress = progress
        try:
            outcomes = work(store, embedder, reporter)
        except KNOWN_ERRORS as exc:
            status.update(label="Failed", state="error")
            st.error(md_escape(exc))
            return
        ok = all(o.ok for o in outcomes)
        status.update(
            label="Done" if ok else "Done, with problems", state="complete" if ok else "error", expanded=False
        )
    st.session_state["web_outcomes"] = outcomes
    st.rerun()  # the sources list above shows the new sync time and result


def _show(outcome: SourceOutcome) -> None:
    st.markdown(f"**{md_escape(outcome.source.url)}**: {md_escape(outcome.summary())}")
    verb = "Removed" if outcome.pruned else "Gone from the source (tick prune to remove)"
    for post_id, url in outcome.gone:
        st.info(f"{verb}: {md_escape(post_id)} ({md_escape(url)})")
    show_report(outcome.report)
