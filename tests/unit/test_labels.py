"""The reader's fixed words per language (core/text/labels.py) and the static page written with them."""

from __future__ import annotations

import re

from core.config import Settings
from core.publish.site import ASSETS, PAGE_LABELS, page_html
from core.text.labels import ENGLISH, LABELS, ask_placeholder, label_language, labels
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
