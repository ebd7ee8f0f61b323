"""Whether the owner's diagnostics are shown: how the collection was chosen and the buttons that
override it, relevance numbers, the excerpts' table, model and table details, the advanced retrieval
settings. Readers see the question, the answer, its sources and the honest decline.

With an owner password set they show when the owner is signed in; in single-user mode (no password)
behind the sidebar's one "Details" toggle, off by default.
"""

from __future__ import annotations

import streamlit as st

from pages.shared.state import admin_password, gate

DETAILS_KEY = "show_details"


def details_toggle() -> bool:
    """Draw the sidebar's Details toggle (single-user mode only); whether the diagnostics show."""
    if admin_password() is not None:
        return gate().unlocked
    return st.sidebar.toggle(
        "Details",
        key=DETAILS_KEY,
        help="How each answer was found: the collection chosen, relevance, excerpts, models, settings.",
    )


def details_on() -> bool:
    """Whether the diagnostics show in this run (the toggle's last value; it is drawn by the chat)."""
    if admin_password() is not None:
        return gate().unlocked
    return bool(st.session_state.get(DETAILS_KEY, False))


def keep_details_state() -> None:
    """Keep the toggle's value while a page that doesn't draw it runs (call on every run)."""
    if DETAILS_KEY in st.session_state:
        st.session_state[DETAILS_KEY] = st.session_state[DETAILS_KEY]
