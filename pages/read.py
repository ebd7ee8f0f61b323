"""/read?post=<id>&q=<sentence>…: a post as readers read it, the quoted sentences highlighted and
scrolled to. Where the chat's citations of a post without a web address link to (hidden from the
navigation; open to readers, like the chat). The drawing lives in pages/shared/reading.py. Its fixed words
("Back to the chat") are in the blog's language (core/text/labels.py).
"""

from __future__ import annotations

import streamlit as st

from core.ingest.rebuild import rebuild_post
from core.models import Block
from core.store.corpus import corpus_language
from core.text.labels import labels
from pages import shared
from pages.shared import reading

shared.through_entry()  # first: a fresh server may run this file on its own (pages/shared/entry.py)

settings = shared.base_settings()
store = shared.get_store(settings)
md = shared.md_escape
# The reader's fixed words ("Back to the chat") in the blog's language, as the chat's before a question.
words = labels(corpus_language(store, settings.local_home))


@st.cache_data(show_spinner=False, max_entries=64)
def post_blocks(post_id: str, content_hash: str, _row: dict) -> list[Block]:
    """The post's cleaned text (parsed again from its stored raw text; its chunks when that cannot be),
    kept per post version."""
    try:
        return rebuild_post(_row).blocks
    except ValueError:
        return chunk_blocks(post_id)


def chunk_blocks(post_id: str) -> list[Block]:
    """The post as its stored chunks say, in order: what answers quote, an owner's chunk edits included."""
    chunks = store.list_chunks(post_id, ["post_id", "idx", "section", "text"])
    return [Block(c["text"]) for c in chunks if c.get("text")]


post_id = st.query_params.get("post", "")
sentences = st.query_params.get_all("q")
try:
    row = store.get_post(post_id) if post_id else None
except shared.KNOWN_ERRORS as exc:
    st.error(f"Cannot read the posts: {md(exc)}")
    st.stop()
if row is None:
    st.set_page_config(page_title=words["post_not_found"])
    st.title(words["post_not_found"])
    st.info(words["post_gone"])
    st.page_link("pages/chat.py", label=words["back_to_chat"], icon=":material/chat:")
    st.stop()

# The tab is named after the post: citations open in new tabs, which would all read "Inkwell".
st.set_page_config(page_title=row.get("title") or post_id)
st.title(md(row.get("title") or post_id))
details = [md(v) for v in (row.get("date"), row.get("collection")) if v]
if details:
    st.caption(" · ".join(details))
if reading.web_url(row.get("url") or ""):
    st.markdown(f"[{words['read_on_blog']}]({reading.web_url(row['url'])})")
body, marked = reading.post_html(post_blocks(post_id, row.get("content_hash") or "", row), sentences)
if sentences and not marked:
    # The owner edited a chunk (Inspect chunks): the quote is in the chunks, not in the post as written.
    body, marked = max(
        (body, marked), reading.post_html(chunk_blocks(post_id), sentences), key=lambda x: x[1]
    )
if sentences and not marked:
    st.caption(words["quote_edited"])
reading.draw_post(body, marked)
st.page_link("pages/chat.py", label=words["back_to_chat"], icon=":material/chat:")
