"""The paragraph strategy: paragraphs merged up to a token target, long ones cut at sentences.

Sizes are tiktoken o200k_base tokens; see core/chunk/chunker.py for the rules.
"""

from __future__ import annotations

import itertools
import math
import re

from core.models import Block
from core.text.sentences import TAG_RE, sentence_spans
from core.text.tokens import count_tokens, encoding

# A last chunk under this share of the target joins the previous one if the result stays under
# TAIL_MAX_RATIO × target.
TAIL_MIN_RATIO = 0.2
TAIL_MAX_RATIO = 1.2
# A word for the last-resort split: non-space runs, where a tag (spaces and all) is part of the word.
_ATOM_RE = re.compile(r"(?:\[(?:REF|IMAGE):[^\]]*\]|[^\s\[]+|\[)+")


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
    for a, b in sentence_spans(paragraph):
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
