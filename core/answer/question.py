"""The question before retrieval: translated into the writings' language, follow-ups made standalone."""

from __future__ import annotations

import re
from typing import Literal

from core.answer.generate import clean_history
from core.config import Settings
from core.llm import chat
from core.store import Store
from core.store.corpus import corpus_language
from core.text.language import LANGUAGE_NAMES, UNDETERMINED, detect_language
from core.text.languages import ENGLISH, language
from core.text.tokens import count_tokens
from core.text.words import LETTER_WORD, STOPWORDS


def looks_english(text: str) -> bool:
    """Whether the text reads as English to the language detector (core.text.language). Misses are
    harmless: an English question it cannot tell just costs one translation call."""
    return detect_language(text) == "en"


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


def translate_for_corpus(question: str, settings: Settings, store: Store | None = None) -> str:
    """The question in the stored writings' main language (kept with the posts table at ingest, for a
    table from before that this machine's record; English when none is). `store`: the table's, when the
    caller has it open."""
    store = store or Store(settings.data_dir)
    return translate_to_language(question, settings, corpus_language(store, settings.local_home) or "en")


REWRITE_PROMPT = (
    "Rewrite the reader's last message as one standalone question that can be understood without the "
    "conversation, resolving words like 'it', 'that' or 'he' from the conversation. Keep the reader's "
    "language. Reply with the rewritten question only."
)


# How a follow-up was searched: joined to the question before it (no model rewrote it), or that question
# again for more of its answer ("tell me more"); "" for a question searched as asked or rewritten.
FollowUp = Literal["", "joined", "more"]

_NOT_WORD = re.compile(r"[^\w'\- ]+")

# With a word pointing back, a follow-up of at most this many content words more is joined ("What did
# that one cost?"); without one, only a question of at most one content word is ("How did he react?"):
# "What is the capital of France?" stands alone, however short.
FOLLOWUP_CONTENT_WORDS = 2


def needs_context(question: str) -> bool:
    """Whether a follow-up question cannot be understood without the previous turn.

    Read with the cues and function words of the question's language (core/text/languages.py). True when
    it starts like a continuation ("And the cost?"), has at most one content word ("Why?", "tell me
    more", "How did he react?"), or points back ("it", "that", "the second", "extra") with at most
    FOLLOWUP_CONTENT_WORDS + 1 content words (FOLLOWUP_CONTENT_WORDS in a language other than English).
    """
    text = " ".join(question.lower().replace("’", "'").split())
    if not text:
        return False
    # The question's own language's cues (every language's when it is too short to tell; none for a
    # language without a record): core/text/languages.py.
    cues = language(detect_language(question))
    if text.startswith(cues.continuations):
        return True
    words = LETTER_WORD.findall(text)
    english = cues.code in (ENGLISH.code, UNDETERMINED)
    # English keeps the hand-kept STOPWORDS content words use (the stop-words package's English list holds
    # topic words: "research", "problem"); a question too short to tell is read as English was.
    stop = STOPWORDS if english else cues.function_words
    content = [w for w in words if w not in stop and w not in cues.question_words and w not in cues.referring]
    if len(content) <= 1:
        return True
    # The package's lists drop more of a question than STOPWORDS (auxiliaries, and articles that also
    # point back: "das Holz"), so elsewhere a pointer joins one content word fewer.
    limit = FOLLOWUP_CONTENT_WORDS + 1 if english else FOLLOWUP_CONTENT_WORDS
    return len(content) <= limit and any(w in cues.referring for w in words)


def asks_for_more(question: str) -> bool:
    """Whether the question only asks for more of the last answer ("Tell me more.", "go on", "weiter"):
    the whole question is one of its language's `more_requests` (every language's when too short to tell)."""
    text = " ".join(_NOT_WORD.sub(" ", question.lower().replace("’", "'")).split())
    return bool(text) and text in language(detect_language(question)).more_requests


def _turns(history: list[dict] | None) -> list[dict]:
    """Every turn of `history` (not only the last few the model sees): "tell me more" four times must
    still find the question it goes on with."""
    return clean_history(history, limit=None)


def _asked_at(turns: list[dict]) -> int:
    """The index of the reader's last question that asked something itself (not "tell me more"); -1."""
    return max(
        (i for i, m in enumerate(turns) if m["role"] == "user" and not asks_for_more(m["content"])),
        default=-1,
    )


def previous_question(history: list[dict] | None) -> str:
    """What the reader's last real question (not "tell me more") was searched as without a model: the
    question, or, when it referred back itself ("How much is in it?"), joined to the real question before
    it, as `followup_query` joined it; ""."""
    turns = _turns(history)
    at = _asked_at(turns)
    if at < 0:
        return ""
    question = turns[at]["content"]
    if needs_context(question) and (before := _asked_at(turns[:at])) >= 0:
        return f"{turns[before]['content'].strip()} {question.strip()}"
    return question


def answers_since_question(history: list[dict] | None) -> list[str]:
    """The answers given since the reader's last question that asked something itself (`previous_question`):
    the last answer, and the ones to "tell me more" after it."""
    turns = _turns(history)
    return [m["content"] for m in turns[_asked_at(turns) + 1 :] if m["role"] == "assistant"]


def joined_followup(question: str, history: list[dict] | None) -> str:
    """`question` after the reader's previous question (what a follow-up is searched for when no model
    rewrites it); the question alone when there is no previous one."""
    turns = _turns(history)
    at = _asked_at(turns)
    previous = turns[at]["content"] if at >= 0 else ""
    return f"{previous.strip()} {question.strip()}" if previous else question


def rewrite_followup(
    question: str, history: list[dict] | None, settings: Settings, *, use_model: bool = True
) -> str:
    """A follow-up question made standalone using the chat history (for retrieval on the chat page):
    `followup_query`'s query."""
    return followup_query(question, history, settings, use_model=use_model)[0]


def followup_query(
    question: str, history: list[dict] | None, settings: Settings, *, use_model: bool = True
) -> tuple[str, FollowUp]:
    """What to search for to answer `question` after `history`, and how it was made from it (`FollowUp`).

    The question is used as asked, with no model call, when there is no history or it stands on its own
    (`needs_context`): gluing a new topic onto the previous question only blurs the search. A follow-up
    that refers back is joined to the previous question with the built-in model (too small to rewrite
    reliably; the joined text is a decent retrieval query) or when `use_model` is False (the model is busy),
    and rewritten by the model otherwise (one LLM call; failures raise LLMError). A request for more
    ("tell me more", `asks_for_more`) is the previous question again, with no model call.
    """
    turns = clean_history(history)  # the model sees the last few; the question is looked for in all
    if asks_for_more(question) and (previous := previous_question(history)):
        return previous, "more"  # more of the last answer: its question, searched again (no model needed)
    if not turns or not question.strip() or not needs_context(question):
        return question, ""
    if settings.uses_builtin_llm or not use_model:
        joined = joined_followup(question, history)
        return joined, "joined" if joined != question else ""
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
    return _clean_reply(reply, question), ""
