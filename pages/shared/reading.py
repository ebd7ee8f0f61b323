"""The reader page's drawing: a stored post's text as escaped HTML, the quoted sentences marked, and
where the chat's citations link to (the post's own page, else the reader page; never the inspector).

Post text is hostile: every character of it is HTML-escaped before it reaches `st.html` (which also
sanitises, and runs no script), so a title or paragraph holding `<img src=x onerror=…>` shows as text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from urllib.parse import urlsplit

import streamlit as st

from core.models import Block
from core.text.fragments import citation_link, reader_link

MARK_CLASS = "inkwell-quote"
# Ours alone (no post text in it): scrolls the first marked sentence into view once the page is drawn.
SCROLL_SCRIPT = (
    "<script>setTimeout(function () { var m = document.querySelector('mark." + MARK_CLASS + "');"
    " if (m) { m.scrollIntoView({block: 'center'}); } }, 300);</script>"
)
_MD_URL_UNSAFE = {
    "(": "%28",
    ")": "%29",
    "<": "%3C",
    ">": "%3E",
    "\\": "%5C",
    " ": "%20",
    "[": "%5B",
    "]": "%5D",
}


def _sentence_pattern(sentence: str) -> re.Pattern[str] | None:
    """The sentence's words in order with any whitespace between them (lines of a list, wrapped text)."""
    words = sentence.split()
    return re.compile(r"\s+".join(map(re.escape, words))) if words else None


def marked_html(text: str, sentences: Sequence[str]) -> tuple[str, int]:
    """`text` HTML-escaped, each occurrence of a sentence in <mark>; and how many were marked."""
    spans: list[tuple[int, int]] = []
    for pattern in filter(None, map(_sentence_pattern, sentences)):
        for match in pattern.finditer(text):
            if not any(s < match.end() and match.start() < e for s, e in spans):
                spans.append((match.start(), match.end()))
    spans.sort()
    parts, at = [], 0
    for start, end in spans:
        parts.append(html.escape(text[at:start]))
        parts.append(f'<mark class="{MARK_CLASS}">{html.escape(text[start:end])}</mark>')
        at = end
    parts.append(html.escape(text[at:]))
    return "".join(parts).replace("\n", "<br>"), len(spans)


def post_html(blocks: Sequence[Block], sentences: Sequence[str]) -> tuple[str, int]:
    """The post's blocks as HTML (headings, paragraphs, lists), the sentences marked; and how many were."""
    out, marked = [], 0
    for block in blocks:
        if block.list_style:  # an item a line, each marked on its own
            tag = "ol" if block.list_style == "ordered" else "ul"
            items = [marked_html(line, sentences) for line in block.text.split("\n")]
            marked += sum(count for _, count in items)
            out.append(f"<{tag}>{''.join(f'<li>{body}</li>' for body, _ in items)}</{tag}>")
            continue
        body, count = marked_html(block.text, sentences)
        marked += count
        out.append(f"<h3>{body}</h3>" if block.heading else f"<p>{body}</p>")
    return "\n".join(out), marked


def draw_post(body: str, marked: int) -> None:
    """Draw a post's HTML (`post_html`), scrolled to its first marked sentence when it has one."""
    st.html(f"<article class='inkwell-post'>{body}</article>")
    if marked:
        st.html(SCROLL_SCRIPT, unsafe_allow_javascript=True)


def web_url(url: str) -> str:
    """`url` when it is an http(s) address, safe inside a Markdown link target; "" otherwise."""
    if not url:
        return ""
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        return ""
    if scheme not in ("http", "https"):
        return ""
    return "".join(_MD_URL_UNSAFE.get(c, c) for c in url)


def cited_link(post_id: str, url: str, sentences: Sequence[str] = ()) -> str:
    """Where a reader's click on a cited post goes (see core/text/fragments.citation_link), ready for a
    Markdown link: the post's own page (at the sentences), else the app's reader page."""
    safe = web_url(url)
    if not safe:
        return reader_link(post_id, sentences)
    return web_url(citation_link(post_id, url, list(sentences)))
