"""The paragraph strategy: paragraphs merged up to a token target, long ones cut at sentences.

Sizes are tiktoken o200k_base tokens; see core/chunk/chunker.py for the rules.
"""

from __future__ import annotations

import itertools
import math
import re

from core.models import Block
from core.text.sentences import TAG_RE, sentence_spans
from core.text.tokens import SliceCounter, count_tokens, encoding, token_starts

# A last chunk under this share of the target joins the previous one if the result stays under
# TAIL_MAX_RATIO × target.
TAIL_MIN_RATIO = 0.2
TAIL_MAX_RATIO = 1.2
# A word for the last-resort split: non-space runs, where a tag (spaces and all) is part of the word.
# A tag holds no "[": else each unclosed "[REF:" would scan to the end of the text (quadratic).
_ATOM_RE = re.compile(r"(?:\[(?:REF|IMAGE):[^\[\]]*\]|[^\s\[]+|\[)+")


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
        # A token is at least one UTF-8 byte, so a short paragraph needs no count at all.
        counter = SliceCounter(paragraph) if len(paragraph.encode("utf-8")) > target else None
        if counter is None or counter.total <= target:
            units.append(("\n\n", paragraph))
            continue
        spans = _split_long(paragraph, target, counter)
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


def _split_long(paragraph: str, target: int, counter: SliceCounter) -> list[tuple[int, int]]:
    """Cut a paragraph at sentence boundaries into pieces of similar size, each within `target`.

    Linear in the paragraph's length: `counter` encoded it once, and slices are counted exactly only
    near a limit, with the same results as counting every slice (tests/unit/test_chunk.py pins them).
    """
    spans: list[tuple[int, int]] = []
    for a, b in sentence_spans(paragraph):
        if counter.decisive(a, b, target) <= target:
            spans.append((a, b))
        else:
            spans.extend(_word_spans(paragraph, a, b, target, counter))
    return _balanced(paragraph, spans, target, counter)


def _word_spans(text: str, start: int, end: int, target: int, counter: SliceCounter) -> list[tuple[int, int]]:
    """Last resort for a sentence over `target`: cut between words (a tag counts as part of its word)."""
    atoms: list[tuple[int, int]] = []
    for m in _ATOM_RE.finditer(text, start, end):
        a, b = m.span()
        # A word has at most as many tokens as UTF-8 bytes (≤ 4 per character): most need no count.
        if (
            4 * (b - a) > target
            and counter.decisive(a, b, target) > target
            and not TAG_RE.fullmatch(m.group())
        ):
            atoms.extend((a + x, a + y) for x, y in _token_spans(m.group(), target))
        else:
            atoms.append((a, b))
    return _balanced(text, atoms, target, counter)


def _token_spans(word: str, target: int) -> list[tuple[int, int]]:
    """Cut a huge word (a pasted blob, a long URL) into slices of at most `target` tokens."""
    enc = encoding()
    tokens = enc.encode(word, disallowed_special=())
    offsets = token_starts(word)  # character positions, so multi-byte characters stay whole
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


def _balanced(
    text: str, spans: list[tuple[int, int]], target: int, counter: SliceCounter
) -> list[tuple[int, int]]:
    """Pack `spans` into as few pieces as fit, of similar size, so the last one is not a stub."""
    start, end = spans[0][0], spans[-1][1]
    total = counter.total if (start, end) == (0, len(text)) else count_tokens(text[start:end])
    pieces = math.ceil(total / target)
    bounds = counter.bounds(spans)
    while True:
        # Aim each piece at total/pieces; if the spans' sizes make that overflow, allow more pieces.
        packed = _pack_spans(text, spans, target, total / pieces, counter, bounds)
        if len(packed) <= pieces:
            return _within_target(text, spans, packed, target, counter)
        # A smaller aim never packs into fewer pieces, so no count below len(packed) can fit either:
        # try that one next (counting up by one took 18 passes on a 1 MB paragraph).
        pieces = len(packed)


def _pack_spans(
    text: str,
    spans: list[tuple[int, int]],
    target: int,
    soft: float,
    counter: SliceCounter,
    bounds: tuple[list[int], list[int]],
) -> list[tuple[int, int]]:
    """Merge consecutive spans while the covered text stays within `target` and under `soft` so far.

    Pieces are slices of `text`, so the author's spacing and line breaks inside a paragraph survive.
    """
    first_token, end_token = bounds
    slack, exact = counter.SLACK, counter.exact
    out: list[tuple[int, int]] = []
    head = 0  # index of the current piece's first span
    for i, (a, b) in enumerate(spans):
        if out:
            # counter.decisive, inlined: this loop runs once per word of a long one-line text.
            first, last = out[-1]
            size = end_token[i - 1] - first_token[head]
            if -slack <= size - soft <= slack:
                size = exact(first, last)
            if size < soft:
                grown = end_token[i] - first_token[head]
                if -slack <= grown - target <= slack:
                    grown = exact(first, b)
                if grown <= target:
                    out[-1] = (first, b)
                    continue
        out.append((a, b))
        head = i
    return out


def _within_target(
    text: str,
    spans: list[tuple[int, int]],
    packed: list[tuple[int, int]],
    target: int,
    counter: SliceCounter,
) -> list[tuple[int, int]]:
    """The packing, with any piece whose exact count is over `target` (possible only if an estimate
    erred by more than SLACK) packed again greedily with exact counts."""
    out: list[tuple[int, int]] = []
    for first, last in packed:
        if counter.exact(first, last) <= target:
            out.append((first, last))
            continue
        for a, b in (span for span in spans if first <= span[0] and span[1] <= last):
            if out and out[-1][0] >= first and count_tokens(text[out[-1][0] : b]) <= target:
                out[-1] = (out[-1][0], b)
            else:
                out.append((a, b))
    return out
