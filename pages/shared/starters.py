"""The empty chat's welcome: the owner's greeting and starter questions (saved on the Settings page,
core/answer/owner.py), each a button that asks it in one click."""

from __future__ import annotations

import contextlib

import streamlit as st

from core.answer.owner import OwnerSettings, load_owner
from core.config import Settings
from pages.shared.state import KNOWN_ERRORS, get_store
from pages.shared.text import md_escape

STARTER_KEY = "chat_starter"  # session state: the starter question clicked, asked on the next run


def saved_owner(settings: Settings) -> OwnerSettings:
    """What the owner saved (read once per settings-table version); nothing when it cannot be read (the
    page shows the store's error itself)."""
    with contextlib.suppress(*KNOWN_ERRORS):
        return load_owner(get_store(settings))
    return OwnerSettings()


def _choose(question: str) -> None:
    st.session_state[STARTER_KEY] = question


def show_welcome(owner: OwnerSettings, try_asking: str = "Try asking:") -> None:
    """The greeting as the author's first message, and one button per starter question under
    `try_asking` (the reader's label, in the blog's language)."""
    if owner.greeting:
        with st.chat_message("assistant"):
            st.text(owner.greeting)
    if not owner.starters:
        return
    st.caption(try_asking)
    with st.container(horizontal=True):
        for i, question in enumerate(owner.starters):
            # The label is escaped (a button's label is Markdown); the question is asked as written.
            st.button(md_escape(question), key=f"starter_{i}", on_click=_choose, args=(question,))


def take_starter() -> str | None:
    """The starter question clicked since the last run, once."""
    return st.session_state.pop(STARTER_KEY, None)
