"""Answering from the retrieved excerpts: the question made ready for retrieval (question), the
answer in the author's voice (generate) and the check of each sentence against the excerpts (grounding).
"""

from __future__ import annotations

from core.answer.generate import NO_HITS_MESSAGE, AnswerStream, Source, answer
from core.answer.grounding import Grounding, GroundingChecker, check_grounding
from core.answer.question import (
    rewrite_followup,
    translate_for_corpus,
    translate_to_english,
    translate_to_language,
)

__all__ = [
    "NO_HITS_MESSAGE",
    "AnswerStream",
    "Grounding",
    "GroundingChecker",
    "Source",
    "answer",
    "check_grounding",
    "rewrite_followup",
    "translate_for_corpus",
    "translate_to_english",
    "translate_to_language",
]
