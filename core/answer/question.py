"""The question before retrieval: translated into the writings' language, follow-ups made standalone."""

from __future__ import annotations

import re

from core.answer.generate import clean_history
from core.chunk import STOPWORDS
from core.config import Settings
from core.llm import chat
from core.llm.cache import corpus_language
from core.text.language import LANGUAGE_NAMES, detect_language
from core.text.tokens import count_tokens

# Words that are common in English questions and rare as words of other languages written in ASCII
# (so not "a", "i", "in", "is", "me", "so", "to", "do", "for", "of", "has", "was", "will", "die", "best").
_ENGLISH_WORDS = frozenset(
    re.findall(
        r"\S+",
        """the what how why when where who whom which whose does did you your yours are about have had think
        and with this that these those there their they would could should can't don't doesn't it's i'm
        from tell ever been being write wrote written writing favorite favourite any some much many
        anything something really opinion advice""",
    )
)
_WORD = re.compile(r"[a-z']+")
_WORD_ANY = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_TYPOGRAPHY = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "—": "-", "–": "-", "…": "."})


def looks_english(text: str) -> bool:
    """Cheap heuristic: ASCII-only (after normalising typographic quotes/dashes) and containing at least
    one common English word that is rarely a word in other languages. Misses are harmless: a question
    that is English but fails the test just costs one translation call."""
    normal = text.translate(_TYPOGRAPHY)
    if not normal.isascii():
        return False
    return any(word in _ENGLISH_WORDS for word in _WORD.findall(normal.lower()))


TRANSLATE_PROMPT = (
    "Translate the user's message into English. Reply with the translation only: no quotes, no notes, "
    "no answer to the question. If it is already English, repeat it unchanged."
)


def _clean_reply(reply: str, fallback: str) -> str:
    text = reply.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'“”«»":
        text = text[1:-1].strip()
    text = re.sub(r"^(?:translation|standalone question|question)\s*:\s*", "", text, flags=re.IGNORECASE)
    return text or fallback


def translate_to_english(question: str, settings: Settings) -> str:
    """The question in English, for retrieval (used when `settings.should_translate`).

    Skips the model call (returns the question unchanged) when `looks_english` says it already is.
    An LLM failure raises LLMError; the caller may fall back to the original question.
    """
    if not question.strip() or looks_english(question):
        return question
    reply = chat(
        settings,
        [{"role": "system", "content": TRANSLATE_PROMPT}, {"role": "user", "content": question}],
        temperature=0,
        max_tokens=min(settings.max_tokens, 2 * count_tokens(question) + 64),
    )
    return _clean_reply(reply, question)


TRANSLATE_TO_PROMPT = (
    "Translate the user's message into {language}. Reply with the translation only: no quotes, no notes, "
    "no answer to the question. If it is already in {language}, repeat it unchanged."
)


def translate_to_language(question: str, settings: Settings, lang: str) -> str:
    """The question in language `lang` (ISO 639-1), for retrieval over writings in that language.

    No model call when the question already is in it (English: `looks_english`, others:
    `core.text.language.detect_language`), nor for an unknown target. LLM failures raise LLMError.
    """
    if lang == "en":
        return translate_to_english(question, settings)
    if not question.strip() or lang not in LANGUAGE_NAMES or detect_language(question) == lang:
        return question
    prompt = TRANSLATE_TO_PROMPT.format(language=LANGUAGE_NAMES[lang])
    reply = chat(
        settings,
        [{"role": "system", "content": prompt}, {"role": "user", "content": question}],
        temperature=0,
        max_tokens=min(settings.max_tokens, 3 * count_tokens(question) + 64),
    )
    return _clean_reply(reply, question)


def translate_for_corpus(question: str, settings: Settings) -> str:
    """The question in the stored writings' main language (recorded at ingest; English when none is)."""
    return translate_to_language(question, settings, corpus_language(settings.local_home) or "en")


REWRITE_PROMPT = (
    "Rewrite the reader's last message as one standalone question that can be understood without the "
    "conversation, resolving words like 'it', 'that' or 'he' from the conversation. Keep the reader's "
    "language. Reply with the rewritten question only."
)


# Words that point back into the conversation ("it", "that one", "the second"), per language. Personal
# pronouns ("she", "he", "his") are left out on purpose: readers use them for the author in questions
# that stand alone ("Why did she start the blog?").
_REFERRING = frozenset(
    re.findall(
        r"\S+",
        """it its it's that this these those them they their theirs such same other others former latter
        second third more extra else also again then
        es das dies diese dieser dieses dazu davon damit darüber ihn ihm ihr ihnen
        ça cela ceci celui celle ceux celles lui leur leurs en y aussi encore
        bu şu o onu ona onun bunu bunun şunu onlar onları ayrıca""",
    )
)
# A follow-up opening like these continues the previous question ("And the cost?", "What about X?").
_CONTINUATIONS = ("and ", "but ", "so ", "also ", "what about", "how about", "und ", "et ", "ve ", "peki")
# Question words and auxiliaries: not content, but missing from the keyword stopwords.
_QUESTION_WORDS = frozenset(
    [
        "what",
        "why",
        "how",
        "when",
        "where",
        "who",
        "whom",
        "which",
        "whose",
        "does",
        "did",
        "do",
        "is",
        "are",
        "was",
        "were",
    ]
)
# With a word pointing back, a follow-up of at most this many content words more is joined ("What did
# that one cost?"); without one, only a question of at most one content word is ("How did he react?"):
# "What is the capital of France?" stands alone, however short.
FOLLOWUP_CONTENT_WORDS = 2


def needs_context(question: str) -> bool:
    """Whether a follow-up question cannot be understood without the previous turn.

    True when it starts like a continuation ("And the cost?"), has at most one content word ("Why?",
    "tell me more", "How did he react?"), or points back ("it", "that", "the second", "extra") with at
    most FOLLOWUP_CONTENT_WORDS + 1 content words. Measured on data/demo/eval/followups.jsonl
    (bench/followups.py).
    """
    text = " ".join(question.lower().replace("’", "'").split())
    if not text:
        return False
    if text.startswith(_CONTINUATIONS):
        return True
    words = _WORD_ANY.findall(text)
    content = [w for w in words if w not in STOPWORDS and w not in _QUESTION_WORDS and w not in _REFERRING]
    if len(content) <= 1:
        return True
    return len(content) <= FOLLOWUP_CONTENT_WORDS + 1 and any(w in _REFERRING for w in words)


def rewrite_followup(
    question: str, history: list[dict] | None, settings: Settings, *, use_model: bool = True
) -> str:
    """A follow-up question made standalone using the chat history (for retrieval on the chat page).

    The question is used as asked, with no model call, when there is no history or it stands on its own
    (`needs_context`): gluing a new topic onto the previous question only blurs the search. A follow-up
    that refers back is joined to the previous question with the built-in model (too small to rewrite
    reliably; the joined text is a decent retrieval query) or when `use_model` is False (the model is busy),
    and rewritten by the model otherwise (one LLM call; failures raise LLMError).
    """
    turns = clean_history(history)
    if not turns or not question.strip() or not needs_context(question):
        return question
    if settings.uses_builtin_llm or not use_model:
        previous = [m["content"] for m in turns if m["role"] == "user"]
        return f"{previous[-1].strip()} {question.strip()}" if previous else question
    transcript = "\n".join(
        f"{'Reader' if m['role'] == 'user' else 'Author'}: {m['content'].strip()}" for m in turns
    )
    reply = chat(
        settings,
        [
            {"role": "system", "content": REWRITE_PROMPT},
            {"role": "user", "content": f"Conversation:\n{transcript}\n\nReader's last message: {question}"},
        ],
        temperature=0,
        max_tokens=min(settings.max_tokens, 200),
    )
    return _clean_reply(reply, question)
