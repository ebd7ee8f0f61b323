"""The Settings page and the chat's starter questions through AppTest: the owner changes the persona and the
starter questions, and a reader's session that was open before gets, on its next run, the new starters
and a generated answer sent the new system prompt (recorded by a scripted model server on 127.0.0.1), in
the same process: no restart. A reader cannot open Settings. Real pages, real LanceDB, the real embedder.
"""

from __future__ import annotations

import pytest

from core.answer.owner import load_owner, save_owner
from core.store import Store
from tests.conftest import button, open_app, shown, texts
from tests.servers import ScriptedOpenAIServer

pytestmark = pytest.mark.usefixtures("corpus")  # three small posts: bees, bread, walks

PASSWORD = "pw"
PERSONA = "You are {author_name}. Answer in one short sentence, from the excerpts only."
STARTERS = ["When does swarming season start?", "How do you feed the starter?", "Where do you walk?"]
ANSWER = "Swarming season starts in May."


def unlock(at) -> None:
    at.text_input[0].input(PASSWORD)
    button(at, "Unlock").click().run()
    assert not at.exception


def owner_page():
    at = open_app("pages/settings.py", admin_password=PASSWORD)
    unlock(at)
    return at


def field(at, key: str):
    return at.text_area(key=f"owner_{key}") if key in AREAS else at.text_input(key=f"owner_{key}")


AREAS = {"persona_prompt", "decline_text", "greeting", "starters"}


def test_a_reader_cannot_open_settings():
    at = open_app("pages/settings.py", admin_password=PASSWORD)
    assert "Changing the settings is for the site owner." in " ".join(texts(at.info))
    assert [t.label for t in at.text_input] == ["Admin password"]
    assert not at.text_area and not any(b.label == "Save" for b in at.button)


def test_the_owners_persona_and_starters_reach_a_reader_without_a_restart(monkeypatch, data_dir):
    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("INKWELL_ROUTING", "off")
        reader = open_app(admin_password=PASSWORD)  # open before the owner saves anything
        assert not [b for b in reader.button if b.key and b.key.startswith("starter_")]

        owner = owner_page()
        field(owner, "author_name").input("Maya")
        field(owner, "persona_prompt").input(PERSONA)
        field(owner, "starters").input("\n".join(STARTERS))
        field(owner, "greeting").input("Hello, I write about bees and bread.")
        field(owner, "chat_title").input("Ask Maya about bees")
        button(owner, "Save").click().run()
        assert not owner.exception and not owner.error
        assert "Saved. Readers get them with their next question." in texts(owner.success)
        assert load_owner(Store(data_dir)).starters == tuple(STARTERS)

        reader.run()  # the reader's next run: the same server process
        assert reader.title[0].value == "Ask Maya about bees"
        assert "Hello, I write about bees and bread." in texts(reader.chat_message[0].text)
        offered = [b for b in reader.button if b.key and b.key.startswith("starter_")]
        assert [b.label for b in offered] == STARTERS
        server.chat(ANSWER)
        offered[0].click().run()  # one click asks
        assert not reader.exception and not reader.error
        assert texts(reader.chat_message[0].text) == [STARTERS[0]]
        assert reader.chat_message[1].markdown[0].value == ANSWER
        system = server.chat_requests[-1].body["messages"][0]
        assert system == {"role": "system", "content": PERSONA.replace("{author_name}", "Maya")}
        assert not [b for b in reader.button if b.key and b.key.startswith("starter_")]  # asked: gone


def test_bad_values_are_refused_with_a_clear_error_and_nothing_is_saved(data_dir):
    at = owner_page()
    field(at, "persona_prompt").input("You are {author}.")
    field(at, "greeting").input("Not saved either")
    button(at, "Save").click().run()
    assert not at.exception
    assert shown(at.error) == [
        "Not saved: Persona prompt: unknown placeholder {author}; it may use {author_name}, "
        "{author_description} (or no placeholder)"
    ]
    field(at, "persona_prompt").input("")
    field(at, "starters").input("Just one question?")
    button(at, "Save").click().run()
    assert shown(at.error) == [
        "Not saved: Starter questions: give 3 to 6 different questions (or none), not 1"
    ]
    field(at, "starters").input("")
    field(at, "author_name").input("x" * 95)  # named as the page labels the field, not by its key
    button(at, "Save").click().run()
    assert shown(at.error) == ["Not saved: Author's name is 95 characters long (at most 80)"]
    assert field(at, "author_name").label == "Author's name"
    assert load_owner(Store(data_dir)).greeting == ""
    assert field(at, "greeting").value == "Not saved either"  # the owner's typing is kept


def test_suggested_starters_fill_the_field_with_questions_the_chat_answers():
    at = owner_page()
    button(at, "Suggest starter questions").click().run()
    assert not at.exception
    suggested = field(at, "starters").value.splitlines()
    # One per post, but the posts are a few words each: the questions on bread and walks are ones the
    # chat declines, so they are left out and said so, not offered for a reader to get "I haven't…".
    assert suggested == ["What is your post “On Bees” about?"]
    assert any("most central passages" in i for i in shown(at.info))
    warnings = shown(at.warning)
    assert any(
        "Left out 2 suggested questions the chat would decline" in w and "“Sourdough”" in w for w in warnings
    )
    assert any("add at least 2 more of your own" in w for w in warnings), warnings


def test_the_preview_shows_the_system_prompt_as_typed_and_the_quoted_answer():
    at = owner_page()
    button(at, "Preview").click().run()  # no question yet: said, not silently nothing
    assert shown(at.warning) == ["Type a question to preview the answer to."] and not at.code
    field(at, "author_name").input("Maya")
    field(at, "persona_prompt").input(PERSONA)
    at.text_input(key="owner_preview_question").input("When does swarming season start?")
    button(at, "Preview").click().run()
    assert not at.exception and not at.error
    assert at.code[0].value == PERSONA.replace("{author_name}", "Maya")  # unsaved, as typed
    # Drawn as the chat draws it: the post's linked title on its own line, the quoted sentences below
    # (not "From *On Bees*: Swarming …" run onto one line), and never as raw asterisks in plain text.
    quoted = [m for m in shown(at.markdown) if m.startswith("From *[On Bees](read?post=bees&q=")]
    assert len(quoted) == 1 and ")*:\n\nSwarming season starts in May." in quoted[0]
    assert not any("*On Bees*" in t for t in texts(at.text))
    assert any("No answer model is configured" in c for c in texts(at.caption))


def test_a_save_from_elsewhere_is_kept_and_only_the_owners_edits_are_written(data_dir):
    at = owner_page()  # the fields are filled now: every one empty
    save_owner(Store(data_dir), {"greeting": "Hello from the CLI", "chat_title": "Old title"})
    field(at, "chat_title").input("Ask Maya")  # the only field the owner edits
    button(at, "Save").click().run()
    assert not at.exception and not at.error
    saved = load_owner(Store(data_dir))
    assert saved.greeting == "Hello from the CLI"  # not written back empty, as the page was filled
    assert saved.chat_title == "Ask Maya"  # the owner's edit wins over the other save of the same field
    assert "Saved. Readers get them with their next question." in texts(at.success)
    assert any("changed elsewhere and reloaded: Greeting" in i for i in shown(at.info)), shown(at.info)
    assert field(at, "greeting").value == "Hello from the CLI"  # the page shows what is stored now
    # With nothing saved elsewhere since, a save says nothing of a reload.
    field(at, "author_name").input("Maya")
    button(at, "Save").click().run()
    assert load_owner(Store(data_dir)).author_name == "Maya"
    assert not [i for i in shown(at.info) if "elsewhere" in i]
    # Emptied, a field is cleared, and the message says so (it was only "Saved.").
    field(at, "author_name").input("")
    button(at, "Save").click().run()
    assert load_owner(Store(data_dir)).author_name == ""
    said = "Saved. Cleared Author's name (back to the default). Readers get them with their next question."
    assert said in shown(at.success), shown(at.success)


def test_suggesting_from_a_single_passage_says_more_questions_are_needed(data_dir):
    Store(data_dir).delete_posts(["bees", "walks"])  # one post of one chunk left
    at = owner_page()
    button(at, "Suggest starter questions").click().run()
    assert not at.exception and not at.error
    assert len(field(at, "starters").value.splitlines()) == 1
    assert any("add at least 2 more of your own" in w for w in shown(at.warning)), shown(at.warning)


def test_an_empty_field_names_what_applies_instead():
    """A field left empty says what readers get instead: the decline text the built-in reply (not the
    persona prompt), the persona prompt the default one."""
    at = owner_page()
    notes = [c for c in shown(at.caption) if c.startswith("Not saved")]
    decline = [n for n in notes if "built-in reply" in n]
    assert len(decline) == 1 and "written about that" in decline[0], notes
    assert sum("You are {author_name}" in n for n in notes) == 1, notes  # the persona prompt's alone


def test_unsaved_edits_survive_a_visit_to_another_page(data_dir):
    """The owner types, opens the chat to try something, comes back: the typing is still there (it
    was refilled from what is saved, the persona prompt typed with care gone), and Save writes it."""
    at = owner_page()
    field(at, "persona_prompt").input(PERSONA)
    field(at, "greeting").input("Hello, unsaved")
    at.switch_page("pages/chat.py").run()
    at.switch_page("pages/settings.py").run()
    assert not at.exception
    assert field(at, "persona_prompt").value == PERSONA
    assert field(at, "greeting").value == "Hello, unsaved"
    save_owner(Store(data_dir), {"chat_title": "Saved meanwhile"})  # elsewhere, while the owner was away
    at.switch_page("pages/chat.py").run()
    at.switch_page("pages/settings.py").run()
    assert field(at, "chat_title").value == "Saved meanwhile"  # an untouched field shows what is stored
    assert field(at, "persona_prompt").value == PERSONA  # an edited one keeps the owner's text
    button(at, "Save").click().run()
    assert not at.exception and not at.error
    saved = load_owner(Store(data_dir))
    assert (saved.persona_prompt, saved.greeting, saved.chat_title) == (
        PERSONA,
        "Hello, unsaved",
        "Saved meanwhile",
    )
