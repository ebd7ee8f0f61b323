"""Streamlit glue shared by the pages: settings, cached resources, the sidebar, the owner gate.

Everything here is thin: the work is done by core/. Conventions the pages follow:
- Text that comes from posts or readers is shown with `st.text` (no Markdown, no HTML), or, where
  Streamlit parses Markdown anyway (labels, captions, alerts), passed through `md_escape` first.
  Answers are Markdown written by the model, shown with images neutralised (`safe_answer`).
- Known failures (model, key, store, embedder, bad settings) are shown with `st.error`, never a traceback.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from core.config import ConfigError, Settings
from core.embed import Embedder, EmbedError, embedder_for_store
from core.guard import DEFAULT_QUESTIONS_PER_MINUTE, PasswordGate, RateLimiter
from core.ingest import IngestReport, ingest_posts
from core.llm import LLMError, describe_llm
from core.models import Chunk, Hit, ParseError, ParseResult, Post
from core.store import Store, StoreError, Versions

# Failures with a message meant for people; anything else is a bug and keeps its traceback.
KNOWN_ERRORS: tuple[type[Exception], ...] = (
    ConfigError,
    StoreError,
    EmbedError,
    LLMError,
    ValueError,
    OSError,
)

HIT_FIELDS = {f.name for f in dataclasses.fields(Hit)}

# Advanced retrieval/answer controls (sidebar), shared by the chat and inspector pages.
ADVANCED = ("top_k", "threshold", "min_chunks", "max_chunks", "temperature")
ADVANCED_KEYS = tuple(f"adv_{name}" for name in ADVANCED)

GATE_KEY = "owner_gate"
LIMITER_KEY = "question_limiter"
UNDO_KEY = "undo"
FLASH_KEY = "flash"


# Text -------------------------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~=$:&\"'^])")


def md_escape(text: Any) -> str:
    """Text that Streamlit's Markdown shows literally: no links, images, emphasis, directives or HTML."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def safe_answer(text: str) -> str:
    """The model's Markdown with images turned into plain text (an image URL could leak data)."""
    return text.replace("![", "!\\[")


def safe_answer_stream(deltas: Iterable[str]) -> Iterator[str]:
    """`safe_answer` over a stream, also when `!` and `[` arrive in different deltas."""
    held = ""
    for delta in deltas:
        text = safe_answer(held + delta)
        held = "!" if text.endswith("!") else ""
        if held:
            text = text[:-1]
        if text:
            yield text
    if held:
        yield held


# Settings and app-only secrets ------------------------------------------------------------------------


def read_secrets() -> dict[str, Any]:
    """Top-level values of .streamlit/secrets.toml, or {} when there is no secrets file."""
    try:
        return {k: v for k, v in st.secrets.to_dict().items() if not isinstance(v, dict)}
    except Exception:
        return {}


def _app_setting(name: str, env_name: str) -> str | None:
    value = read_secrets().get(name)
    if value in (None, ""):
        value = os.environ.get(env_name)
    return None if value in (None, "") else str(value)


def admin_password() -> str | None:
    """The owner's password (secret `admin_password`, else env INKWELL_ADMIN_PASSWORD); None: single-user."""
    return _app_setting("admin_password", "INKWELL_ADMIN_PASSWORD")


def questions_per_minute() -> int:
    """Questions one session may ask per minute (secret or env INKWELL_QUESTIONS_PER_MINUTE); 0: no limit."""
    value = _app_setting("questions_per_minute", "INKWELL_QUESTIONS_PER_MINUTE")
    try:
        return DEFAULT_QUESTIONS_PER_MINUTE if value is None else max(0, int(value))
    except ValueError:
        return DEFAULT_QUESTIONS_PER_MINUTE


def base_settings() -> Settings:
    """Settings from secrets, then environment, then defaults. Read on every run (cheap)."""
    return Settings.load(secrets=read_secrets())


def keep_advanced_state() -> None:
    """Keep the sidebar's advanced values when a page that doesn't draw them runs (call on every run)."""
    for key in ADVANCED_KEYS:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def advanced_controls(settings: Settings) -> Settings:
    """The sidebar expander with top-k, threshold, min/max chunks and temperature; returns the settings.

    The widgets start from the configured settings and keep the reader's changes for the session.
    """
    for name, key in zip(ADVANCED, ADVANCED_KEYS, strict=True):
        if key not in st.session_state:
            st.session_state[key] = getattr(settings, name)
    with st.sidebar.expander("Advanced retrieval settings"):
        top_k = st.number_input("Candidates (top-k)", 1, 1000, key="adv_top_k")
        threshold = st.slider("Relevance threshold", 0.0, 1.0, step=0.01, key="adv_threshold")
        min_chunks = st.number_input("Min chunks", 0, 1000, key="adv_min_chunks")
        max_chunks = st.number_input("Max chunks", 1, 1000, key="adv_max_chunks")
        temperature = st.slider("Temperature", 0.0, 2.0, step=0.05, key="adv_temperature")
        if min_chunks > max_chunks:
            st.warning("Min chunks is above max chunks: using max chunks for both.")
            min_chunks = max_chunks
    return settings.replace(
        top_k=int(top_k),
        threshold=float(threshold),
        min_chunks=int(min_chunks),
        max_chunks=int(max_chunks),
        temperature=float(temperature),
    )


# Cached resources (one per process) -------------------------------------------------------------------


@st.cache_resource(show_spinner=False)
def _store(data_dir: str) -> Store:
    return Store(data_dir)


def get_store(settings: Settings) -> Store:
    """One LanceDB connection per data directory and process; reads see the latest commit."""
    return _store(str(settings.data_dir.expanduser().resolve()))


@st.cache_resource(show_spinner=False)
def _embedder(key: tuple, _settings: Settings, table_model: str | None) -> Embedder:
    return embedder_for_store(_settings, table_model)


def get_embedder_cached(settings: Settings) -> Embedder:
    """The configured embedder, else the one the table was made with (local models load on first use)."""
    table_model = get_store(settings).model_id()
    secret = settings.openai_api_key or ""
    key = (
        settings.embed_backend,
        settings.embed_model,
        settings.embed_batch_size,
        settings.embed_dimensions,
        settings.embed_base_url or settings.openai_base_url or "",
        hashlib.sha256(secret.encode()).hexdigest() if secret else "",  # never the key itself
    )
    return _embedder(key, settings, table_model)


# Sidebar ----------------------------------------------------------------------------------------------


def sidebar_status(settings: Settings) -> None:
    """Which models are active, what the table holds, and whether owner pages are protected.

    Draws where it is called (the app calls it inside a sidebar container, after the page ran, so the
    counts include what the page just ingested or deleted).
    """
    st.caption(f"**Answer model:** {md_escape(describe_llm(settings))}")
    if settings.uses_builtin_llm:
        st.caption("Offline built-in model: set an OpenAI key or server for better answers.")
    try:
        posts, chunks = get_store(settings).counts()
        embedder = get_embedder_cached(settings)
    except KNOWN_ERRORS as exc:
        st.error(f"Cannot read the data directory: {md_escape(exc)}")
    else:
        st.caption(f"**Embedder:** {md_escape(embedder.model_id)}")
        st.caption(f"**Table:** {posts} posts · {chunks} chunks")
    if admin_password() is None:
        st.caption("Single-user mode: no admin password is set, so every page is open.")
    elif owner_unlocked() and st.button("Lock owner pages", key="owner_logout"):
        gate().logout()
        st.rerun()


# Owner gate and rate limit ----------------------------------------------------------------------------


def gate() -> PasswordGate:
    if GATE_KEY not in st.session_state:
        st.session_state[GATE_KEY] = PasswordGate()
    return st.session_state[GATE_KEY]


def owner_unlocked() -> bool:
    return admin_password() is None or gate().unlocked


def require_owner(what: str) -> bool:
    """True when the owner may act; otherwise shows the password form (and its result) and returns False."""
    if owner_unlocked():
        return True
    st.info(f"{what} is for the site owner. Enter the admin password to continue.")
    with st.form("owner_login", clear_on_submit=True):
        typed = st.text_input("Admin password", type="password")
        submitted = st.form_submit_button("Unlock")
    if submitted:
        result = gate().attempt(typed, admin_password())
        if result.ok:
            st.rerun()
        st.error(result.message)
    return False


def limiter() -> RateLimiter:
    per_minute = questions_per_minute()
    current = st.session_state.get(LIMITER_KEY)
    if current is None:
        current = st.session_state[LIMITER_KEY] = RateLimiter(per_minute)
    current.per_minute = per_minute
    return current


# Messages that survive a rerun ------------------------------------------------------------------------


def flash(message: str, kind: str = "success") -> None:
    st.session_state[FLASH_KEY] = (kind, message)


def show_flash() -> None:
    kind, message = st.session_state.pop(FLASH_KEY, (None, None))
    if message:
        getattr(st, kind)(message)


# Ingestion and undo -----------------------------------------------------------------------------------


def remember_undo(store: Store, before: Versions, label: str) -> None:
    if store.versions() != before:
        st.session_state[UNDO_KEY] = (before, label)


def undo_button(settings: Settings) -> None:
    """'Undo last change' for this session's last ingestion, re-ingestion, deletion or chunk edit."""
    saved = st.session_state.get(UNDO_KEY)
    if not saved or not owner_unlocked():
        return
    versions, label = saved
    help_text = "Puts both tables back as they were before it; changes made since (by anyone) are undone too."
    if st.button(f"Undo last change ({label})", help=help_text, key="undo_last"):
        try:
            get_store(settings).restore(versions)
        except KNOWN_ERRORS as exc:
            st.error(f"Undo failed: {md_escape(exc)}")
            return
        del st.session_state[UNDO_KEY]
        flash(f"Undone: {label}.")
        st.rerun()


def run_ingestion(
    posts: Sequence[Post],
    settings: Settings,
    *,
    errors: Sequence[ParseError] = (),
    force: bool = False,
    label: str = "ingestion",
    llm: Any = None,
) -> IngestReport | None:
    """Ingest under st.status with a progress bar; remembers the versions before it for undo.

    `llm` (core.prepare.LLMPrepOptions) turns on the LLM preparation stages.
    """
    try:
        store = get_store(settings)
        # A table not created yet: let ingest pick the default for its posts' language (core/embed.py).
        embedder = get_embedder_cached(settings) if store.model_id() else None
        before = store.versions()
    except KNOWN_ERRORS as exc:
        st.error(f"Cannot ingest: {md_escape(exc)}")
        return None
    report: IngestReport | None = None
    stages = " with the LLM stages" if llm else ""
    with st.status(f"Ingesting {len(posts)} post(s){stages}…", expanded=True) as status:
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
                force=force,
                llm=llm,
            )
        except KNOWN_ERRORS as exc:
            status.update(label="Ingestion failed", state="error")
            st.error(md_escape(exc))
        else:
            state = "complete" if report.ok else "error"
            status.update(label=f"Ingested: {report.summary()}", state=state, expanded=False)
    remember_undo(store, before, label)
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
    for outcome in report.outcomes:
        if outcome.status == "failed":
            st.warning(f"{md_escape(outcome.source or outcome.post_id)}: {md_escape(outcome.message)}")


def parse_uploads(files: Iterable[tuple[str, bytes]], collection: str | None = None) -> ParseResult:
    """Parse uploaded files (name, bytes); a bad file becomes a ParseError, the others are still read."""
    from core.parse import parse_bytes

    result = ParseResult()
    for name, data in files:
        try:
            parsed = parse_bytes(name, data, collection=collection or None)
        except Exception as exc:
            result.errors.append(ParseError(name, f"could not be read: {exc}"))
            continue
        result.posts.extend(parsed.posts)
        result.errors.extend(parsed.errors)
    return result


# Tables -----------------------------------------------------------------------------------------------


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
            "relevance", min_value=0.0, max_value=1.0, format="%.3f", width="small"
        ),
        "passed": cc.CheckboxColumn("used", width="small"),
        "why": cc.TextColumn("why", width="medium"),
        "title": cc.TextColumn("title", width="medium"),
        "collection": cc.TextColumn("collection", width="small"),
        "section": cc.TextColumn("section", width="small"),
        "tokens": cc.NumberColumn("tokens", width="small"),
        "keywords": cc.ListColumn("keywords", width="medium"),
        "text": cc.TextColumn("text", width="large"),
    }


# LLM preparation (rewrites, LLM chunks and keywords) --------------------------------------------------


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
