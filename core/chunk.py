"""Cut posts into chunks for embedding and retrieval.

Two strategies (settings.chunk_strategy):

* "paragraph" (default): sizes are counted in tiktoken o200k_base tokens. Consecutive paragraphs are
  merged while the chunk stays within settings.chunk_tokens. A paragraph longer than that is cut at
  sentence boundaries into pieces of similar size, each within the target; a single sentence longer
  than the target is cut between words (and a word longer than the target between tokens). Headings
  are not chunk text: each one becomes the `section` of the chunks after it and always starts a new
  chunk. A section's last chunk is folded into the one before when it is under 20% of the target and
  the two together stay within 120% of it, so answers do not cite stubs; that merge is the only way
  a chunk exceeds the target (apart from a single `[REF: …]`/`[IMAGE: …]` tag longer than the
  target, which is never cut).
* "fixed": the seed's strategy, windows of settings.fixed_chars characters overlapping by
  settings.fixed_overlap, cut at whitespace when possible and never inside a tag.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re

import simplemma

from core.config import Settings
from core.models import Block, Chunk, Post
from core.tokens import count_tokens, encoding

# Inline tags written by the parsers; chunking keeps them verbatim and never cuts through one.
TAG_RE = re.compile(r"\[(?:REF|IMAGE):[^\]]*\]")

# A last chunk under this share of the target joins the previous one if the result stays under
# TAIL_MAX_RATIO × target.
TAIL_MIN_RATIO = 0.2
TAIL_MAX_RATIO = 1.2

# simplemma's English splitter knows a few abbreviations (Dr., e.g., U.S., Mr., …); these are others
# common in essays. A "sentence" ending in one of them is glued to the next. Left out on purpose,
# because they end sentences at least as often: "etc.", "no.", "sec.", "co.".
_EXTRA_ABBREVIATIONS = frozenset(
    {"approx", "ca", "cf", "ch", "chap", "dept", "eds", "eq", "esp", "fig", "figs", "i.e", "ltd", "mt"}
    | {"op", "pp", "prof", "rev", "sr", "vol", "vols", "viz"}
)
_LAST_WORD_RE = re.compile(r"([\w.]+)\.$")
_SPACE_RE = re.compile(r"\s")
# A word for the last-resort split: non-space runs, where a tag (spaces and all) is part of the word.
_ATOM_RE = re.compile(r"(?:\[(?:REF|IMAGE):[^\]]*\]|[^\s\[]+|\[)+")


def chunk_post(post: Post, settings: Settings) -> list[Chunk]:
    """Chunks of one post: the imported ones as they are, else cut by settings.chunk_strategy."""
    if post.prechunked is not None:
        return [
            Chunk(
                chunk_id=pre.chunk_id or _chunk_id(post.post_id, i),
                post_id=post.post_id,
                index=i,
                text=pre.text,
                section=pre.section,
                tokens=count_tokens(pre.text),
                keywords=list(pre.keywords),
            )
            for i, pre in enumerate(post.prechunked)
        ]
    if settings.chunk_strategy == "fixed":
        pieces = _fixed_with_sections(post.blocks, settings.fixed_chars, settings.fixed_overlap)
    else:
        pieces = paragraph_chunks(post.blocks, settings.chunk_tokens)
    return [
        Chunk(
            chunk_id=_chunk_id(post.post_id, i),
            post_id=post.post_id,
            index=i,
            text=text,
            section=section,
            tokens=count_tokens(text),
        )
        for i, (section, text) in enumerate(pieces)
    ]


def _chunk_id(post_id: str, index: int) -> str:
    return f"{post_id}#{index:04d}"


# Paragraph strategy --------------------------------------------------------------------------------


def paragraph_chunks(blocks: list[Block], target_tokens: int = 300) -> list[tuple[str, str]]:
    """(section, text) pairs: paragraphs merged up to `target_tokens`, never across a heading."""
    chunks: list[tuple[str, str]] = []
    section = ""
    paragraphs: list[str] = []
    for block in blocks:
        if block.heading:
            chunks.extend((section, text) for text in _pack_section(paragraphs, target_tokens))
            section, paragraphs = block.text.strip(), []
        elif block.text.strip():
            paragraphs.append(block.text.strip())
    chunks.extend((section, text) for text in _pack_section(paragraphs, target_tokens))
    return chunks


def _pack_section(paragraphs: list[str], target: int) -> list[str]:
    """Greedy packing of one section's paragraphs (long ones pre-split), then the small-tail merge."""
    # Each unit carries the text that joins it to the unit before: a paragraph break, or the
    # original spacing when both are pieces of one split paragraph.
    units: list[tuple[str, str]] = []
    for paragraph in paragraphs:
        if count_tokens(paragraph) <= target:
            units.append(("\n\n", paragraph))
            continue
        spans = _split_long(paragraph, target)
        units.append(("\n\n", paragraph[spans[0][0] : spans[0][1]]))
        units.extend((paragraph[b:c], paragraph[c:d]) for (_, b), (c, d) in itertools.pairwise(spans))
    chunks: list[tuple[str, str]] = []  # (joiner to the previous chunk, text)
    for sep, unit in units:
        if chunks and count_tokens(chunks[-1][1] + sep + unit) <= target:
            chunks[-1] = (chunks[-1][0], chunks[-1][1] + sep + unit)
        else:
            chunks.append((sep, unit))
    if len(chunks) >= 2 and count_tokens(chunks[-1][1]) < TAIL_MIN_RATIO * target:
        merged = chunks[-2][1] + chunks[-1][0] + chunks[-1][1]
        if count_tokens(merged) <= TAIL_MAX_RATIO * target:
            chunks[-2:] = [(chunks[-2][0], merged)]
    return [text for _, text in chunks]


def _split_long(paragraph: str, target: int) -> list[tuple[int, int]]:
    """Cut a paragraph at sentence boundaries into pieces of similar size, each within `target`."""
    spans: list[tuple[int, int]] = []
    for a, b in _sentence_spans(paragraph):
        if count_tokens(paragraph[a:b]) <= target:
            spans.append((a, b))
        else:
            spans.extend(_word_spans(paragraph, a, b, target))
    return _balanced(paragraph, spans, target)


def _word_spans(text: str, start: int, end: int, target: int) -> list[tuple[int, int]]:
    """Last resort for a sentence over `target`: cut between words (a tag counts as part of its word)."""
    atoms: list[tuple[int, int]] = []
    for m in _ATOM_RE.finditer(text, start, end):
        if count_tokens(m.group()) > target and not TAG_RE.fullmatch(m.group()):
            atoms.extend((m.start() + a, m.start() + b) for a, b in _token_spans(m.group(), target))
        else:
            atoms.append(m.span())
    return _balanced(text, atoms, target)


def _token_spans(word: str, target: int) -> list[tuple[int, int]]:
    """Cut a huge word (a pasted blob, a long URL) into slices of at most `target` tokens."""
    enc = encoding()
    tokens = enc.encode(word, disallowed_special=())
    # decode_with_offsets maps tokens to character positions, so multi-byte characters stay whole.
    _, offsets = enc.decode_with_offsets(tokens)
    offsets.append(len(word))
    step = math.ceil(len(tokens) / math.ceil(len(tokens) / target))  # equal slices, no stub at the end
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(tokens):
        n = min(step, len(tokens) - i)
        # A slice can re-encode into more tokens than it was cut from; shrink until it fits.
        while n > 1 and count_tokens(word[offsets[i] : offsets[i + n]]) > target:
            n = n * 9 // 10
        if offsets[i] < offsets[i + n]:
            spans.append((offsets[i], offsets[i + n]))
        i += n
    return spans


def _balanced(text: str, spans: list[tuple[int, int]], target: int) -> list[tuple[int, int]]:
    """Pack `spans` into as few pieces as fit, of similar size, so the last one is not a stub."""
    total = count_tokens(text[spans[0][0] : spans[-1][1]])
    pieces = math.ceil(total / target)
    while True:
        # Aim each piece at total/pieces; if the spans' sizes make that overflow, allow one more piece.
        packed = _pack_spans(text, spans, target, total / pieces)
        if len(packed) <= pieces:
            return packed
        pieces += 1


def _pack_spans(text: str, spans: list[tuple[int, int]], target: int, soft: float) -> list[tuple[int, int]]:
    """Merge consecutive spans while the covered text stays within `target` and under `soft` so far.

    Pieces are slices of `text`, so the author's spacing and line breaks inside a paragraph survive.
    """
    out: list[tuple[int, int]] = []
    for a, b in spans:
        if out:
            first, last = out[-1]
            if count_tokens(text[first:last]) < soft and count_tokens(text[first:b]) <= target:
                out[-1] = (first, b)
                continue
        out.append((a, b))
    return out


# Sentences -----------------------------------------------------------------------------------------


def split_sentences(text: str, lang: str = "en") -> list[str]:
    """Sentences of `text`, as stripped slices of it (inner line breaks kept).

    Uses simplemma's splitter (abbreviations like "Dr.", "e.g.", "U.S.", decimals and initials are
    handled) with tags masked so none is cut, plus a second pass for abbreviations it does not know.
    Known miss: "in the U.S. The next…" stays one sentence.
    """
    return [text[a:b] for a, b in _sentence_spans(text, lang)]


def _sentence_spans(text: str, lang: str = "en") -> list[tuple[int, int]]:
    # Tags are replaced by same-length placeholders so simplemma cannot split inside them and its
    # sentences map back to the original text by position.
    masked = TAG_RE.sub(lambda m: "[" + "X" * (len(m.group()) - 2) + "]", text)
    spans: list[tuple[int, int]] = []
    pos = 0
    for sentence in simplemma.split_sentences(masked, lang=lang):
        start = masked.find(sentence, pos)
        end = start + len(sentence)
        pos = end
        if spans and _ends_with_abbreviation(masked[spans[-1][0] : spans[-1][1]]):
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def _ends_with_abbreviation(sentence: str) -> bool:
    match = _LAST_WORD_RE.search(sentence)
    return bool(match) and match.group(1).lower() in _EXTRA_ABBREVIATIONS


# Fixed strategy ------------------------------------------------------------------------------------


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


def _fixed_with_sections(blocks: list[Block], size: int, overlap: int) -> list[tuple[str, str]]:
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
