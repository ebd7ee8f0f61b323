"""Answering from the retrieved excerpts: the question made ready for retrieval (question), the
answer in the author's voice (generate), what of the model's text the reader sees (release: whole
sentences, prompt markup cut out by leaks, strict grounding) and the check of each sentence against the
excerpts (grounding).
"""

from __future__ import annotations

from core.answer.generate import (
    CUT_SHORT_MESSAGE,
    NO_HITS_MESSAGE,
    NOTHING_SUPPORTED_MESSAGE,
    AnswerStream,
    Source,
    answer,
)
from core.answer.grounding import Grounding, GroundingChecker, SentenceSupport, check_grounding
from core.answer.leaks import strip_leaks
from core.answer.question import (
    rewrite_followup,
    translate_for_corpus,
    translate_to_english,
    translate_to_language,
)
from core.answer.release import Release, StrictJudge

__all__ = [
    "CUT_SHORT_MESSAGE",
    "NOTHING_SUPPORTED_MESSAGE",
    "NO_HITS_MESSAGE",
    "AnswerStream",
    "Grounding",
    "GroundingChecker",
    "Release",
    "SentenceSupport",
    "Source",
    "StrictJudge",
    "answer",
    "check_grounding",
    "rewrite_followup",
    "strip_leaks",
    "translate_for_corpus",
    "translate_to_english",
    "translate_to_language",
]
