"""The remembered sources (a feed, a sitemap, a site, a local path) in a `sources` table beside `chunks`
and `posts`, so replicas on object storage share them: each source's address (a path's absolute path),
kind, collection, last sync (time, result, whether it went well), and what the next sync needs (`state`:
the source's and each page's ETag / Last-Modified, which post each page became, a path's options).

Writes are keyed on the address (merge_insert) and go through `retry_commit` like every other write,
so two syncs or a sync and the Ingest page may save at once; the later save of a source wins whole.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from core.store.commit import retry_commit
from core.store.reads import scan
from core.store.schema import sql_str

if TYPE_CHECKING:
    from core.store.tables import Store

SOURCES = "sources"
SOURCES_SCHEMA = pa.schema(
    [
        pa.field("url", pa.string(), nullable=False),
        pa.field("kind", pa.string()),  # feed | sitemap | site | page | path (core/ingest/web/local.py)
        pa.field("collection", pa.string()),  # a path's "": each post's own
        pa.field("added_at", pa.string()),  # ISO 8601, UTC
        pa.field("synced_at", pa.string()),  # "" before the first sync
        pa.field("result", pa.string()),  # one line: "3 new, 1 updated, …" or why it failed
        pa.field("ok", pa.bool_()),
        pa.field("state", pa.string()),  # JSON, see Source.state
    ]
)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class Source:
    """`state`: {"etag", "last_modified", "via_url" and "via" (a site's discovered sitemap or feed),
    "feed_posts" (how many posts a feed gave at its last full read), "items":
    {page address: {"post_id", "source", "etag", "last_modified"}}, "gone": the same for pages no longer
    listed whose posts were not pruned} as the last sync left it."""

    url: str
    kind: str
    collection: str = "writings"
    added_at: str = field(default_factory=now)
    synced_at: str = ""
    result: str = ""
    ok: bool = True
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def items(self) -> dict[str, dict[str, str]]:
        return self.state.setdefault("items", {})

    def to_row(self) -> dict:
        return {**self.__dict__, "state": json.dumps(self.state, sort_keys=True)}

    def to_json(self) -> dict:
        return {
            "url": self.url,
            "kind": self.kind,
            "collection": self.collection,
            "added_at": self.added_at,
            "synced_at": self.synced_at,
            "result": self.result,
            "ok": self.ok,
            "posts": len(self.items),
        }

    @classmethod
    def from_row(cls, row: dict) -> Source:
        return cls(
            row["url"],
            row["kind"] or "",
            row["collection"] if row["collection"] is not None else "writings",
            row["added_at"] or "",
            row["synced_at"] or "",
            row["result"] or "",
            bool(row["ok"]) if row["ok"] is not None else True,
            json.loads(row["state"] or "{}"),
        )


class Sources:
    """The sources table of `store` (created on the first save)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def _table(self) -> Any | None:
        return self.store._open(SOURCES)

    def _created(self) -> Any:
        table = self._table()
        if table is None:
            table = retry_commit(
                "create the sources table",
                lambda: self.store.db.create_table(SOURCES, schema=SOURCES_SCHEMA, exist_ok=True),
            )
        return table

    def all(self) -> list[Source]:
        """Every remembered source, in the order they were added."""
        table = self._table()
        if table is None:
            return []
        rows = [Source.from_row(r) for r in scan(table, SOURCES_SCHEMA.names).to_pylist()]
        return sorted(rows, key=lambda s: (s.added_at, s.url))

    def get(self, url: str) -> Source | None:
        table = self._table()
        if table is None:
            return None
        rows = scan(table, SOURCES_SCHEMA.names, f"url = {sql_str(url)}").to_pylist()
        return Source.from_row(rows[0]) if rows else None

    def save(self, source: Source) -> None:
        """Add the source or replace its row (keyed on the address)."""
        data = pa.Table.from_pylist([source.to_row()], schema=SOURCES_SCHEMA)

        def write() -> None:
            (
                self._created()
                .merge_insert("url")
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .execute(data)
            )

        retry_commit("save the source", write)

    def remove(self, url: str) -> bool:
        """Forget a source (its posts stay); whether it was remembered."""
        if self.get(url) is None:
            return False
        retry_commit("remove the source", lambda: self._created().delete(f"url = {sql_str(url)}"))
        return True
