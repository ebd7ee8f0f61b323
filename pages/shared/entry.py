"""Every page runs through streamlit_app.py, even on a fresh server's first run.

Streamlit 1.67 decides once per process, at the first session, whether the app is a legacy "pages/
folder" app (runtime/pages_manager.py: `PagesManager.uses_pages_directory` is True when a folder named
pages/ sits beside the entry point). That first script run then serves pages/<name>.py for a link
/<name> on its own, skipping the entry point (its page config, store, navigation and sidebar), and shows
"Page not found" for any other link; `st.navigation` turns the legacy mode off only from the next run.
The pages' files are named after their links (/posts → pages/posts.py) so that first run finds them,
and each page first calls `through_entry()`, which turns the legacy mode off and runs the entry point in
its place, in the same script run (widget values and query string intact; a rerun would lose a button's
click, and AppTest starts every run in legacy mode). The entry point's `st.navigation` resolves the same
link, whose page then runs normally. Renaming pages/ would avoid all this, but the folder name is fixed.
"""

from __future__ import annotations

import runpy

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import get_script_run_ctx


def through_entry() -> None:
    """Run streamlit_app.py instead when Streamlit ran this page on its own (legacy pages/ mode)."""
    ctx = get_script_run_ctx()
    if not PagesManager.uses_pages_directory or ctx is None:
        return
    PagesManager.uses_pages_directory = False
    runpy.run_path(str(ctx.pages_manager.main_script_path), run_name="__main__")
    st.stop()  # the page has run, through the entry point: not a second time on its own
