"""The Ingest page's "Share on your blog" expander: the widget's `<script>` tag to copy (core/serve/share.py
builds it from the address the owner opened the app at and the chat's title) and the blogs allowed to
call the API (INKWELL_ALLOWED_ORIGINS), with how to set them."""

from __future__ import annotations

import streamlit as st

from core.answer.owner import load_owner
from core.config import ConfigError, Settings
from core.serve.share import PLACEHOLDER_ORIGIN, app_origin, widget_tag
from core.store import Store
from pages.shared.state import KNOWN_ERRORS, admin_password
from pages.shared.text import md_escape

# Shown while no admin password is set: a blog's readers follow citations into this app.
OPEN_TO_READERS = (
    "No admin password is set, so the blog's readers can open every page of this app: a citation of a "
    "post without an address opens Inkwell's reader page, whose sidebar lists Ingest, Settings and the "
    "rest. Set `INKWELL_ADMIN_PASSWORD` (or `admin_password` in .streamlit/secrets.toml) before you "
    "share the widget."
)
HOW_TO_ALLOW = (
    "Allow each blog by its address: `INKWELL_ALLOWED_ORIGINS=https://blog.example` (several separated "
    "by commas; or `allowed_origins` in .streamlit/secrets.toml), then restart Inkwell: they are read at "
    "start."
)


def share_section(settings: Settings, store: Store) -> None:
    """The tag to paste into the blog's template, then which blogs may use it."""
    origin = app_origin(_app_url())
    try:
        title = load_owner(store).title(settings)
    except KNOWN_ERRORS:  # the table cannot be read: the chat's default title
        title = f"Ask {settings.author_name}"
    st.caption(
        "Paste this tag into your blog's template (before `</body>`): it adds an **Ask** button and a "
        "chat panel that answers from your posts. It needs the server `make run` starts (server.py), "
        "which serves the widget and the API beside this app. Options: docs/api.md."
    )
    st.code(widget_tag(origin or PLACEHOLDER_ORIGIN, title), language="html")
    if origin is None:
        st.caption(f"Replace {PLACEHOLDER_ORIGIN} with the address your readers reach Inkwell at.")
    else:
        st.caption(
            "The address is the one you opened Inkwell at: if readers reach it at another (a domain, a "
            "proxy), put that one in the tag."
        )
    try:
        origins = settings.allowed_origin_list
    except ConfigError as exc:
        st.error(f"The allowed blogs are set wrongly: {md_escape(exc)}")
        origins = []
    if origins:
        st.markdown("Blogs allowed to use it: " + ", ".join(f"`{o}`" for o in origins))
    else:
        st.warning("No blog may use it yet: a page elsewhere is refused by the browser.")
    st.caption(HOW_TO_ALLOW)
    if admin_password() is None:
        st.warning(OPEN_TO_READERS)


def _app_url() -> str | None:
    """The address of the app in the owner's browser (None outside a served session, e.g. AppTest)."""
    try:
        url = st.context.url
    except Exception:  # no script run context
        return None
    return url if isinstance(url, str) else None
