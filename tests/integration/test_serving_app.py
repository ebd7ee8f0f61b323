"""The chat's serving glue (pages/shared/serving.py) under AppTest: the answer line with its place in
line, and a conversation restored from the URL as after a reload. The chat page itself calls these."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.config import Settings
from core.serve import URL_PARAM, Conversations
from pages.shared import serving
from tests.conftest import isolate_app


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolate_app(monkeypatch, tmp_path / "db")


def line_script() -> None:
    import streamlit as st

    from core.config import Settings
    from pages import shared

    settings = Settings.load()
    gate = shared.answer_gate(settings)
    st.session_state["owner"] = shared.owner_key()
    with gate.enter(owner=shared.owner_key(), alive=shared.session_alive()) as ticket:
        st.session_state["first_place"] = shared.show_place_in_line(ticket)
        st.write_stream(ticket.stream(iter(["An ", "answer."])))


def test_a_reader_waits_in_line_then_is_answered(data_dir, monkeypatch):
    monkeypatch.setenv("INKWELL_BUILTIN_SLOTS", "1")
    gate = serving.answer_gate(Settings.load())  # the process-wide gate the page will use
    assert gate.capacity == 1
    busy = gate.enter(owner="another reader")  # the one slot is taken
    threading.Timer(1.5, busy.close).start()
    at = AppTest.from_function(line_script, default_timeout=30).run()
    assert not at.exception, at.exception
    assert at.session_state["first_place"] == 1  # was shown "1 reader is ahead of you"
    assert "An answer." in [m.value for m in at.markdown]
    assert not at.info  # the place in line is gone once the answer starts
    assert gate.status().running == 0 and gate.status().waiting == 0
    again = AppTest.from_function(line_script, default_timeout=30).run()  # a free slot: no wait
    assert again.session_state["first_place"] == 0
    assert at.session_state["owner"].startswith("session:")  # no conversation in the URL: the session


def test_place_in_line_wording():
    assert serving.place_in_line_message(1).startswith("Many readers are asking right now: 1 reader is ahead")
    assert "3 readers are ahead of you" in serving.place_in_line_message(3)


def chat_script() -> None:
    import streamlit as st

    from core.config import Settings
    from pages import shared

    settings = Settings.load()
    store = shared.conversations(settings)
    cid = shared.conversation_id()
    st.session_state["owner"] = shared.owner_key()
    messages = st.session_state.setdefault("messages", store.load(cid))
    question = st.chat_input("Ask")
    if question:
        if cid is None and store.enabled:
            cid = shared.start_conversation()
        turn = [{"role": "user", "content": question}, {"role": "assistant", "content": f"re: {question}"}]
        messages.extend(turn)
        if cid:
            store.append(cid, *turn)
    if st.button("Clear chat"):
        store.delete(cid)
        shared.forget_conversation()
        messages.clear()
    for message in messages:
        st.text(f"{message['role']}: {message['content']}")


def test_a_conversation_comes_back_after_a_reload_and_clear_deletes_it(data_dir):
    at = AppTest.from_function(chat_script, default_timeout=30).run()
    at.chat_input[0].set_value("Why did you start the blog?").run()
    cid = at.query_params[URL_PARAM]
    cid = cid[0] if isinstance(cid, list) else cid
    assert len(cid) == 32
    assert at.run().session_state["owner"] == cid  # the conversation owns the answers from now on

    reloaded = AppTest.from_function(chat_script, default_timeout=30)  # a new session, same URL
    reloaded.query_params[URL_PARAM] = cid
    reloaded.run()
    assert [t.value for t in reloaded.text] == [
        "user: Why did you start the blog?",
        "assistant: re: Why did you start the blog?",
    ]
    reloaded.button[0].click().run()
    assert URL_PARAM not in reloaded.query_params
    assert Conversations(data_dir / "conversations.sqlite").load(cid) == []

    stranger = AppTest.from_function(chat_script, default_timeout=30)
    stranger.query_params[URL_PARAM] = "x" * 32  # a well-formed id nobody made: an empty chat
    stranger.run()
    assert not stranger.text


def test_switched_off_no_id_and_nothing_kept(data_dir, monkeypatch):
    monkeypatch.setenv("INKWELL_KEEP_CONVERSATIONS", "off")
    at = AppTest.from_function(chat_script, default_timeout=30).run()
    at.chat_input[0].set_value("Why did you start the blog?").run()
    assert URL_PARAM not in at.query_params
    assert Conversations(data_dir / "conversations.sqlite").count() == 0
