"""LanceDB storage: a `chunks` table (text, keywords, vector) and a `posts` table (raw text).

Why two tables: a post's raw text is kept so it can be re-chunked or re-embedded without uploading
it again, while searches only touch chunks. The embedding model and dimension live in the chunks
table's schema metadata, so a query or an ingest with another model is refused instead of silently
comparing vectors from different spaces.

Write order gives crash safety across the two tables: a post's chunks are replaced in one commit
(merge_insert keyed on chunk_id, with that post's stale chunks deleted in the same commit) and the
post row, which holds the content hash that marks the post as done, is written after.

Keyword search uses LanceDB's native full-text (BM25) index over one derived column, `search_text`:
title, section, text and keywords joined (native FTS indexes a single column, so the fields are
concatenated instead of searched separately). Another derived column, `hit`, packs the fields a search
hit shows into one list, so a search reads one column per hit instead of eight (schema.HIT). The store
computes both on every write, so callers never pass them. Rows added after the index was built are
still searched (LanceDB scans unindexed rows), and `optimize()`, run after every ingest and delete,
folds them into the index incrementally.

Concurrent writers (two CLI ingests, the Ingest page and a chunk edit) are safe: every commit goes
through `retry_commit` (core/store/commit.py), and `replace_posts` reads back what it wrote, so a post
whose chunks another writer replaced between our two commits is written again (see there).

Post vectors (the mean of a post's chunk vectors) are not stored: core/search/posts.py computes them from
`chunk_vectors()` when asked, so no write path has to keep them current.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from core.config import as_data_dir, data_dir_key
from core.store.changes import ChangeLog
from core.store.commit import CommitConflictError, retry_commit
from core.store.faults import crash_point
from core.store.index import ensure_collection_index, ensure_fts_index, ensure_vector_index, has_fts_index
from core.store.location import connect
from core.store.reads import Reads, scan
from core.store.schema import (
    CHUNKS,
    DERIVED_SQL,
    META_DIM,
    META_MODEL,
    POSTS,
    POSTS_ADDED_SQL,
    POSTS_SCHEMA,
    SEARCH_TEXT,
    ModelInfo,
    ModelMismatchError,
    StoreError,
    Versions,
    chunks_schema,
    derived,
    sql_in,
    sql_str,
    sql_values,
    with_derived,
)
from core.store.settings import SavedSettings


class Store(Reads, ChangeLog, SavedSettings):
    def __init__(self, data_dir: str | Path, read_consistency_seconds: float = 0.0):
        """`data_dir`: a folder or an object-storage URI (core/store/location.py).

        `read_consistency_seconds` 0 (the default): every access opens the table at its latest commit, so
        a long-lived store (Streamlit) sees what the CLI or another process just wrote. Above 0 (replicas
        on object storage, where each check is a request): table handles are kept open and refresh
        themselves at most that long after another process's commit, and are reopened that often (so a
        table another process dropped or re-created is seen too)."""
        self.data_dir = as_data_dir(data_dir)
        self.key = data_dir_key(self.data_dir)  # for per-process caches of this data directory
        self.read_consistency_seconds = max(0.0, float(read_consistency_seconds))
        self.db = connect(self.data_dir, self.read_consistency_seconds)
        self._handles: dict[str, tuple[float, Any]] = {}

    # Tables ------------------------------------------------------------------------------------

    def _open(self, name: str) -> Any | None:
        keep = self.read_consistency_seconds
        if keep:
            held = self._handles.get(name)
            if held is not None and time.monotonic() - held[0] < keep:
                return held[1]
        # table_exists() is not implemented for local connections in lancedb 0.40.
        try:
            table = self.db.open_table(name)
        except ValueError:
            self._handles.pop(name, None)
            return None
        if keep:
            self._handles[name] = (time.monotonic(), table)
        return table

    @property
    def chunks(self) -> Any | None:
        return self._open(CHUNKS)

    @property
    def posts(self) -> Any:
        """The posts table to write to: created when missing, given the columns added since a table
        was made (a commit each, once)."""
        table = self._open(POSTS)
        if table is None:
            table = retry_commit("create the posts table", self._create_posts)
        if not set(POSTS_ADDED_SQL) <= set(table.schema.names):
            table = retry_commit("add the new columns to the posts table", self._add_posts_columns)
        return table

    def _add_posts_columns(self) -> Any:
        table = self._open(POSTS)
        missing = {c: sql for c, sql in POSTS_ADDED_SQL.items() if c not in table.schema.names}
        if missing:
            # Another writer may have added them first; any other failure shows up below.
            with contextlib.suppress(Exception):
                table.add_columns(missing)
            table = self._open(POSTS)
            if not set(POSTS_ADDED_SQL) <= set(table.schema.names):
                raise StoreError(f"could not add {', '.join(missing)} to the posts table")
        return table

    def _create_posts(self) -> Any:
        table = self.db.create_table(POSTS, schema=POSTS_SCHEMA, exist_ok=True)
        table.set_unenforced_primary_key("post_id")
        return table

    def model_info(self) -> ModelInfo | None:
        table = self.chunks
        if table is None:
            return None
        meta = table.schema.metadata or {}
        return ModelInfo(meta[META_MODEL].decode(), int(meta[META_DIM]))

    def model_id(self) -> str | None:
        info = self.model_info()
        return info.model_id if info else None

    def check_model(self, model_id: str) -> None:
        info = self.model_info()
        if info is not None and info.model_id != model_id:
            raise ModelMismatchError(
                f"this table's vectors were made with {info.model_id!r}, but the embedder now is "
                f"{model_id!r}; vectors from different models cannot be compared. Use the table's "
                f"model again, or re-embed everything with: inkwell reembed"
            )

    def ensure_chunks_table(self, model_id: str, dim: int) -> Any:
        self.check_model(model_id)
        table = self.chunks
        if table is None:
            table = retry_commit("create the chunks table", lambda: self._create_chunks(model_id, dim))
            self.check_model(model_id)  # another writer may have created it first, with its model
        else:
            table = self._add_derived(table)
        return table

    def _create_chunks(self, model_id: str, dim: int) -> Any:
        table = self.db.create_table(CHUNKS, schema=chunks_schema(dim, model_id), exist_ok=True)
        # With an (unenforced) primary key on a NOT NULL column, concurrent merge_inserts of the
        # same new chunk_id don't store it twice (measured on lancedb 0.40).
        table.set_unenforced_primary_key("chunk_id")
        return table

    def _add_derived(self, table: Any) -> Any:
        """The chunks table with its derived columns (`search_text`, `hit`): a table made before them gets
        them, a commit each; a table that has them is returned as it is.

        Without `search_text` there is no keyword search, so failing to add it is an error; a table
        without `hit` is still searched, column by column (older tables may lack a column HIT_SQL names).
        """
        if set(DERIVED_SQL) <= set(table.schema.names):
            return table
        for column, sql in DERIVED_SQL.items():
            if column in table.schema.names:
                continue
            # Another process may have added it first; any other failure shows up below.
            with contextlib.suppress(Exception):
                table.add_columns({column: sql})
            table = self.chunks
            if table is None:
                raise StoreError("the chunks table disappeared while it was being upgraded")
        if SEARCH_TEXT not in table.schema.names:
            raise StoreError("could not add the search_text column to the chunks table")
        return table

    # Writes ------------------------------------------------------------------------------------

    def replace_posts(self, post_rows: list[dict], chunk_rows: list[dict], model_id: str, dim: int) -> None:
        """Replace the chunks of these posts atomically, then record the posts as done.

        Two commits (chunks, then post rows), so another writer of the same post can slip in between:
        A's chunks, B's chunks, B's row, A's row would leave A's content hash over B's chunks, and the
        next ingest would skip the post as current. So the rows are read back after writing: a post
        whose row is ours but whose chunks are not is written again (the writer that committed last
        wins, whole); a post whose row is someone else's is theirs to check. Each commit is retried on
        conflicts (core/store/commit.py).
        """
        pending = [row["post_id"] for row in post_rows]
        for _ in range(_VERIFY_ROUNDS):
            ids = set(pending)
            posts = [row for row in post_rows if row["post_id"] in ids]
            chunks = [row for row in chunk_rows if row["post_id"] in ids]
            retry_commit(
                "write the chunks", lambda p=posts, c=chunks: self._merge_chunks(p, c, model_id, dim)
            )
            crash_point("ingest:chunks-written")
            retry_commit("write the post rows", lambda p=posts: self._merge_posts(p))
            pending = self._overwritten(posts, chunks)
            if not pending:
                return
        raise CommitConflictError(
            f"could not store {', '.join(map(repr, pending[:5]))}: other writers kept replacing "
            "them at the same time; run the ingest again"
        )

    def _merge_chunks(self, post_rows: list[dict], chunk_rows: list[dict], model_id: str, dim: int) -> None:
        if not post_rows:
            return
        table = self.ensure_chunks_table(model_id, dim)
        data = pa.Table.from_pylist(with_derived(chunk_rows), schema=table.schema)
        (
            table.merge_insert("chunk_id")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete(sql_in("post_id", [row["post_id"] for row in post_rows]))
            .execute(data)
        )

    def _merge_posts(self, post_rows: list[dict]) -> None:
        if not post_rows:
            return
        posts = pa.Table.from_pylist(post_rows, schema=POSTS_SCHEMA)
        self.posts.merge_insert("post_id").when_matched_update_all().when_not_matched_insert_all().execute(
            posts
        )

    def _overwritten(self, post_rows: list[dict], chunk_rows: list[dict]) -> list[str]:
        """Posts whose row is the one we wrote but whose chunks are not (another writer's, in between).

        Chunks are compared by id and text: two writers of the same version may pick different keywords
        (scored against the corpus as each found it), and either set is right for that row.
        """
        if not post_rows:
            return []
        ids = [row["post_id"] for row in post_rows]
        stored_hash = {
            row["post_id"]: row["content_hash"]
            for row in self._rows(self._open(POSTS), sql_in("post_id", ids), ["post_id", "content_hash"])
        }
        stored: dict[str, dict[str, str]] = {}
        for row in self._rows(self.chunks, sql_in("post_id", ids), ["post_id", "chunk_id", "text"]):
            stored.setdefault(row["post_id"], {})[row["chunk_id"]] = row["text"]
        written: dict[str, dict[str, str]] = {}
        for row in chunk_rows:
            written.setdefault(row["post_id"], {})[row["chunk_id"]] = row["text"]
        return [
            row["post_id"]
            for row in post_rows
            if stored_hash.get(row["post_id"]) == row["content_hash"]
            and stored.get(row["post_id"], {}) != written.get(row["post_id"], {})
        ]

    @staticmethod
    def _rows(table: Any | None, where: str, columns: list[str]) -> list[dict]:
        if table is None:
            return []
        return scan(table, columns, where).to_pylist()

    def overwrite_chunks(self, chunk_rows: list[dict], model_id: str, dim: int) -> None:
        """Replace the whole chunks table in one commit, e.g. re-embedded with another model.

        An overwrite is a new version of the same table (LanceDB OSS cannot rename tables), so a
        crash before it leaves the old table as it was.
        """
        schema = chunks_schema(dim, model_id)
        data = pa.Table.from_pylist(with_derived(chunk_rows), schema=schema)

        def overwrite() -> None:
            self._handles.pop(CHUNKS, None)
            table = self.db.create_table(CHUNKS, data, schema=schema, mode="overwrite")
            table.set_unenforced_primary_key("chunk_id")

        retry_commit("replace the chunks table", overwrite)

    def update_chunk(self, chunk_id: str, values: dict[str, Any], expected_hash: str | None = None) -> bool:
        """Change one chunk's columns; with `expected_hash`, only if its embed_hash still is that (a
        re-ingest or another edit in between wins, and False says so). True when a row changed."""

        def update() -> bool:
            table = self.chunks
            if table is None:
                raise StoreError("there are no chunks yet")
            table = self._add_derived(table)
            current = self.get_chunk(chunk_id)
            if current is None or (expected_hash is not None and current["embed_hash"] != expected_hash):
                return False
            full = {**values, **derived({**current, **values})}
            full = {k: v for k, v in full.items() if k in table.schema.names}
            where = f"chunk_id = {sql_str(chunk_id)}"
            if expected_hash is not None:
                where += f" AND embed_hash = {sql_str(expected_hash)}"
            return (
                table.update(where=where, values_sql=sql_values(full)).rows_updated > 0
            )  # keywords may be []

        return retry_commit("save the chunk", update)

    def set_post_url(self, post_id: str, url: str, label: str | None = None) -> bool:
        """Change one post's address (its chunks and vectors untouched), logged as a change (`label`)
        for undo; False when there is no such post. The caller checks the address."""
        before = self.versions()
        table = self.posts
        where = f"post_id = {sql_str(post_id)}"
        changed = retry_commit(
            "save the address", lambda: table.update(where=where, values={"url": url}).rows_updated > 0
        )
        if changed:
            self.log_change(label or f"address of {post_id!r}", before, [post_id])
        return changed

    def delete_posts(self, post_ids: Sequence[str], label: str | None = None, *, logged: bool = True) -> int:
        """Delete posts and their chunks, logged as one change (`label`, for undo); returns how many of
        the ids existed (as a post row, or as chunks left without one). `logged=False` leaves the logging
        to the caller, whose own change takes these ids in (an ingest removing posts now drafts)."""
        if not post_ids:
            return 0
        before = self.versions()
        where = sql_in("post_id", post_ids)  # only these ids' rows are read
        existing = {r["post_id"] for r in self._rows(self._open(POSTS), where, ["post_id"])}
        # Chunks without a post row go too: an id counts when it has chunks.
        with_chunks = {r["post_id"] for r in self._rows(self.chunks, where, ["post_id"])}
        # Chunks first: if we die in between, the post row remains with no chunks and a later
        # ingest sees the count mismatch and rebuilds it.
        if self.chunks is not None:
            retry_commit("delete the chunks", lambda: self.chunks.delete(where))
        retry_commit("delete the posts", lambda: self.posts.delete(where))
        touched = sorted(existing | with_chunks)
        if not logged:
            return len(touched)
        self.log_change(
            label or f"deletion of {len(touched)} post{'s' * (len(touched) != 1)}", before, touched
        )
        return len(touched)

    def remove_orphans(self) -> list[str]:
        """Delete the chunks that have no post row (a write cut off between the two tables; they are
        never served); returns those post ids."""
        orphans = self.orphan_posts()
        if orphans and self.chunks is not None:
            where = sql_in("post_id", orphans)
            retry_commit("remove chunks without a post", lambda: self.chunks.delete(where))
        return orphans

    def optimize(self) -> None:
        """Compact small commits (thousands of them slow search ~20×) and bring the indices up to date.

        LanceDB's optimize() also folds rows written since the last run into the existing full-text
        index, keeping one segment (measured on SciFact's 5,183 chunks: 0.6–1.0 s for the whole
        optimize after adding a post, 0.4 s with nothing new, 1.1 s to rebuild the FTS index alone).
        Until then, searches scan the few unindexed rows, so new chunks are found at once and deleted
        ones never are. The index is created here when missing: a new table, one replaced by a
        re-embed, or one made before keyword search existed. The vector index likewise: built once the
        table is big enough, then kept current by the same optimize() (core/store/index.py).
        """
        for name in (CHUNKS, POSTS):
            retry_commit(f"compact the {name} table", lambda name=name: self._optimize_table(name))
        retry_commit("build the keyword index", self.ensure_fts_index)
        retry_commit("build the vector index", self._ensure_vector_index)

    def _optimize_table(self, name: str) -> None:
        table = self._open(name)
        if table is None:
            return
        if name == POSTS and _fragments(table) <= POSTS_MAX_FRAGMENTS:
            return
        table.optimize()

    def _ensure_vector_index(self) -> None:
        ensure_vector_index(self.chunks)
        ensure_collection_index(self.chunks)

    def has_fts_index(self, table: Any) -> bool:
        return has_fts_index(table)

    def ensure_fts_index(self, table: Any | None = None) -> None:
        """Build the keyword index when missing. Not retried here: optimize() and keyword_search()
        retry it whole, re-reading the table, so a writer that built it meanwhile is seen."""
        table = table if table is not None else self.chunks
        if table is None:
            return
        table = self._add_derived(table)
        ensure_fts_index(table)

    # Versions (undo: core/store/changes.py) ------------------------------------------------------

    def versions(self) -> Versions:
        chunks, posts = self.chunks, self._open(POSTS)
        # `is not None`: a table with no rows is falsy (len 0) but still has a version to go back to.
        return Versions(
            chunks.version if chunks is not None else None, posts.version if posts is not None else None
        )


# Rounds of write-then-read-back in replace_posts before giving up on posts other writers keep replacing.
# The posts table has no index, so compacting it only keeps its reads quick; but LanceDB merges its one
# big fragment (under a million rows) with each ingest's new one, which rewrote every post's raw text on
# every ingest (2.2 s of a 6.6 s one-post edit at 100k posts, and another 158 MB copy kept for the 7 days
# of undo). So it is compacted once ingests have left more than this many fragments.
POSTS_MAX_FRAGMENTS = 16


def _fragments(table: Any) -> int:
    return int(table.stats()["fragment_stats"]["num_fragments"])


_VERIFY_ROUNDS = 5
