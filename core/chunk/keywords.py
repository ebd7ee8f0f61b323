"""Offline keyword extraction: 1–6 keywords per chunk, chosen with the post and corpus as context.

Method (deterministic, no model):

1. Candidates. Words are letter runs (a possessive "'s" is dropped; a word with any other apostrophe,
   a contraction, is skipped). Each is lemmatized with simplemma; in English the lemma is used only
   for plurals (words ending in "s" and a few irregular plurals), so "studies" → "study" while nouns
   like "writing" or "painting" are not turned into verbs. Words must have 3+ letters (or be a
   2-letter acronym such as "AI") and not be in STOPWORDS. Words in VAGUE_WORDS are never keywords.
   "Weak" words, English verb forms and adverbs ("baked", "luckily", found by asking simplemma whether
   the word reduces to another lemma), are penalised. Phrases are bigrams and trigrams of adjacent
   words (no punctuation between them; a trigram may have "of" in the middle: "state of mind") made
   of plain content words, or capitalised names, where vague and weak words may appear ("New York").
   A sentence's first word only counts as capitalised if it is a plain content word, so "Yesterday
   Mary" is not a name.
2. Score of term t in chunk c:
       (1 + ln tf)                      tf = occurrences of t in c
     × (ln((1 + n) / (1 + df)) + 1)     n = chunks in the post, df = those containing t: a term found
                                        in every chunk scores 1, one found only here scores most
     × (1 + 0.25 ln post_tf + title)    the post's own emphasis: more uses in the post, or being in
                                        the title (+0.5), count for something
     × (ln((1 + N) / (1 + cdf)) + 1)    corpus idf (N posts, cdf posts containing t); 1 without corpus
     × 1.5 for phrases                  more specific than their words
     × 0.25 for weak words
   A phrase is only a keyword if it occurs at least twice in the post or is a capitalised name.
3. Selection: by score (ties alphabetical); a chosen phrase removes the words and shorter phrases it
   contains; terms under 30% of the best score are dropped as filler (the best one is always kept),
   up to `max_keywords`. Keywords are lowercase lemmas joined by spaces.

Speed: text is split on whitespace and each distinct token is classified once (per process, per
language), so 10k chunks take a few seconds. STOPWORDS and VAGUE_WORDS are exported for the LLM
keyword prompt; the lists are English, as is the plural/weak-word handling (other `lang` values only
change the lemmatizer).
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache

import simplemma

from core.models import Chunk, Post
from core.text.words import STOPWORDS


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words too general to tell a reader what a passage is about.
VAGUE_WORDS: frozenset[str] = _words(
    """
    thing way lot people person stuff time something anything everything nothing kind sort bit part
    fact idea year day week month moment point case example number place problem issue question
    answer matter reason side end start beginning area aspect element factor form level piece result
    situation term type version world life man woman guy minute hour today tomorrow yesterday
    morning night evening
    good bad great new old big small little large long short high low real right wrong sure true
    different important interesting certain main major best better worst worse nice fine simple
    easy hard able possible various full clear special particular general
    pretty basically literally probably simply certainly definitely especially usually generally
    fairly
    """
)

# Within a whitespace-separated token, a word (letters, inner apostrophes) is captured; punctuation
# other than hyphens and apostrophes, and digits, match with an empty group: phrases never span them.
_TOKEN_RE = re.compile(r"([^\W\d_]+(?:['’][^\W\d_]+)*)|[^\w\s'’-]+|[\d_]+|--+")
_PARAGRAPH_RE = re.compile(r"\n\s*\n")
_NOISE_RE = re.compile(r"https?://\S+|www\.\S+|\[(?:REF|IMAGE):")  # URLs and tag labels, not words
_IRREGULAR_PLURALS = _words(
    "children men women feet teeth mice geese oxen criteria phenomena alumni fungi cacti nuclei "
    "radii stimuli bacteria curricula indices appendices matrices vertices"
)
_LEMMA_FIXES = {"lives": "life", "lenses": "lens"}  # simplemma picks the verb / a non-word here

TITLE_BOOST = 0.5
PHRASE_BONUS = 1.5
WEAK_WORD_FACTOR = 0.25
MIN_RELATIVE_SCORE = 0.3

# Word classes: stopwords break phrases; vague words are never keywords alone and weak words (verb
# forms, adverbs) are penalised alone; both appear in phrases only inside capitalised names.
_STOP, _VAGUE, _WEAK, _CONTENT = 0, 1, 2, 3
# (lowercase lemma, word class, capitalised, capitalised even at a sentence start): a sentence's first
# word counts as a name only if it is a plain content word, so "Yesterday Stephen" is not a name.
WordInfo = tuple[str, int, bool, bool]
_BREAK: WordInfo = ("", _STOP, False, False)
_END: WordInfo = (".", _STOP, False, False)  # a sentence end: the next word is sentence-initial
# Per language: surface word -> WordInfo, and whitespace token ("bread.", "(see") -> its WordInfos.
# Plain dicts, not lru_cache: this is the hot loop, and a blog's vocabulary is bounded.
_WORD_CACHE: dict[str, dict[str, WordInfo]] = {}
_TOKEN_CACHE: dict[str, dict[str, tuple[WordInfo, ...]]] = {}
_CACHE_LIMIT = 500_000


# What a chunk's keywords may be, however they are made (extracted here, by the LLM in core/prepare, or
# typed in the chunk inspector): they are embedded with the chunk ("Keywords: a, b") and searched by
# BM25, so a long list or a pasted paragraph would outweigh the chunk's own text in both.
MAX_KEYWORDS = 6
MAX_KEYWORD_WORDS = 4
MAX_KEYWORD_CHARS = 60


class KeywordError(ValueError):
    """Keywords past the limits; the message says which limit and what to do."""


def check_keywords(keywords: Iterable[str]) -> list[str]:
    """The keywords as a chunk keeps them: each stripped, empty ones and repeats dropped (in order); a
    KeywordError when there are more than MAX_KEYWORDS or one is longer than MAX_KEYWORD_WORDS words or
    MAX_KEYWORD_CHARS characters."""
    kept = list(dict.fromkeys(k.strip() for k in keywords if k.strip()))
    if len(kept) > MAX_KEYWORDS:
        raise KeywordError(
            f"a chunk takes at most {MAX_KEYWORDS} keywords, and {len(kept)} were given: keep the ones "
            "that best say what the passage is about"
        )
    for keyword in kept:
        if len(keyword) > MAX_KEYWORD_CHARS or len(keyword.split()) > MAX_KEYWORD_WORDS:
            shown = keyword if len(keyword) <= 40 else keyword[:39].rstrip() + "…"
            raise KeywordError(
                f"a keyword is at most {MAX_KEYWORD_WORDS} words and {MAX_KEYWORD_CHARS} characters: "
                f"“{shown}” is longer (separate keywords with commas)"
            )
    return kept


def extract_keywords(
    chunks: list[Chunk],
    post: Post,
    corpus_df: Mapping[str, int] | None = None,
    corpus_size: int = 0,
    max_keywords: int = MAX_KEYWORDS,
    lang: str = "en",
) -> list[list[str]]:
    """Keywords for each chunk of `post`, in chunk order (see the module docstring for the method)."""
    names: set[str] = set()
    counts: list[Counter[str]] = []
    post_tf: Counter[str] = Counter()
    for chunk in chunks:
        terms, chunk_names = _candidates(chunk.text, lang)
        counts.append(Counter(terms))
        post_tf.update(terms)
        names |= chunk_names
    chunk_df = Counter(itertools.chain.from_iterable(counts))
    title_terms = set(_candidates(post.title, lang)[0])
    factors = _post_factors(post_tf, chunk_df, len(chunks), names, title_terms, corpus_df, corpus_size, lang)
    result: list[list[str]] = []
    for tf in counts:
        scores = {
            term: factors[term] * (1 + math.log(count) if count > 1 else 1.0)
            for term, count in tf.items()
            if term in factors
        }
        result.append(_select(scores, max_keywords))
    return result


def add_keywords(
    chunks: list[Chunk],
    post: Post,
    corpus_df: Mapping[str, int] | None = None,
    corpus_size: int = 0,
) -> None:
    """Set `keywords` on each chunk in place (imported chunks that already have some keep them)."""
    for chunk, keywords in zip(chunks, extract_keywords(chunks, post, corpus_df, corpus_size), strict=True):
        if not chunk.keywords:
            chunk.keywords = keywords


def post_terms(post: Post, lang: str = "en") -> set[str]:
    """The distinct keyword candidates of a post (its title, text and any imported chunks)."""
    texts = [post.title, post.text, *(pre.text for pre in post.prechunked or [])]
    return {term for text in texts for term in _candidates(text, lang)[0]}


def document_frequencies(posts: Iterable[Post], lang: str = "en") -> tuple[dict[str, int], int]:
    """For the corpus idf: term -> number of posts containing it, and the number of posts."""
    df: Counter[str] = Counter()
    total = 0
    for post in posts:
        total += 1
        df.update(post_terms(post, lang))
    return dict(df), total


# Scoring -------------------------------------------------------------------------------------------


def _post_factors(
    post_tf: Mapping[str, int],
    chunk_df: Mapping[str, int],
    n_chunks: int,
    names: set[str],
    title_terms: set[str],
    corpus_df: Mapping[str, int] | None,
    corpus_size: int,
    lang: str,
) -> dict[str, float]:
    """Everything in a term's score except its count in the chunk; phrases that do not qualify are left out."""
    factors: dict[str, float] = {}
    for term, ptf in post_tf.items():
        is_phrase = " " in term
        if is_phrase and ptf < 2 and term not in names:
            continue
        spread = math.log((1 + n_chunks) / (1 + chunk_df[term])) + 1
        emphasis = 1 + 0.25 * math.log(ptf) + (TITLE_BOOST if term in title_terms else 0)
        factor = spread * emphasis
        if corpus_size > 0 and corpus_df is not None:
            factor *= math.log((1 + corpus_size) / (1 + corpus_df.get(term, 0))) + 1
        if is_phrase:
            factor *= PHRASE_BONUS
        elif _is_weak(term, lang):
            factor *= WEAK_WORD_FACTOR
        factors[term] = factor
    return factors


def _select(scores: dict[str, float], max_keywords: int) -> list[str]:
    if not scores:
        return []
    floor = max(scores.values()) * MIN_RELATIVE_SCORE
    # Alphabetical first, then a stable sort by score: ties come out in a fixed order.
    ranked = sorted(sorted(t for t, s in scores.items() if s >= floor), key=scores.__getitem__, reverse=True)
    chosen: list[str] = []
    for term in ranked:
        if len(chosen) >= max_keywords:
            break
        if any(_contains(other, term) for other in chosen):
            continue
        chosen = [other for other in chosen if not _contains(term, other)]
        chosen.append(term)
    return chosen


def _contains(phrase: str, term: str) -> bool:
    return phrase != term and f" {term} " in f" {phrase} "


# Candidates ----------------------------------------------------------------------------------------


def _candidates(text: str, lang: str) -> tuple[list[str], set[str]]:
    """Every candidate term in `text`, once per occurrence, and the phrases seen as capitalised names."""
    cache = _TOKEN_CACHE.setdefault(lang, {})
    if len(cache) > _CACHE_LIMIT:
        cache.clear()
    get = cache.get
    # str.split plus a per-token cache is several times faster than a regex over the whole text.
    words: list[WordInfo] = []
    for paragraph in _PARAGRAPH_RE.split(text):
        initial = True
        for token in paragraph.split():
            infos = get(token) or _classify_token(token, lang, cache)
            if not infos:
                continue  # a lone quote mark
            if initial:
                infos = _sentence_start(infos)
            words.extend(infos)
            initial = infos[-1] is _END
        words.append(_BREAK)
    terms = [w[0] for w in words if w[1] >= _WEAK]
    names: set[str] = set()
    add = terms.append
    # One pass over (word, next, the one after) finds bigrams and trigrams; this is the hot loop.
    for a, b, c in zip(words, words[1:], [*words[2:], _BREAK], strict=False):
        if not a[1]:
            continue
        if b[1]:
            if a[2] and b[2]:
                names.add(term := f"{a[0]} {b[0]}")
                add(term)
            elif a[1] == b[1] == _CONTENT:
                add(f"{a[0]} {b[0]}")
        # Three content words, or "X of Y" ("state of mind", "Bank of England").
        if c[1] and (b[1] or b[0] == "of"):
            if a[2] and c[2] and (b[2] or not b[1]):
                names.add(term := f"{a[0]} {b[0]} {c[0]}")
                add(term)
            elif a[1] == c[1] == _CONTENT and b[1] in (_CONTENT, _STOP):
                add(f"{a[0]} {b[0]} {c[0]}")
    return terms, names


def _sentence_start(infos: tuple[WordInfo, ...]) -> tuple[WordInfo, ...]:
    """`infos` with its first word's capital ignored unless it survives a sentence start."""
    for i, (lemma, kind, cap, initial_cap) in enumerate(infos):
        if lemma and lemma != ".":
            if cap == initial_cap:
                return infos
            return (*infos[:i], (lemma, kind, initial_cap, initial_cap), *infos[i + 1 :])
    return infos


def _classify_token(token: str, lang: str, cache: dict[str, tuple[WordInfo, ...]]) -> tuple[WordInfo, ...]:
    """The words of one whitespace token, with _BREAK for punctuation and digits, remembered in `cache`."""
    words = _WORD_CACHE.setdefault(lang, {})
    if len(words) > _CACHE_LIMIT:
        words.clear()
    if not token.strip("-–—"):  # a free-standing dash
        infos: tuple[WordInfo, ...] = (_BREAK,)
    else:
        parts = _TOKEN_RE.findall(_NOISE_RE.sub(" ", token))
        infos = tuple((words.get(w) or _classify(w, lang, words)) if w else _BREAK for w in parts)
        if infos and token.rstrip("\"'’”)]").endswith((".", "!", "?", ":")):
            infos = (*infos[:-1], _END) if infos[-1] is _BREAK else (*infos, _END)
    cache[token] = infos
    return infos


def _classify(surface: str, lang: str, cache: dict[str, WordInfo]) -> WordInfo:
    """(lowercase lemma, word class, capitalised) for one word, remembered in `cache`."""
    word = surface[:-2] if surface[-2:] in ("'s", "’s") else surface
    lower = word.lower()
    info: WordInfo
    if "'" in word or "’" in word:  # contractions: don't, I'm, we'll
        info = (lower, _STOP, False, False)
    else:
        lemma = _lemmatize(word, lower, lang)
        acronym = len(word) == 2 and word.isupper()
        if lower in STOPWORDS or lemma in STOPWORDS or (len(lemma) < 3 and not acronym):
            info = (lower, _STOP, False, False)  # keeps its spelling so "of" is recognised in phrases
        elif lemma in VAGUE_WORDS or lower in VAGUE_WORDS:
            info = (lemma, _VAGUE, word[0].isupper(), False)
        else:
            cap = word[0].isupper()
            weak = _is_weak(lemma, lang)
            info = (lemma, _WEAK if weak else _CONTENT, cap, cap and not weak)
    cache[surface] = info
    return info


def _lemmatize(word: str, lower: str, lang: str) -> str:
    if lang == "en":
        if lower in _LEMMA_FIXES:
            return _LEMMA_FIXES[lower]
        if not (lower.endswith("s") or lower in _IRREGULAR_PLURALS):
            return lower  # only plurals are reduced, so "writing" and "better" keep their meaning
    # Passing the original case lets simplemma keep names ("Dickens", not "dicken").
    return simplemma.lemmatize(word, lang=lang).lower() or lower


@lru_cache(maxsize=200_000)
def _is_weak(term: str, lang: str) -> bool:
    """An English verb form or adverb ("baked", "bought", "finally"): rarely what a passage is about.

    Without a POS tagger we ask simplemma: a word it reduces to another lemma (and that is neither a
    plural nor an -ing form, which are often nouns) is inflected, and "-ly" on a known stem is an adverb.
    """
    if lang != "en" or term.endswith(("s", "ing")):
        return False
    if simplemma.lemmatize(term, lang=lang).lower() != term:
        return True
    if not term.endswith("ly") or len(term) < 5:
        return False
    stem = term[:-3] + "y" if term.endswith("ily") else term[:-2]  # happily → happy, sadly → sad
    return simplemma.is_known(stem, lang=lang)
