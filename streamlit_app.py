"""Inkwell: ask an author's writings. Entry point: `streamlit run streamlit_app.py`.

The pages (pages/) are thin layouts over core/; shared Streamlit glue lives in
pages/shared/.
"""

from __future__ import annotations

import os

os.environ.setdefault(
    "OMP_WAIT_POLICY", "PASSIVE"
)  # before llama.cpp/torch load OpenMP (see core/llm/builtin.py)
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import streamlit as st

from core.config import ConfigError
from pages import shared
from pages.shared.details import details_on, keep_details_state

# Readers' pages: the sidebar names no model or table there unless the owner's details are on.
READER_PAGES = ("", "home", "ask", "read")

st.set_page_config(page_title="Inkwell", page_icon="🖋️", layout="wide")
shared.keep_advanced_state()
keep_details_state()

# The chat is the home page, at /. Streamlit 1.67 serves the default page at "" only (its own url_path
# just has to be unique), so /ask is a hidden page of its own, pages/ask.py, that sends the reader to
# the chat at /, keeping the query parameters (the conversation id). Each page's file is named after its
# link, and each page first calls shared.through_entry(): see pages/shared/entry.py for why.
chat = st.Page("pages/chat.py", title="Ask", icon=":material/chat:", url_path="home", default=True)

page = st.navigation(
    [
        chat,
        st.Page("pages/ask.py", title="Ask", url_path="ask", visibility="hidden"),
        # Where citations of a post without a web address open (pages/read.py); readers' page.
        st.Page("pages/read.py", title="Read", url_path="read", visibility="hidden"),
        st.Page("pages/posts.py", title="Ingest", icon=":material/upload_file:", url_path="posts"),
        st.Page(
            "pages/chunks.py", title="Inspect chunks", icon=":material/manage_search:", url_path="chunks"
        ),
        st.Page("pages/quality.py", title="Evaluate", icon=":material/analytics:", url_path="quality"),
        st.Page("pages/readers.py", title="Readers", icon=":material/forum:", url_path="readers"),
        st.Page("pages/settings.py", title="Settings", icon=":material/tune:", url_path="settings"),
    ]
)

try:
    settings = shared.base_settings()
except ConfigError as exc:
    st.error(f"Inkwell's settings are invalid: {shared.md_escape(exc)}")
    st.stop()
try:
    shared.get_store(settings)  # opened once per process; the pages reuse it
except shared.KNOWN_ERRORS as exc:
    said = str(exc)
    if str(settings.data_dir) not in said:  # the store's own errors name the folder already
        said = f"Cannot open the data directory {settings.data_dir}: {said}"
    st.error(shared.md_escape(said[:1].upper() + said[1:]))
    st.stop()

status = st.sidebar.container()
try:
    page.run()
finally:
    with status:
        shared.sidebar_status(settings, details=details_on() or page.url_path not in READER_PAGES)
