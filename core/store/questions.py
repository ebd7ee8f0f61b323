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
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa

from core.config import Settings
from core.store.commit import retry_commit
from core.store.reads import scan
from core.store.schema import sql_str
from core.store.tables import Store

QUESTIONS = "questions"
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
        """Delete the rows older than the retention; returns how many went."""
        table = self._open()
        if table is None:
            return 0
        where = f"at < {sql_str(self.cutoff())}"
        old = table.count_rows(where)
        if old:
            retry_commit("delete old questions", lambda: self._open().delete(where))
        return old

    def purge(self) -> int:
        """Delete every logged question (even with the log off); returns how many there were."""
        table = self._open()
        if table is None:
            return 0
        count = table.count_rows()
        if count:
            retry_commit("empty the question log", lambda: self._open().delete("true"))
        return count

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
