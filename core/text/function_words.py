"""Function words per language ("die", "man" in German; "comment", "plus" in French), from the
`stop-words` package's lists, for telling a word a question shares with English passages by accident
from one it shares by meaning.

    function_words("de")  # frozenset({"die", "man", …}); empty for a language without a list

The language detector (core/text/language.py) scores a text by its own short lists, FREQUENT_WORDS:
they must stay small and balanced across languages; the package's lists are long and uneven.
"""

from __future__ import annotations

from functools import lru_cache

from stop_words import StopWordError, get_stop_words


@lru_cache(maxsize=32)
def function_words(language: str) -> frozenset[str]:
    """The lower-case function words of an ISO 639-1 language (empty when the package has no list)."""
    try:
        return frozenset(w.lower() for w in get_stop_words(language))
    except StopWordError:
        return frozenset()


# The few frequent function words the language detector scores each language by.
FREQUENT_WORDS: dict[str, frozenset[str]] = {
    lang: frozenset(words.split())
    for lang, words in {
        "en": "the and of to in is that it was for with as his on be at by this had not are but from or "
        "have a an they which you were her she there been all we their would my me so what when who will "
        "more if out about up them into your can has its our how why did does do i",
        "fr": "le la les de des est et un une du en que qui dans pour pas sur au avec ce il elle sont ne se "
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


def frequent_words(language: str) -> frozenset[str]:
    """The few frequent function words the detector scores `language` by (empty for one it does not score)."""
    return FREQUENT_WORDS.get(language, frozenset())
