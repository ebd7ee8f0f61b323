"""Inkwell's server: the Streamlit app (streamlit_app.py) with the HTTP API and the blog widget beside it,
on one port: `streamlit run server.py` (what `make run` starts).

    /              the chat, and the owner's pages
    /api/ask       POST a question, get the answer (JSON, or server-sent events)
    /api/search    GET the excerpts retrieved for ?q=
    /api/health    GET {"status": "ok", ...}, or 503 saying what is wrong
    /widget.js     the script the author pastes into the blog

`streamlit run streamlit_app.py` still serves the app alone, without the API. The API's handlers are in
core/serve/api.py; they read the same settings as the pages (secrets.toml, then INKWELL_* variables).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before llama.cpp/torch load OpenMP
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import streamlit as st

from core.serve.api import routes
from pages.shared.state import base_settings

app = st.App("streamlit_app.py", routes=routes(base_settings))
