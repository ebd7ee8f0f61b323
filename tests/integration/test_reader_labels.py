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
from tests.conftest import GERMAN_POSTS, open_app, shown
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
