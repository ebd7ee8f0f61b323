"""A small SQLite file beside the LanceDB tables (`<data_dir>/llm_cache.sqlite`) for what the LLM
preparation stages need to remember:

- `responses`: each LLM reply, keyed by a sha256 of (model and endpoint, task, prompt version, system
  prompt, input, schema), so re-running an ingest with the same posts and options makes no request and
  gives the same chunks. Failed calls are not stored (the next run retries them).
- `rewrites`: per post, the text before and after vague-reference rewriting, the sentence changes and
  whether the author accepted them; the posts table keeps the original raw text too.
- `post_languages` and `meta`: each stored post's detected language and the corpus's main language,
  read by question translation.

One connection per cache object, guarded by a lock (threads of one ingest share it); WAL mode and a
busy timeout let the CLI and the app use the same file at once.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.config import local_home

FILENAME = "llm_cache.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    task TEXT NOT NULL,
    reply TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rewrites (
    post_id TEXT PRIMARY KEY,
    source_hash TEXT NOT NULL,
    original TEXT NOT NULL,
    rewritten TEXT NOT NULL,
    changes TEXT NOT NULL,
    status TEXT NOT NULL,
    model TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS post_languages (
    post_id TEXT PRIMARY KEY,
    lang TEXT NOT NULL,
    chars INTEGER NOT NULL
);
"""


def cache_key(*parts: Any) -> str:
    """sha256 over the JSON of the parts (stable: sorted keys, no whitespace)."""
    payload = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class CachedReply:
    reply: str
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class StoredRewrite:
    post_id: str
    source_hash: str
    original: str
    rewritten: str
    changes: list[dict]
    status: str  # accepted | rejected | applied (without review, CLI)
    model: str
    updated: str


def cache_path(data_dir: str | Path) -> Path:
    """Where the cache file of a data dir is (or would be): read-only callers check it exists first."""
    return local_home(data_dir) / FILENAME


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class LLMCache:
    def __init__(self, data_dir: str | Path):
        self.path = cache_path(data_dir)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA busy_timeout=30000")
            self._db.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> LLMCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _execute(self, sql: str, params: Iterable[Any] = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, tuple(params)).fetchall()

    # Replies -------------------------------------------------------------------------------------

    def get(self, key: str) -> CachedReply | None:
        rows = self._execute(
            "SELECT reply, prompt_tokens, completion_tokens FROM responses WHERE key = ?", (key,)
        )
        return CachedReply(*rows[0]) if rows else None

    def put(
        self,
        key: str,
        *,
        model: str,
        task: str,
        reply: str,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
    ) -> None:
        self._execute(
            "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)",
            (key, model, task, reply, prompt_tokens, completion_tokens, _now()),
        )

    def count(self) -> int:
        return int(self._execute("SELECT COUNT(*) FROM responses")[0][0])

    def prune_replies(self, before: datetime, *, dry_run: bool = False) -> int:
        """Forget the LLM replies cached at or before `before` (the next ingest that needs one asks again) and
        give their space back to the disk; returns how many. Rewrites, languages and meta are kept: they
        are the author's decisions and what question translation reads, not a cache."""
        cutoff = before.astimezone(UTC).isoformat(timespec="seconds")
        if dry_run:
            return int(self._execute("SELECT COUNT(*) FROM responses WHERE created <= ?", (cutoff,))[0][0])
        with self._lock:
            removed = self._db.execute("DELETE FROM responses WHERE created <= ?", (cutoff,)).rowcount
            if removed:
                self._db.execute("VACUUM")  # SQLite keeps freed pages in the file otherwise
        return int(removed)

    # Meta ----------------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        rows = self._execute("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        self._execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    @staticmethod
    def read_meta(data_dir: str | Path, key: str) -> str | None:
        """A meta value without creating the file when there is none (read-only callers: chat, CLI)."""
        path = cache_path(data_dir)
        if not path.is_file():
            return None
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
                row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error:
            return None
        return row[0] if row else None

    # Rewrites ------------------------------------------------------------------------------------

    def save_rewrite(
        self,
        post_id: str,
        *,
        source_hash: str,
        original: str,
        rewritten: str,
        changes: list[dict],
        status: str,
        model: str,
    ) -> None:
        self._execute(
            "INSERT OR REPLACE INTO rewrites VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (post_id, source_hash, original, rewritten, json.dumps(changes), status, model, _now()),
        )

    def get_rewrite(self, post_id: str) -> StoredRewrite | None:
        rows = self._execute("SELECT * FROM rewrites WHERE post_id = ?", (post_id,))
        if not rows:
            return None
        pid, source_hash, original, rewritten, changes, status, model, updated = rows[0]
        return StoredRewrite(
            pid, source_hash, original, rewritten, json.loads(changes), status, model, updated
        )

    def delete_rewrites(self, post_ids: Iterable[str]) -> None:
        for post_id in post_ids:
            self._execute("DELETE FROM rewrites WHERE post_id = ?", (post_id,))

    # Languages -----------------------------------------------------------------------------------

    def record_languages(
        self, languages: Iterable[tuple[str, str, int]], present: Iterable[str] | None = None
    ) -> str | None:
        """Store (post_id, lang, chars) rows, forget posts not in `present` (when given), and update and
        return the corpus's main language: the one with the most characters of text."""
        with self._lock:
            db = self._db
            db.execute("BEGIN")
            try:
                db.executemany("INSERT OR REPLACE INTO post_languages VALUES (?, ?, ?)", list(languages))
                if present is not None:
                    keep = set(present)
                    stale = [
                        r[0] for r in db.execute("SELECT post_id FROM post_languages") if r[0] not in keep
                    ]
                    db.executemany("DELETE FROM post_languages WHERE post_id = ?", [(p,) for p in stale])
                weights: Counter[str] = Counter()
                for lang, chars in db.execute("SELECT lang, chars FROM post_languages WHERE lang != 'und'"):
                    weights[lang] += chars
                main = weights.most_common(1)[0][0] if weights else None
                if main:
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('corpus_language', ?)", (main,))
                else:
                    db.execute("DELETE FROM meta WHERE key = 'corpus_language'")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return main

    def post_language(self, post_id: str) -> str | None:
        rows = self._execute("SELECT lang FROM post_languages WHERE post_id = ?", (post_id,))
        return rows[0][0] if rows else None


def corpus_language(data_dir: str | Path) -> str | None:
    """The stored corpus's main language as recorded at ingest, or None when nothing was recorded."""
    return LLMCache.read_meta(data_dir, "corpus_language")
