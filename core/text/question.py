"""The one check every reader's question passes before any work is done: not empty, not too long.

    question = check_question(raw, settings.max_question_chars)   # the stripped question, or QuestionError

The chat page and `inkwell ask`/`search`/`route`/`posts --about` call it first, so a 20,000-character
paste is refused with a clear message before it is embedded, searched or sent to a model (where it would
hold up the other readers' answers). Length is counted in characters (code points) after stripping.
"""

from __future__ import annotations


class QuestionError(ValueError):
    """A question that cannot be asked; `str()` is a message for the reader. `kind`: "empty" or "too_long"."""

    def __init__(self, message: str, *, kind: str, length: int = 0, limit: int = 0) -> None:
        super().__init__(message)
        self.kind = kind
        self.length = length
        self.limit = limit


def check_question(question: str | None, max_chars: int) -> str:
    """The question without surrounding whitespace; QuestionError if it is empty or longer than
    `max_chars` characters (0: no limit)."""
    text = (question or "").strip()
    if not text:
        raise QuestionError("The question is empty: please type a question.", kind="empty")
    if max_chars and len(text) > max_chars:
        raise QuestionError(
            f"This question is {len(text):,} characters long, and questions are limited to {max_chars:,}. "
            "Please ask a shorter question.",
            kind="too_long",
            length=len(text),
            limit=max_chars,
        )
    return text
