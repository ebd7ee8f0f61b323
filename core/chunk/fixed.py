"""The fixed strategy (the seed's): overlapping character windows, cut at whitespace, never in a tag."""

from __future__ import annotations

import bisect
import math
import re

from core.models import Block
from core.text.sentences import TAG_RE

_SPACE_RE = re.compile(r"\s")


def fixed_chunks(text: str, size: int = 1200, overlap: int = 200) -> list[str]:
    """Windows of at most `size` characters; each starts with the last ~`overlap` of the one before."""
    return [text[a:b] for a, b in _fixed_spans(text, size, overlap)]


def _fixed_spans(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    tags = [m.span() for m in TAG_RE.finditer(text)]
    spans: list[tuple[int, int]] = []
    start = _skip_space(text, 0)
    while start < len(text):
        end = _fixed_cut(text, start, size, overlap, tags)
        spans.append((start, _trim_end(text, start, end)))
        if end >= len(text):
            break
        # Begin the next window `overlap` characters back, moved forward to the next word start
        # (and out of any tag) so the shared text is whole words.
        nxt = end - overlap
        if 0 < nxt < end and not text[nxt - 1].isspace():
            space = _SPACE_RE.search(text, nxt, end)
            nxt = space.end() if space else nxt
        tag = _tag_at(tags, nxt)
        if tag:
            nxt = tag[0] if tag[0] > start else tag[1]
        start = _skip_space(text, max(nxt, start + 1))
    return spans


def _fixed_cut(text: str, start: int, size: int, overlap: int, tags: list[tuple[int, int]]) -> int:
    """End of the window that begins at `start`: the last whitespace in its second half, outside tags."""
    hi = start + size
    if hi >= len(text):
        return len(text)
    lo = start + max(size // 2, overlap + 1)
    for pos in range(hi, lo - 1, -1):
        if text[pos].isspace() and not _tag_at(tags, pos):
            return pos
    tag = _tag_at(tags, hi)
    if tag:  # no space to cut at and the hard cut falls in a tag: end before it, or after if it starts here
        return tag[0] if tag[0] > start + overlap else tag[1]
    return hi


def _tag_at(tags: list[tuple[int, int]], pos: int) -> tuple[int, int] | None:
    """The tag span strictly containing `pos` (a cut at its first or after its last char is fine)."""
    i = bisect.bisect_right(tags, (pos, math.inf)) - 1
    return tags[i] if i >= 0 and tags[i][0] < pos < tags[i][1] else None


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _trim_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def fixed_with_sections(blocks: list[Block], size: int, overlap: int) -> list[tuple[str, str]]:
    """Fixed windows over the whole post text (headings included, as the seed did), each labelled with
    the last heading that starts before the window."""
    text = "\n\n".join(b.text for b in blocks)
    heading_at: list[tuple[int, str]] = []
    pos = 0
    for block in blocks:
        if block.heading:
            heading_at.append((pos, block.text.strip()))
        pos += len(block.text) + 2
    starts = [p for p, _ in heading_at]
    out: list[tuple[str, str]] = []
    for a, b in _fixed_spans(text, size, overlap):
        i = bisect.bisect_right(starts, a) - 1
        out.append((heading_at[i][1] if i >= 0 else "", text[a:b]))
    return out
