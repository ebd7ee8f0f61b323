"""Answering from the retrieved excerpts. A reader's question gets one `reply` (reply): the author's
own sentences (extractive, quoting what quotable allows), a generated answer in the author's voice
(generate), or, when nothing retrieved clears the relevance bar (abstain), an honest "I haven't
written about that". Around them: the question made ready for retrieval (question), what of a model's
text the reader sees (release: whole sentences, prompt markup cut out by leaks, strict grounding) and
the check of each sentence against the excerpts (grounding). One turn (turn) takes a question through
all of it: follow-up rewrite, translation, routing, retrieval, the reply.
"""

from __future__ import annotations

from core.answer.abstain import NO_ANSWER_MESSAGE, Verdict, judge
from core.answer.extractive import QUOTE_JOINS, ExtractiveAnswer, Quote, extract_answer, passage_text
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
from core.answer.reply import Reply, reply, resolve_mode
from core.answer.turn import Searched, Turn, search_turn, skipped_note, take_turn

__all__ = [
    "CUT_SHORT_MESSAGE",
    "NOTHING_SUPPORTED_MESSAGE",
    "NO_ANSWER_MESSAGE",
    "NO_HITS_MESSAGE",
    "QUOTE_JOINS",
    "AnswerStream",
    "ExtractiveAnswer",
    "Grounding",
    "GroundingChecker",
    "Quote",
    "Release",
    "Reply",
    "Searched",
    "SentenceSupport",
    "Source",
    "StrictJudge",
    "Turn",
    "Verdict",
    "answer",
    "check_grounding",
    "extract_answer",
    "judge",
    "passage_text",
    "reply",
    "resolve_mode",
    "rewrite_followup",
    "search_turn",
    "skipped_note",
    "strip_leaks",
    "take_turn",
    "translate_for_corpus",
    "translate_to_english",
    "translate_to_language",
]
