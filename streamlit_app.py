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

st.set_page_config(page_title="Inkwell", page_icon="🖋️", layout="wide")
shared.keep_advanced_state()

# The chat is the home page, at /. Streamlit 1.67 serves the default page at "" only: its own url_path
# just has to be unique, and a link to it (/ask) matched no page and opened "Page not found" over the
# chat (commands/navigation.py matches the browser's path against each page's public `url_path`, which
# is "" for the default page). So /ask is a hidden page of its own that sends the reader to the chat at
# /, keeping the URL's query parameters (the conversation id). The other pages have their own paths.
# url_paths differ from the file names on purpose: with a pages/ folder, a page hash equal to a file's
# name can be served as a legacy pages/ script on its own, skipping this entry point (seen in AppTest).
ASK_PATH = "ask"
chat = st.Page("pages/chat.py", title="Ask", icon=":material/chat:", url_path="home", default=True)


def ask_link() -> None:
    """/ask: the chat, at its home /."""
    st.switch_page(chat, query_params=st.query_params.to_dict())


page = st.navigation(
    [
        chat,
        st.Page(ask_link, title="Ask", url_path=ASK_PATH, visibility="hidden"),
        st.Page("pages/ingest.py", title="Ingest", icon=":material/upload_file:", url_path="posts"),
        st.Page(
            "pages/inspect.py", title="Inspect chunks", icon=":material/manage_search:", url_path="chunks"
        ),
        st.Page("pages/evaluate.py", title="Evaluate", icon=":material/analytics:", url_path="quality"),
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
    st.error(f"Cannot open the data directory {shared.md_escape(settings.data_dir)}: {shared.md_escape(exc)}")
    st.stop()

status = st.sidebar.container()
try:
    page.run()
finally:
    with status:
        shared.sidebar_status(settings)
