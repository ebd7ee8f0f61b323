"""Streamlit glue shared by the pages: settings, cached resources, the sidebar, the owner gate.

Everything here is thin: the work is done by core/. Conventions the pages follow:
- Text that comes from posts or readers is shown with `st.text` (no Markdown, no HTML), or, where
  Streamlit parses Markdown anyway (labels, captions, alerts), passed through `md_escape` first.
  Answers are Markdown written by the model, shown with images neutralised (`safe_answer`).
- Known failures (model, key, store, embedder, bad settings) are shown with `st.error`, never a traceback.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from typing import Any

import streamlit as st

from core.answer import resolve_mode
from core.answer.owner import with_owner
from core.config import MODEL_RERANKERS, ConfigError, Settings
from core.embed import Embedder, EmbedError
from core.llm import LLMError, describe_llm
from core.serve import LoginThrottle, PasswordGate, RateLimiter
from core.serve.clients import request_client
from core.serve.resources import shared_embedder, shared_store
from core.store import Store, StoreError
from pages.shared.text import md_escape, plural

# Failures with a message meant for people; anything else is a bug and keeps its traceback.
KNOWN_ERRORS: tuple[type[Exception], ...] = (
    ConfigError,
    StoreError,
    EmbedError,
    LLMError,
    ValueError,
    OSError,
)

# Advanced retrieval/answer controls (sidebar), shared by the chat and inspector pages.
ADVANCED = ("top_k", "threshold", "min_chunks", "max_chunks", "temperature")
ADVANCED_KEYS = tuple(f"adv_{name}" for name in ADVANCED)

GATE_KEY = "owner_gate"
LIMITER_KEY = "question_limiter"
FLASH_KEY = "flash"


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
    """Questions one session may ask per minute (secret, env INKWELL_QUESTIONS_PER_MINUTE); 0: no limit."""
    return base_settings().questions_per_minute


def base_settings() -> Settings:
    """Settings from secrets, then environment, then defaults, with what the owner saved on the Settings
    page over them (core/answer/owner.py). Read on every run (cheap: the saved ones once per version)."""
    settings = Settings.load(secrets=read_secrets())
    with contextlib.suppress(*KNOWN_ERRORS):  # a data directory that cannot be opened: the entry says so
        settings = with_owner(settings, get_store(settings))
    return settings


def keep_advanced_state() -> None:
    """Keep the sidebar's advanced values when a page that doesn't draw them runs (call on every run)."""
    for key in ADVANCED_KEYS:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def advanced_controls(settings: Settings, shown: bool = True) -> Settings:
    """The sidebar expander with top-k, threshold, min/max chunks and temperature; returns the settings.

    The widgets start from the configured settings and keep the reader's changes for the session. Not
    `shown` (the owner's details hidden), nothing is drawn and the session's earlier choices still hold.
    """
    if not shown:
        chosen = {
            n: st.session_state[k]
            for n, k in zip(ADVANCED, ADVANCED_KEYS, strict=True)
            if k in st.session_state
        }
        try:
            return settings.replace(**chosen) if chosen else settings
        except ConfigError:
            return settings
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


def get_store(settings: Settings) -> Store:
    """One LanceDB connection per data directory and process, shared with the HTTP API; reads see other
    processes' commits within `read_consistency_seconds` (0: at once)."""
    return shared_store(settings)


def get_embedder_cached(settings: Settings) -> Embedder:
    """The configured embedder, else the one the table was made with (local models load on first use);
    one per process, shared with the HTTP API."""
    return shared_embedder(settings)


# Sidebar ----------------------------------------------------------------------------------------------


def sidebar_status(settings: Settings, details: bool = True) -> None:
    """Which models are active, what the table holds (with `details`: not on a reader's page, see
    pages/shared/details.py), and whether owner pages are protected.

    Draws where it is called (the app calls it inside a sidebar container, after the page ran, so the
    counts include what the page just ingested or deleted).
    """
    if not details:
        _owner_line()
        return
    # The address of an own model server is the owner's business, not the readers'.
    model = md_escape(describe_llm(settings, endpoint=owner_unlocked()))
    if settings.uses_builtin_llm and resolve_mode(settings) == "extractive":
        # Readers get quotes: naming the small model as "the answer model" said their answers were rough.
        st.caption("**Answers:** your own sentences, quoted from the posts (no model writes them).")
        st.caption(
            f"Offline built-in model ({model}): only for trying generated answers (Evaluate page, "
            "`inkwell ask --answer-mode generative`); set an OpenAI key or server for real ones."
        )
    else:
        st.caption(f"**Answer model:** {model}")
        if settings.uses_builtin_llm:
            st.caption("Offline built-in model: set an OpenAI key or server for better answers.")
    try:
        posts, chunks = get_store(settings).counts()
        embedder = get_embedder_cached(settings)
    except KNOWN_ERRORS as exc:
        st.error(f"Cannot read the data directory: {md_escape(exc)}")
    else:
        st.caption(f"**Embedder:** {md_escape(embedder.model_id)}")
        st.caption(f"**Table:** {plural(posts, 'post')} · {plural(chunks, 'chunk')}")
    _owner_line()


def _owner_line() -> None:
    if admin_password() is None:
        st.caption("Single-user mode: no admin password is set, so every page is open.")
    elif owner_unlocked() and st.button("Lock owner pages", key="owner_logout"):
        gate().logout()
        st.rerun()


# Owner gate and rate limit ----------------------------------------------------------------------------


@st.cache_resource(show_spinner=False)
def _login_throttle(password_digest: str) -> LoginThrottle:
    return LoginThrottle()


def login_throttle() -> LoginThrottle:
    """The server process's count of wrong owner passwords (all sessions; a new password starts afresh)."""
    return _login_throttle(hashlib.sha256((admin_password() or "").encode()).hexdigest())


def client_address() -> str | None:
    """The browser's address, for the wrong-password count: the socket peer, unless it is one of the
    owner's `trusted_proxies`, then the client those proxies name in X-Forwarded-For (core/serve/clients.py).
    None: this machine, or no script run context (bare mode)."""
    try:
        seen = st.context.ip_address
        forwarded = st.context.headers.get_all("X-Forwarded-For")
    except Exception:  # no script run context (bare mode)
        return None
    seen = seen if isinstance(seen, str) and seen else None  # (AppTest gives a mock)
    values = [v for v in forwarded if isinstance(v, str)] if isinstance(forwarded, list) else []
    try:
        trusted = base_settings().trusted_proxy_networks
    except ConfigError:  # the app's entry shows the bad setting; trust no proxy meanwhile
        trusted = ()
    return request_client(seen, values, trusted)


def gate() -> PasswordGate:
    """This session's owner gate; its wrong passwords are counted server-side by client address, so a
    reload (a new session) keeps the lock."""
    if GATE_KEY not in st.session_state:
        st.session_state[GATE_KEY] = PasswordGate(throttle=login_throttle())
    current = st.session_state[GATE_KEY]
    current.client = client_address()
    return current


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


def may_spend_model() -> bool:
    """Whether this session may start chat-model requests beyond the chat's own answers (the LLM
    reranker in the inspector): the owner's budget, so only when the owner is unlocked (or single-user)."""
    return owner_unlocked()


def without_model_spending(settings: Settings) -> Settings:
    """`settings` as a session that is not the owner's may use them: a model-spending reranker (see
    core.config.MODEL_RERANKERS) is switched off; unchanged for the owner."""
    if settings.reranker in MODEL_RERANKERS and not may_spend_model():
        return settings.replace(reranker="none")
    return settings


def limiter() -> RateLimiter:
    per_minute = questions_per_minute()
    current = st.session_state.get(LIMITER_KEY)
    if current is None:
        current = st.session_state[LIMITER_KEY] = RateLimiter(per_minute)
    current.per_minute = per_minute
    return current


# Messages that survive a rerun ------------------------------------------------------------------------


def flash(message: str, kind: str = "success") -> None:
    # A list: one run may have two things to say after its rerun (e.g. saved, and reloaded meanwhile).
    st.session_state.setdefault(FLASH_KEY, []).append((kind, message))


def show_flash() -> None:
    """The messages flashed before the last rerun, in a container that is drawn on every run."""
    # Message or not, one element here: an element more or fewer would move the page's tabs and
    # expanders, and the browser would reset them (the first tab, collapsed) after every flash.
    box = st.container()
    for kind, message in st.session_state.pop(FLASH_KEY, []):
        getattr(box, kind)(message)
