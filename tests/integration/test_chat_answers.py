"""The chat's replies through AppTest: the author's quoted sentences by default with the built-in model,
"I haven't written about that" with the closest posts for what the posts do not answer, and the
sidebar's answer-mode switch; with the model server down, the author's quoted sentences and a note,
and no server address for public readers. Real pages, real LanceDB, the real embedder; the scripted server only
where a generated answer is wanted (and to prove no model is called otherwise)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import pytest

from core.answer.owner import save_owner
from core.answer.reply import UNREACHABLE_NOTE
from core.store import Store
from pages.shared.replies import excerpts_label, quotes_markdown
from pages.shared.text import md_escape
from tests.conftest import BEES, open_app, shown, texts
from tests.e2e_support import free_port
from tests.servers import ScriptedOpenAIServer

pytestmark = pytest.mark.usefixtures("corpus")  # three small posts, bees among them


def unescaped(text: str) -> str:
    return str(text).replace("\\", "")


def test_builtin_setup_quotes_the_authors_sentences():
    at = open_app()
    at.sidebar.toggle(key="show_details").set_value(True).run()  # the excerpts are the owner's details
    at.chat_input[0].set_value("When does swarming season start?").run()
    assert not at.exception and not at.error
    reply = at.chat_message[1]
    body = unescaped(reply.markdown[0].value)
    assert body.startswith(f"From *[On Bees](read?post={quote('bees')}&q=")  # the reader page, at the quotes
    quoted = body.split(":\n\n", 1)[1]
    assert "…" not in quoted
    lines = [line.strip() for line in quoted.splitlines() if line.strip()]  # the passage's paragraphs
    assert lines and all(any(line in p for p in BEES) for line in lines)  # verbatim, nothing else
    assert "Swarming season starts in May." in quoted
    captions = shown(reply.caption)
    assert "The author's own sentences, quoted from the posts (no model wrote them)." in captions
    assert not any(c.startswith("Answered by") for c in captions)
    quoted_label = [e.label for e in reply.expander if "quoted" in e.label]
    assert len(quoted_label) == 1 and re.fullmatch(
        r"1 excerpt was quoted|\d+ excerpts were quoted", quoted_label[0]
    )


def test_a_passage_going_on_into_the_posts_next_section_shows_its_heading_in_the_chat():
    """As the answer's own text (core/answer/extractive.py `passage_text`): the heading, in bold and
    escaped (the author's words, not markup), a paragraph apart from the sentences around it."""
    quotes = [
        {"text": "This first post is my answer.", "post_id": "p", "title": "Why", "url": "", "joined": ""},
        {"text": "Ezra keeps notebooks.", "post_id": "p", "title": "Why", "url": "", "joined": "paragraph",
         "section": "Reason *one*"},
        {"text": "So do I.", "post_id": "p", "title": "Why", "url": "", "joined": "space", "section": ""},
    ]  # fmt: skip
    body = quotes_markdown(quotes).split(":\n\n", 1)[1]
    e = md_escape
    said = f"{e('This first post is my answer.')}\n\n**{e('Reason *one*')}**\n\n{e('Ezra keeps notebooks. So do I.')}"
    assert body == said, body
    assert "**Reason \\*one\\***" in body  # the heading's own asterisks are text


def test_copy_the_answer_gives_plain_text_without_markdown():
    """A reader pastes the copy into a mail or a note: the title as written, not `*On Bees*`."""
    at = open_app()
    at.chat_input[0].set_value("When does swarming season start?").run()
    assert not at.exception and not at.error
    reply = at.chat_message[1]
    (copy,) = [e for e in reply.expander if e.label == "Copy the answer"]
    text = copy.code[0].value
    assert text.startswith("From On Bees:\n") and "*" not in text, text
    assert "Swarming season starts in May." in text


def test_the_excerpts_label_counts_in_words():
    assert excerpts_label(1, "extractive") == "1 excerpt was quoted"
    assert excerpts_label(3, "extractive") == "3 excerpts were quoted"
    assert excerpts_label(1, "generative") == "1 excerpt went into the answer's context"


def test_off_topic_question_gets_the_honest_reply_and_the_closest_posts():
    at = open_app()
    at.chat_input[0].set_value("Who won the football world cup in 2018?").run()
    assert not at.exception and not at.error
    reply = at.chat_message[1]
    assert (
        unescaped(reply.markdown[0].value)
        == "I haven't written about that, so I can't answer it from my posts."
    )
    closest = unescaped(reply.markdown[1].value)
    assert closest.startswith("The closest posts I have written:")
    assert "(read?post=" in closest and "chunks?" not in closest
    assert not any(t.startswith("**Sources**") for t in texts(reply.markdown))


def test_a_decline_within_the_readers_chosen_collections_says_where_it_searched():
    """A reader who picked "recipes" in the sidebar and asked about bees got "I haven't written about
    that" with no word that only recipes were searched: the bees post answers it."""
    at = open_app()
    at.sidebar.multiselect(key="chat_collections").set_value(["recipes"]).run()
    at.chat_input[0].set_value("When does swarming season start?").run()
    assert not at.exception and not at.error
    reply = at.chat_message[1]
    assert unescaped(reply.markdown[0].value).startswith("I haven't written about that")
    assert "Searched only in: recipes" in shown(reply.caption)
    at.sidebar.multiselect(key="chat_collections").set_value([]).run()  # everywhere: answered, no such line
    at.chat_input[0].set_value("When does swarming season start?").run()
    assert not any("Searched only in" in c for c in shown(at.chat_message[3].caption))


def test_the_owners_decline_text_is_shown_word_for_word(data_dir):
    """The Settings page's decline text is the owner's plain words, as the widget and the API show them:
    the chat drew it as Markdown, so `$40 … $90` became a formula, `*nix` italics, `# …` a heading."""
    own = "# Sorry! I only price chairs ($40 to $90), not *nix boxes or <b>tables</b>: see [my shop](x)."
    save_owner(Store(data_dir), {"decline_text": own})
    at = open_app()
    at.chat_input[0].set_value("Who won the football world cup in 2018?").run()
    assert not at.exception and not at.error
    body = at.chat_message[1].markdown[0].value
    assert body == md_escape(own)  # every Markdown character shown as typed
    assert unescaped(body) == own


def test_with_only_the_built_in_model_readers_are_offered_no_generated_answer():
    at = open_app()
    assert not [r for r in at.sidebar.radio if r.key == "chat_answer_mode"]
    assert any("no model writes a word" in c for c in texts(at.sidebar.caption))
    at.chat_input[0].set_value("When does swarming season start?").run()
    assert not at.exception and not at.error
    assert "Swarming season starts in May." in unescaped(at.chat_message[1].markdown[0].value)  # quoted


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


def test_an_over_long_question_is_refused_before_any_work(monkeypatch):
    monkeypatch.setenv("INKWELL_MAX_QUESTION_CHARS", "200")
    at = open_app()
    at.chat_input[0].set_value("Why " * 100).run()
    assert not at.exception and not at.error
    assert "questions are limited to 200" in " ".join(texts(at.warning))
    assert len(at.chat_message) == 0  # neither shown nor answered
    at.chat_input[0].set_value("When does swarming season start?").run()
    assert len(at.chat_message) == 2  # the next question goes through


def test_a_refused_question_is_explained_under_the_conversation_where_the_reader_looks(monkeypatch):
    """The reader is at the bottom of a conversation, by the input: the refusal is drawn there, after the
    last answer, not above the conversation where a long one scrolls it out of view."""
    monkeypatch.setenv("INKWELL_MAX_QUESTION_CHARS", "200")
    at = open_app()
    at.chat_input[0].set_value("When does swarming season start?").run()
    at.chat_input[0].set_value("Why " * 100).run()
    assert not at.exception and not at.error
    order = [node.type for node in at.main if node.type in ("chat_message", "warning")]
    assert order[-1] == "warning" and order.count("chat_message") == 2, order
    assert "questions are limited to 200" in at.warning[0].value


def test_the_conversation_survives_a_reload_and_clear_chat_deletes_it():
    import os

    from core.serve import URL_PARAM, Conversations

    folder = Path(os.environ["INKWELL_DATA_DIR"])  # the corpus fixture's data dir

    at = open_app()
    at.chat_input[0].set_value("When does swarming season start?").run()
    assert not at.exception and not at.error
    cid = at.query_params[URL_PARAM]
    cid = cid[0] if isinstance(cid, list) else cid
    answer = unescaped(at.chat_message[1].markdown[0].value)

    from streamlit.testing.v1 import AppTest

    from tests.conftest import APP, APP_TIMEOUT

    reloaded = AppTest.from_file(str(APP), default_timeout=APP_TIMEOUT)  # a new session, same URL
    reloaded.secrets.update({"inkwell_tests": "1"})
    reloaded.query_params[URL_PARAM] = cid
    reloaded.run()
    assert not reloaded.exception
    user, reply = reloaded.chat_message
    assert texts(user.text) == ["When does swarming season start?"]
    assert unescaped(reply.markdown[0].value) == answer
    next(b for b in reloaded.sidebar.button if b.label == "Clear chat").click().run()
    assert len(reloaded.chat_message) == 0 and URL_PARAM not in reloaded.query_params
    assert Conversations(folder / "conversations.sqlite").load(cid) == []


def test_a_question_asked_after_the_back_button_keeps_the_whole_conversation():
    """Back after the first answer takes ?c= out of the URL while the page still shows the conversation;
    the next question starts a new id, which must hold every turn shown, not only the last (a reload
    brought back the last question alone)."""
    import os

    from core.serve import URL_PARAM, Conversations

    folder = Path(os.environ["INKWELL_DATA_DIR"])  # the corpus fixture's data dir
    at = open_app()
    at.chat_input[0].set_value("When does swarming season start?").run()
    at.query_params.pop(URL_PARAM)  # the browser's Back: the URL before the conversation had an id
    at.chat_input[0].set_value("What is the real enemy of the bees?").run()
    assert not at.exception and len(at.chat_message) == 4
    cid = at.query_params[URL_PARAM]
    cid = cid[0] if isinstance(cid, list) else cid
    kept = Conversations(folder / "conversations.sqlite").load(cid)
    assert [m["content"] for m in kept if m["role"] == "user"] == [
        "When does swarming season start?",
        "What is the real enemy of the bees?",
    ]


def test_a_generated_answer_waits_for_a_free_slot(monkeypatch):
    import threading

    from core.config import Settings
    from pages.shared import serving

    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("INKWELL_ROUTING", "off")
        monkeypatch.setenv("INKWELL_ANSWER_CONCURRENCY", "1")
        gate = serving.answer_gate(Settings.load())
        busy = gate.enter(owner="another reader")  # the one slot is taken for a moment
        threading.Timer(1.5, busy.close).start()
        server.chat("Swarming starts in May.")
        at = open_app()
        at.chat_input[0].set_value("When does swarming season start?").run()
        assert not at.exception and not at.error
        assert at.chat_message[1].markdown[0].value == "Swarming starts in May."
        assert gate.status().running == 0 and gate.status().waiting == 0


# A model server that is down, and where it runs --------------------------------------------------------


def page_text(at) -> str:
    """Everything the page shows (main and sidebar, every element's proto), Markdown escapes removed."""
    parts: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            parts.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(parts).replace("\\", "")


def ask_with_dead_model(monkeypatch: pytest.MonkeyPatch, **secrets: str):
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("INKWELL_ROUTING", "off")
    at = open_app(**secrets)
    at.chat_input[0].set_value("When does swarming season start?").run()
    assert not at.exception
    return at, url.removeprefix("http://").removesuffix("/v1")


def test_a_reader_gets_the_authors_passage_and_no_server_address(monkeypatch):
    at, address = ask_with_dead_model(monkeypatch, admin_password="owner only")  # a public reader
    reply = at.chat_message[1]
    assert any("Swarming season starts in May." in t for t in shown(reply.markdown))
    captions = shown(reply.caption)
    assert UNREACHABLE_NOTE in captions
    assert not any(c.startswith(("Answered by", "Model error")) for c in captions)
    assert not at.error
    assert address not in page_text(at) and "refused" not in page_text(at).lower()


def test_the_owner_sees_which_server_failed(monkeypatch):
    at, address = ask_with_dead_model(monkeypatch)  # no admin password: single-user, the owner
    reply = at.chat_message[1]
    assert any("Swarming season starts in May." in t for t in shown(reply.markdown))
    captions = shown(reply.caption)
    assert UNREACHABLE_NOTE in captions
    assert any(c.startswith("Model error") and address in c for c in captions)
    assert not any(t.startswith("Answered by") for t in texts(reply.caption))


def test_readers_see_neither_which_model_answered_nor_where_it_runs(monkeypatch):
    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("INKWELL_ROUTING", "off")
        server.chat("Swarming starts in May.")
        at = open_app(admin_password="owner only")
        at.chat_input[0].set_value("When does swarming season start?").run()
        assert not at.exception and not at.error
        assert at.chat_message[1].markdown[0].value == "Swarming starts in May."
        assert not any("Answered by" in c for c in shown(at.chat_message[1].caption))  # the owner's detail
        assert f"127.0.0.1:{server.port}" not in page_text(at)
