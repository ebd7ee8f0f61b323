"""The no-answer gate: does anything retrieved clear the bar for an answer?

    answer = extract_answer(question, hits, embedder)       # core/answer/extractive.py
    verdict = judge(question, hits, answer)
    if not verdict.answer: reply NO_ANSWER_MESSAGE and list verdict.suggestions (closest posts)

Retrieval always returns something, and its relevance is normalised per question (the top hit is
often 1.0 whatever was asked), so it cannot tell an answerable question from an off-topic one. The
gate uses absolute signals instead:

- similarity: the best cosine, on the model's relevance scale, between the question and any
  candidate sentence of the hits (computed by extract_answer anyway). Same figure in every retrieval
  mode, since it does not come from the search's scores.
- missing words: the question's content words (lemmas; in a language other than English also without
  its function and question words and elided articles: `asked_words`) that no retrieved passage contains (its text,
  title, section or keywords) in any form: a question in the posts' language also finds its words by
  Snowball stem ("differently" in "different", core/text/stems.py) and as the end of a longer word
  ("stove" in "woodstove"). An off-topic question that lands near the posts ("What table saw blade
  do you recommend for cutting plywood?") usually names a thing the author never wrote about.
  A missing word still counts as found when a word of the passages is near it by meaning: its cosine
  with the table's model, each word embedded alone, is at least the profile's `word_match`
  (core/answer/near_words.py: "colour" is found in "color", "reject" in "refuse"; "chickens" and
  "pocket screws" are not found in a woodworking blog). Asked in other words, an answerable question
  keeps its words; a near-miss off-topic one still misses the thing it names.
- unknown names: capitalised words inside an English question ("Stephen King") that no passage
  contains: the question is about someone or something else.

A question is answered when its similarity clears `similarity` with at most `max_missing_close` of its
content words missing, or clears the lower `supported` bar with at most `max_missing` of them missing; never with an unknown name, nor without a
content word ("?", "🦆") or a sentence to quote. A question in another language than the posts
(core.text.detect_language on both) cannot be checked word by word, so only its similarity counts,
against `cross_language`. For an English-only embedder (MiniLM) that similarity is noise (translated
questions and foreign off-topic ones both score 0.1–0.3), so such a question also needs one word shared
with the passages (a name or a loanword: "Instagram", "table", "Hand"; not a number, nor a function word
of the question's language that English also has, like German "die": core/text/function_words.py).
Whether a model reads across languages is its profile's `cross_lingual`.

The thresholds are the embedding model's profile's `bar` (core/profiles; a model without a profile
gets the default one), moved to the table's floor when the profile says so (core/search/floor.py: the
turn passes `judge` that bar), written by `inkwell calibrate` (core/evaluate/calibrate.py) from a set of
answerable questions and one of off-topic questions: at most 3% of the answerable ones declined, then as
many off-topic ones as can be, the middle of the bars that tie. The profile's `calibration` record holds
the sets and figures; docs/models.md the method, docs/decisions.md its history. A reader who asks in
words the author never used, and whose question lands below `similarity`, is refused: that is the
trade-off.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from core.answer.extractive import ExtractiveAnswer
from core.answer.grounding import excerpts_language
from core.answer.near_words import nearest_words
from core.embed import Embedder
from core.models import Hit
from core.profiles import Bar, profile_for
from core.text import UNDETERMINED, detect_language, function_words, languages_differ, stemmer_for
from core.text.languages import ENGLISH, language
from core.text.words import (
    MIN_WORD_CHARS,
    WORD,
    content_words,
    is_known_word,
    names,
    without_elision,
)

NO_ANSWER_MESSAGE = ENGLISH.no_answer
SUGGESTIONS = 3
# Hits whose text the word checks read (the same as extract_answer's candidates).
CHECKED_HITS = 10


# The bar's thresholds: the embedding model's profile's `bar` (core/profiles).
Thresholds = Bar

# A question word found only as the end of a longer passage word (its head: "stove" in "woodstove")
# needs this many letters, and what comes before it must be a word of at least MIN_MODIFIER_CHARS
# ("wood"), so "war" is not found in "postwar" nor "king" in "woodworking".
MIN_HEAD_CHARS = 4
MIN_MODIFIER_CHARS = 3


@dataclass
class Suggestion:
    post_id: str
    title: str
    relevance: float
    url: str = ""  # the post's address on the blog ("" when unknown)

    def to_json(self) -> dict:
        return {
            "post_id": self.post_id,
            "title": self.title,
            "relevance": round(self.relevance, 6),
            "url": self.url,
        }


@dataclass
class Verdict:
    answer: bool
    reason: str  # why, in a few words (for logs and the inspector, not for the reader)
    similarity: float = 0.0
    missing: list[str] = field(default_factory=list)  # question words no retrieved passage contains
    unknown_names: list[str] = field(default_factory=list)
    suggestions: list[Suggestion] = field(default_factory=list)  # closest posts, best first

    def to_json(self) -> dict:
        return {
            "answer": self.answer,
            "reason": self.reason,
            "similarity": round(self.similarity, 4),
            "missing": list(self.missing),
            "unknown_names": list(self.unknown_names),
            "suggestions": [s.to_json() for s in self.suggestions],
        }


def thresholds_for(model_id: str) -> Thresholds:
    """The bar of the model's profile (a model without one gets the default profile's)."""
    return profile_for(model_id).bar


@dataclass
class Signals:
    """What the gate decides on, for one question and its hits."""

    model_id: str
    similarity: float  # best candidate sentence's similarity to the question (relevance scale)
    quotable: bool  # the hits hold a sentence that can be quoted
    asked: int  # the question's content words
    missing: list[str]  # those no checked passage contains
    shared: list[str]  # in a question in another language: words the passages share with it by meaning
    unknown_names: list[str]  # names in an English question that no checked passage contains
    other_language: bool  # the question's language is known and not the passages'
    # each missing word's best cosine with a passage word (core/answer/near_words.py); {}: not measured
    near: dict[str, float] = field(default_factory=dict)

    def missing_under(self, limits: Thresholds) -> list[str]:
        """The missing words that no passage word comes within `limits.word_match` of."""
        return [w for w in self.missing if self.near.get(w, -1.0) < limits.word_match]


def signals(
    question: str, hits: Sequence[Hit], answer: ExtractiveAnswer, embedder: Embedder | None = None
) -> Signals:
    """The gate's signals; with `embedder` (the table's), also how near each missing word comes to a
    passage word (`near`), which the bar's `word_match` reads. Without it only words as written count."""
    checked = hits[:CHECKED_HITS]
    question_lang = detect_language(question)
    asked = asked_words(question, question_lang)
    posts_lang = excerpts_language(checked)
    known: set[str] = set()
    passages = [" ".join((hit.title, hit.section, hit.text, " ".join(hit.keywords))) for hit in checked]
    for text in passages:
        words = content_words(text)
        known |= words | {without_elision(w) for w in words}  # "l'hydratation" holds "hydratation"
    other_language = languages_differ(question_lang, posts_lang)
    missing = asked - known
    if missing and not other_language:  # across languages, shared word forms mean little
        missing = _unmatched(missing, passages, posts_lang)
    shared = []
    if other_language:
        # Not a number ("2018" in a question about the 2018 World Cup) nor a function word of the
        # question's language that is also an English word (German "die", French "comment").
        noise = function_words(question_lang)
        shared = sorted(w for w in asked - missing if not w.isdigit() and w not in noise)
    near = {}
    if missing and not other_language and embedder is not None:
        near = near_missing(sorted(missing), checked, embedder)
    found = set()
    if question_lang == "en":  # German capitalises every noun; other languages' names are unchecked
        found = {n for n in names(question) if content_words(n) and not content_words(n) <= known}
    return Signals(
        model_id=answer.model_id,
        similarity=answer.best_similarity,
        quotable=bool(checked) and not answer.empty,
        asked=len(asked),
        missing=sorted(missing),
        shared=shared,
        unknown_names=sorted(found),
        other_language=other_language,
        near=near,
    )


def asked_words(question: str, question_lang: str) -> set[str]:
    """The question's content words (lemmas) the bar checks, "the author" and the like left out. In a
    question in a language other than English, also without elided articles ("l'australie" asks about
    "australie") and without that language's function and question words ("quelle", "est", "la", "wie"):
    content_words' lists are English, and every passage in that language holds those words, so counted as
    found they let a question whose every real word is missing pass ("Quelle est la capitale de
    l'Australie ?" quoted a French blog's post on bread dough)."""
    record = language(question_lang)
    asked = content_words(record.without_third_person(question))  # "the author" asks nothing
    if question_lang in ("en", UNDETERMINED):
        return asked
    noise = function_words(question_lang) | record.question_words
    unelided = (without_elision(w) for w in asked)
    return {w for w in unelided if w not in noise and len(w) >= MIN_WORD_CHARS}


def near_missing(missing: Sequence[str], hits: Sequence[Hit], embedder: Embedder) -> dict[str, float]:
    """Each missing word's best cosine with a word of the checked hits' titles, sections and texts."""
    passages = [" ".join((hit.title, hit.section, hit.text)) for hit in hits[:CHECKED_HITS]]
    return nearest_words(missing, passages, embedder)


def _near_matters(found: Signals, limits: Thresholds) -> bool:
    """Whether words found by meaning could change the decision (else they are not embedded)."""
    return (
        bool(found.missing)
        and not found.other_language
        and not found.unknown_names
        and limits.word_match < 1
        and limits.supported <= found.similarity
        and (found.similarity < limits.similarity or limits.max_missing_close < 1)
    )


def _unmatched(words: set[str], passages: Sequence[str], language: str) -> set[str]:
    """The words (lemmas) no passage has in another form: the same stem ("differently", "different"),
    or as the head of a compound ("stove" in "woodstove": English and German compounds end in it)."""
    stem = stemmer_for(language)
    forms = {w.lower() for text in passages for w in WORD.findall(text)}
    stems = {stem(w) for w in forms} if stem else set()

    def is_word(text: str) -> bool:
        return text in forms or is_known_word(text, language)

    def found(word: str) -> bool:
        if stem and stem(word) in stems:
            return True
        return len(word) >= MIN_HEAD_CHARS and any(
            len(form) >= len(word) + MIN_MODIFIER_CHARS
            and form.endswith(word)
            and is_word(form[: -len(word)].rstrip("-"))
            for form in forms
        )

    return {w for w in words if not found(w)}


def decide(signals: Signals, limits: Thresholds) -> tuple[bool, str]:
    """(answer?, why) from the signals; see the module docstring for the rule."""
    if not signals.quotable:
        return False, "nothing retrieved that can be quoted"
    if not signals.asked:
        return False, "the question has no content word"
    if signals.other_language:
        # Words cannot be compared across languages, but a cross-lingual model's similarity can. An
        # English-only model's cannot either, so it also needs a word the passages share with the
        # question: a name or a loanword ("Instagram", "table").
        if signals.similarity < limits.cross_language:
            return False, "question in another language than the posts, and not close enough"
        if not profile_for(signals.model_id).cross_lingual and not signals.shared:
            return False, "question in another language than the posts, sharing no word with them"
        return True, "question in another language than the posts, close enough"
    if signals.unknown_names:
        return False, "the question names what no retrieved passage mentions"
    missing = signals.missing_under(limits)
    if signals.similarity >= limits.similarity and len(missing) <= limits.max_missing_close * signals.asked:
        return True, "a sentence is close to the question"
    if signals.similarity >= limits.supported and len(missing) <= limits.max_missing * signals.asked:
        return True, "close enough, and the question's words are in the passages"
    return False, "no passage is close enough to the question"


def judge(
    question: str,
    hits: Sequence[Hit],
    answer: ExtractiveAnswer,
    thresholds: Thresholds | None = None,
    embedder: Embedder | None = None,
) -> Verdict:
    """Whether `answer` (extract_answer's for `question` over `hits`) should be given. Pass the table's
    `embedder` so missing words are also looked for by meaning (the bar's `word_match`); `missing`
    lists the words still missing under the bar."""
    limits = thresholds or thresholds_for(answer.model_id)
    found = signals(question, hits, answer)
    if embedder is not None and _near_matters(found, limits):
        found = dataclasses.replace(found, near=near_missing(found.missing, hits, embedder))
    ok, reason = decide(found, limits)
    missing = found.missing_under(limits)
    return Verdict(ok, reason, found.similarity, missing, found.unknown_names, suggest(hits))


def suggest(hits: Sequence[Hit], limit: int = SUGGESTIONS) -> list[Suggestion]:
    """The closest posts: distinct posts of the hits, by their best relevance (ties: rank order)."""
    best: dict[str, Suggestion] = {}
    for hit in hits:
        current = best.get(hit.post_id)
        if current is None:
            best[hit.post_id] = Suggestion(hit.post_id, hit.title, float(hit.relevance), hit.url)
        elif hit.relevance > current.relevance:
            current.relevance = float(hit.relevance)
    return sorted(best.values(), key=lambda s: s.relevance, reverse=True)[:limit]
