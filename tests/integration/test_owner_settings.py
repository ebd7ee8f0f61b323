"""The owner's settings saved with the tables (core/store/settings.py, core/answer/owner.py): validated with
clear errors, applied over the environment, seen by another process within the read-consistency
setting, and the starter questions suggested from the posts' central chunks. Real LanceDB tables, the
real CLI in subprocesses, the real embedder; the S3 runs and concurrent saves are in tests/integration/test_backends.py.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time

import numpy as np
import pytest

from core.answer.generate import DEFAULT_PROMPT_TEMPLATE, build_messages
from core.answer.owner import KEYS, OwnerSettings, apply_owner, load_owner, save_owner, with_owner
from core.answer.reply import NO_ANSWER, reply
from core.answer.suggest import answered_starters
from core.answer.turn import take_turn
from core.config import ConfigError, Settings
from core.search.starters import question_for, suggest_starters
from core.store import Store
from tests.cli_support import run
from tests.conftest import ROOT


def test_saved_settings_round_trip_and_clearing(tmp_path):
    store = Store(tmp_path / "db")
    assert load_owner(store) == OwnerSettings() and store.settings_version() is None
    save_owner(
        store, {"author_name": "  Maya \n Lindqvist ", "starters": "Why bread?\nWhy Lisbon?\nWhy rye?"}
    )
    saved = load_owner(Store(tmp_path / "db"))  # another Store, as another page run would open
    assert saved.author_name == "Maya Lindqvist"  # one line: it is a heading
    assert saved.starters == ("Why bread?", "Why Lisbon?", "Why rye?")
    save_owner(store, {"greeting": "Hello!"})  # other fields are kept
    assert load_owner(store).starters == saved.starters and load_owner(store).greeting == "Hello!"
    save_owner(store, {"starters": [], "author_name": ""})
    assert load_owner(store).starters == () and load_owner(store).author_name == ""


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"persona_prompt": "You are {author}."},
            "Persona prompt: unknown placeholder {author}; it may use {author_name}",
        ),
        ({"starters": ["Only one?"]}, "Starter questions: give 3 to 6 different questions (or none), not 1"),
        ({"starters": ["Same?", "same?  ", "Same?", "Other?"]}, "not 2"),  # repeats count once
        ({"starters": [f"Q{i}?" for i in range(7)]}, "not 7"),
        ({"starters": "[not json"}, "Starter questions: not a JSON list"),
        ({"starters": ["Why?", "How?", "x" * 201]}, "Starter questions: “xxxx"),
        # Named as the Settings page labels the field, not by its key.
        ({"author_name": "x" * 81}, "Author's name is 81 characters long (at most 80)"),
        ({"decline_text": "x" * 401}, "Decline text is 401 characters long (at most 400)"),
        ({"colour": "blue"}, "unknown setting 'colour'"),
    ],
)
def test_bad_values_are_refused_with_a_clear_error_and_nothing_saved(tmp_path, changes, message):
    store = Store(tmp_path / "db")
    save_owner(store, {"chat_title": "Kept"})
    with pytest.raises(ConfigError, match=re.escape(message)):
        save_owner(store, {"greeting": "not saved either", **changes})
    assert load_owner(store) == OwnerSettings(chat_title="Kept")


def test_the_cli_names_a_refused_setting_by_its_label_and_its_key(tmp_path):
    long_name = "x" * 95
    refused = run("settings", "set", "author_name", long_name, data_dir=tmp_path / "db")
    assert refused.exit_code == 1
    assert "Error: Author's name (author_name) is 95 characters long (at most 80)" in refused.output
    few = run("settings", "set", "starters", "Why?", data_dir=tmp_path / "db")
    assert "Starter questions (starters): give 3 to 6 different questions (or none), not 1" in few.output
    assert load_owner(Store(tmp_path / "db")) == OwnerSettings()


def test_the_cli_says_a_setting_was_cleared_not_saved(tmp_path):
    db = tmp_path / "db"
    assert run("settings", "set", "author_name", "Maya", data_dir=db).stderr == "Saved Author's name.\n"
    cleared = run(
        "settings", "set", "author_name", data_dir=db
    )  # no value: cleared (was "Saved author_name.")
    assert cleared.exit_code == 0 and cleared.stderr == "Cleared Author's name (back to the default).\n"
    assert (
        run("settings", "set", "starters", data_dir=db).stderr
        == "Cleared Starter questions (back to the default).\n"
    )
    assert load_owner(Store(db)) == OwnerSettings()


def test_saved_values_win_over_the_environment_and_clearing_brings_it_back(tmp_path):
    env = {"INKWELL_AUTHOR_NAME": "Env Name", "INKWELL_PERSONA_PROMPT": "Env persona for {author_name}."}
    settings = Settings.load({"data_dir": tmp_path / "db"}, environ=env)
    store = Store(settings.data_dir)
    assert with_owner(settings, store).author_name == "Env Name"
    save_owner(store, {"author_name": "Saved Name"})
    applied = with_owner(settings, store)
    assert applied.author_name == "Saved Name" and applied.persona_prompt == env["INKWELL_PERSONA_PROMPT"]
    system = build_messages("Why?", [], applied)[0][0]["content"]
    assert system == "Env persona for Saved Name."
    assert apply_owner(settings, load_owner(store), keep={"author_name": 1}).author_name == "Env Name"
    save_owner(store, {"author_name": ""})
    assert with_owner(settings, store).author_name == "Env Name"


def test_the_persona_prompt_is_the_system_prompt_with_the_name_filled_in(tmp_path):
    settings = Settings.load({"data_dir": tmp_path / "db"}, environ={})
    assert build_messages("Why?", [], settings)[0][0]["content"].startswith(
        DEFAULT_PROMPT_TEMPLATE.split("{")[0]
    )
    store = Store(settings.data_dir)
    save_owner(store, {"author_name": "Maya", "persona_prompt": "I am {author_name}; {author_description}."})
    system = build_messages("Why?", [], with_owner(settings, store))[0][0]["content"]
    assert system == f"I am Maya; {settings.author_description}."


def test_the_decline_text_is_the_authors_words_in_its_own_language(tmp_path, embedder):
    settings = Settings.load({"data_dir": tmp_path / "db"}, environ={})
    own = "Sorry, that is not something I have written about, so I won't guess."
    mine = settings.replace(decline_text=own)
    assert reply("Who won the world cup?", [], mine, embedder).text == own
    assert reply("Who won the world cup?", [], settings, embedder).text == NO_ANSWER["en"]
    # A German question still gets the built-in German reply, not the English text.
    assert reply("Wer hat die Weltmeisterschaft gewonnen?", [], mine, embedder).text == NO_ANSWER["de"]
    german = settings.replace(
        decline_text="Darüber habe ich noch nicht geschrieben, und ich will nicht raten."
    )
    assert reply("Wer hat die Weltmeisterschaft gewonnen?", [], german, embedder).text == german.decline_text
    assert reply("Who won the world cup?", [], german, embedder).text == NO_ANSWER["en"]


def _save_in_another_process(where: str, key: str, value: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "core.cli", "settings", "set", key, value, "--data-dir", where],
        cwd=ROOT, check=True, capture_output=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("consistency", [0.0, 1.5])
def test_another_process_sees_a_save_within_the_read_consistency_setting(tmp_path, consistency):
    where = str(tmp_path / "db")
    reader = Store(where, read_consistency_seconds=consistency)
    save_owner(reader, {"greeting": "old"})
    assert load_owner(reader).greeting == "old"  # its handle is open (kept for `consistency` s)
    _save_in_another_process(where, "greeting", "new")
    saved_at, reads = time.monotonic(), 1
    while load_owner(reader).greeting != "new":
        # A hang guard (a reader that never refreshes): how soon a replica sees a write is measured by
        # bench/object_store.py.
        assert time.monotonic() - saved_at < consistency + 30, "the save was never seen"
        time.sleep(0.05)
        reads += 1
    if consistency == 0:
        assert reads == 1  # at the first read after the save


def test_every_key_is_documented_and_settable():
    from core.answer.owner import DESCRIPTIONS, LIMITS

    assert set(DESCRIPTIONS) == set(KEYS)
    assert set(LIMITS) - {"starter"} == set(KEYS) - {"starters"}


# Starter questions ------------------------------------------------------------------------------------------


def test_questions_are_made_only_from_what_the_chunk_names():
    assert question_for("The wood", "Build Log: A Trestle Table") == (
        "What do you say about “The wood” in “Build Log: A Trestle Table”?",
        "heading",
    )
    assert question_for("Choosing wood", "") == ("What have you written about “Choosing wood”?", "heading")
    assert question_for("Why did I start?", "Blog") == ("Why did I start?", "question heading")
    assert question_for("At the sawmill", "At  the sawmill") == (
        "What is your post “At the sawmill” about?",
        "title",
    )
    long_heading = "A heading that is really a whole long sentence about many things"
    assert question_for(long_heading, "T")[1] == "title"
    assert question_for("", "On  Bees") == ("What is your post “On Bees” about?", "title")
    # Topping up a small blog (the title's question taken): the best keyword, quoted as a phrase.
    assert question_for("", "On Bees", ["afraid of stings", "smoke"]) == (
        "What do you say about “afraid of stings” in “On Bees”?",
        "keyword",
    )


def test_suggested_starters_come_from_central_chunks_of_different_posts(corpus):
    starters = suggest_starters(corpus, count=3)
    assert len(starters) == 3
    assert len({s.post_id for s in starters}) == 3  # one per cluster of posts, one post each
    assert starters == suggest_starters(corpus, count=3)  # the same table, the same suggestions
    chunks = corpus.get_chunks([s.chunk_id for s in starters])
    for starter in starters:
        chunk = chunks[starter.chunk_id]
        if starter.basis == "heading":
            assert f"“{chunk['section']}”" in starter.question
        else:
            assert starter.basis == "title" and chunk["title"] in starter.question
    # One cluster: the chunk nearest the mean of the posts' (unit) vectors, computed here on its own.
    meta, vectors = corpus.chunk_vectors()
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    ids, posts = meta["chunk_id"].to_pylist(), meta["post_id"].to_pylist()
    means = [unit[[p == post for p in posts]].mean(axis=0) for post in dict.fromkeys(posts)]
    centre = np.mean([m / np.linalg.norm(m) for m in means], axis=0)
    assert suggest_starters(corpus, count=1)[0].chunk_id == ids[int(np.argmax(unit @ centre))]


def test_only_starters_the_chat_answers_are_suggested(demo_table, embedder, data_dir):
    """A suggestion made from a post's heading or title may be one the relevance bar turns away (on the
    demo: "What do you say about “What I would tell the engineer I was” in …?"): the owner is not
    offered it, and is told it was left out, rather than saving a starter that gets "I haven't written
    about that" when a reader clicks it."""
    settings, store = demo_table

    def answered(question: str) -> bool:
        return (
            take_turn(question, settings, store=store, embedder=embedder, mode="extractive").reply.mode
            != "none"
        )

    suggested = answered_starters(store, settings, embedder, count=3)
    assert suggested.declined, "the demo gives a declined candidate: the test would prove nothing"
    assert [*suggested.kept, *suggested.declined] == sorted(
        suggest_starters(store, count=3), key=lambda s: s in suggested.declined
    )
    assert all(answered(s.question) for s in suggested.kept)
    assert not any(answered(s.question) for s in suggested.declined)
    # The CLI prints only the answered ones, and says which were left out (not padded with others).
    result = run("settings", "suggest", "--count", "3", data_dir=settings.data_dir)
    printed = result.stdout.splitlines()
    assert printed and all(answered(q) for q in printed), printed
    assert printed == [s.question for s in suggested.kept]
    assert "Left out 1 suggested question the chat would decline" in result.stderr
    assert suggested.declined[0].question in result.stderr


def test_no_posts_no_suggestions(tmp_path):
    assert suggest_starters(Store(tmp_path / "db")) == []


def test_two_posts_give_three_starters_from_their_other_chunks(corpus):
    corpus.delete_posts(["walks"])  # bees (3 chunks) and bread (1): fewer posts than starters needed
    starters = suggest_starters(corpus, count=4)
    assert len(starters) == 3  # topped up to the Settings page's least, not one per post only
    assert len({s.question.lower() for s in starters}) == 3 and len({s.chunk_id for s in starters}) == 3
    assert {s.post_id for s in starters} == {"bees", "bread"}
    assert len(suggest_starters(corpus, count=2)) == 2  # asked for fewer: no top-up past the count
    corpus.delete_posts(["bees"])  # one post of one chunk: one question, nothing to top up from
    assert [s.post_id for s in suggest_starters(corpus, count=4)] == ["bread"]
