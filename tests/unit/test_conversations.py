"""Conversations kept across reloads (core/serve/conversations.py): real SQLite files in a temp dir, a fake
clock for expiry."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from core.config import Settings
from core.serve.conversations import (
    FILE_NAME,
    Conversations,
    is_conversation_id,
    new_conversation_id,
)

USER = {"role": "user", "content": "Why did you start the blog?"}
ANSWER = {
    "role": "assistant",
    "content": "Because the feed was loud. «Ünïcode» stays.",
    "sources": [{"post_id": "why-this-blog-exists", "title": "Why This Blog Exists", "relevance": 0.73}],
    "hits": [{"chunk_id": "c1", "text": "I left the feed.", "keywords": ["feed"]}],
}


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def conversations(tmp_path, clock) -> Conversations:
    return Conversations(tmp_path / FILE_NAME, hours=24, clock=clock)


def test_ids_are_random_url_safe_and_checked():
    ids = {new_conversation_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(is_conversation_id(i) and len(i) == 32 for i in ids)
    for bad in (None, "", "abc", "x" * 33, "../../etc/passwd" + "a" * 16, "a" * 31 + "!", 42):
        assert not is_conversation_id(bad)


def test_messages_survive_a_new_object_as_after_a_reload(tmp_path, conversations, clock):
    cid = new_conversation_id()
    conversations.append(cid, USER, ANSWER)
    conversations.append(cid, {"role": "user", "content": "And the second?"})
    reloaded = Conversations(tmp_path / FILE_NAME, clock=clock)  # another session, same file
    assert reloaded.load(cid) == [USER, ANSWER, {"role": "user", "content": "And the second?"}]
    assert reloaded.load(new_conversation_id()) == []  # unknown
    assert reloaded.load("not-an-id") == [] and reloaded.load(None) == []


def test_conversations_expire_after_their_last_message(conversations, clock):
    old, active = new_conversation_id(), new_conversation_id()
    conversations.append(old, USER)
    conversations.append(active, USER)
    clock.now += 20 * 3600
    conversations.append(active, ANSWER)  # a new message restarts its 24 hours
    clock.now += 5 * 3600
    assert conversations.load(old) == []
    assert conversations.load(active) == [USER, ANSWER]
    assert conversations.count() == 1  # the expired one is gone from the file, not just hidden
    clock.now += 25 * 3600
    assert conversations.purge_expired() == 1 and conversations.count() == 0


def test_clear_chat_deletes_the_conversation(conversations):
    cid, other = new_conversation_id(), new_conversation_id()
    conversations.append(cid, USER, ANSWER)
    conversations.append(other, USER)
    assert conversations.delete(cid)
    assert not conversations.delete(cid)
    assert conversations.load(cid) == [] and conversations.load(other) == [USER]
    with sqlite3.connect(conversations.path) as db:
        assert db.execute("SELECT COUNT(*) FROM messages WHERE conversation_id = ?", (cid,)).fetchone() == (
            0,
        )


def test_switched_off_nothing_is_kept_and_earlier_ones_are_deleted(tmp_path, conversations):
    cid = new_conversation_id()
    conversations.append(cid, USER, ANSWER)
    settings = Settings(data_dir=tmp_path, keep_conversations=False)
    off = Conversations.for_settings(settings)
    assert off.path == conversations.path and not off.enabled
    assert off.load(cid) == [] and conversations.count() == 0  # deleted when switched off
    off.append(new_conversation_id(), USER)
    assert conversations.count() == 0
    for path in conversations.path.parent.glob(FILE_NAME + "*"):  # the file and its write-ahead log
        assert b"Why did you start" not in path.read_bytes()  # vacuumed, not just unlinked rows


def test_replace_keeps_exactly_the_given_messages_and_long_ones_are_capped(tmp_path, clock):
    conversations = Conversations(tmp_path / FILE_NAME, max_messages=4, clock=clock)
    cid = new_conversation_id()
    for i in range(5):
        conversations.append(
            cid, {"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": f"a{i}"}
        )
    assert [m["content"] for m in conversations.load(cid)] == ["q3", "a3", "q4", "a4"]
    conversations.replace(cid, [USER])
    assert conversations.load(cid) == [USER]


def test_bad_input_is_refused_before_writing(conversations):
    with pytest.raises(ValueError, match="not a conversation id"):
        conversations.append("../etc", USER)
    with pytest.raises(ValueError):
        conversations.append(new_conversation_id(), {"role": "user", "content": float("nan")})
    assert conversations.count() == 0


def test_many_sessions_write_at_once(conversations):
    ids = [new_conversation_id() for _ in range(8)]

    def chat(cid: str) -> None:
        for i in range(10):
            conversations.append(cid, {"role": "user", "content": f"{cid} {i}"})

    threads = [threading.Thread(target=chat, args=(cid,)) for cid in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for cid in ids:
        assert [m["content"] for m in conversations.load(cid)] == [f"{cid} {i}" for i in range(10)]


def test_an_unwritable_place_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    conversations = Conversations(blocker / FILE_NAME)
    with pytest.raises(OSError, match="conversations file"):
        conversations.append(new_conversation_id(), USER)
