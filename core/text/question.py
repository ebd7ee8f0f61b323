"""The one check every reader's question passes before any work is done: not empty, not too long, no
broken characters.

    question = check_question(raw, settings.max_question_chars)   # the stripped question, or QuestionError

A question of invisible characters only (zero-width spaces, a BOM, NUL) is empty. The chat page, the HTTP
API and `inkwell ask`/`search`/`route`/`posts --about` call it first, so a 20,000-character paste is refused with a clear message before it is embedded, searched or sent to a model (where it would
hold up the other readers' answers). Length is counted as a person sees it: in user-perceived characters
(Unicode grapheme clusters), so an emoji, a flag or a ZWJ family counts as one, like a letter with its
accents. Code points are capped too, at RAW_FACTOR times the limit, so a flood of combining marks (which
draws as a few characters) is refused as well. A lone UTF-16 surrogate (JSON's "\\ud800" decodes to one)
is no character at all: the tokenizer raises on it, and it cannot be written back as UTF-8.
"""

from __future__ import annotations

import regex

from core.text.labels import fill, labels, number

# Room for the code points of what reads as one character: the longest emoji sequences (a kiss with two
# skin tones) take 10, families 5–7, a letter with its accents 2–3. More than this is a flood.
RAW_FACTOR = 8

# A longer paste is measured in code points: counting its clusters would take ~40 ms per 100,000.
COUNTED = 100_000

_GRAPHEME = regex.compile(r"\X")
_SURROGATE = regex.compile(r"[\ud800-\udfff]")
# Something a reader can see: not a separator, control or format character (zero-width space, BOM, NUL).
_VISIBLE = regex.compile(r"[^\p{Z}\p{Cc}\p{Cf}\s]")
# The reader's words (core/text/labels.py) for each refusal: by kind, then by what was counted.
_LABELS = {"empty": "question_empty", "broken": "question_broken", "code_points": "question_flood"}


class QuestionError(ValueError):
    """A question that cannot be asked; `str()` is a message for the reader, in English, and
    `in_language(code)` the same in a reader's language (core/text/labels.py). `kind`: "empty",
    "too_long" or "broken" (an unpaired surrogate); `counted`, for "too_long": "characters" (what a person
    sees) or "code_points" (a flood of combining marks)."""

    def __init__(self, *, kind: str, length: int = 0, limit: int = 0, counted: str = "characters") -> None:
        self.kind = kind
        self.length = length
        self.limit = limit
        self.counted = counted
        super().__init__(self.in_language("en"))

    def in_language(self, code: str | None) -> str:
        """The message in language `code`'s words, numbers written as that language writes them
        (English's for a language without a set)."""
        key = _LABELS.get(self.kind) or _LABELS.get(self.counted, "question_too_long")
        return fill(labels(code)[key], length=number(self.length, code), limit=number(self.limit, code))


def perceived_length(text: str) -> int:
    """How many characters a person sees in `text`: its extended grapheme clusters (Unicode UAX #29)."""
    return sum(1 for _ in _GRAPHEME.finditer(text))


def has_surrogates(text: str) -> bool:
    """Whether `text` holds a UTF-16 surrogate code point: in a Python string always an unpaired one (a
    pair decodes to the one character it encodes)."""
    return _SURROGATE.search(text) is not None


def check_question(question: str | None, max_chars: int) -> str:
    """The question without surrounding whitespace; QuestionError if it is empty, holds an unpaired
    surrogate, is longer than `max_chars` user-perceived characters, or is made of more than RAW_FACTOR ×
    `max_chars` code points (0: no limit)."""
    text = (question or "").strip()
    if not _VISIBLE.search(text):  # "", or only invisible characters: a zero-width space, a BOM, NUL
        raise QuestionError(kind="empty")
    if has_surrogates(text):
        raise QuestionError(kind="broken")
    if not max_chars:
        return text
    raw_limit = RAW_FACTOR * max_chars
    # A paste too long whatever it draws as is not worth counting in clusters.
    length = perceived_length(text) if len(text) <= max(raw_limit, COUNTED) else len(text)
    if length > max_chars:
        raise QuestionError(kind="too_long", length=length, limit=max_chars)
    if len(text) > raw_limit:
        raise QuestionError(kind="too_long", length=len(text), limit=raw_limit, counted="code_points")
    return text
