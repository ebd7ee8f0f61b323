"""Ingest (owner only): paste a post or upload files, preview their chunks, ingest; manage stored posts.

Optional LLM stages (the "LLM preparation" expander): rewriting vague references, LLM chunking, LLM
keywords. With rewriting on, each post's proposed rewrite is shown as a sentence diff to accept or reject
before anything is stored (the first click on Preview or Ingest asks the model, the author reviews, the
next Ingest stores the accepted rewrites; the original text stays stored beside them).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib

import streamlit as st

from core.config import ConfigError
from core.ingest import prepare_chunks, rebuild_posts
from core.llm import describe_llm
from core.parse import FORMATS, ImportOptions, parse_text, post_types
from core.prepare import LLMPrepOptions, prepare_posts, preview_rewrites
from core.search import RulesError, load_rules, read_rules_text, route, rules_path, rules_template, save_rules
from core.text import check_reader_languages
from pages import shared
from pages.shared.addresses import edit_address
from pages.shared.drafts import clear_draft, draft_stored, keep_draft, restore_draft
from pages.shared.share import share_section
from pages.shared.static_download import static_site_section
from pages.shared.web_sources import web_sources_tab

shared.through_entry()  # first: a fresh server may run this file on its own (pages/shared/entry.py)

UPLOAD_TYPES = ["md", "markdown", "txt", "html", "htm", "json", "jsonl", "xml", "zip", "pdf", "docx"]
PREVIEW_POSTS = 20  # a preview of hundreds of uploaded posts would bury the page
PREVIEW_NOTE = (
    "Keywords in a preview are picked without the rest of the posts, so a few may change on ingest."
)
REVIEWS = "rewrite_reviews"  # session state: review key → RewriteProposal
PENDING = "rewrite_pending"  # session state: scope ("paste", "upload", "stored") → review keys shown
PASTE_FIELDS = {  # the paste form's widgets and their defaults (pages/shared/drafts.py)
    "paste_title": "",
    "paste_collection": "writings",
    "paste_format": "markdown",
    "paste_date": None,
    "paste_text": "",
}

settings = shared.base_settings()
md = shared.md_escape
plural = shared.plural

st.title("Ingest posts")
shared.show_flash()
if not shared.require_owner("Ingesting and deleting posts"):
    st.stop()

store = shared.get_store(settings)

readers = st.text_input(
    "Readers' languages",
    value=settings.reader_languages,
    key="reader_languages",
    placeholder="e.g. en,tr,de",
    help="Two-letter codes of the languages your readers ask in. If they include languages your posts "
    "are not written in, a new table is embedded with the bundled multilingual model, so their "
    "questions find your posts without an API key.",
)
# A bad value is said and blocks ingesting until fixed, but the page goes on: stopped here, the forms
# below were not drawn, and the browser showed the post being pasted empty once the typo was fixed.
blocked = ""  # why nothing may be ingested now
try:
    settings = settings.replace(reader_languages=readers)
    check_reader_languages(settings.reader_language_codes)
except ConfigError as exc:
    blocked = f"Not ingested: fix the readers' languages first. {exc}"
    st.error(md(exc))

# Expanders are keyed: the browser keeps the one the owner opened when the elements above them change
# (a message shown after an action). The tabs are not: keyed, a click on another page while a field was
# being typed in lost what was typed; unkeyed, they stay put behind show_flash's container.
with st.expander("LLM preparation (optional)", key="prep_section"):
    st.caption(
        f"Uses {md(describe_llm(settings))}: at most two requests per post, replies cached (running again "
        "costs nothing). What the model proposes is checked; a post whose LLM stage fails is stored the "
        "built-in way and marked."
    )
    c_rewrite, c_chunks, c_keywords = st.columns([4, 3, 3])
    llm_options = LLMPrepOptions(
        rewrite=c_rewrite.checkbox(
            "Rewrite vague references",
            key="prep_rewrite",
            help="Sentences whose 'this', 'those people', 'the second'… break when a paragraph is read "
            "alone are rewritten to say what they mean. You review each post's changes first.",
        ),
        llm_chunks=c_chunks.checkbox(
            "LLM chunking", key="prep_chunks", help="Chunks cut by topic, checked against the post's text."
        ),
        llm_keywords=c_keywords.checkbox(
            "LLM keywords", key="prep_keywords", help="1–6 keywords per chunk, with the whole post in view."
        ),
        concurrency=int(
            st.number_input(
                "Posts prepared at once", 1, 32, value=settings.llm_concurrency, key="prep_workers", width=220
            )
        ),
    )


def review_key(post) -> str:
    digest = hashlib.sha256(f"{post.title}\n{post.text}".encode()).hexdigest()[:16]
    return f"{post.post_id}:{digest}:{int(llm_options.llm_chunks)}"


def review_rewrites(posts: list, scope: str) -> tuple[dict[str, bool], bool]:
    """The author's accept/reject decision per post with a rewrite, and whether some proposals were only
    fetched now (so the author has not seen them yet: they are shown below for review)."""
    reviews = st.session_state.setdefault(REVIEWS, {})
    keys = [review_key(p) for p in posts]
    missing = [p for p, k in zip(posts, keys, strict=True) if k not in reviews]
    if missing:
        with st.spinner(f"Asking the model for rewrites of {plural(len(missing), 'post')}…"):
            for post, proposal in zip(missing, preview_rewrites(missing, settings, llm_options), strict=True):
                reviews[review_key(post)] = proposal
    st.session_state.setdefault(PENDING, {})[scope] = keys
    decisions = {
        reviews[k].post_id: bool(st.session_state.get(f"accept_{k}", True))
        for k in keys
        if reviews[k].changes
    }
    return decisions, bool(missing)


def show_reviews(scope: str) -> None:
    """Each pending post's rewrite as a sentence diff with an accept checkbox (kept across reruns)."""
    keys = (st.session_state.get(PENDING) or {}).get(scope) or []
    reviews = st.session_state.get(REVIEWS) or {}
    if not keys or not llm_options.rewrite:
        return
    st.subheader("Review the rewrites")
    st.caption("Ingesting stores the accepted ones; change a decision and ingest again to redo that post.")
    for key in keys:
        proposal = reviews.get(key)
        if proposal is None:
            continue
        if proposal.error:
            st.warning(f"{md(proposal.title)}: no rewrite, the model failed ({md(proposal.error)})")
            continue
        if not proposal.changes:
            st.caption(f"{md(proposal.title)}: no sentence needs rewriting.")
            continue
        with st.expander(
            f"{md(proposal.title)}: {plural(proposal.changed, 'sentence')} rewritten", expanded=True
        ):
            st.checkbox("Accept this rewrite", value=True, key=f"accept_{key}")
            st.table(shared.rewrite_frame(proposal).set_index("¶"))  # static: long sentences wrap
            for note in proposal.notes:
                st.caption(md(note))


def ingest(
    posts: list,
    scope: str,
    *,
    errors=(),
    warnings=(),
    force: bool = False,
    label: str = "ingestion",
    drafts=(),
):
    """Ingest with the chosen LLM stages (after the rewrite review), or the built-in way; nothing while
    the readers' languages are refused. `drafts`: stored posts their files now mark as drafts go."""
    if blocked:
        st.error(md(blocked))
        return None
    if not llm_options.enabled:
        return shared.run_ingestion(
            posts, settings, errors=errors, warnings=warnings, force=force, label=label, drafts=drafts
        )
    options = llm_options
    if llm_options.rewrite:
        decisions, fresh = review_rewrites(posts, scope)
        if fresh and decisions:
            st.info("Review the proposed rewrites below, then ingest again to store the accepted ones.")
            return None
        options = dataclasses.replace(llm_options, decisions=decisions)
    # The review stays shown: the author may change a decision and ingest again.
    return shared.run_ingestion(
        posts,
        settings,
        errors=errors,
        warnings=warnings,
        force=force,
        label=label,
        llm=options,
        drafts=drafts,
    )


def show(report) -> None:
    shared.show_report(report)
    shared.show_llm_usage(report)


def preview(posts: list, scope: str = "paste") -> None:
    """Each post's chunks as they would be stored (chunking and keywords, before embedding)."""
    if len(posts) > PREVIEW_POSTS:
        st.caption(f"Showing the first {PREVIEW_POSTS} of {len(posts)} posts.")
    shown = posts[:PREVIEW_POSTS]
    prepared = {}
    options = llm_options
    if llm_options.rewrite:
        decisions, _ = review_rewrites(shown, scope)
        options = dataclasses.replace(llm_options, decisions=decisions)
    if options.enabled:
        with st.spinner("Preparing the posts with the model…"):
            prepared = prepare_posts(shown, settings, options)
    for post in shown:
        prep = prepared.get(post.post_id)
        try:
            chunks = (
                prep.chunks
                if prep is not None and prep.chunks is not None
                else prepare_chunks(post, settings)
            )
        except shared.KNOWN_ERRORS as exc:
            st.warning(f"{md(post.title)}: {md(exc)}")
            continue
        if prep is not None and prep.note:
            st.caption(f"{md(post.title)} (LLM {md(prep.status)}): {md(prep.note)}")
        label = f"{md(post.title)} · {md(post.collection)} · {plural(len(chunks), 'chunk')}"
        with st.expander(label, expanded=len(posts) == 1):
            st.caption(
                f"id {md(post.post_id)} · from {md(post.source)}"
                + (f" · {md(post.date)}" if post.date else "")
            )
            st.dataframe(shared.chunks_frame(chunks), hide_index=True, column_config=shared.column_config())
    if posts:
        st.caption(PREVIEW_NOTE)


paste_tab, upload_tab, web_tab, posts_tab = st.tabs(
    ["Paste a post", "Upload files", "From the web", "Stored posts"]
)
with web_tab:  # feeds, sitemaps and sites, remembered and synced (pages/shared/web_sources.py)
    web_sources_tab(settings, blocked=blocked)

# Paste -----------------------------------------------------------------------------------------------
with paste_tab:
    # What is typed here is kept while the owner visits other pages, until ingested or cleared.
    restore_draft("paste", PASTE_FIELDS)
    left, middle, right = st.columns([3, 2, 1])
    # Each change is kept as it comes in: a field left by clicking another page commits its value in
    # the run that switches pages, which draws none of these widgets (only callbacks see it then).
    keep = {"on_change": keep_draft, "args": ("paste", PASTE_FIELDS)}
    title = left.text_input("Title", key="paste_title", **keep)
    collection = middle.text_input("Collection", key="paste_collection", **keep)
    fmt = right.selectbox("Format", FORMATS, key="paste_format", **keep)
    date = st.date_input("Date (optional)", min_value=dt.date(1900, 1, 1), key="paste_date", **keep)
    text = st.text_area("Text", height=260, key="paste_text", placeholder="Paste the post here…", **keep)
    col_preview, col_ingest, col_clear = st.columns([2, 2, 1])
    want_preview = col_preview.button("Preview chunks", key="paste_preview", width="stretch")
    want_ingest = col_ingest.button("Ingest post", key="paste_ingest", type="primary", width="stretch")
    col_clear.button(
        "Clear", key="paste_clear", width="stretch", on_click=clear_draft, args=("paste", PASTE_FIELDS)
    )
    if want_preview or want_ingest:
        post = None
        try:
            post = parse_text(
                text, title, collection=collection, date=date.isoformat() if date else "", format=fmt
            )
        except ValueError as exc:
            st.error(f"Cannot use this text: {md(exc)}")
        if post is not None and want_preview:
            preview([post], "paste")
        if post is not None and want_ingest:
            # Named as Recent changes will list it: a paste over a stored post is an update.
            verb = "update" if store.get_post(post.post_id) is not None else "ingest"
            report = ingest([post], "paste", label=f"{verb} of “{post.title}”")
            if report is not None:
                show(report)
                if report.ok:
                    draft_stored("paste", PASTE_FIELDS)
    show_reviews("paste")
    keep_draft("paste", PASTE_FIELDS)

# Upload ----------------------------------------------------------------------------------------------
with upload_tab:
    files = st.file_uploader(
        "Posts: Markdown (front matter welcome), text, HTML pages, JSON or JSONL, PDF, Word (.docx); "
        "bundles too; blog exports: WordPress (.xml), Ghost (.json), Substack or Medium (.zip)",
        type=UPLOAD_TYPES,
        accept_multiple_files=True,
        key="upload_files",
    )
    upload_collection = st.text_input(
        "Collection for these files (optional)",
        key="upload_collection",
        help="Empty: each post's own collection (front matter or JSON field), else 'writings'.",
    )
    col_drafts, col_pages, col_members = st.columns(3)
    export_options = ImportOptions(
        include_drafts=col_drafts.checkbox(
            "Include drafts",
            key="upload_drafts",
            help="Blog exports: also drafts, scheduled and private posts. Markdown: also posts whose front "
            "matter says draft: true or published: false.",
        ),
        include_pages=col_pages.checkbox(
            "Include pages", key="upload_pages", help="Blog exports: also pages (About, Contact…)."
        ),
        include_members=col_members.checkbox(
            "Include members-only posts",
            key="upload_members",
            help="Ghost and Substack exports: also posts for paying or signed-in members only. Answers "
            "quote stored posts to any reader.",
        ),
        include_types=post_types(
            st.text_input(
                "Other post types (WordPress)",
                key="upload_types",
                placeholder="podcast, portfolio",
                help="A plugin's post types to read as posts; the import's warning names those it left out.",
            )
        ),
    )
    if files:
        parsed = shared.parse_uploads(
            [(f.name, f.getvalue()) for f in files], upload_collection.strip(), export_options
        )
        st.caption(
            f"{plural(len(files), 'file')} → {plural(len(parsed.posts), 'post')}, "
            f"{plural(len(parsed.errors), 'problem')}."
        )
        for error in parsed.errors:
            st.warning(f"{md(error.source)}: {md(error.message)}")
        for warning in parsed.warnings:
            st.info(f"{md(warning.source)}: {md(warning.message)}")
        # Every file failed: nothing to preview or ingest. A draft alone may still be ingested: a post
        # stored from its file before is removed (its author unpublished it).
        nothing = not parsed.posts and not parsed.drafts
        col_preview, col_ingest = st.columns(2)
        upload_preview = col_preview.button(
            "Preview chunks", key="upload_preview", width="stretch", disabled=not parsed.posts
        )
        upload_ingest = col_ingest.button(
            f"Ingest {plural(len(parsed.posts), 'post')}",
            key="upload_ingest",
            type="primary",
            width="stretch",
            disabled=nothing,
            help="No file holds a post that can be ingested." if nothing else None,
        )
        if upload_preview:
            preview(parsed.posts, "upload")
        if upload_ingest:
            report = ingest(
                parsed.posts,
                "upload",
                errors=parsed.errors,
                warnings=parsed.warnings,
                label=f"ingest of {plural(len(files), 'file')}",
                drafts=parsed.drafts,
            )
            if report is not None:
                show(report)
        show_reviews("upload")

# Stored posts ----------------------------------------------------------------------------------------
with posts_tab:
    try:
        rows = store.list_posts()
    except shared.KNOWN_ERRORS as exc:
        st.error(f"Cannot list the posts: {md(exc)}")
        rows = []
    if not rows:
        st.info("No posts are stored yet.")
    else:
        table = st.dataframe(
            [
                {
                    k: r.get(k)
                    for k in ("title", "collection", "date", "format", "n_chunks", "url", "source", "post_id")
                }
                for r in rows
            ],
            hide_index=True,
            on_select="rerun",
            selection_mode="multi-row",
            key=shared.table_key("posts_table", [r["post_id"] for r in rows]),
            column_config={
                "n_chunks": st.column_config.NumberColumn("chunks"),
                "url": st.column_config.LinkColumn("address"),
            },
        )
        selected = [rows[i]["post_id"] for i in table.selection.rows if i < len(rows)]
        st.caption(
            f"{plural(len(rows), 'post')}; select rows to delete or re-ingest them, one to edit its address "
            f"({len(selected)} selected)."
        )
        if len(selected) == 1:
            edit_address(store, next(r for r in rows if r["post_id"] == selected[0]), settings)
        col_delete, col_reingest = st.columns(2)
        if col_delete.button("Delete selected", key="delete_posts", disabled=not selected, width="stretch"):
            try:
                deleted = store.delete_posts(selected, label=f"deletion of {plural(len(selected), 'post')}")
            except shared.KNOWN_ERRORS as exc:
                st.error(f"Delete failed: {md(exc)}")
            else:
                shared.flash(f"Deleted {plural(deleted, 'post')}.")
                st.rerun()
        if col_reingest.button(
            "Re-ingest selected",
            key="reingest_posts",
            disabled=not selected,
            width="stretch",
            help="Re-chunk and re-embed from the stored text (unchanged chunks reuse their vectors).",
        ):
            posts, skipped = rebuild_posts(store, selected)
            for reason in skipped:
                st.warning(f"Skipped {md(reason)}")
            if posts:
                report = ingest(
                    posts, "stored", force=True, label=f"re-ingest of {plural(len(posts), 'post')}"
                )
                if report is not None:
                    show(report)
        show_reviews("stored")


# Collections routing ---------------------------------------------------------------------------------
def routing_rules() -> None:
    """The routing rules file in a text area (saved only when valid) and a question to try the router on."""
    try:
        known = store.collections()
    except shared.KNOWN_ERRORS as exc:
        st.error(f"Cannot read the collections: {md(exc)}")
        return
    st.caption(
        "A reader's question that names no collection is searched in one collection only when the router "
        "is sure (a keyword below, or wording clearly closest to one collection); otherwise everything is "
        f"searched. Rules file: {md(rules_path(settings.data_dir))}"
    )
    if settings.routing == "off":
        st.info("Routing is switched off (setting routing = off): every question searches everything.")
    _, problems = load_rules(settings.data_dir, known)
    for problem in problems:
        st.warning(f"{md(problem)} (this part is ignored)")
    current = read_rules_text(settings.data_dir)
    # Rules being typed are kept while the owner visits other pages, as the paste form is.
    fields = {"routes_text": current if current is not None else rules_template(known)}
    restore_draft("routes", fields)
    text = st.text_area(
        "Rules (TOML)", height=220, key="routes_text", on_change=keep_draft, args=("routes", fields)
    )
    keep_draft("routes", fields)
    if st.button("Save rules", key="routes_save"):
        try:
            save_rules(settings.data_dir, text, known)
        except (RulesError, OSError) as exc:
            st.error(f"Not saved, the rules file is unchanged: {md(exc)}")
        else:
            st.success("Rules saved: the next question uses them.")
    trial = st.text_input("Try a question", key="routes_question")
    if trial.strip():
        try:
            embedder = shared.get_embedder_cached(settings)
            decision = route(trial, store, embedder, settings.replace(routing="auto"))
        except shared.KNOWN_ERRORS as exc:
            st.error(f"Cannot route: {md(exc)}")
            return
        st.caption(md(decision.summary()))
        st.dataframe(
            [
                {"collection": c, "score": s, "nearest chunk similarity": decision.similarity.get(c)}
                for c, s in decision.scores.items()
            ],
            hide_index=True,
        )
        for reason in decision.reasons:
            st.text(reason)


with st.expander("Collections routing", key="routing_section"):
    routing_rules()

with st.expander("Static site: download as a zip", key="static_section"):  # pages/shared/static_download.py
    static_site_section(settings)

with st.expander("Share on your blog: the widget", key="share_section"):  # pages/shared/share.py
    share_section(settings, store)

st.divider()
shared.undo_button(settings)
