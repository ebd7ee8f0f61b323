"""The ingestion page's LLM stages through AppTest: real page, real LanceDB in a temp dir, the real
embedder, and a scripted OpenAI-compatible server on loopback answering for the model."""

from __future__ import annotations

import pytest

from core.store import Store
from tests.conftest import counts_caption, metrics, open_app, shown, texts
from tests.integration.test_prepare import GOOD_FIRST, WALNUT, responder
from tests.servers import ScriptedOpenAIServer


@pytest.fixture
def server(data_dir, monkeypatch: pytest.MonkeyPatch):
    with ScriptedOpenAIServer() as scripted:
        monkeypatch.setenv("OPENAI_BASE_URL", scripted.base_url)
        monkeypatch.setenv("INKWELL_MAX_RETRIES", "0")
        monkeypatch.setenv("INKWELL_CHUNK_TOKENS", "40")
        scripted.responder = responder(GOOD_FIRST)
        yield scripted


def test_rewrites_are_reviewed_before_anything_is_stored(data_dir, server):
    at = open_app("pages/posts.py")
    for key in ("prep_rewrite", "prep_chunks", "prep_keywords"):
        at.checkbox(key=key).check()
    at.text_input(key="paste_title").input("Walnut boards")
    at.text_area(key="paste_text").input(WALNUT)
    at.button(key="paste_ingest").click().run()
    assert not at.exception
    # First click: the model proposes, the author sees a sentence diff; nothing is stored yet.
    assert any("Review the proposed rewrites below" in t for t in texts(at.info))
    assert counts_caption(at) == "**Table:** 0 posts · 0 chunks"
    assert len(server.chat_requests) == 1
    diff = at.table[0].value
    assert list(diff.columns) == ["sentence", "before", "after"] and list(diff.index) == [2, 3]
    assert list(diff["before"]) == [
        "The second one cracked along the grain.",
        "Those people at the hardware shop swear by linseed oil.",
    ]
    assert list(diff["after"]) == [
        "The second walnut board cracked along the grain.",
        "The staff at the hardware shop swear by linseed oil.",
    ]
    [accept] = [c for c in at.checkbox if (c.key or "").startswith("accept_")]
    assert accept.value is True

    # Rejected: the author's sentences are stored; request 1 came from the cache, keywords were asked.
    accept.uncheck().run()
    at.button(key="paste_ingest").click().run()
    assert not at.exception
    numbers = metrics(at)
    assert numbers["New"] == "1" and numbers["LLM requests"] == "1" and numbers["From cache"] == "1"
    assert int(numbers["Tokens (API)"]) == 15 and int(numbers["Tokens (estimate)"]) > 0
    store = Store(data_dir)
    assert store.list_chunks("walnut-boards")[1]["text"].startswith("The second one cracked")

    # Accepted now: the post is prepared again with the rewrite (the hash includes the decision).
    [accept] = [c for c in at.checkbox if (c.key or "").startswith("accept_")]
    accept.check().run()
    at.button(key="paste_ingest").click().run()
    assert not at.exception
    assert metrics(at)["Updated"] == "1"
    assert store.list_chunks("walnut-boards")[1]["text"].startswith("The second walnut board cracked")
    assert store.get_post("walnut-boards")["raw"].strip() == WALNUT.strip()  # the original, beside it
    assert len(server.chat_requests) == 3


def test_preview_shows_llm_chunks_and_a_failure_is_marked(data_dir, server):
    at = open_app("pages/posts.py")
    at.checkbox(key="prep_chunks").check()
    at.text_input(key="paste_title").input("Walnut boards")
    at.text_area(key="paste_text").input(WALNUT)
    at.button(key="paste_preview").click().run()
    assert not at.exception
    preview = at.dataframe[0].value
    assert list(preview["section"]) == ["Walnut", "Walnut", "Finish"]  # starts [1, 3] + the heading's
    assert preview["text"][1] == (
        "The second one cracked along the grain. [IMAGE: crack.jpg] This annoyed me for a week."
    )
    assert counts_caption(at) == "**Table:** 0 posts · 0 chunks"

    server.responder = None
    server.error(500, "boom")  # the keywords request fails: the post is stored the built-in way
    at.checkbox(key="prep_keywords").check()
    at.button(key="paste_ingest").click().run()
    assert not at.exception
    assert metrics(at)["New"] == "1" and metrics(at)["Failed"] == "0"
    assert any("LLM stage failed" in w and "500" in w for w in shown(at.warning))


def test_chat_translates_questions_into_the_writings_language(data_dir, embedder, monkeypatch):
    from core.config import Settings
    from core.ingest import ingest_posts
    from core.parse import parse_text

    french = parse_text(
        "Je choisis le chêne à la scierie du village. Je regarde d'abord le bout des planches, puis je "
        "mesure l'humidité avant de les acheter.",
        "Choisir le chêne",
    )
    ingest_posts([french], Settings.load({"data_dir": data_dir}, environ={}), embedder=embedder)
    with ScriptedOpenAIServer() as scripted:
        monkeypatch.setenv("OPENAI_BASE_URL", scripted.base_url)
        monkeypatch.setenv("INKWELL_MAX_RETRIES", "0")
        # MiniLM cannot check an English answer over French excerpts, so the default grounding (auto)
        # would quote the post instead of generating (test_app.py); here the answer model must be asked.
        monkeypatch.setenv("INKWELL_GROUNDING", "check")
        scripted.chat("Comment choisis-tu le chêne ?")  # the translation
        scripted.chat("À la scierie, en regardant le bout des planches.")  # the answer
        at = open_app()
        at.chat_input[0].set_value("How do you choose oak?").run()
        assert not at.exception and not at.error
        answer = at.chat_message[1]
        assert "Searched for: Comment choisis-tu le chêne ?" in shown(answer.caption)
        translation, reply = scripted.chat_requests
        assert "into French" in translation.body["messages"][0]["content"]
        assert reply.body["messages"][-1]["content"].endswith("Reader's question: How do you choose oak?")
