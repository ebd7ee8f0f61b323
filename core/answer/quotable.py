"""Which of a chunk's sentences an extractive answer can quote, and the words they are scored on.

    sentence_units(chunk_text)  # [(offset, sentence)], each a verbatim slice of the text
    readable(sentence)          # long enough and ending like a sentence: a reader can take it alone
    lends_back(sentence)        # too short to stand alone, yet says something: scored with the one before
    content_words(text)         # lemmas that carry meaning (core/text/words.py, re-exported here)

core/answer/extractive.py scores and picks among these; core/answer/abstain.py reads the same words.
"""

from __future__ import annotations

import re

from core.text.sentences import TAG_RE, split_sentences
from core.text.words import (
    LIST_MARKER,
    MAX_SENTENCE_WORDS,
    MIN_SENTENCE_CONTENT_WORDS,
    MIN_SENTENCE_WORDS,
    content_words,
)

_SENTENCE_END = re.compile(r"""[.!?…]["'”’)\]]*$""")


def sentence_units(text: str) -> list[tuple[int, str]]:
    """(offset, sentence) for every sentence of `text`, each a verbatim slice of it.

    Lines are split first: chunk text keeps list items and "Height: 30 inches." spec lines one per
    line, without end punctuation between some of them, which the sentence splitter would run
    together. A leading list marker is left out (the rest is still a slice), [REF: …]/[IMAGE: …]
    tags are cut out (the text on either side of a tag becomes its own piece), and a quotation of
    several sentences stays in one unit, so no answer quotes half of what someone said.
    """
    units: list[tuple[int, str]] = []
    offset = 0
    for line in text.split("\n"):
        pos = 0
        spans: list[tuple[int, str]] = []
        for sentence in split_sentences(line):
            at = line.find(sentence, pos)
            pos = at + len(sentence)
            if spans and _open_quote(spans[-1][1]):
                # Inside a quotation the splitter cuts at each full stop ('he said, "Yes.' | 'But buy
                # extra."'): the sentences of one quotation stay one unit, up to MAX_SENTENCE_WORDS.
                joined = line[spans[-1][0] : pos]
                if len(joined.split()) <= MAX_SENTENCE_WORDS:
                    spans[-1] = (spans[-1][0], joined)
                    continue
            spans.append((at, sentence))
        for at, sentence in spans:
            units.extend((offset + start, piece) for start, piece in _pieces(at, sentence))
        offset += len(line) + 1
    return units


def _open_quote(text: str) -> bool:
    """Whether a quotation opened in `text` is still open at its end (straight or curly quotes)."""
    return text.count('"') % 2 == 1 or text.count("“") > text.count("”")


def _pieces(at: int, sentence: str) -> list[tuple[int, str]]:
    """The sentence's text around any tags, each piece stripped and without a leading list marker."""
    bounds = [0]
    for match in TAG_RE.finditer(sentence):
        bounds += [match.start(), match.end()]
    bounds.append(len(sentence))
    out = []
    for start, end in zip(bounds[::2], bounds[1::2], strict=True):
        piece = sentence[start:end]
        stripped = piece.strip()
        if not stripped:
            continue
        start += piece.find(stripped)
        marker = LIST_MARKER.match(stripped)
        if marker:
            start, stripped = start + marker.end(), stripped[marker.end() :]
        if stripped:
            out.append((at + start, stripped))
    return out


def readable(sentence: str) -> bool:
    """Whether a reader can take the sentence alone: long enough, and ending like a sentence (not a
    heading, a date line, a "The dimensions:" lead-in or a "Filed under" footer)."""
    words = len(sentence.split())
    if not MIN_SENTENCE_WORDS <= words <= MAX_SENTENCE_WORDS or not _SENTENCE_END.search(sentence):
        return False
    return len(content_words(sentence)) >= MIN_SENTENCE_CONTENT_WORDS


def lends_back(sentence: str) -> bool:
    """Whether a sentence too short to stand alone still says something ("My favorite indoor wood.",
    "Excellent for chairs."): it is not quoted by itself, but its closeness to a question counts for
    the sentence before it on its line, with which it is read."""
    words = len(sentence.split())
    return (
        words < MIN_SENTENCE_WORDS
        and bool(_SENTENCE_END.search(sentence))
        and len(content_words(sentence)) >= MIN_SENTENCE_CONTENT_WORDS
    )


def share(asked: set[str], words: set[str]) -> float:
    """The share of the asked words that `words` holds (0.0 when nothing was asked)."""
    return len(asked & words) / len(asked) if asked else 0.0
