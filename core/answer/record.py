"""A reply into the question log (core/store/questions.py): one call once the reader has the answer.

    question_id = record(log, answered, question, "chat", seconds)   # None: the log is off (or failed)

The chat, `inkwell ask` and the HTTP API call it the same way. A log that cannot be written (a store
error) never costs the reader their answer: the failure is logged as a warning and None returned.
"""

from __future__ import annotations

import logging

from core.answer.reply import Reply
from core.store import StoreError
from core.store.questions import Asked, QuestionLog
from core.text import detect_language

log = logging.getLogger(__name__)


def asked_of(answered: Reply, question: str, source: str, seconds: float) -> Asked:
    """What the log keeps of a reply: the question as the reader asked it, its language, the mode,
    whether it was declined (nothing retrieved answered it, or nothing generated could be shown), the
    cited posts and the seconds from the question to the whole answer."""
    return Asked(
        question=question,
        language=detect_language(question),
        mode=answered.mode,
        declined=answered.mode == "none" or answered.declined,
        posts=tuple(s.post_id for s in answered.sources) if answered.mode != "none" else (),
        seconds=seconds,
        source=source,
    )


def record(
    questions: QuestionLog,
    answered: Reply,
    question: str,
    source: str,
    seconds: float,
    *,
    replacing: str | None = None,
) -> str | None:
    """Log a consumed reply; returns the new question id, which feedback is recorded against. With
    `replacing` (the id of a logged question this reply answers again, e.g. in other collections), that
    row is revised and its id returned, so the question is counted once (a new row when it is gone)."""
    try:
        asked = asked_of(answered, question, source, seconds)
        if replacing and questions.revise(replacing, asked):
            return replacing
        return questions.add(asked)
    except (StoreError, OSError, RuntimeError) as exc:  # lance raises these for I/O trouble
        log.warning("could not log the question: %s", exc)
        return None
