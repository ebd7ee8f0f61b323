"""Text utilities every stage shares: token counts (tiktoken, vocabularies shipped in data/tiktoken),
language detection, sentence splitting, word stems (stems), function words per language, the check every reader's question
passes (question), and counts worded for people (counts).
"""

from __future__ import annotations

from core.text.counts import plural
from core.text.function_words import function_words
from core.text.language import (
    LANGUAGE_NAMES,
    UNDETERMINED,
    check_reader_languages,
    detect_language,
    language_name,
    languages_differ,
    unknown_languages_problem,
)
from core.text.question import QuestionError, check_question
from core.text.sentences import split_sentences
from core.text.stems import stemmer_for
from core.text.tokens import count_tokens, encoding

__all__ = [
    "LANGUAGE_NAMES",
    "UNDETERMINED",
    "QuestionError",
    "check_question",
    "check_reader_languages",
    "count_tokens",
    "detect_language",
    "encoding",
    "function_words",
    "language_name",
    "languages_differ",
    "plural",
    "split_sentences",
    "stemmer_for",
    "unknown_languages_problem",
]
