"""The chat's conversations, kept so that a reload brings them back: <data dir>/conversations.sqlite.

A conversation is known by a random, unguessable id (32 URL-safe characters, 192 bits) that the chat
page puts in its URL (`?c=<id>`); whoever has the link can read it, nobody can list or guess ids. Its
messages are stored as JSON, in order. A conversation expires `conversation_hours` (24) after its last
message and is then deleted; "Clear chat" deletes it at once. With `keep_conversations` off nothing is
written, nothing is read, and whatever was kept before is deleted.

    conversations = Conversations.for_settings(settings)     # cheap: one short connection per call
    cid = params.get(URL_PARAM)
    messages = conversations.load(cid)                       # [] for a missing, expired or malformed id
    cid = cid if is_conversation_id(cid) else new_conversation_id()
    conversations.append(cid, user_message, assistant_message)
    conversations.delete(cid)

Plain sqlite3 from the standard library: one connection per call (Streamlit serves each session from
its own thread), WAL so readers do not wait for a writer, and a busy timeout for concurrent writers.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from core.config import Settings

FILE_NAME = "conversations.sqlite"
URL_PARAM = "c"  # the query parameter holding the conversation id
ID_BYTES = 24  # → 32 URL-safe characters
MAX_MESSAGES = 200  # per conversation: older messages are dropped beyond this
BUSY_TIMEOUT_S = 10.0
_ID = re.compile(r"[A-Za-z0-9_-]{32}")

SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS conversations_updated ON conversations (updated);
CREATE TABLE IF NOT EXISTS messages (
    conversation_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);
"""


class ConversationError(OSError):
    """The conversations file cannot be read or written; the message says which and why."""


def new_conversation_id() -> str:
    """A fresh id: 192 random bits (secrets), 32 URL-safe characters."""
    return secrets.token_urlsafe(ID_BYTES)


def is_conversation_id(value: Any) -> bool:
    """True for something new_conversation_id could have made (anything else from a URL is ignored)."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None


class Conversations:
    """Conversations in one SQLite file (see the module docstring). Safe to share between threads."""

    def __init__(
        self,
        path: str | Path,
        *,
        hours: float = 24.0,
        enabled: bool = True,
        max_messages: int = MAX_MESSAGES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = Path(path)
        self.ttl = hours * 3600.0
        self.enabled = enabled
        self.max_messages = max_messages
        self.clock = clock
        # The journal mode and the schema are set up once per process, under a lock: changing the
        # journal mode needs the file to itself, so doing it on every connection while other sessions
        # write failed now and then with "database is locked" (8 sessions writing at once).
        self._setup = threading.Lock()
        self._ready = False
        if not enabled and self.path.exists():
            self.clear()  # switched off: none kept

    @classmethod
    def for_settings(cls, settings: Settings) -> Conversations:
        return cls(
            settings.local_home / FILE_NAME,
            hours=settings.conversation_hours,
            enabled=settings.keep_conversations,
        )

    # Reading and writing ---------------------------------------------------------------------------

    def load(self, conversation_id: str | None) -> list[dict]:
        """The conversation's messages, oldest first; [] if it is unknown, expired or not an id, or when
        conversations are off."""
        if not self.enabled or not is_conversation_id(conversation_id) or not self.path.exists():
            return []
        with self._connect() as db:
            self._purge(db)
            rows = db.execute(
                "SELECT message FROM messages WHERE conversation_id = ? ORDER BY seq", (conversation_id,)
            ).fetchall()
        messages = []
        for (text,) in rows:
            with contextlib.suppress(ValueError):  # a damaged row is skipped, not fatal
                message = json.loads(text)
                if isinstance(message, dict):
                    messages.append(message)
        return messages

    def append(self, conversation_id: str, *messages: dict) -> None:
        """Add messages (JSON-able dicts) at the end; starts the conversation if new and restarts its
        expiry. Nothing happens when conversations are off."""
        if not self.enabled or not messages:
            return
        _require_id(conversation_id)
        encoded = [json.dumps(m, ensure_ascii=False, allow_nan=False) for m in messages]  # ValueError early
        now = self.clock()
        with self._connect() as db:
            self._purge(db)
            db.execute(
                "INSERT INTO conversations (id, created, updated) VALUES (?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET updated = excluded.updated",
                (conversation_id, now, now),
            )
            (last,) = db.execute(
                "SELECT COALESCE(MAX(seq), -1) FROM messages WHERE conversation_id = ?", (conversation_id,)
            ).fetchone()
            db.executemany(
                "INSERT INTO messages (conversation_id, seq, message) VALUES (?, ?, ?)",
                [(conversation_id, last + 1 + i, text) for i, text in enumerate(encoded)],
            )
            db.execute(
                "DELETE FROM messages WHERE conversation_id = ? AND seq <= ?",
                (conversation_id, last + len(encoded) - self.max_messages),
            )

    def replace(self, conversation_id: str, messages: list[dict]) -> None:
        """Store exactly these messages (e.g. after the last answer was redone)."""
        if not self.enabled:
            return
        _require_id(conversation_id)
        self.delete(conversation_id)
        self.append(conversation_id, *messages)

    def delete(self, conversation_id: str | None) -> bool:
        """Delete a conversation ("Clear chat"); False if there was none."""
        if not is_conversation_id(conversation_id) or not self.path.exists():
            return False
        with self._connect() as db:
            deleted = db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,)).rowcount
            db.execute("DELETE FROM messages WHERE conversation_id = ?", (conversation_id,))
        return deleted > 0

    def purge_expired(self) -> int:
        """Delete conversations whose last message is older than the expiry; returns how many."""
        if not self.path.exists():
            return 0
        with self._connect() as db:
            return self._purge(db)

    def clear(self) -> int:
        """Delete every conversation (and reclaim the space); returns how many there were."""
        if not self.path.exists():
            return 0
        with self._connect() as db:
            count = db.execute("DELETE FROM conversations").rowcount
            db.execute("DELETE FROM messages")
        with self._connect(transaction=False) as db:
            db.execute("VACUUM")  # the deleted messages leave the file too
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # and the write-ahead log
        return count

    def count(self) -> int:
        if not self.path.exists():
            return 0
        with self._connect() as db:
            return db.execute("SELECT COUNT(*) FROM conversations").fetchone()[0]

    # Internals --------------------------------------------------------------------------------------

    def _purge(self, db: sqlite3.Connection) -> int:
        cutoff = self.clock() - self.ttl
        expired = [row[0] for row in db.execute("SELECT id FROM conversations WHERE updated < ?", (cutoff,))]
        if expired:
            marks = ",".join("?" * len(expired))
            db.execute(f"DELETE FROM messages WHERE conversation_id IN ({marks})", expired)
            db.execute(f"DELETE FROM conversations WHERE id IN ({marks})", expired)
        return len(expired)

    @contextlib.contextmanager
    def _connect(self, transaction: bool = True) -> Iterator[sqlite3.Connection]:
        """One short connection, in one transaction committed on success; sqlite errors become
        ConversationError."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise ConversationError(f"cannot open the conversations file {self.path}: {exc}") from None
        try:
            if not self._ready:
                with self._setup:
                    if not self._ready:
                        db.execute("PRAGMA journal_mode=WAL")  # kept in the file
                        db.executescript(SCHEMA)
                        self._ready = True
            db.execute("PRAGMA secure_delete=ON")  # deleted and expired messages are overwritten
            if not transaction:
                yield db
                return
            db.execute("BEGIN IMMEDIATE")
            yield db
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise ConversationError(f"the conversations file {self.path} failed: {exc}") from None
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise
        finally:
            db.close()


def _require_id(conversation_id: Any) -> None:
    if not is_conversation_id(conversation_id):
        raise ValueError("not a conversation id (make one with new_conversation_id())")
