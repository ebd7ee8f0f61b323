"""A German blog's readers get the fixed words around an answer in German (core/text/labels.py): the HTTP
API's welcome and replies carry them for the widget, and the chat page shows them; an English question on
the same blog gets English ones. Real LanceDB, the real embedder, the API in-process, the chat in AppTest."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import Settings
from core.ingest import ingest_posts
from core.models import Block, Post
from core.serve.api import api_app
from core.store import Store
from core.text.labels import labels
from tests.conftest import GERMAN_POSTS, open_app, shown, texts
from tests.integration.test_api_requests import call, post

GERMAN = labels("de")


@pytest.fixture
def german_blog(data_dir: Path, embedder) -> Settings:
    """The German blog's three posts, ingested (which records German as the corpus's language)."""
    settings = Settings.load({"data_dir": data_dir}, environ={})
    posts = []
    for name, text in GERMAN_POSTS.items():
        title, body = text.split("\n\n", 1)
        posts.append(Post(name, title, [Block(body.strip())], raw=body.strip(), source=f"{name}.txt"))
    assert ingest_posts(posts, settings, store=Store(data_dir), embedder=embedder).ok
    return settings


def test_the_api_gives_a_german_blogs_widget_german_labels(german_blog: Settings):
    app = api_app(lambda: german_blog)
    status, welcome = call(app, "GET", "/welcome", b"")
    assert status == 200 and welcome["language"] == "de" and welcome["labels"] == GERMAN  # before a question
    status, reply = post(app, "/ask", {"question": "Wie überwintern die Bienen im Winter?"})
    assert status == 200, reply
    assert reply["language"] == "de" and reply["labels"]["searched_for"] == "Gesucht nach:"
    assert reply["labels"]["sources"] == "Quellen:" and reply["labels"]["writing"] != "Writing…"
    # The quoted answer's own frame too: "Aus <post>:", in the text the widget shows and in the Markdown.
    assert reply["mode"] == "extractive", reply
    assert reply["answer_text"].startswith("Aus Bienen im Winter:\n"), reply["answer_text"]
    assert reply["answer"].startswith("Aus *Bienen im Winter*:\n"), reply["answer"]
    # A reader asking in English is answered in English, labels too.
    status, english = post(app, "/ask", {"question": "How do the bees get through the cold winter?"})
    assert status == 200 and english["language"] == "en" and english["labels"] == labels("en")
    assert english["answer_text"].startswith("From "), english["answer_text"]
    # `lang` is the author's words' (German), whatever the frame's: a screen reader reads them in German.
    assert english["lang"] == "de" and reply["lang"] == "de"


def test_the_chat_on_a_german_blog_speaks_german_around_the_answer(german_blog: Settings):
    at = open_app()
    # The blog's language, asked nothing; the author not named, so no English "the author" in a German sentence.
    assert at.chat_input[0].placeholder == "Stellen Sie eine Frage"
    at.chat_input[0].set_value("Was füttern Sie im September den Bienen?").run()
    assert not at.exception and not at.error
    reply = at.chat_message[1]
    body, sources = (m.value for m in reply.markdown)
    # The author's sentences under "Aus <post>:" (was "From"), the German note and list, nothing English.
    assert body.startswith("Aus *[Bienen im Winter](") and "Zuckersirup" in body, body
    assert sources.startswith("**Quellen**")
    assert GERMAN["quoted"] in shown(reply.caption)
    assert [e.label for e in reply.expander if "kopieren" in e.label] == ["Antwort kopieren"]
    # A follow-up pointing back is searched with the question before it: said in German.
    at.chat_input[0].set_value("Und wie viel davon bekommt jedes Volk?").run()
    assert not at.exception
    captions = shown(at.chat_message[3].caption)
    assert (
        "Gesucht nach: Was füttern Sie im September den Bienen? Und wie viel davon bekommt jedes Volk?"
        in captions
    )
    assert not any("Searched for" in c or "author's own" in c for c in captions), captions
    assert at.chat_input[0].placeholder == "Stellen Sie eine Frage"


def test_an_english_blogs_chat_stays_english(corpus):
    at = open_app()
    assert at.chat_input[0].placeholder == "Ask a question"
    at.chat_input[0].set_value("When does swarming season start?").run()
    reply = at.chat_message[1]
    assert reply.markdown[0].value.startswith("From *[")
    assert labels("en")["quoted"] in shown(reply.caption)
    assert reply.markdown[1].value.startswith("**Sources**")


def test_the_question_after_an_answer_in_another_language_is_asked(corpus):
    """The input's placeholder follows the last answer's language; changing it must not lose the question
    typed into it (a widget without a key is another widget once its placeholder changes, and Streamlit
    dropped the reader's question without a word)."""
    at = open_app()
    at.chat_input[0].set_value("Wann beginnt die Schwarmzeit der Bienen?").run()
    assert "Deutsch" in at.chat_message[1].markdown[0].value  # answered in German (on an English blog)
    at.chat_input[0].set_value("When does swarming season start?").run()
    assert not at.exception
    asked = [m.markdown[0].value if m.markdown else "" for m in at.chat_message]
    assert len(at.chat_message) == 4, asked
    assert at.chat_message[3].markdown[0].value.startswith("From "), asked


LONG_GERMAN = "Wie überwintern die Bienen im kalten Winter, wenn es draußen lange friert und schneit?"


def test_the_api_refuses_a_german_readers_question_in_german(german_blog: Settings):
    """The widget shows `error` as it is: a German reader was refused in English. Same statuses."""
    app = api_app(lambda: german_blog.replace(max_question_chars=40, questions_per_minute=1))
    status, empty = post(app, "/ask", {"question": "   "})  # nothing to tell by: the blog's language
    assert (status, empty["error"]) == (400, "Die Frage ist leer: Bitte geben Sie eine Frage ein.")
    status, long = post(app, "/ask", {"question": LONG_GERMAN})
    assert status == 413 and long["error"].startswith(f"Diese Frage ist {len(LONG_GERMAN)} Zeichen"), long
    assert "höchstens 40 Zeichen" in long["error"]
    status, searched = call(app, "GET", "/search", b"q=%20")
    assert (status, searched["error"]) == (400, empty["error"])
    # An English question on the German blog is refused in English, as it would be answered.
    asked = "How do the bees get through the cold winter here?"
    status, english = post(app, "/ask", {"question": asked})
    assert status == 413 and english["error"].startswith(f"This question is {len(asked)} characters"), english
    # The per-minute limit: the first question is answered, the second refused in German, still a 429.
    assert post(app, "/ask", {"question": "Was füttern Sie?"})[0] == 200
    status, limited = post(app, "/ask", {"question": "Wann schwärmen die Bienen?"})
    assert status == 429 and limited["error"].startswith("Sie haben in der letzten Minute viele Fragen"), (
        limited
    )


def test_the_chat_refuses_a_german_question_in_german(german_blog: Settings, monkeypatch):
    monkeypatch.setenv("INKWELL_MAX_QUESTION_CHARS", "40")
    monkeypatch.setenv("INKWELL_QUESTIONS_PER_MINUTE", "1")
    at = open_app()
    # The caption in the blog's language; the author unnamed, so no English "the author" in it.
    assert GERMAN["voice_unnamed"] in texts(at.caption)
    at.chat_input[0].set_value(LONG_GERMAN).run()
    assert not at.exception and len(at.chat_message) == 0  # neither shown nor answered
    (warning,) = texts(at.warning)
    assert warning == (
        f"Diese Frage ist {len(LONG_GERMAN)} Zeichen lang, Fragen dürfen höchstens 40 Zeichen lang sein. "
        "Bitte stellen Sie eine kürzere Frage."
    )
    # A refused question costs none of the minute's; the next one is answered, the one after it refused,
    # in the conversation's language when the question is too short to tell.
    at.chat_input[0].set_value("Was füttern Sie im September den Bienen?").run()
    assert len(at.chat_message) == 2 and not at.warning
    at.chat_input[0].set_value("Und?").run()
    (warning,) = texts(at.warning)
    assert warning.startswith("Sie haben in der letzten Minute viele Fragen gestellt: Bitte warten Sie "), (
        warning
    )


def test_the_chat_says_whose_voice_answers_in_the_blogs_language(german_blog: Settings, monkeypatch):
    monkeypatch.setenv("INKWELL_AUTHOR_NAME", "Mara Quill")
    at = open_app()
    assert "Fragen werden im Namen von Mara Quill beantwortet, ausschließlich aus den Beiträgen." in texts(
        at.caption
    )


def test_the_reader_page_of_a_missing_post_on_a_german_blog_is_in_german(german_blog: Settings):
    at = open_app()
    at.query_params["post"] = "gone"
    at.switch_page("pages/read.py").run()
    assert not at.exception and texts(at.title) == ["Beitrag nicht gefunden"]
    assert [link.label for link in at.get("page_link")] == ["Zurück zum Chat"]
