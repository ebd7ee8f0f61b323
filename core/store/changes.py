"""The change log and undo: what each write (an ingest, a deletion, a chunk edit) touched, so that one
change can be undone alone.

Undo puts back only the posts a change touched, as they were in the table versions the change started
from (LanceDB keeps old versions until `optimize()` cleans up those older than a week), and only while
nothing since has changed those posts: another writer's later work is never rolled back. Whether a
post changed is told by its fingerprint (its content hash and its chunks' ids and embed hashes), taken
when the change is logged and compared at undo time, so it holds for writers that log nothing too.

Undo writes the post rows first, then the chunks. A cut in between leaves old post rows over new chunks:
the next ingest of those files sees a content hash that is not theirs and rebuilds them, and chunks
whose post row is gone are orphans, never served and removed by the next ingest (`remove_orphans`).
A cut undo can also simply be run again: a post already put back counts as unchanged.

The log is a third table beside `chunks` and `posts`, so replicas on object storage share it.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from core.store.commit import retry_commit
from core.store.faults import crash_point
from core.store.reads import scan
from core.store.schema import (
    CHUNKS,
    DERIVED_SQL,
    POSTS,
    POSTS_SCHEMA,
    StoreError,
    Versions,
    sql_in,
    sql_str,
    with_derived,
)

CHANGES = "changes"
CHANGES_SCHEMA = pa.schema(
    [
        pa.field("change_id", pa.string(), nullable=False),
        pa.field("at", pa.string()),  # ISO 8601, UTC, to the microsecond
        pa.field("label", pa.string()),  # for people: "ingest of 3 posts", "deletion of 1 post"
        pa.field("post_ids", pa.list_(pa.string())),
        pa.field("chunks_version", pa.int64()),  # before the change; null: the table did not exist
        pa.field("posts_version", pa.int64()),
        pa.field("after", pa.string()),  # JSON {post_id: fingerprint or null} right after the change
        pa.field("undone_at", pa.string()),
    ]
)
# Ids per SQL `IN (…)` filter: one filter per batch keeps each query's text small.
_ID_BATCH = 500


class UndoRefused(StoreError):
    """Undo would roll back later work (or the versions it needs are gone); the message names what."""


@dataclass(frozen=True)
class Change:
    change_id: str
    at: str
    label: str
    post_ids: tuple[str, ...]
    before: Versions
    after: dict[str, str | None]
    undone_at: str | None = None

    @property
    def undone(self) -> bool:
        return self.undone_at is not None

    def touched(self, titles: Mapping[str, str], shown: int = 3) -> str:
        """The posts it touched, for people: "“On Bees”, “Sourdough” and 4 more", by title where the
        post is still stored (`titles`), else by id (a deleted post)."""
        names = [f"“{titles[p]}”" if titles.get(p) else p for p in self.post_ids[:shown]]
        rest = len(self.post_ids) - len(names)
        if rest:
            return f"{', '.join(names)} and {rest} more"
        return " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else "".join(names)

    def to_json(self) -> dict:
        return {
            "change_id": self.change_id,
            "at": self.at,
            "label": self.label,
            "posts": list(self.post_ids),
            "undone_at": self.undone_at,
        }

    @classmethod
    def from_row(cls, row: dict) -> Change:
        return cls(
            row["change_id"],
            row["at"] or "",
            row["label"] or "",
            tuple(row["post_ids"] or ()),
            Versions(row["chunks_version"], row["posts_version"]),
            json.loads(row["after"] or "{}"),
            row["undone_at"],
        )


@dataclass(frozen=True)
class Undone:
    change: Change
    restored: list[str]  # posts put back as they were
    removed: list[str]  # posts the change had added, now gone again


def fingerprint(content_hash: str | None, chunks: Iterable[tuple[str, str]], url: str = "") -> str | None:
    """A post's state in one string, `<row part>:<chunks part>`: its row's content hash (and address,
    which an owner edits alone) and its chunks (id, embed hash), each hashed; None for a post with
    neither a row nor chunks. A post without an address hashes as before addresses existed, so the
    fingerprints logged then still compare."""
    pairs = sorted(chunks)
    if content_hash is None and not pairs:
        return None
    row_state = (content_hash or "-") + (f"\0{url}" if url else "")
    row = hashlib.sha256(row_state.encode()).hexdigest()[:16]
    digest = hashlib.sha256()
    for chunk_id, embed_hash in pairs:
        digest.update(f"\0{chunk_id}\0{embed_hash or ''}".encode())
    return f"{row}:{digest.hexdigest()[:16]}"


def unchanged_since(now: str | None, after: str | None, before: str | None) -> bool:
    """Whether a post is as a change left it, or (part or whole) as it was before the change: each of
    its two parts (core/store/changes.fingerprint) is the change's or the earlier one. An undo cut off
    between its writes leaves the row put back and the chunks not yet, and can then be run again."""
    if now in (after, before):
        return True
    if now is None or after is None or before is None:
        return False
    return all(
        part in (a, b) for part, a, b in zip(now.split(":"), after.split(":"), before.split(":"), strict=True)
    )


def _fingerprints_of(
    post_ids: Sequence[str], post_rows: Iterable[dict], chunk_rows: Iterable[dict]
) -> dict[str, str | None]:
    """Each post's fingerprint from its post row (`content_hash`) and chunk rows (`chunk_id`,
    `embed_hash`)."""
    rows = {r["post_id"]: r for r in post_rows}
    pairs: dict[str, list[tuple[str, str]]] = {}
    for row in chunk_rows:
        pairs.setdefault(row["post_id"], []).append((row["chunk_id"], row["embed_hash"]))
    return {
        p: fingerprint(
            rows[p]["content_hash"] if p in rows else None, pairs.get(p, []), rows.get(p, {}).get("url") or ""
        )
        for p in post_ids
    }


def _present(table: Any | None, columns: Sequence[str]) -> list[str]:
    """The `columns` the table has (an older version may lack the newer ones)."""
    return list(columns) if table is None else [c for c in columns if c in table.schema.names]


def _batches(ids: Sequence[str]) -> Iterable[list[str]]:
    for start in range(0, len(ids), _ID_BATCH):
        yield list(ids[start : start + _ID_BATCH])


def _rows_of(table: Any | None, post_ids: Sequence[str], columns: Sequence[str]) -> list[dict]:
    if table is None or not post_ids:
        return []
    rows: list[dict] = []
    for batch in _batches(sorted(set(post_ids))):
        rows.extend(scan(table, columns, sql_in("post_id", batch)).to_pylist())
    return rows


class ChangeLog:
    """Mixed into Store (core/store/tables.py), which provides `db`, `_open`, `chunks` and `posts`."""

    db: Any
    _handles: dict

    def _open(self, name: str) -> Any | None:  # pragma: no cover - Store's
        raise NotImplementedError

    # Fingerprints --------------------------------------------------------------------------------

    def fingerprints(
        self, post_ids: Sequence[str], versions: Versions | None = None
    ) -> dict[str, str | None]:
        """Each post's fingerprint now, or at `versions` (a None version: that table did not exist)."""
        posts = self._table_at(POSTS, versions.posts if versions else -1)
        chunks = self._table_at(CHUNKS, versions.chunks if versions else -1)
        return _fingerprints_of(
            post_ids,
            _rows_of(posts, post_ids, _present(posts, ["post_id", "content_hash", "url"])),
            _rows_of(chunks, post_ids, ["post_id", "chunk_id", "embed_hash"]),
        )

    def _table_at(self, name: str, version: int | None) -> Any | None:
        """The table now (version -1), at an older version (a handle of its own), or None."""
        if version is None:
            return None
        if version == -1:
            return self._open(name)
        try:
            table = self.db.open_table(name)
        except ValueError:
            return None
        try:
            table.checkout(int(version))
        except Exception as exc:  # lance raises ValueError/RuntimeError/OSError variously
            raise UndoRefused(
                f"the {name} table's version {version} is gone (old versions are cleaned up after a "
                "week), so this change can no longer be undone"
            ) from exc
        return table

    # The log -------------------------------------------------------------------------------------

    def log_change(self, label: str, before: Versions, post_ids: Iterable[str]) -> Change | None:
        """Record that a change which started at `before` touched these posts (None when it touched
        none). Call it once the change's writes are done."""
        ids = tuple(dict.fromkeys(post_ids))
        if not ids:
            return None
        change = Change(
            uuid.uuid4().hex[:12],
            datetime.now(UTC).isoformat(timespec="microseconds"),  # orders changes made in one second
            label,
            ids,
            before,
            self.fingerprints(ids),
        )
        row = {
            "change_id": change.change_id,
            "at": change.at,
            "label": label,
            "post_ids": list(ids),
            "chunks_version": before.chunks,
            "posts_version": before.posts,
            "after": json.dumps(change.after),
            "undone_at": None,
        }
        retry_commit(
            "log the change", lambda: self._changes_table().add(pa.Table.from_pylist([row], CHANGES_SCHEMA))
        )
        return change

    def _changes_table(self) -> Any:
        table = self._open(CHANGES)
        if table is None:
            table = retry_commit(
                "create the change log",
                lambda: self.db.create_table(CHANGES, schema=CHANGES_SCHEMA, exist_ok=True),
            )
        return table

    def changes(self, limit: int | None = 20) -> list[Change]:
        """Logged changes, newest first (at most `limit`)."""
        table = self._open(CHANGES)
        if table is None:
            return []
        rows = [Change.from_row(r) for r in scan(table, CHANGES_SCHEMA.names).to_pylist()]
        rows.sort(key=lambda c: c.at, reverse=True)
        return rows[:limit] if limit else rows

    def get_change(self, change_id: str) -> Change | None:
        table = self._open(CHANGES)
        if table is None:
            return None
        rows = scan(table, CHANGES_SCHEMA.names, f"change_id = {sql_str(change_id)}").to_pylist()
        return Change.from_row(rows[0]) if rows else None

    # Undo ----------------------------------------------------------------------------------------

    def undo(self, change_id: str | None = None) -> Undone:
        """Undo one change (by default the newest one not undone yet): its posts go back to how they
        were before it. Refused (UndoRefused, naming them) when any of its posts changed since."""
        change = self._undoable(change_id)
        old_posts, old_chunks = self._rows_before(change)  # read once: to compare, then to write back
        before = _fingerprints_of(change.post_ids, old_posts, old_chunks)
        now = self.fingerprints(change.post_ids)
        moved = [p for p in change.post_ids if not unchanged_since(now[p], change.after.get(p), before[p])]
        if moved:
            raise UndoRefused(self._refusal(change, moved))
        self._put_back(change, old_posts, old_chunks)
        crash_point("undo:chunks-written")
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        retry_commit(
            "mark the change undone",
            lambda: self._changes_table().update(
                where=f"change_id = {sql_str(change.change_id)}", values={"undone_at": stamp}
            ),
        )
        restored = [p for p in change.post_ids if before[p] is not None]
        removed = [p for p in change.post_ids if before[p] is None]
        # The change as it now stands: `inkwell undo --json` said "undone_at": null for what it had undone.
        return Undone(replace(change, undone_at=stamp), restored, removed)

    def _undoable(self, change_id: str | None) -> Change:
        if change_id is None:
            pending = [c for c in self.changes(limit=None) if not c.undone]
            if not pending:
                raise UndoRefused("there is no change to undo")
            return pending[0]
        change = self.get_change(change_id)
        if change is None:
            raise UndoRefused(f"no change with id {change_id!r} (see: inkwell changes)")
        if change.undone:
            raise UndoRefused(
                f"change {change_id} ({change.label}) was undone already, at {change.undone_at}"
            )
        return change

    def _refusal(self, change: Change, moved: list[str]) -> str:
        touched = set(moved)
        later = [
            c
            for c in self.changes(limit=None)
            if c.at >= change.at
            and c.change_id != change.change_id
            and not c.undone
            and touched & set(c.post_ids)
        ]
        names = ", ".join(map(repr, moved[:5])) + (f" and {len(moved) - 5} more" if len(moved) > 5 else "")
        if later:
            by = "; ".join(f"{c.change_id} ({c.label}, {c.at})" for c in later[:5])
            return (
                f"cannot undo {change.label}: {names} changed since, by {by}; undo those first, or leave it"
            )
        return (
            f"cannot undo {change.label}: {names} changed since (by another writer); undoing would lose that"
        )

    def _rows_before(self, change: Change) -> tuple[list[dict], list[dict]]:
        """The change's posts' rows and chunks (every stored column but the derived ones) as they were
        in the versions it started from."""
        ids = list(change.post_ids)
        old_table = self._table_at(POSTS, change.before.posts)
        old_posts = _rows_of(old_table, ids, _present(old_table, POSTS_SCHEMA.names))
        old_table = self._table_at(CHUNKS, change.before.chunks)
        current = self._open(CHUNKS)
        if old_table is None or current is None:
            return old_posts, []
        columns = [c for c in current.schema.names if c not in DERIVED_SQL and c in old_table.schema.names]
        return old_posts, _rows_of(old_table, ids, columns)

    def _put_back(self, change: Change, old_posts: list[dict], old_chunks: list[dict]) -> None:
        """Post rows first, then chunks (see the module docstring for why that order)."""
        where = sql_in("post_id", list(change.post_ids))
        self.posts  # noqa: B018 (a table from before the newer columns gets them first)
        retry_commit(
            "undo: put back the post rows",
            lambda: self._replace_rows(POSTS, "post_id", old_posts, where, POSTS_SCHEMA),
        )
        crash_point("undo:posts-written")
        chunks = with_derived(old_chunks)
        retry_commit(
            "undo: put back the chunks", lambda: self._replace_rows(CHUNKS, "chunk_id", chunks, where)
        )

    def _replace_rows(
        self, name: str, key: str, rows: list[dict], where: str, schema: pa.Schema | None = None
    ) -> None:
        """In one commit, the rows of table `name` matching `where` become `rows` (matched on `key`)."""
        table = self._open(name)
        if table is None:
            return
        if not rows:
            table.delete(where)
            return
        data = pa.Table.from_pylist(rows, schema=schema or table.schema)
        (
            table.merge_insert(key)
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete(where)
            .execute(data)
        )
