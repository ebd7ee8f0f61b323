"""The words every rule reads, defined once: what a word is, which words carry meaning, list markers,
names, and the lengths a sentence needs.

    words("Don't use the $40 saw")     # ["don't", "use", "the", "40", "saw"]: lower case, as written
    content_words(text)                # lemmas that carry meaning (STOPWORDS and one-letter words left out)
    content_forms(text)                # the same words as written (lower case), not lemmatised
    light_words(text)                  # lemmas of all but function words: keeps common verbs ("use")
    names(text)                        # capitalised words that do not start a sentence: "Ezra", "Lisbon"
    strip_list_marker("2. Sight down") # "Sight down"

Lemmas come from simplemma's English dictionary, as the stored keywords and the no-answer gate use.
"""

from __future__ import annotations

import re
from functools import lru_cache

import simplemma

from core.text.function_words import frequent_words

# A word: letters or digits, with at most one inner apostrophe ("don't", "author's", "2018").
WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
# A word of letters only (no digits), any script: what follow-up cues and language scores read.
LETTER_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
# A list item's bullet or number ("-", "•", "2.", "(3)"), as a pattern to build others with.
LIST_BULLET = r"(?:[-*+•▪–]|\(?\d{1,3}[.)])"
# A list item's bullet or number at the start of a line ("- ", "• ", "2. ", "(3) "): no part of its text.
LIST_MARKER = re.compile(rf"^\s*{LIST_BULLET}\s+")
# A capitalised word that does not start a sentence (after a space not preceded by sentence-ending or
# opening punctuation, or right after a comma, semicolon, colon or bracket): a name of a person, place,
# company or thing. Only meaningful in languages that capitalise names alone (not German nouns).
NAME = re.compile(r"(?<=[^\s.!?:;\"“(¿¡])\s+([A-Z][\w’'-]*\w)|(?<=[,;:(])\s*([A-Z][\w’'-]*\w)")


# Elided articles and pronouns before a vowel (French "l'", "d'", "qu'"; Italian "dell'", "un'"): no
# part of the word they are written onto, so "l'Australie" asks about "australie" and "l'hydratation" holds
# "hydratation". Only the relevance bar reads words this way (core/answer/abstain.py, and the static page).
ELIDED_PREFIXES = (
    *("l", "d", "j", "m", "n", "s", "t", "c", "qu", "jusqu", "lorsqu", "puisqu", "quoiqu", "presqu"),
    *("dell", "all", "dall", "nell", "sull", "coll", "tutt", "quell", "un"),
)
ELIDED = re.compile(rf"^(?:{'|'.join(ELIDED_PREFIXES)})['’](?=[^\W\d_])")


def without_elision(word: str) -> str:
    """`word` without an elided article or pronoun in front ("l'australie" → "australie")."""
    return ELIDED.sub("", word, count=1)


def _split(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Shorter words (one letter: "a", "I", "s") are never content words.
MIN_WORD_CHARS = 2
# A sentence a reader can take on its own has MIN_SENTENCE_WORDS..MAX_SENTENCE_WORDS words (as split
# by whitespace) and at least MIN_SENTENCE_CONTENT_WORDS content words.
MIN_SENTENCE_WORDS = 5
MAX_SENTENCE_WORDS = 70
MIN_SENTENCE_CONTENT_WORDS = 2
# A sentence of an answer is judged against the excerpts only with at least this many content words
# (as written): "Thanks for asking." states nothing to check.
MIN_CHECKED_CONTENT_WORDS = 3

# English words that never characterise a passage (for keywords and content words): function words,
# contraction pieces, and verbs/adverbs so common in personal writing that they say nothing of a topic.
# Kept by hand: the stop-words package's English list (1,300 words) holds topic words too ("computer",
# "research", "problem", "world").
STOPWORDS: frozenset[str] = _split(
    """
    a about above across after afterwards again against ago ah all almost alone along already also
    although always am among amongst an and another any anybody anyhow anyone anything anyway
    anywhere are around as at away back be became because become becomes becoming been before
    beforehand behind being below beside besides between beyond both but by can cannot could did do
    does doing done down due during each either else elsewhere enough etc even ever every everybody
    everyone everything everywhere except few for former formerly from further furthermore had has
    have having he hence her here hereafter hereby herein hers herself him himself his how however i
    if in indeed instead into is it its itself just last latter latterly least less let lets like
    likely may maybe me meanwhile might mine more moreover most mostly much must my myself namely
    neither never nevertheless next no nobody none noone nor not nothing now nowhere of off often oh
    ok okay on once one only onto or other others otherwise our ours ourselves out over own per
    perhaps please quite rather really same several shall she should since so some somebody somehow
    someone somewhere still such than that the their theirs them themselves then thence there
    thereafter thereby therefore therein thereupon these they this those though through throughout
    thru thus to together too toward towards under unless until up upon us very via was we well were
    what whatever when whence whenever where whereafter whereas whereby wherein whereupon wherever
    whether which while whither who whoever whole whom whose why will with within without would yes
    yet you your yours yourself yourselves
    actually came come comes coming didn doesn don got get gets getting go goes going gone gotten
    hadn hasn haven isn know knew known knows ll made make makes making many mean means meant need
    needs put puts re said say says saw see seem seemed seeming seems seen shan shouldn take takes
    taking taken tell tells told think thinks thought try tried tries use used uses using ve want
    wanted wants wasn weren went won wouldn yeah felt feel feels found gave give gives given took began
    begun kept keep keeps brought heard started
    first second third one two three four five six seven eight nine ten hundred thousand million
    """
)


# Words of a question that never say what is asked about.
QUESTION_FILLER = frozenset(
    ("author", "author's", "writer", "blogger", "opinion", "mention", "explain", "describe")
)
# Function words only (the language detector's English list): light_words keeps verbs such as "use".
LIGHT_STOPWORDS = frequent_words("en")


def words(text: str) -> list[str]:
    """The text's words (WORD), lower case, in order."""
    return [w.lower() for w in WORD.findall(text)]


@lru_cache(maxsize=50_000)
def lemma(word: str) -> str:
    """The English lemma of a lower-case word (simplemma), lower case."""
    return simplemma.lemmatize(word, lang="en").lower()


def _lemmas(text: str, stop: frozenset[str]) -> set[str]:
    forms = (w.removesuffix("'s").removesuffix("’s") for w in words(text))
    found = (
        lemma(w) for w in forms if len(w) >= MIN_WORD_CHARS and w not in stop and w not in QUESTION_FILLER
    )
    # The lemma is checked too: "didn't" is no stop word, but its lemma "do" is.
    return {w for w in found if w not in stop}


def content_words(text: str) -> set[str]:
    """Lemmas of the words that carry meaning: STOPWORDS, QUESTION_FILLER and one-letter words left out."""
    return _lemmas(text, STOPWORDS)


def light_words(text: str) -> set[str]:
    """Lemmas of every word but function words: keeps the common verbs STOPWORDS drops ("use")."""
    return _lemmas(text, LIGHT_STOPWORDS)


def content_forms(text: str) -> set[str]:
    """The words that carry meaning as written (lower case, not lemmatised): no STOPWORDS, no one-letter word."""
    return {w for w in words(text) if w not in STOPWORDS and len(w) >= MIN_WORD_CHARS}


def names(text: str) -> list[str]:
    """The capitalised words of `text` that do not start a sentence (NAME), as written, in order."""
    return [a or b for a, b in NAME.findall(text)]


def strip_list_marker(text: str) -> str:
    """`text` without a leading list bullet or number (LIST_MARKER)."""
    return LIST_MARKER.sub("", text, count=1)


def is_known_word(word: str, language: str) -> bool:
    """Whether simplemma's dictionary for `language` holds the word (False for a language it lacks)."""
    try:
        return bool(simplemma.is_known(word, lang=language))
    except ValueError:
        return False
