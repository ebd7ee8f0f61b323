"""The chat's replies through AppTest: the author's quoted sentences by default with the built-in model,
"I haven't written about that" with the closest posts for what the posts do not answer, and the
sidebar's answer-mode switch. Real pages, real LanceDB, the real embedder; the scripted server only
where a generated answer is wanted (and to prove no model is called otherwise)."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.conftest import open_app, shown, texts
from tests.servers import ScriptedOpenAIServer
from tests.test_app import BEES, corpus, data_dir  # noqa: F401  (fixtures)

pytestmark = pytest.mark.usefixtures("corpus")  # three small posts, bees among them


def unescaped(text: str) -> str:
    return str(text).replace("\\", "")


def test_builtin_setup_quotes_the_authors_sentences():
    at = open_app()
    at.chat_input[0].set_value("When does swarming season start?").run()
    assert not at.exception and not at.error
    reply = at.chat_message[1]
    body = unescaped(reply.markdown[0].value)
    assert body.startswith(f"From *[On Bees](chunks?post={quote('bees')})*:")
    quoted = body.split(":\n\n", 1)[1]
    sentences = [s for part in quoted.split(" … ") for s in [part.strip()] if s]
    assert sentences and all(any(s in p for p in BEES) for s in sentences)  # verbatim, nothing else
    assert "Swarming season starts in May." in quoted
    captions = shown(reply.caption)
    assert "The author's own sentences, quoted from the posts (no model wrote them)." in captions
    assert not any(c.startswith("Answered by") for c in captions)


def test_off_topic_question_gets_the_honest_reply_and_the_closest_posts():
    at = open_app()
    at.chat_input[0].set_value("Who won the football world cup in 2018?").run()
    assert not at.exception and not at.error
    reply = at.chat_message[1]
    assert reply.markdown[0].value == "I haven't written about that, so I can't answer it from my posts."
    closest = unescaped(reply.markdown[1].value)
    assert closest.startswith("The closest posts I have written:")
    assert "(chunks?post=" in closest
    assert not any(t.startswith("**Sources**") for t in texts(reply.markdown))


def test_sidebar_switch_generates_with_a_configured_server_and_quotes_without(monkeypatch):
    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("INKWELL_ROUTING", "off")
        server.chat("Swarming starts in May.")
        at = open_app()
        assert at.sidebar.radio(key="chat_answer_mode").value == "auto"
        at.chat_input[0].set_value("When does swarming season start?").run()
        assert not at.exception and not at.error
        assert at.chat_message[1].markdown[0].value == "Swarming starts in May."  # auto: generated
        assert len(server.chat_requests) == 1

        at.sidebar.radio(key="chat_answer_mode").set_value("extractive").run()
        at.chat_input[0].set_value("When does swarming season start?").run()
        assert not at.exception and not at.error
        assert "Swarming season starts in May." in unescaped(at.chat_message[3].markdown[0].value)
        assert len(server.chat_requests) == 1  # quoting calls no model
