"""Which of a chunk's sentences an extractive answer can quote, and the words they are scored on.

    sentence_units(chunk_text)  # [(offset, sentence)], each a verbatim slice of the text
    readable(sentence)          # long enough and ending like a sentence: a reader can take it alone
    content_words(text)         # lemmas that carry meaning; light_words also keeps common verbs

core/answer/extractive.py scores and picks among these; core/answer/abstain.py reads the same words.
"""

from __future__ import annotations

import re
from functools import lru_cache

import simplemma

from core.chunk import STOPWORDS
from core.text.sentences import TAG_RE, split_sentences

# A sentence needs MIN_WORDS..MAX_SENTENCE_WORDS words, and MIN_CONTENT_WORDS content words, to be worth
# reading on its own.
MIN_WORDS = 5
MAX_SENTENCE_WORDS = 70
MIN_CONTENT_WORDS = 2

WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_LIST_MARKER = re.compile(r"^(?:[-*•▪–]\s+|\(?\d{1,2}[.)]\s+)")
_SENTENCE_END = re.compile(r"""[.!?…]["'”’)\]]*$""")
# Function words only (core.text.language's English list): the light coverage keeps verbs such as "use".
_FUNCTION_WORDS = frozenset(
    re.findall(
        r"\S+",
        "the and of to in is that it was for with as his on be at by this had not are but from or have an "
        "they which you were her she there been all we their would my me so what when who will more if out "
        "about up them into your can has its our how why did does do a",
    )
)
# Words of a question that never say what is asked about.
_QUESTION_FILLER = frozenset(
    ("author", "author's", "writer", "blogger", "opinion", "mention", "explain", "describe")
)


def sentence_units(text: str) -> list[tuple[int, str]]:
    """(offset, sentence) for every sentence of `text`, each a verbatim slice of it.

    Lines are split first: chunk text keeps list items and "Height: 30 inches." spec lines one per
    line, without end punctuation between some of them, which the sentence splitter would run
    together. A leading list marker is left out (the rest is still a slice), [REF: …]/[IMAGE: …]
    tags are cut out (the text on either side of a tag becomes its own piece), and a quotation of
    several sentences stays in one unit, so no answer quotes half of what someone said.
    """
    units: list[tuple[int, str]] = []
    offset = 0
    for line in text.split("\n"):
        pos = 0
        spans: list[tuple[int, str]] = []
        for sentence in split_sentences(line):
            at = line.find(sentence, pos)
            pos = at + len(sentence)
            if spans and _open_quote(spans[-1][1]):
                # Inside a quotation the splitter cuts at each full stop ('he said, "Yes.' | 'But buy
                # extra."'): the sentences of one quotation stay one unit, up to MAX_SENTENCE_WORDS.
                joined = line[spans[-1][0] : pos]
                if len(joined.split()) <= MAX_SENTENCE_WORDS:
                    spans[-1] = (spans[-1][0], joined)
                    continue
            spans.append((at, sentence))
        for at, sentence in spans:
            units.extend((offset + start, piece) for start, piece in _pieces(at, sentence))
        offset += len(line) + 1
    return units


def _open_quote(text: str) -> bool:
    """Whether a quotation opened in `text` is still open at its end (straight or curly quotes)."""
    return text.count('"') % 2 == 1 or text.count("“") > text.count("”")


def _pieces(at: int, sentence: str) -> list[tuple[int, str]]:
    """The sentence's text around any tags, each piece stripped and without a leading list marker."""
    bounds = [0]
    for match in TAG_RE.finditer(sentence):
        bounds += [match.start(), match.end()]
    bounds.append(len(sentence))
    out = []
    for start, end in zip(bounds[::2], bounds[1::2], strict=True):
        piece = sentence[start:end]
        stripped = piece.strip()
        if not stripped:
            continue
        start += piece.find(stripped)
        marker = _LIST_MARKER.match(stripped)
        if marker:
            start, stripped = start + marker.end(), stripped[marker.end() :]
        if stripped:
            out.append((at + start, stripped))
    return out


def readable(sentence: str) -> bool:
    """Whether a reader can take the sentence alone: long enough, and ending like a sentence (not a
    heading, a date line, a "The dimensions:" lead-in or a "Filed under" footer)."""
    words = len(sentence.split())
    if not MIN_WORDS <= words <= MAX_SENTENCE_WORDS or not _SENTENCE_END.search(sentence):
        return False
    return len(content_words(sentence)) >= MIN_CONTENT_WORDS


@lru_cache(maxsize=50_000)
def _lemma(word: str) -> str:
    return simplemma.lemmatize(word, lang="en").lower()


def is_known_word(word: str, language: str) -> bool:
    """Whether simplemma's dictionary for `language` holds the word (False for a language it lacks)."""
    try:
        return bool(simplemma.is_known(word, lang=language))
    except ValueError:
        return False


def _words(text: str, stop: frozenset[str]) -> set[str]:
    words = (w.lower().removesuffix("'s").removesuffix("’s") for w in WORD.findall(text))
    lemmas = (_lemma(w) for w in words if len(w) > 1 and w not in stop and w not in _QUESTION_FILLER)
    # The lemma is checked too: "didn't" is no stop word, but its lemma "do" is.
    return {lemma for lemma in lemmas if lemma not in stop}


def content_words(text: str) -> set[str]:
    """Lemmas of the words that carry meaning (core.keywords.STOPWORDS and one-letter words left out)."""
    return _words(text, STOPWORDS)


def light_words(text: str) -> set[str]:
    """Lemmas of every word but function words: keeps the common verbs STOPWORDS drops ("use")."""
    return _words(text, _FUNCTION_WORDS)


def share(asked: set[str], words: set[str]) -> float:
    """The share of the asked words that `words` holds (0.0 when nothing was asked)."""
    return len(asked & words) / len(asked) if asked else 0.0
