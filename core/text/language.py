"""Which language a text is written in: cheap, offline, good on paragraphs and fair on short questions.

Method: a text mostly in a non-Latin script is named by its script (kana → Japanese, Hangul → Korean,
Han → Chinese, Cyrillic → Russian or Ukrainian, Greek, Arabic, Hebrew, Devanagari, Thai). Latin-script
text is scored by how many of its words are frequent function words of each language, plus a little
for letters that only some languages use (ñ, ß, ç, ã, å, ø, ł, …). The winner must lead clearly,
otherwise the answer is "und" (undetermined) and callers treat it as "not known to be the same".
The frequent function words it scores by are core/text/function_words.py's FREQUENT_WORDS.

The corpus's main language (chars-weighted over stored posts) is stored with the posts table at ingest
(core/store/corpus.py), where question translation reads it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from core.config import ConfigError
from core.text.function_words import FREQUENT_WORDS
from core.text.words import LETTER_WORD

UNDETERMINED = "und"

LANGUAGE_NAMES = {
    "en": "English",
    "fr": "French",
    "de": "German",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
    "nl": "Dutch",
    "sv": "Swedish",
    "da": "Danish",
    "nb": "Norwegian",
    "fi": "Finnish",
    "pl": "Polish",
    "cs": "Czech",
    "tr": "Turkish",
    "ja": "Japanese",
    "ko": "Korean",
    "zh": "Chinese",
    "ru": "Russian",
    "uk": "Ukrainian",
    "el": "Greek",
    "ar": "Arabic",
    "he": "Hebrew",
    "hi": "Hindi",
    "th": "Thai",
}

# Letters that point to some languages only (weight per occurrence, capped per text): the letters
# each language's alphabet adds to the basic Latin ones. "é" is left out (four languages use it).
_LETTER_HINTS: dict[str, tuple[str, ...]] = {
    "ñ": ("es",),
    "¿": ("es",),
    "¡": ("es",),
    "ß": ("de",),
    "ç": ("fr", "pt"),
    "è": ("fr", "it"),
    "ê": ("fr", "pt"),
    "œ": ("fr",),
    "â": ("fr", "pt", "tr"),
    "î": ("fr", "tr"),
    "û": ("fr", "tr"),
    "ô": ("fr", "pt"),
    "ù": ("fr", "it"),
    "ë": ("fr", "nl"),
    "ï": ("fr", "nl"),
    "à": ("fr", "it", "pt"),
    "ì": ("it",),
    "ò": ("it",),
    "á": ("es", "pt", "cs"),
    "í": ("es", "pt", "cs"),
    "ó": ("es", "pt", "pl", "cs"),
    "ú": ("es", "pt", "cs"),
    "ã": ("pt",),
    "õ": ("pt",),
    "ä": ("de", "sv", "fi"),
    "ö": ("de", "sv", "fi", "tr"),
    "ü": ("de", "tr"),
    "å": ("sv", "da", "nb"),
    "ø": ("da", "nb"),
    "æ": ("da", "nb"),
    "ł": ("pl",),
    "ą": ("pl",),
    "ę": ("pl",),
    "ż": ("pl",),
    "ć": ("pl",),
    "ń": ("pl",),
    "ś": ("pl",),
    "ź": ("pl",),
    "ř": ("cs",),
    "ě": ("cs",),
    "ů": ("cs",),
    "č": ("cs",),
    "š": ("cs",),
    "ž": ("cs",),
    "ý": ("cs",),
    "ij": ("nl",),
    "ı": ("tr",),
    "ğ": ("tr",),
    "ş": ("tr",),
}
_HINT_WEIGHT = 0.5
_HINT_CAP = 3.0

_SCRIPTS = (
    ("ja", ((0x3040, 0x30FF),)),
    ("ko", ((0xAC00, 0xD7AF), (0x1100, 0x11FF))),
    ("zh", ((0x4E00, 0x9FFF), (0x3400, 0x4DBF))),
    ("ru", ((0x0400, 0x04FF),)),
    ("el", ((0x0370, 0x03FF),)),
    ("ar", ((0x0600, 0x06FF),)),
    ("he", ((0x0590, 0x05FF),)),
    ("hi", ((0x0900, 0x097F),)),
    ("th", ((0x0E00, 0x0E7F),)),
)
SAMPLE_CHARS = 2000


_NON_LATIN = re.compile(
    "[\u0370-\u03ff\u0400-\u04ff\u0590-\u05ff\u0600-\u06ff\u0900-\u097f\u0e00-\u0e7f"
    "\u1100-\u11ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]"
)
_LETTER = re.compile(r"[^\W\d_]")
# word → the languages it is a frequent function word of (one lookup per word).
_WORD_LANGS: dict[str, tuple[str, ...]] = {}
for _lang, _words in FREQUENT_WORDS.items():
    for _w in _words:
        _WORD_LANGS[_w] = (*_WORD_LANGS.get(_w, ()), _lang)


def _script_of(ch: str) -> str | None:
    code = ord(ch)
    for lang, ranges in _SCRIPTS:
        if any(lo <= code <= hi for lo, hi in ranges):
            return lang
    return None


def languages_differ(a: str, b: str) -> bool:
    """Whether two detected languages are both known and not the same ("und" differs from nothing)."""
    return UNDETERMINED not in (a, b) and a != b


def detect_language(text: str) -> str:
    """ISO 639-1 code of the text's language, or "und" when it cannot tell."""
    sample = text[:SAMPLE_CHARS]
    letters = len(_LETTER.findall(sample))
    if not letters:
        return UNDETERMINED
    foreign = _NON_LATIN.findall(sample)
    if len(foreign) >= 0.3 * letters:
        scripts = Counter(s for s in map(_script_of, foreign) if s)
        if scripts["ja"]:  # kana: Japanese, even when Han characters outnumber it
            return "ja"
        top = scripts.most_common(1)[0][0]
        if top == "ru" and any(ch in "іїєґІЇЄҐ" for ch in sample):
            return "uk"
        return top
    lower = sample.lower()
    words = LETTER_WORD.findall(lower)
    scores: Counter[str] = Counter()
    for word in words:
        for lang in _WORD_LANGS.get(word, ()):
            scores[lang] += 1
    hints: Counter[str] = Counter()
    for mark, langs in _LETTER_HINTS.items():
        n = lower.count(mark)
        if n:
            for lang in langs:
                hints[lang] += n * _HINT_WEIGHT
    for lang, bonus in hints.items():
        scores[lang] += min(bonus, _HINT_CAP)
    if not scores:
        return UNDETERMINED
    (best, top), *rest = [*scores.most_common(), ("", 0.0)]
    runner_up = rest[0][1]
    # Clear lead needed: on a paragraph, a share of the words; on a question, one word more.
    if top < 1 or top <= runner_up or (len(words) > 40 and top < 1.15 * runner_up):
        return UNDETERMINED
    return best


def language_name(code: str | None) -> str:
    return LANGUAGE_NAMES.get(code or "", code or "the original language")


def unknown_languages_problem(codes: Iterable[str]) -> str | None:
    """None when every code is one of LANGUAGE_NAMES; else a message naming the others and the known
    ones. Readers' languages (`reader_languages`) are checked with it: an unknown code ("xx", a typo
    of "de") was taken silently, and could choose the multilingual model for a language nobody reads."""
    unknown = [code for code in codes if code not in LANGUAGE_NAMES]
    if not unknown:
        return None
    named = ", ".join(map(repr, unknown))
    kind = "is not a language code" if len(unknown) == 1 else "are not language codes"
    return f"{named} {kind} Inkwell knows (ISO 639-1); the known ones: {', '.join(sorted(LANGUAGE_NAMES))}"


def check_reader_languages(codes: Iterable[str]) -> None:
    """ConfigError unless every code in `reader_languages` is a known language (unknown_languages_problem)."""
    problem = unknown_languages_problem(codes)
    if problem:
        raise ConfigError(f"reader_languages (INKWELL_READER_LANGUAGES): {problem}")
