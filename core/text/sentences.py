"""Sentence splitting that keeps sentences as exact slices of the text and never cuts an inline tag.

Shared by chunking (long paragraphs are cut at sentence boundaries), LLM rewrites (numbered
sentences), the grounding check and extractive answers (which quote sentences verbatim).
"""

from __future__ import annotations

import re

import simplemma

# Inline tags written by the parsers; chunking keeps them verbatim and never cuts through one. A tag
# holds no "[" (as the parsers' own, core/parse/clean.py): with "[^\]]*" every unclosed "[REF:" scanned
# to the end of the text, quadratic in a long one.
TAG_RE = re.compile(r"\[(?:REF|IMAGE):[^\[\]]*\]")

# simplemma's English splitter knows a few abbreviations (Dr., e.g., U.S., Mr., …); these are others
# common in essays. A "sentence" ending in one of them is glued to the next. Left out on purpose,
# because they end sentences at least as often: "etc.", "no.", "sec.", "co."; but "No." before a
# number is the numero sign ("a Stanley No. 5 jack plane"), glued too (_NUMERO).
_EXTRA_ABBREVIATIONS = frozenset(
    {"approx", "ca", "cf", "ch", "chap", "dept", "eds", "eq", "esp", "fig", "figs", "i.e", "ltd", "mt"}
    | {"op", "pp", "prof", "rev", "sr", "vol", "vols", "viz"}
)
_LAST_WORD_RE = re.compile(r"([\w.]+)\.$")
_NUMERO = re.compile(r"\b(?:No|Nos)\.$")
_STARTS_WITH_DIGIT = re.compile(r"\s*\d")
_TAIL = 40  # longer than any abbreviation; the match must still start at a word start within it


def split_sentences(text: str, lang: str = "en") -> list[str]:
    """Sentences of `text`, as stripped slices of it (inner line breaks kept).

    Uses simplemma's splitter (abbreviations like "Dr.", "e.g.", "U.S.", decimals and initials are
    handled) with tags masked so none is cut, plus a second pass for abbreviations it does not know.
    Known miss: "in the U.S. The next…" stays one sentence.
    """
    return [text[a:b] for a, b in sentence_spans(text, lang)]


def sentence_spans(text: str, lang: str = "en") -> list[tuple[int, int]]:
    # Tags are replaced by same-length placeholders so simplemma cannot split inside them and its
    # sentences map back to the original text by position.
    masked = TAG_RE.sub(lambda m: "[" + "X" * (len(m.group()) - 2) + "]", text)
    spans: list[tuple[int, int]] = []
    pos = 0
    for sentence in simplemma.split_sentences(masked, lang=lang):
        start = masked.find(sentence, pos)
        end = start + len(sentence)
        pos = end
        if spans and _ends_with_abbreviation(masked[spans[-1][0] : spans[-1][1]], sentence):
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def _ends_with_abbreviation(sentence: str, following: str) -> bool:
    # Only the tail: searching a whole long run of word characters for "…\.$" is quadratic.
    tail = sentence[-_TAIL:]
    if _NUMERO.search(tail) and _STARTS_WITH_DIGIT.match(following):
        return True
    match = _LAST_WORD_RE.search(tail)
    return bool(match) and match.group(1).lower() in _EXTRA_ABBREVIATIONS
