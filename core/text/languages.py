"""What the rules know about each language, one record per language: its function words (the
`stop-words` package), the words a follow-up question points back with, the whole questions that ask
for more ("tell me more"), the words for a person spoken of ("she", "the author"), its number words,
the sentence openers that lean on the sentence before or announce the next, and the fixed replies.

    lang = language("de")          # the German record; FALLBACK (with the code) for a language without one
    lang.function_words            # frozenset from stop-words ("die", "man", …)
    lang.number("zwölf")           # 12
    lang.leans_back("Das ist …")   # True: "das" points at the sentence before
    ENGLISH.takes_up("The felt soaks up the sun.", "I wrap the hives in black felt.")  # True
    ENGLISH.without_third_person("Why did she quit?")  # "Why did quit?"

A language without a record gets FALLBACK with its own code: its function words (from stop-words, when
the package has the language), no cues at all (an English cue is never applied to another language) and
its fixed replies and requests for more from SHORT_RECORDS (English's replies when it has none). `und` (a text too short to tell) gets UNKNOWN: every record's
follow-up cues, since a two-word follow-up ("Und dann?") is rarely long enough to detect.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache

from core.text.function_words import function_words
from core.text.language import UNDETERMINED
from core.text.words import LETTER_WORD as _WORD
from core.text.words import lemma


def _split(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _phrases(text: str) -> frozenset[str]:
    return frozenset(text.split("|"))


def _numbers(units: str, tens: str, big: dict[str, int]) -> dict[str, int]:
    """Number words: `units` are 0..19 in order, `tens` 20..90 in order, `big` the rest."""
    found = {w: i for i, w in enumerate(units.split())}
    found |= {w: 10 * (i + 2) for i, w in enumerate(tens.split())}
    return found | big


@dataclass(frozen=True)
class Language:
    """One language's cues and replies; every field empty in FALLBACK."""

    code: str
    # Words that point back into the conversation ("it", "that one"). Personal pronouns ("she", "he")
    # are left out: readers use them for the author in questions that stand alone.
    referring: frozenset[str] = frozenset()
    # A follow-up starting like this continues the previous question ("And the cost?"): lower case.
    continuations: tuple[str, ...] = ()
    # Whole questions that ask for more of the last answer ("tell me more", "go on"): lower case, without
    # punctuation.
    more_requests: frozenset[str] = frozenset()
    # Words that ask and carry no content ("what", "does"), beside the function words.
    question_words: frozenset[str] = frozenset()
    # Spelled numbers → value; "tens-units" hyphenated compounds are read when `hyphenated_tens`.
    number_words: dict[str, int] = field(default_factory=dict)
    hyphenated_tens: bool = False
    # Sentence openers that point at the sentence before: demonstratives, pronouns, connectives.
    leaning_openers: frozenset[str] = frozenset()
    # Definite articles: a sentence opening with one and a word the sentence before used speaks of what
    # that sentence introduced ("… in black felt. The felt soaks up …").
    definite_articles: frozenset[str] = frozenset()
    # Sentence openers that announce what follows ("Here is …"); a colon at the end does in any language.
    announcing_openers: tuple[str, ...] = ()
    # Words for a person spoken of ("she", "his", "the author"): a question about the author in the third
    # person is compared with posts the author wrote in the first person without them.
    third_person: tuple[str, ...] = ()
    no_answer: str = ""
    cannot_read: str = ""
    # The same for posts not in English (an English-only model reads them word by word only): it cannot
    # name the posts' language in every reader's language, so it says "the language of my posts".
    cannot_read_other: str = ""
    closest: str = ""

    @property
    def function_words(self) -> frozenset[str]:
        """The stop-words package's list for this language (empty when it has none)."""
        return function_words(self.code) if self.code else frozenset()

    @cached_property
    def _leaning(self) -> re.Pattern[str] | None:
        return _opener(self.leaning_openers)

    @cached_property
    def _announcing(self) -> re.Pattern[str] | None:
        return _opener(self.announcing_openers)

    @cached_property
    def _third_person(self) -> re.Pattern[str] | None:
        if not self.third_person:
            return None
        words = "|".join(re.escape(w) for w in sorted(self.third_person, key=len, reverse=True))
        return re.compile(rf"\b(?:{words})(?:['’]s)?\b", re.IGNORECASE)

    def without_third_person(self, question: str) -> str:
        """`question` without its words for a person spoken of ("Why did she quit?" → "Why did quit?"):
        what it asks about, for comparing with sentences the author wrote as "I". Unchanged when that
        would leave nothing."""
        if not self._third_person:
            return question
        left = re.sub(r" ([,.;:!?])", r"\1", " ".join(self._third_person.sub(" ", question).split()))
        return left if left.strip(" ?!.") else question

    def leans_back(self, sentence: str) -> bool:
        """Whether the sentence opens with a word pointing at the one before ("This is why …")."""
        return bool(self._leaning and self._leaning.match(sentence))

    def takes_up(self, sentence: str, before: str) -> bool:
        """Whether the sentence opens with a definite article and a word `before` used ("I wrap my hives
        in black felt." → "The felt soaks up the winter sun."): read alone, "the felt" names nothing.
        Words compare as written, and in English by lemma too ("hives" → "The hive")."""
        opening = _WORD.findall(sentence[:120].lower())[:2]
        if len(opening) < 2 or opening[0] not in self.definite_articles:
            return False
        earlier = set(_WORD.findall(before.lower()))
        noun = opening[1]
        if noun in earlier:
            return True
        return self.code == "en" and lemma(noun) in {lemma(w) for w in earlier}

    def announces(self, sentence: str) -> bool:
        """Whether the sentence opens like an announcement of the next ("Here is what I use:")."""
        return bool(self._announcing and self._announcing.match(sentence))

    def number(self, word: str) -> int | None:
        """The value of a spelled number ("twelve", "thirty-five"), None for any other word."""
        word = word.lower()
        if word in self.number_words:
            return self.number_words[word]
        head, sep, tail = word.partition("-")
        tens, unit = self.number_words.get(head), self.number_words.get(tail)
        if (
            sep
            and self.hyphenated_tens
            and tens is not None
            and unit is not None
            and tens % 10 == 0
            and tens >= 20
        ):
            return tens + unit if 0 < unit < 10 else None
        return None


def _opener(words: Iterable[str]) -> re.Pattern[str] | None:
    if not words:
        return None
    alternatives = "|".join(
        r"\s+".join(map(re.escape, w.split())) for w in sorted(words, key=len, reverse=True)
    )
    return re.compile(rf"^(?:{alternatives})(?!\w)", re.IGNORECASE)


ENGLISH = Language(
    "en",
    referring=_split(
        "it its it's that this these those them they their theirs such same other others former latter "
        "second third more extra else also again then"
    ),
    continuations=("and ", "but ", "so ", "also ", "what about", "how about"),
    more_requests=_phrases(
        "more|more please|tell me more|tell me more please|please tell me more|"
        "tell me more about it|tell me more about that|tell me more about this|say more|"
        "go on|go on please|please go on|continue|please continue|keep going|and then|"
        "what else|anything else|what happened next|and|then what"
    ),
    question_words=_split("what why how when where who whom which whose does did do is are was were"),
    number_words=_numbers(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen",
        "twenty thirty forty fifty sixty seventy eighty ninety",
        {"hundred": 100, "thousand": 1000},
    ),
    hyphenated_tens=True,
    leaning_openers=_split(
        "this that these those it its they them their he she his her him such but and so yet then also "
        "which both there here still instead otherwise however thus hence or nor"
    ),
    definite_articles=frozenset({"the"}),
    announcing_openers=("here is", "here are", "here's", "here’s"),
    third_person=tuple(_phrases("she|he|her|his|hers|him|herself|himself|the author|the writer|the blogger")),
    no_answer="I haven't written about that, so I can't answer it from my posts.",
    cannot_read="I can't read questions in this language yet; please ask in English.",
    cannot_read_other="I can't read questions in this language yet; please ask in the language my posts are written in.",
    closest="The closest posts I have written:",
)

GERMAN = Language(
    "de",
    referring=_split("es das dies diese dieser dieses dazu davon damit darüber ihn ihm ihr ihnen"),
    continuations=("und ", "aber ", "also ", "und was", "was ist mit", "wie ist es mit"),
    more_requests=_phrases(
        "mehr|weiter|und weiter|erzähl mehr|erzähl mir mehr|erzählen sie mehr|"
        "erzählen sie mir mehr|und dann|was noch|sonst noch etwas|mach weiter"
    ),
    question_words=_split("was warum wie wann wo wer wen wem wessen welche welcher welches"),
    number_words=_numbers(
        "null eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf dreizehn vierzehn fünfzehn "
        "sechzehn siebzehn achtzehn neunzehn",
        "zwanzig dreißig vierzig fünfzig sechzig siebzig achtzig neunzig",
        {"hundert": 100, "tausend": 1000},
    ),
    leaning_openers=_split(
        "das dies diese dieser dieses es sie er aber und also dann deshalb daher darum trotzdem sonst "
        "doch auch außerdem"
    ),
    definite_articles=_split("der die das den dem des"),
    announcing_openers=("hier ist", "hier sind", "folgendes"),
    no_answer="Darüber habe ich nicht geschrieben, deshalb kann ich es aus meinen Beiträgen nicht beantworten.",
    cannot_read="Fragen auf Deutsch kann ich noch nicht lesen; bitte fragen Sie auf Englisch.",
    cannot_read_other="Fragen auf Deutsch kann ich noch nicht lesen; bitte fragen Sie in der Sprache meiner Beiträge.",
    closest="Am nächsten kommen diese Beiträge:",
)

FRENCH = Language(
    "fr",
    referring=_split("ça cela ceci celui celle ceux celles lui leur leurs en y aussi encore"),
    continuations=("et ", "mais ", "donc ", "et pour", "et si"),
    more_requests=_phrases(
        "encore|continue|continuez|dis m'en plus|dites m'en plus|dis-m'en plus|"
        "dites-m'en plus|et ensuite|et après|quoi d'autre|et puis|raconte-moi plus"
    ),
    question_words=_split("que quoi qui quel quelle quels quelles comment pourquoi quand où combien"),
    number_words=_numbers(
        "zéro un deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze seize "
        "dix-sept dix-huit dix-neuf",
        "vingt trente quarante cinquante soixante soixante-dix quatre-vingts quatre-vingt-dix",
        {"cent": 100, "mille": 1000},
    ),
    leaning_openers=_split(
        "cela ça ce cette ces il elle ils elles mais et donc puis aussi pourtant alors ainsi sinon"
    ),
    definite_articles=_split("le la les"),
    announcing_openers=("voici", "voilà"),
    no_answer="Je n'ai pas écrit là-dessus, je ne peux donc pas y répondre à partir de mes articles.",
    cannot_read="Je ne sais pas encore lire les questions en français ; posez-la en anglais, s'il vous plaît.",
    cannot_read_other="Je ne sais pas encore lire les questions en français ; posez-la dans la langue de mes articles, s'il vous plaît.",
    closest="Les articles les plus proches :",
)

SPANISH = Language(
    "es",
    referring=_split("eso esto esa ese esas esos aquello lo la los las le les también otra otro otros"),
    continuations=("y ", "pero ", "entonces ", "¿y ", "y qué", "¿y qué"),
    more_requests=_phrases(
        "más|sigue|continúa|continúe|cuéntame más|dime más|cuénteme más|y luego|y después|qué más|algo más"
    ),
    question_words=_split("qué que cómo como por porqué cuándo dónde quién quiénes cuál cuáles cuánto"),
    number_words=_numbers(
        "cero uno dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince "
        "dieciséis diecisiete dieciocho diecinueve",
        "veinte treinta cuarenta cincuenta sesenta setenta ochenta noventa",
        {"cien": 100, "ciento": 100, "mil": 1000},
    ),
    leaning_openers=_split(
        "esto eso esta este estos estas ello él ella ellos ellas pero y así entonces también además"
    ),
    definite_articles=_split("el la los las"),
    announcing_openers=("aquí está", "aquí están", "he aquí"),
    no_answer="No he escrito sobre eso, así que no puedo responderlo a partir de mis publicaciones.",
    cannot_read="Todavía no puedo leer preguntas en español; pregúntelo en inglés, por favor.",
    cannot_read_other="Todavía no puedo leer preguntas en español; pregúntelo en el idioma de mis textos, por favor.",
    closest="Las publicaciones más cercanas:",
)

TURKISH = Language(
    "tr",
    referring=_split("bu şu o onu ona onun bunu bunun şunu onlar onları ayrıca"),
    continuations=("ve ", "peki", "ama ", "ya "),
    more_requests=_phrases(
        "devam|devam et|devam edin|daha fazla anlat|biraz daha anlat|daha fazla|sonra|"
        "ve sonra|başka|başka ne var|anlatmaya devam et"
    ),
    question_words=_split("ne neden niçin nasıl nerede ne zaman kim hangi kaç mi mı mu mü"),
    number_words=_numbers(
        "sıfır bir iki üç dört beş altı yedi sekiz dokuz on",
        "yirmi otuz kırk elli altmış yetmiş seksen doksan",
        {"yüz": 100, "bin": 1000},
    ),
    leaning_openers=_split("bu bunu bunun şu o onu ama ve fakat ancak yani çünkü ayrıca"),
    announcing_openers=("işte",),
    no_answer="Bu konuda yazmadım, bu yüzden yazılarımdan yanıtlayamam.",
    cannot_read="Türkçe soruları henüz okuyamıyorum; lütfen İngilizce sorun.",
    cannot_read_other="Türkçe soruları henüz okuyamıyorum; lütfen yazılarımın dilinde sorun.",
    closest="En yakın yazılarım:",
)

LANGUAGES: dict[str, Language] = {lang.code: lang for lang in (ENGLISH, GERMAN, FRENCH, SPANISH, TURKISH)}

# Languages readers ask in that have no full record: their fixed replies (no answer, cannot read,
# closest posts) and their requests for more, but no other cues. A Japanese question on an English-only
# table is told so in Japanese; "もっと教えて" goes on with the last answer.
SHORT_RECORDS: dict[str, Language] = {
    lang.code: lang
    for lang in (
        Language(
            "it",
            more_requests=_phrases(
                "di più|dimmi di più|raccontami di più|continua|vai avanti|e poi|altro|cos'altro"
            ),
            no_answer="Non ne ho scritto, quindi non posso rispondere dai miei post.",
            cannot_read="Non so ancora leggere domande in italiano; per favore, chiedi in inglese.",
            cannot_read_other="Non so ancora leggere domande in italiano; per favore, chiedi nella lingua dei miei post.",
            closest="I post più vicini che ho scritto:",
        ),
        Language(
            "pt",
            more_requests=_phrases("mais|conte mais|me conte mais|fale mais|continue|continua|e depois"),
            no_answer="Não escrevi sobre isso, por isso não posso responder a partir dos meus textos.",
            cannot_read="Ainda não consigo ler perguntas em português; por favor, pergunte em inglês.",
            cannot_read_other="Ainda não consigo ler perguntas em português; por favor, pergunte na língua dos meus textos.",
            closest="Os textos mais próximos que escrevi:",
        ),
        Language(
            "nl",
            more_requests=_phrases("meer|vertel meer|vertel me meer|ga door|ga verder|en toen|en verder"),
            no_answer="Daar heb ik niet over geschreven, dus ik kan het niet beantwoorden vanuit mijn berichten.",
            cannot_read="Vragen in het Nederlands kan ik nog niet lezen; stel je vraag alsjeblieft in het Engels.",
            cannot_read_other="Vragen in het Nederlands kan ik nog niet lezen; stel je vraag alsjeblieft in de taal van mijn berichten.",
            closest="De berichten die er het dichtst bij komen:",
        ),
        Language(
            "ru",
            more_requests=_phrases(
                "ещё|еще|дальше|подробнее|продолжай|продолжайте|расскажи подробнее|расскажи ещё|"
                "расскажи еще|расскажите подробнее"
            ),
            no_answer="Об этом в моих записях ничего нет, поэтому ответить я не могу.",
            cannot_read="Я пока не умею читать вопросы на русском; пожалуйста, спросите по-английски.",
            cannot_read_other="Я пока не умею читать вопросы на русском; пожалуйста, спросите на языке моих записей.",
            closest="Самые близкие записи:",
        ),
        Language(
            "ja",
            more_requests=_phrases("もっと|もっと教えて|もっと詳しく|詳しく|続けて|続きを|続きは"),
            no_answer="そのことについては書いたことがないので、私の投稿からはお答えできません。",
            cannot_read="まだ日本語の質問は読めません。英語で質問してください。",
            cannot_read_other="まだ日本語の質問は読めません。私の投稿と同じ言語で質問してください。",
            closest="いちばん近い投稿：",
        ),
        Language(
            "zh",
            more_requests=_phrases("继续|多说一点|再说说|详细说说|还有呢|然后呢|多讲一点"),
            no_answer="我没有写过这方面的内容，所以无法根据我的文章回答。",
            cannot_read="我还读不懂中文的问题；请用英文提问。",
            cannot_read_other="我还读不懂中文的问题；请用我文章所用的语言提问。",
            closest="最相关的文章：",
        ),
        Language(
            "ko",
            more_requests=_phrases("더|더 알려줘|더 말해줘|계속|계속해|계속해줘|자세히"),
            no_answer="그것에 대해서는 쓴 적이 없어서 제 글로는 답할 수 없습니다.",
            cannot_read="아직 한국어 질문은 읽을 수 없습니다. 영어로 질문해 주세요.",
            cannot_read_other="아직 한국어 질문은 읽을 수 없습니다. 제 글과 같은 언어로 질문해 주세요.",
            closest="가장 가까운 글:",
        ),
    )
}
# Every language with fixed replies of its own (the others get English's).
REPLY_LANGUAGES: tuple[str, ...] = (*LANGUAGES, *SHORT_RECORDS)

# A language without a record: no cues (none of another language's), English replies; `language()` gives
# it the language's code, so its function words are the stop-words package's.
FALLBACK = Language(
    "",
    no_answer=ENGLISH.no_answer,
    cannot_read=ENGLISH.cannot_read,
    cannot_read_other=ENGLISH.cannot_read_other,
    closest=ENGLISH.closest,
)
# A text too short to tell its language: every record's follow-up cues, no sentence or number cues.
UNKNOWN = Language(
    UNDETERMINED,
    referring=frozenset().union(*(lang.referring for lang in LANGUAGES.values())),
    continuations=tuple(c for lang in LANGUAGES.values() for c in lang.continuations),
    more_requests=frozenset().union(
        *(lang.more_requests for lang in (*LANGUAGES.values(), *SHORT_RECORDS.values()))
    ),
    question_words=frozenset().union(*(lang.question_words for lang in LANGUAGES.values())),
    third_person=ENGLISH.third_person,
    no_answer=ENGLISH.no_answer,
    cannot_read=ENGLISH.cannot_read,
    cannot_read_other=ENGLISH.cannot_read_other,
    closest=ENGLISH.closest,
)


def language(code: str | None) -> Language:
    """The record of an ISO 639-1 language: UNKNOWN for "und" (or none); for a language without a record,
    FALLBACK under its code (its function words, no cues)."""
    if not code or code == UNDETERMINED:
        return UNKNOWN
    return LANGUAGES.get(code) or _fallback(code)


@lru_cache(maxsize=64)
def _fallback(code: str) -> Language:
    return SHORT_RECORDS.get(code) or replace(FALLBACK, code=code)
