"""Inkwell: ask an author's writings. Entry point: `streamlit run streamlit_app.py`.

The pages (pages/) are thin layouts over core/; shared Streamlit glue lives in core/app_state.py.
"""

from __future__ import annotations

import os

os.environ.setdefault(
    "OMP_WAIT_POLICY", "PASSIVE"
)  # before llama.cpp/torch load OpenMP (see core/local_llm.py)
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import streamlit as st

from core import app_state
from core.config import ConfigError

st.set_page_config(page_title="Inkwell", page_icon="🖋️", layout="wide")
app_state.keep_advanced_state()

# url_paths differ from the file names on purpose: with a pages/ folder, a page hash equal to a file's
# name can be served as a legacy pages/ script on its own, skipping this entry point (seen in AppTest).
page = st.navigation(
    [
        st.Page("pages/chat.py", title="Ask", icon=":material/chat:", url_path="ask", default=True),
        st.Page("pages/ingest.py", title="Ingest", icon=":material/upload_file:", url_path="posts"),
        st.Page(
            "pages/inspect.py", title="Inspect chunks", icon=":material/manage_search:", url_path="chunks"
        ),
        st.Page("pages/evaluate.py", title="Evaluate", icon=":material/analytics:", url_path="quality"),
    ]
)

try:
    settings = app_state.base_settings()
except ConfigError as exc:
    st.error(f"Inkwell's settings are invalid: {app_state.md_escape(exc)}")
    st.stop()
try:
    app_state.get_store(settings)  # opened once per process; the pages reuse it
except app_state.KNOWN_ERRORS as exc:
    st.error(
        f"Cannot open the data directory {app_state.md_escape(settings.data_dir)}: {app_state.md_escape(exc)}"
    )
    st.stop()

status = st.sidebar.container()
try:
    page.run()
finally:
    with status:
        app_state.sidebar_status(settings)
