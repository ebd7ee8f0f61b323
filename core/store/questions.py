"""The question log: what readers asked, how each question was answered, and what they thought of it.

A fourth table, `questions`, beside `chunks`, `posts` and `changes`, so replicas on object storage all
write to one log. One row per question: when (UTC, to the second), the question as asked, its language,
the answer mode, whether it was declined, the posts cited, the seconds it took, where it came from
(chat, api, cli), the reader's feedback (+1/-1, an optional short comment) and a random question id,
which is what feedback is recorded against. Nothing that identifies a reader is stored: no address,
cookie, session, conversation or user id.

    log = QuestionLog.for_settings(settings, store)
    qid = log.add(Asked("how do I sharpen a plane?", "en", "extractive", False, ("planes",), 0.4, "chat"))
    log.feedback(qid, up=False, comment="not what I asked")
    log.query(since=datetime.now(UTC) - timedelta(days=7), unanswered=True)

`INKWELL_QUESTION_LOG=off` (setting `question_log`) stores nothing: `add` and `feedback` write nothing
(what an earlier run logged can still be read, and purged). Rows older than `question_retention_days`
(default 180) are deleted by the first write of each process and at most every ten minutes after, and
by every `query`, which never returns them either.

Writes are appends and single-row updates, each through `retry_commit` like every other store write,
so concurrent writers (several app processes, the CLI) lose nothing.

A fifth table, `question_vectors`, keeps the vectors the Readers page embedded its questions into (by
model and text: no question id, no time), so grouping them after a restart embeds only new questions.
They go with their questions: when retention deletes the last row asking a text, or on `purge`.
"""

from __future__ import annotations

import hashlib
import re
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pyarrow as pa

from core.config import Settings
from core.store.commit import retry_commit
from core.store.reads import scan
from core.store.schema import sql_str
from core.store.tables import Store

QUESTIONS = "questions"
QUESTION_VECTORS = "question_vectors"
SOURCES = ("chat", "api", "widget", "cli")  # widget: the blog widget (the API, asked by widget.js)
MAX_COMMENT_CHARS = 500
# What readers are told while the log is on: the chat's footer and the widget (via GET /api/welcome)
# show this one sentence, so the promise reads the same wherever a question is asked.
PRIVACY_NOTE = "Questions are kept to improve the blog; nothing identifies you."
# Retention and compaction run with a write at most this often per log object (a delete is a commit).
MAINTAIN_EVERY = 600.0
# Appends leave a fragment each; past this many the table is compacted so reads stay quick.
MAX_FRAGMENTS = 64

QUESTIONS_SCHEMA = pa.schema(
    [
        pa.field("question_id", pa.string(), nullable=False),
        pa.field("at", pa.string()),  # ISO 8601, UTC, to the second: sorts as text
        pa.field("question", pa.string()),
        pa.field("language", pa.string()),  # ISO 639-1, or "und"
        pa.field("mode", pa.string()),  # extractive | generative | none
        pa.field("declined", pa.bool_()),
        pa.field("posts", pa.list_(pa.string())),  # the cited posts' ids, in citation order
        pa.field("seconds", pa.float64()),
        pa.field("source", pa.string()),  # chat | api | cli
        pa.field("feedback", pa.int8()),  # +1 up, -1 down, null: none given
        pa.field("comment", pa.string()),
    ]
)
VECTORS_SCHEMA = pa.schema(
    [
        pa.field("key", pa.string(), nullable=False),  # sha256 of the model id and the text
        pa.field("text_hash", pa.string()),  # sha256 of the text: which questions it goes with
        pa.field("model", pa.string()),
        pa.field("vector", pa.list_(pa.float32())),
    ]
)
_IN_BATCH = 500  # keys per `IN (…)` filter
_ID = re.compile(r"[0-9a-f]{32}")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True)
class Asked:
    """What is logged of one question (every field but the time, the id and the feedback)."""

    question: str
    language: str
    mode: str
    declined: bool
    posts: tuple[str, ...]
    seconds: float
    source: str


@dataclass(frozen=True)
class LoggedQuestion:
    """A row of the log."""

    question_id: str
    at: str
    question: str
    language: str
    mode: str
    declined: bool
    posts: tuple[str, ...]
    seconds: float
    source: str
    feedback: int | None = None
    comment: str = ""

    @property
    def unanswered(self) -> bool:
        """Declined, or answered and rated down: a question the posts did not serve."""
        return self.declined or self.feedback == -1

    @classmethod
    def from_row(cls, row: dict) -> LoggedQuestion:
        return cls(
            row["question_id"],
            row["at"] or "",
            row["question"] or "",
            row["language"] or "",
            row["mode"] or "",
            bool(row["declined"]),
            tuple(row["posts"] or ()),
            float(row["seconds"] or 0.0),
            row["source"] or "",
            None if row["feedback"] is None else int(row["feedback"]),
            row["comment"] or "",
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "question_id": self.question_id,
            "at": self.at,
            "question": self.question,
            "language": self.language,
            "mode": self.mode,
            "declined": self.declined,
            "posts": list(self.posts),
            "seconds": round(self.seconds, 3),
            "source": self.source,
            "feedback": self.feedback,
            "comment": self.comment,
        }


def stamp(when: datetime) -> str:
    """A time as the log stores it (UTC, to the second), so stamps compare as text."""
    return when.astimezone(UTC).isoformat(timespec="seconds")


def clean_comment(comment: str | None) -> str:
    """A reader's comment as stored: control characters out, spaces collapsed, at most 500 characters."""
    text = " ".join(_CONTROL.sub(" ", comment or "").split())
    return text[:MAX_COMMENT_CHARS]


@dataclass
class QuestionLog:
    """The log of one data directory (`store`); `enabled` False stores nothing."""

    store: Store
    enabled: bool = True
    retention_days: float = 180.0
    now: Any = field(default=lambda: datetime.now(UTC), repr=False)  # a clock, for tests
    _maintained: float = field(default=-MAINTAIN_EVERY, repr=False)

    @classmethod
    def for_settings(cls, settings: Settings, store: Store | None = None) -> QuestionLog:
        return cls(
            store or Store(settings.data_dir),
            enabled=settings.question_log,
            retention_days=settings.question_retention_days,
        )

    # Writes --------------------------------------------------------------------------------------

    def add(self, asked: Asked, at: datetime | None = None) -> str | None:
        """Log one question; returns its new random id (None when the log is off)."""
        if not self.enabled:
            return None
        if asked.source not in SOURCES:
            raise ValueError(f"source must be one of {', '.join(SOURCES)}, not {asked.source!r}")
        question_id = uuid.uuid4().hex
        row = {
            "question_id": question_id,
            "at": stamp(at or self.now()),
            "question": asked.question,
            "language": asked.language,
            "mode": asked.mode,
            "declined": bool(asked.declined),
            "posts": list(dict.fromkeys(asked.posts)),
            "seconds": max(0.0, float(asked.seconds)),
            "source": asked.source,
            "feedback": None,
            "comment": "",
        }
        data = pa.Table.from_pylist([row], schema=QUESTIONS_SCHEMA)
        retry_commit("log the question", lambda: self._table().add(data))
        if time.monotonic() - self._maintained >= MAINTAIN_EVERY:
            self._maintained = time.monotonic()
            self.expire()
            self._compact()
        return question_id

    def revise(self, question_id: str, asked: Asked) -> bool:
        """The logged question answered again (the chat's "Search only …" buttons re-ask it in other
        collections): its row takes the new answer's mode, decline, posts and seconds, and loses the
        rating given to the old answer. Its id, time and source stay, so the question is counted once.
        False when the log is off or has no such question."""
        old = self.get(question_id) if self.enabled and _ID.fullmatch(question_id or "") else None
        if old is None:
            return False
        row = {
            **old.to_json(),
            "mode": asked.mode,
            "declined": bool(asked.declined),
            "posts": list(dict.fromkeys(asked.posts)),
            "seconds": max(0.0, float(asked.seconds)),
            "feedback": None,
            "comment": "",
        }
        # A whole typed row (an update's values cannot say the type of an empty list of posts).
        data = pa.Table.from_pylist([row], schema=QUESTIONS_SCHEMA)

        def write() -> Any:
            return self._open().merge_insert("question_id").when_matched_update_all().execute(data)

        result = retry_commit("revise the question", write)
        return result.num_updated_rows > 0

    def feedback(self, question_id: str, up: bool | None, comment: str = "") -> bool:
        """Record a reader's thumbs up (True) or down (False; None keeps what was given) and comment
        against a logged question. False when the log is off or has no such question."""
        if not self.enabled or not _ID.fullmatch(question_id or ""):
            return False
        values: dict[str, Any] = {}
        if up is not None:
            values["feedback"] = 1 if up else -1
        if comment.strip():
            values["comment"] = clean_comment(comment)
        table = self._open()
        if not values or table is None:
            return False
        where = f"question_id = {sql_str(question_id)}"
        result = retry_commit("record the feedback", lambda: self._open().update(where=where, values=values))
        return result.rows_updated > 0

    def unrate(self, question_id: str) -> bool:
        """Take a reader's thumb off a logged question (they clicked it again, clearing it): the row is
        unrated again, its comment kept. False when the log is off or has no such question."""
        if not self.enabled or not _ID.fullmatch(question_id or "") or self._open() is None:
            return False
        where = f"question_id = {sql_str(question_id)}"
        result = retry_commit(
            "take back the rating", lambda: self._open().update(where=where, values_sql={"feedback": "NULL"})
        )
        return result.rows_updated > 0

    def expire(self) -> int:
        """Delete the rows older than the retention, and the vectors of the texts no row asks any more;
        returns how many rows went."""
        table = self._open()
        if table is None:
            return 0
        where = f"at < {sql_str(self.cutoff())}"
        old = table.count_rows(where)
        if old:
            retry_commit("delete old questions", lambda: self._open().delete(where))
            self._drop_orphan_vectors()
        return old

    def purge(self) -> int:
        """Delete every logged question (even with the log off) and every kept vector; returns how many
        questions there were."""
        if self.store._open(QUESTION_VECTORS) is not None:
            retry_commit(
                "delete the questions' vectors", lambda: self.store._open(QUESTION_VECTORS).delete("true")
            )
        table = self._open()
        if table is None:
            return 0
        count = table.count_rows()
        if count:
            retry_commit("empty the question log", lambda: self._open().delete("true"))
        return count

    # Vectors -------------------------------------------------------------------------------------

    def vectors(self, model_id: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The kept vectors of `texts` under `model_id`, by text (those never kept are missing)."""
        table = self.store._open(QUESTION_VECTORS)
        if table is None or not texts:
            return {}
        by_key = {_vector_key(model_id, text): text for text in texts}
        keys, found = list(by_key), {}
        for start in range(0, len(keys), _IN_BATCH):
            listed = ", ".join(sql_str(k) for k in keys[start : start + _IN_BATCH])
            for row in scan(table, ["key", "vector"], f"key IN ({listed})").to_pylist():
                found[by_key[row["key"]]] = np.asarray(row["vector"], dtype=np.float32)
        return found

    def keep_vectors(self, model_id: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Keep `vectors` (one row per text) of logged questions' `texts` under `model_id`; nothing while
        the log is off."""
        if not self.enabled or not len(texts):
            return
        rows = [
            {"key": _vector_key(model_id, text), "text_hash": _text_hash(text), "model": model_id,
             "vector": np.asarray(vector, dtype=np.float32).tolist()}
            for text, vector in zip(texts, vectors, strict=True)
        ]  # fmt: skip
        data = pa.Table.from_pylist(rows, schema=VECTORS_SCHEMA)

        def write() -> Any:
            table = self.store._open(QUESTION_VECTORS)
            if table is None:
                table = self.store.db.create_table(QUESTION_VECTORS, schema=VECTORS_SCHEMA, exist_ok=True)
            return table.merge_insert("key").when_not_matched_insert_all().execute(data)

        retry_commit("keep the questions' vectors", write)

    def _drop_orphan_vectors(self) -> None:
        """Delete the vectors of texts that no logged question asks any more."""
        vectors, table = self.store._open(QUESTION_VECTORS), self._open()
        if vectors is None or table is None:
            return
        asked = {_text_hash(q) for q in scan(table, ["question"]).column("question").to_pylist()}
        kept = scan(vectors, ["key", "text_hash"]).to_pylist()
        orphans = [row["key"] for row in kept if row["text_hash"] not in asked]
        for start in range(0, len(orphans), _IN_BATCH):
            where = "key IN (" + ", ".join(sql_str(k) for k in orphans[start : start + _IN_BATCH]) + ")"
            retry_commit(
                "delete old questions' vectors",
                lambda where=where: self.store._open(QUESTION_VECTORS).delete(where),
            )

    # Reads ---------------------------------------------------------------------------------------

    def query(
        self,
        since: datetime | None = None,
        *,
        unanswered: bool = False,
        sources: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[LoggedQuestion]:
        """Logged questions, newest first: asked at or after `since`, only the unanswered ones (declined
        or rated down), from these `sources`, at most `limit`. Deletes expired rows first."""
        self.expire()
        table = self._open()
        if table is None:
            return []
        bound = max(self.cutoff(), stamp(since)) if since else self.cutoff()
        where = f"at >= {sql_str(bound)}"
        if unanswered:
            where += " AND (declined OR feedback = -1)"
        if sources:
            where += " AND source IN (" + ", ".join(sql_str(s) for s in sources) + ")"
        rows = [LoggedQuestion.from_row(r) for r in scan(table, QUESTIONS_SCHEMA.names, where).to_pylist()]
        rows.sort(key=lambda r: (r.at, r.question_id), reverse=True)
        return rows[:limit] if limit else rows

    def get(self, question_id: str) -> LoggedQuestion | None:
        table = self._open()
        if table is None or not _ID.fullmatch(question_id or ""):
            return None
        rows = scan(table, QUESTIONS_SCHEMA.names, f"question_id = {sql_str(question_id)}").to_pylist()
        return LoggedQuestion.from_row(rows[0]) if rows else None

    def cutoff(self) -> str:
        return stamp(self.now() - timedelta(days=self.retention_days))

    # Table ---------------------------------------------------------------------------------------

    def _open(self) -> Any | None:
        return self.store._open(QUESTIONS)

    def _table(self) -> Any:
        table = self._open()
        if table is None:
            table = retry_commit(
                "create the question log",
                lambda: self.store.db.create_table(QUESTIONS, schema=QUESTIONS_SCHEMA, exist_ok=True),
            )
        return table

    def _compact(self) -> None:
        table = self._open()
        if table is not None and int(table.stats()["fragment_stats"]["num_fragments"]) > MAX_FRAGMENTS:
            retry_commit("compact the question log", lambda: self._open().optimize())


def _text_hash(text: str) -> str:
    return hashlib.sha256(text.strip().encode()).hexdigest()


def _vector_key(model_id: str, text: str) -> str:
    return hashlib.sha256(f"{model_id}\n{text.strip()}".encode()).hexdigest()
