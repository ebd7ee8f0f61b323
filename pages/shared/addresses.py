"""The Ingest page's address editor: one stored post's web address, shown and changed (logged for undo,
nothing re-embedded)."""

from __future__ import annotations

import streamlit as st

from core.config import Settings
from core.parse.addresses import checked_url, resolve_url
from core.store import Store
from pages.shared.state import KNOWN_ERRORS, flash
from pages.shared.text import md_escape


def address_problem(typed: str, settings: Settings) -> tuple[str, str]:
    """(the address to store, "") for what the owner typed ("" clears it), or ("", why not)."""
    url, problem = checked_url(typed)
    if problem:
        return "", f"the address {problem}"
    resolved = resolve_url(url, settings.site_url)
    if url and not resolved:
        return "", "a path needs the site's address first (setting site_url, INKWELL_SITE_URL)"
    return resolved, ""


def edit_address(store: Store, row: dict, settings: Settings) -> None:
    """A text field with the post's address and a Save button; a saved change reruns the page."""
    post_id = row["post_id"]
    key = f"post_url_{post_id}"
    typed = st.text_input(
        f"Address of “{md_escape(row.get('title') or post_id)}” on the blog",
        value=row.get("url") or "",
        key=key,
        placeholder="https://blog.example/the-post/ (empty: readers open the post's text in Inkwell)",
        help="Where readers' citations of this post link to (a quoted sentence opens highlighted there).",
    )
    if not st.button("Save address", key=f"save_{key}"):
        return
    url, problem = address_problem(typed, settings)
    if problem:
        st.error(f"Not saved: {md_escape(problem)}.")
        return
    try:
        store.set_post_url(post_id, url, label=f"address of “{row.get('title') or post_id}”")
    except KNOWN_ERRORS as exc:
        st.error(f"Not saved: {md_escape(exc)}")
        return
    st.session_state.pop(key, None)
    flash(f"Saved the address of {md_escape(row.get('title') or post_id)}." if url else "Address cleared.")
    st.rerun()
