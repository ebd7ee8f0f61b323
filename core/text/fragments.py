"""Links that open a post at a quoted sentence: WICG Text Fragments (`…/post/#:~:text=…`), which
Chromium, Safari and Firefox scroll to and highlight, and the app's own reader page for posts without an
address (`/read?post=<id>&q=<sentence>`).

The spec (https://wicg.github.io/scroll-to-text-fragment/): a text directive is
`text=[prefix-,]start[,end][,-suffix]`; several are joined by `&`; the directives follow `:~:` in the
URL's fragment, after any fragment the page already has (`#intro:~:text=…`). Each text part is
percent-encoded, and `-`, `&` and `,` must be too, since they are the directive's own syntax. Matching
is on whole words, whitespace collapsed, case-insensitive; so a long sentence is given by its first and
last words (`start,end`), which keeps the link short and still marks the whole sentence.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import quote, urlencode

DIRECTIVE = ":~:"
LONG_WORDS = 10  # a sentence of more words is linked as start,end
EDGE_WORDS = 4  # words of each end in the start,end form
MAX_DIRECTIVES = 5  # sentences one link marks one by one (more: one range from the first to the last)
READER_PATH = "read"  # url_path of the reader page (pages/read.py)
MAX_READER_CHARS = 300  # of one sentence in a reader link (the page finds it by its start)
# Sentences one reader link marks: every sentence an answer quotes from a post (a passage of ~100 words,
# a list's lines: 11 in the demo); the bound only keeps a link from growing without end.
MAX_READER_SENTENCES = 40


def encode_part(text: str) -> str:
    """One text part percent-encoded as the spec wants: UTF-8 bytes, everything but letters, digits and
    `_.~` escaped, `-` too (quote() keeps it, but it marks a prefix or suffix)."""
    return quote(text, safe="").replace("-", "%2D")


def text_directive(sentence: str) -> str:
    """`text=…` for one sentence: whole when short, its first and last words when long; "" for none."""
    words = sentence.split()
    if not words:
        return ""
    if len(words) <= LONG_WORDS:
        return "text=" + encode_part(" ".join(words))
    start, end = " ".join(words[:EDGE_WORDS]), " ".join(words[-EDGE_WORDS:])
    return f"text={encode_part(start)},{encode_part(end)}"


def range_directive(first: str, last: str) -> str:
    """`text=start,end` from the first words of `first` to the last words of `last`: one directive that
    marks everything between them, however many sentences that is."""
    start, end = first.split()[:EDGE_WORDS], last.split()[-EDGE_WORDS:]
    return f"text={encode_part(' '.join(start))},{encode_part(' '.join(end))}"


def fragment_link(url: str, sentences: str | Iterable[str]) -> str:
    """`url` opening at the sentences (repeats once), given in reading order: a directive each, or, for
    more than MAX_DIRECTIVES, one directive from the first to the last, so none is left out. Any text
    directive the URL had is replaced, its own fragment kept. `url` unchanged with no sentence; "" without
    a url."""
    if not url:
        return ""
    if isinstance(sentences, str):
        sentences = [sentences]
    listed = list(dict.fromkeys(s for s in sentences if s.split()))
    directives = list(dict.fromkeys(map(text_directive, listed)))
    if len(directives) > MAX_DIRECTIVES:
        directives = [range_directive(listed[0], listed[-1])]
    base, hashed, fragment = url.partition("#")
    fragment = fragment.split(DIRECTIVE, 1)[0] if hashed else ""
    if not directives:
        return f"{base}#{fragment}" if fragment else base
    return f"{base}#{fragment}{DIRECTIVE}{'&'.join(directives)}"


def reader_link(post_id: str, sentences: Iterable[str] = ()) -> str:
    """The app's reader page for a post, marking these sentences, each of them up to
    MAX_READER_SENTENCES (relative: `read?post=…&q=…`). The page has no directive limit, so unlike
    `fragment_link` each sentence keeps its own `q`."""
    quoted = list(dict.fromkeys(" ".join(s.split())[:MAX_READER_CHARS] for s in sentences if s.strip()))
    query = urlencode([("post", post_id), *(("q", s) for s in quoted[:MAX_READER_SENTENCES])])
    return f"{READER_PATH}?{query}"


def citation_link(post_id: str, url: str, sentences: str | Iterable[str] = ()) -> str:
    """Where a reader's click on a cited post goes: the post's own page at the sentences when it has an
    address, else the reader page."""
    listed = [sentences] if isinstance(sentences, str) else list(sentences)
    return fragment_link(url, listed) if url else reader_link(post_id, listed)
