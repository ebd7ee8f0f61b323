"""Which language a text is written in: cheap, offline, good on paragraphs and fair on short questions.

Method: a text mostly in a non-Latin script is named by its script (kana → Japanese, Hangul → Korean,
Han → Chinese, Cyrillic → Russian or Ukrainian, Greek, Arabic, Hebrew, Devanagari, Thai). Latin-script
text is scored by how many of its words are frequent function words of each language, plus a little
for letters that only some languages use (ñ, ß, ç, ã, å, ø, ł, …). The winner must lead clearly,
otherwise the answer is "und" (undetermined) and callers treat it as "not known to be the same".

simplemma's own `langdetect` was tried first: it loads a lemma dictionary per candidate language and
took tens of seconds per call on this machine, far too slow for every post and every question.

The corpus's main language (chars-weighted over stored posts) is recorded at ingest by
`core.llm.cache.LLMCache.record_languages` and read by `core.llm.cache.corpus_language` for question
translation.
"""

from __future__ import annotations

import re
from collections import Counter

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

_STOPWORDS: dict[str, frozenset[str]] = {
    lang: frozenset(words.split())
    for lang, words in {
        "en": "the and of to in is that it was for with as his on be at by this had not are but from or "
        "have an they which you were her she there been all we their would my me so what when who will "
        "more if out about up them into your can has its our how why did does do i",
        "fr": "le la les des est et un une du en que qui dans pour pas sur au avec ce il elle sont ne se "
        "plus par mais ou nous vous leur cette aux été être je tu y très fait comment pourquoi quoi "
        "quel quelle",
        "de": "der die das und ist nicht ein eine zu den von mit sich des auf für im dem auch es an als "
        "wie bei nach aus wir ich sie er hat sind wird oder noch nur über kann zum zur haben warum was "
        "wann du",
        "es": "el la los las de que y en un una es por con para del se no al lo como más pero sus su le "
        "ya este está son muy también fue ha hay porque cuando esta entre qué cómo por qué tu",
        "it": "il lo la gli le di che e è un una per non con del della dei sono da si ma come anche più "
        "al nel alla questo ha io sei mi ti ci perché cosa",
        "pt": "o a os as de que e do da em um uma para com não é por mais dos das se na no ao como mas "
        "foi ele ela seu sua são isso muito também já está você por que",
        "nl": "de het een en van is dat niet op te in voor met zijn die aan er maar ook als bij dan nog "
        "wordt om door naar uit worden ze je ik wij hij zij heeft hebben was wat waarom hoe",
        "sv": "och att det som en på är av för med till den har inte om ett var jag de men så från kan "
        "sig vi hon han ska när också eller vad varför hur du",
        "da": "og at det som en på er af for med til den har ikke om et var jeg de men så fra kan sig vi "
        "hun han skal når også eller hvad hvorfor hvordan du",
        "nb": "og at det som en på er av for med til den har ikke om et var jeg de men så fra kan seg vi "
        "hun han skal når også eller hva hvorfor hvordan du",
        "fi": "ja on ei se että oli hän kun mutta myös tai ovat ole sen tämä mitä niin jos vain kuin minä "
        "sinä me te he miksi miten",
        "pl": "i w nie na się z do to że jest jak o co ale tak po od za ten jego są przez dla czy tylko "
        "już może dlaczego",
        "cs": "a v se na je že to s z do o jak ale za by jsou jsem byl jeho pro tak není nebo co proč",
        "tr": "ve bir bu da de için ile çok ne ama gibi daha olarak var değil ben sen o biz siz onlar "
        "her şey en mi mı mu mü neden nasıl hakkında kadar sonra önce çünkü ki veya hem",
    }.items()
}

# Letters that point to some languages only (weight per occurrence, capped per text).
_LETTER_HINTS: dict[str, tuple[str, ...]] = {
    "ñ": ("es",),
    "¿": ("es",),
    "¡": ("es",),
    "ß": ("de",),
    "ç": ("fr", "pt"),
    "è": ("fr", "it"),
    "ê": ("fr", "pt"),
    "œ": ("fr",),
    "ã": ("pt",),
    "õ": ("pt",),
    "å": ("sv", "da", "nb"),
    "ø": ("da", "nb"),
    "æ": ("da", "nb"),
    "ł": ("pl",),
    "ą": ("pl",),
    "ę": ("pl",),
    "ż": ("pl",),
    "ř": ("cs",),
    "ě": ("cs",),
    "ů": ("cs",),
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
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
SAMPLE_CHARS = 2000


_NON_LATIN = re.compile(
    "[\u0370-\u03ff\u0400-\u04ff\u0590-\u05ff\u0600-\u06ff\u0900-\u097f\u0e00-\u0e7f"
    "\u1100-\u11ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]"
)
_LETTER = re.compile(r"[^\W\d_]")
# word → the languages it is a frequent function word of (one lookup per word).
_WORD_LANGS: dict[str, tuple[str, ...]] = {}
for _lang, _words in _STOPWORDS.items():
    for _w in _words:
        _WORD_LANGS[_w] = (*_WORD_LANGS.get(_w, ()), _lang)


def frequent_words(language: str) -> frozenset[str]:
    """The few frequent function words the detector scores `language` by (empty for one it does not score)."""
    return _STOPWORDS.get(language, frozenset())


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
    words = _WORD.findall(lower)
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
