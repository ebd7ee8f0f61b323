"""The reader's fixed words per language (core/text/labels.py) and the static page written with them."""

from __future__ import annotations

import re

import pytest

from core.config import Settings
from core.publish.site import ASSETS, PAGE_LABELS, page_html
from core.serve.guard import Decision
from core.text import QuestionError, check_question
from core.text.labels import ENGLISH, LABELS, ask_placeholder, label_language, labels, voice_caption
from core.text.languages import REPLY_LANGUAGES


def test_every_reply_language_has_every_label_with_its_placeholders():
    assert set(LABELS) == set(REPLY_LANGUAGES)
    for code, words in LABELS.items():
        assert set(words) == set(ENGLISH), code
        for key, english in ENGLISH.items():
            assert re.findall(r"\{\w+\}", words[key]) == re.findall(r"\{\w+\}", english), (code, key)
            assert words[key].strip() == words[key] and words[key], (code, key)
        if code != "en":  # a set of its own, not English's words under another code
            assert words["searched_for"] != ENGLISH["searched_for"], code


def test_the_labels_follow_the_question_then_the_blog():
    assert label_language("Wie überwintern die Bienen im kalten Winter?", "en") == "de"
    assert label_language("How do the bees get through the winter?", "de") == "en"
    assert label_language(None, "fr") == "fr"  # nothing asked yet: the blog's language
    assert label_language("", "xx") == "en"  # a language without a set: English
    assert labels("de")["searched_for"] == "Gesucht nach:" and labels("xx") is ENGLISH


def test_the_static_page_is_written_in_the_blogs_language():
    template = (ASSETS / "index.html").read_text(encoding="utf-8")
    assert page_html(template, "en") == template  # English: the page as it is
    german = page_html(template, "de")
    assert '<html lang="de">' in german
    for key in PAGE_LABELS:
        assert ENGLISH[key] not in german, key  # every fixed word of the template was found and replaced
    assert 'placeholder="Stellen Sie eine Frage zu den Beiträgen"' in german
    assert ">Der Assistent wird geladen…<" in german


def test_an_unnamed_author_is_not_put_into_another_languages_sentence():
    """The chat box said "Fragen Sie the author etwas": the default name, English, in a German sentence."""
    unnamed = Settings.load({}, environ={})
    assert unnamed.named_author == ""
    assert ask_placeholder(labels("de"), unnamed.named_author) == "Stellen Sie eine Frage"
    named = Settings.load({"author_name": "Mara Quill"}, environ={})
    assert ask_placeholder(labels("de"), named.named_author) == "Fragen Sie Mara Quill etwas"
    assert ask_placeholder(labels("en"), named.named_author) == "Ask Mara Quill something"


def test_a_refused_question_is_told_in_the_readers_language():
    """The refusals were English whatever the reader's language; English's text is unchanged."""
    with pytest.raises(QuestionError) as info:
        check_question("é" * 20_000, 1000)
    assert info.value.in_language("en") == str(info.value)
    assert str(info.value).startswith("This question is 20,000 characters long")
    assert info.value.in_language("de") == (
        "Diese Frage ist 20.000 Zeichen lang, Fragen dürfen höchstens 1.000 Zeichen lang sein. "
        "Bitte stellen Sie eine kürzere Frage."
    )
    assert "20\u202f000" in info.value.in_language("fr") and "1,000" in info.value.in_language("xx")
    with pytest.raises(QuestionError) as empty:
        check_question("\u200b", 1000)
    assert empty.value.in_language("ja") == "質問が空です。質問を入力してください。"
    with pytest.raises(QuestionError) as flood:
        check_question("e" + "\u0301" * 2500, 300)  # one character drawn, 2,501 code points
    assert flood.value.in_language("de").startswith("Diese Frage besteht aus 2.501 Unicode-Codepunkten")
    assert "erlaubt sind höchstens 2.400" in flood.value.in_language("de")


def test_the_rate_limit_and_the_chat_caption_in_the_readers_language():
    limited = Decision(False, retry_after=11.2)
    assert limited.message == "You have asked a lot of questions in the last minute: please wait 12 s."
    assert (
        limited.in_language("de")
        == "Sie haben in der letzten Minute viele Fragen gestellt: Bitte warten Sie 12 s."
    )
    assert Decision(True).in_language("de") == "" and limited.wait == 12
    assert voice_caption(labels("en"), "Mara Quill") == (
        "Questions are answered in the voice of Mara Quill, from their posts only."
    )
    assert (
        voice_caption(labels("de"), "")
        == "Fragen werden ausschließlich aus den Beiträgen des Autors beantwortet."
    )
