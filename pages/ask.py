"""/ask: a link to the chat, which lives at / (Streamlit serves the default page at / only).

The query parameters (the conversation id ?c=) go along.
"""

from __future__ import annotations

import streamlit as st

from pages import shared

shared.through_entry()
st.switch_page("pages/chat.py", query_params=st.query_params.to_dict())
