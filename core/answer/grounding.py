"""Grounding check: which sentences of an answer are supported by the excerpts it was given.

Each answer sentence is compared with every excerpt that went into the context in two ways: the
cosine similarity of their embeddings (the table's model, on its relevance scale), and word overlap (the
share of the sentence's content words found in the excerpt). A sentence is supported when either passes
its threshold (the model profile's `grounding` block, core/profiles) and every checkable detail it
states (numbers, spelled or in digits, and names) occurs in the excerpts; the excerpts that pass are its
support. A number must also occur in an excerpt sentence (or line, title, heading) sharing a content
word with the answer sentence, so "Black walnut cost me $4.00 a board foot" fails when the posts give
$4.00 only as "Ash, $4.00.". Small local models invent details, so the chat marks unsupported sentences
and reports the supported fraction instead of presenting them as the author's. How the thresholds were
chosen, with figures: docs/decisions.md.

Sentences of fewer than MIN_CHECKED_CONTENT_WORDS content words ("Thanks for asking.") are not judged.

GroundingChecker prepares the excerpts' side once (words, details, language, vectors), so a streamed
answer can be checked a sentence at a time (core/answer/release.py); check_grounding is one checker's
check of a whole answer.

Answers in another language than the excerpts (a German reader, English posts): word overlap and names
mean nothing across languages (German capitalises every noun), so only numbers count as details, and
the similarity needs an embedding model that maps languages together (multilingual-e5-small or an
OpenAI model). With MiniLM such an answer is not judged at all, and the reason is given, rather than
every sentence being marked unsupported.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from core.embed import Embedder, cross_lingual, relevance_scale, rescale
from core.models import Hit
from core.profiles import profile_for
from core.text import UNDETERMINED, detect_language, language_name, languages_differ, plural, split_sentences
from core.text.languages import Language, language
from core.text.words import (
    MIN_CHECKED_CONTENT_WORDS,
    STOPWORDS,
    WORD,
    content_forms,
    strip_list_marker,
)
from core.text.words import content_words as lemmas
from core.text.words import names as _names

# A number as written (digits with separators, a decimal part) or a word, perhaps hyphenated
# ("thirty-five"), that the sentence's language may spell a number with: all normalised to digits so
# "thirty percent" matches "30 percent" (core/text/languages.py has the number words).
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?|[^\W\d_]+(?:-[^\W\d_]+)?")
# Capitalised contractions are not names ("Yes, I'm sure", "In short: Don't"); a possessive is its
# name ("Ezra's" → "ezra"); ’ counts as '.
_CONTRACTION = re.compile(
    r"^(?:i|you|we|they|he|she|it|that|there|here|what|who|where|how|let)'(?:m|s|d|ll|ve|re)$|n't$"
)
# Relevance scores are no details the posts could hold: copied from excerpt headers of the old prompt
# format ("relevance=0.7692") or written like one (0 and three or more decimals).
_SCORE = re.compile(r"\b(?:relevance|score)\s*[=:]\s*\d*\.?\d+|(?<![\d.,])0\.\d{3,}(?![\d.])", re.IGNORECASE)


class LanguageRule(NamedTuple):
    """What the grounding check can do with an answer in a given language (GroundingChecker.language_rule)."""

    skipped: str  # why the check cannot run at all, or ""
    names: bool  # whether capitalised words count as details (not in German, nor across languages)
    same_language: bool  # the answer is in the excerpts' language (or either is unknown)
    language: str = "en"  # the answer's (detected), whose number words its sentences are read with


@dataclass
class SentenceSupport:
    sentence: str
    judged: bool  # False for sentences too short to judge
    supported: bool
    similarity: float = 0.0  # best cosine similarity to an excerpt
    overlap: float = 0.0  # best share of content words found in an excerpt
    chunk_ids: list[str] = field(default_factory=list)  # the excerpts that support it
    unknown_details: list[str] = field(default_factory=list)  # numbers and names no excerpt holds

    def to_json(self) -> dict:
        return {
            "sentence": self.sentence,
            "judged": self.judged,
            "supported": self.supported,
            "similarity": round(self.similarity, 4),
            "overlap": round(self.overlap, 4),
            "chunk_ids": self.chunk_ids,
            "unknown_details": self.unknown_details,
        }


@dataclass
class Grounding:
    sentences: list[SentenceSupport]
    skipped: str = ""  # why nothing was judged, when the check could not run

    @property
    def judged(self) -> list[SentenceSupport]:
        return [s for s in self.sentences if s.judged]

    @property
    def supported_fraction(self) -> float | None:
        """Share of judged sentences that are supported; None when no sentence could be judged."""
        judged = self.judged
        return sum(s.supported for s in judged) / len(judged) if judged else None

    @property
    def unsupported(self) -> list[SentenceSupport]:
        return [s for s in self.judged if not s.supported]

    def summary(self) -> str:
        if self.skipped:
            return f"not checked: {self.skipped}"
        judged = self.judged
        if not judged:
            return "no sentence to check"
        supported = sum(s.supported for s in judged)
        short = len(self.sentences) - len(judged)
        # Counted over every sentence checked (in strict grounding: the model's whole answer, also what
        # was left out), so the short ones are named: "1 of 8" beside 14 left out read as a miscount.
        rest = f" ({short} more too short to check)" if short else ""
        return f"{supported} of {plural(len(judged), 'sentence')} supported by the excerpts{rest}"

    def to_json(self) -> dict:
        fraction = self.supported_fraction
        return {
            "supported_fraction": None if fraction is None else round(fraction, 4),
            "skipped": self.skipped,
            "sentences": [s.to_json() for s in self.sentences],
        }


def _number(token: str, lang: Language) -> str | None:
    if token[0].isdigit():
        return token.replace(",", "").rstrip(".")
    value = lang.number(token)
    return None if value is None else str(value)


def specifics(text: str, names: bool = True, lang: str = "en") -> set[str]:
    """The checkable details of a sentence in language `lang`: its numbers (as digits, spelled ones read by
    the language's number words) and, with `names`, its names (lower case).

    Small models keep the shape of a true sentence and change these ("took two weeks" for "five
    weeks", another sawmill's name), which similarity and word overlap both miss.
    """
    text = strip_list_marker(text)
    numbers = _numbers(_SCORE.sub(" ", text), lang)
    if not names:
        return numbers
    found = {_name_key(name) for name in _names(text)}
    return numbers | {n for n in found if n and n not in STOPWORDS}


def _name_key(word: str) -> str:
    """A capitalised word as a detail to look up: lower case, ’ as ', a possessive's 's dropped; "" for a
    contraction."""
    word = word.lower().replace("’", "'")
    if _CONTRACTION.search(word):
        return ""
    return word.removesuffix("'s")


def _numbers(text: str, lang: str = "en") -> set[str]:
    record = language(lang)
    return {n for n in (_number(t, record) for t in _NUMBER.findall(text)) if n}


def _number_contexts(texts: Sequence[str], lang: str) -> dict[str, set[str]]:
    """Each number of the excerpts → the content words (lemmas) of the sentences and lines holding it."""
    contexts: dict[str, set[str]] = {}
    for text in texts:
        for line in text.splitlines():  # a list item or spec line is a unit of its own
            for sentence in split_sentences(line):
                numbers = _numbers(sentence, lang)
                if numbers:
                    words = lemmas(sentence)
                    for n in numbers:
                        contexts.setdefault(n, set()).update(words)
    return contexts


def _known_details(texts: Sequence[str], lang: str) -> set[str]:
    """Every number and word of the excerpts, normalised like `specifics`, to look details up in."""
    known: set[str] = set()
    for text in texts:
        known |= _numbers(text, lang)
        words = {w.lower() for w in WORD.findall(text)}
        known |= words | {k for k in map(_name_key, words) if k}
    return known


class GroundingChecker:
    """The excerpts' side of the check, prepared once: their content words, known details, language and
    (on first need, in the same embedding call as the first sentences) their vectors.

        checker = GroundingChecker(hits, embedder)
        checker.check(answer)                                     # the whole answer: check_grounding's result
        checker.check_sentences([sentence], language_of=so_far)   # one sentence as it streams

    `language_of` is the text whose language stands for the answer's (the answer so far); the check
    needs it because names and the similarity mean nothing across languages with an English-only model.
    """

    def __init__(
        self,
        hits: Sequence[Hit],
        embedder: Embedder,
        *,
        similarity_threshold: float | None = None,
        overlap_threshold: float | None = None,
    ) -> None:
        self.hits = list(hits)
        self.embedder = embedder
        self._similarity_threshold = similarity_threshold
        self._overlap_threshold = overlap_threshold
        self.hit_words = [content_forms(h.text) for h in self.hits]
        texts = [h.title for h in self.hits] + [h.section for h in self.hits] + [h.text for h in self.hits]
        self.excerpt_language = excerpts_language(self.hits)
        self.known = _known_details(texts, self.excerpt_language)
        self.number_contexts = _number_contexts(texts, self.excerpt_language)
        self._vectors: np.ndarray | None = None  # the excerpts', once embedded

    # Thresholds left None are the embedding model's profile's (its `grounding` block), read when needed:
    # a checker of details only has no embedder.
    @property
    def similarity_threshold(self) -> float:
        if self._similarity_threshold is not None:
            return self._similarity_threshold
        return profile_for(self.embedder.model_id).grounding.similarity

    @property
    def overlap_threshold(self) -> float:
        if self._overlap_threshold is not None:
            return self._overlap_threshold
        return profile_for(self.embedder.model_id).grounding.overlap

    def check(self, answer: str) -> Grounding:
        """Every sentence of `answer`, judged against the excerpts."""
        sentences = [s.strip() for s in split_sentences(answer) if s.strip()]
        return self.check_sentences(sentences, language_of=answer)

    def check_sentences(self, sentences: Sequence[str], *, language_of: str | None = None) -> Grounding:
        """These sentences judged against the excerpts; the answer's language is `language_of`'s
        (default: the sentences')."""
        sentences = list(sentences)
        words = [content_forms(s) for s in sentences]
        judged = [i for i, w in enumerate(words) if len(w) >= MIN_CHECKED_CONTENT_WORDS]
        results = [SentenceSupport(s, judged=False, supported=False) for s in sentences]
        if not judged:
            return Grounding(results)
        if not self.hits:
            for i in judged:
                results[i].judged = True
            return Grounding(results)
        rule = self.language_rule(" ".join(sentences) if language_of is None else language_of)
        if rule.skipped:
            return Grounding(results, skipped=rule.skipped)

        # On the model's relevance scale (core/embed/), so one threshold serves MiniLM and e5 alike.
        similarity = rescale(
            self._embed([sentences[i] for i in judged]) @ self._vectors.T,
            relevance_scale(self.embedder.model_id),
        )
        similarity_bar, overlap_bar = self.similarity_threshold, self.overlap_threshold
        for row, i in enumerate(judged):
            overlap = np.array([len(words[i] & hw) / len(words[i]) for hw in self.hit_words])
            passes = (similarity[row] >= similarity_bar) | (overlap >= overlap_bar)
            result = results[i]
            result.judged = True
            result.similarity = float(similarity[row].max())
            result.overlap = float(overlap.max())
            # Across languages words cannot place a number, so only its presence counts.
            result.unknown_details = self.unknown_details(
                sentences[i], names=rule.names, place_numbers=rule.same_language, lang=rule.language
            )
            result.supported = bool(passes.any()) and not result.unknown_details
            result.chunk_ids = [self.hits[j].chunk_id for j in np.flatnonzero(passes)]
        return Grounding(results)

    def language_rule(self, answer: str) -> LanguageRule:
        """What the check can do with an answer like `answer`, by its language and the excerpts'."""
        answer_lang = detect_language(answer)
        reason = unreadable(answer_lang, self.excerpt_language, self.embedder.model_id)
        same = not languages_differ(answer_lang, self.excerpt_language)
        # Names are capitalised words, which says nothing in German (every noun) or across languages.
        return LanguageRule(reason, not reason and same and answer_lang != "de", same, answer_lang)

    def unknown_details(
        self, sentence: str, *, names: bool = True, place_numbers: bool = True, lang: str | None = None
    ) -> list[str]:
        """The numbers (and, with `names`, names) of `sentence` (in language `lang`, default the
        excerpts') that no excerpt holds, and, with
        `place_numbers` (the answer is in the excerpts' language), its numbers that they hold only in
        sentences sharing no content word with it; sorted."""
        lang = self.excerpt_language if lang is None else lang
        record = language(lang)
        details = specifics(sentence, names=names, lang=lang)
        unknown = details - self.known
        words = {w for w in lemmas(sentence) if _number(w, record) is None}
        if place_numbers and words:  # "It was $40." has nothing to place its number by
            stated = _numbers(_SCORE.sub(" ", strip_list_marker(sentence)), lang)
            for n in stated & (details - unknown):
                if not words & self.number_contexts.get(n, set()):
                    unknown.add(n)
        return sorted(unknown)

    def _embed(self, sentences: list[str]) -> np.ndarray:
        """The sentences' vectors; the first call embeds the excerpts too, in the same call (vectors are
        unit length)."""
        if self._vectors is not None:
            return self.embedder.embed(sentences)
        vectors = self.embedder.embed(sentences + [h.text for h in self.hits])
        self._vectors = vectors[len(sentences) :]
        return vectors[: len(sentences)]


def excerpts_language(hits: Sequence[Hit]) -> str:
    """The language of the hits' text together ("und" for none)."""
    return detect_language(" ".join(h.text for h in hits)) if hits else UNDETERMINED


def unreadable(answer_language: str, excerpt_language: str, model_id: str) -> str:
    """Why the check cannot judge an answer in `answer_language` against excerpts in
    `excerpt_language` with embedding model `model_id` ("" when it can): across languages only a
    model that maps languages together compares them."""
    if not languages_differ(answer_language, excerpt_language) or cross_lingual(model_id):
        return ""
    return (
        f"the answer is in {language_name(answer_language)} and the excerpts in "
        f"{language_name(excerpt_language)}; comparing them needs a multilingual embedding model "
        "(inkwell reembed --embed-model multilingual-e5-small)"
    )


def check_grounding(
    answer: str,
    hits: Sequence[Hit],
    embedder: Embedder,
    *,
    similarity_threshold: float | None = None,
    overlap_threshold: float | None = None,
) -> Grounding:
    """Each sentence of `answer` judged against the excerpts (`hits`); see GroundingChecker (thresholds
    left None are the embedding model's profile's)."""
    checker = GroundingChecker(
        hits, embedder, similarity_threshold=similarity_threshold, overlap_threshold=overlap_threshold
    )
    return checker.check(answer)
