"""LanceDB storage: a `chunks` table (text, keywords, vector) and a `posts` table (raw text).

Why two tables: a post's raw text is kept so it can be re-chunked or re-embedded without uploading
it again, while searches only touch chunks. The embedding model and dimension live in the chunks
table's schema metadata, so a query or an ingest with another model is refused instead of silently
comparing vectors from different spaces.

Write order gives crash safety across the two tables: a post's chunks are replaced in one commit
(merge_insert keyed on chunk_id, with that post's stale chunks deleted in the same commit) and the
post row, which holds the content hash that marks the post as done, is written after.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa

CHUNKS = "chunks"
POSTS = "posts"
META_MODEL = b"inkwell.embed_model"
META_DIM = b"inkwell.embed_dim"
# Brute-force search is exact and takes a few ms at a few thousand chunks; an ANN index only pays
# off past this size (measured: ≈ 3–9 ms at 2k chunks without one).
VECTOR_INDEX_MIN_ROWS = 10_000


class StoreError(RuntimeError):
    """A problem with the data directory or its tables; the message says what to do."""


class ModelMismatchError(StoreError):
    pass


def chunks_schema(dim: int, model_id: str) -> pa.Schema:
    return pa.schema(
        [
            pa.field("chunk_id", pa.string(), nullable=False),
            pa.field("post_id", pa.string(), nullable=False),
            pa.field("idx", pa.int32()),
            pa.field("title", pa.string()),
            pa.field("collection", pa.string()),
            pa.field("date", pa.string()),
            pa.field("section", pa.string()),
            pa.field("text", pa.string()),
            pa.field("keywords", pa.list_(pa.string())),
            pa.field("tokens", pa.int32()),
            pa.field("embed_hash", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ],
        metadata={META_MODEL: model_id.encode(), META_DIM: str(dim).encode()},
    )


POSTS_SCHEMA = pa.schema(
    [
        pa.field("post_id", pa.string(), nullable=False),
        pa.field("title", pa.string()),
        pa.field("collection", pa.string()),
        pa.field("date", pa.string()),
        pa.field("tags", pa.list_(pa.string())),
        pa.field("source", pa.string()),
        pa.field("format", pa.string()),
        pa.field("raw", pa.string()),
        pa.field("content_hash", pa.string()),
        pa.field("n_chunks", pa.int32()),
        pa.field("ingested_at", pa.string()),
        # Distinct keyword candidates of the post: corpus document frequencies without re-reading text.
        pa.field("terms", pa.list_(pa.string())),
    ]
)


def sql_str(value: str) -> str:
    """A SQL string literal for LanceDB filters (ids may contain quotes)."""
    return "'" + value.replace("'", "''") + "'"


def sql_in(column: str, values: Iterable[str]) -> str:
    return f"{column} IN ({', '.join(sql_str(v) for v in values)})"


@dataclass(frozen=True)
class ModelInfo:
    model_id: str
    dim: int


@dataclass(frozen=True)
class PostState:
    content_hash: str
    recorded: int  # chunks the post row says it has
    stored: int  # chunks actually in the chunks table

    def is_current(self, content_hash: str) -> bool:
        # A count mismatch means an interrupted delete or write: redo the post.
        return self.content_hash == content_hash and self.recorded == self.stored > 0


@dataclass(frozen=True)
class Versions:
    """Table versions before a change, for undo."""

    chunks: int | None
    posts: int | None


class Store:
    def __init__(self, data_dir: str | Path):
        self.data_dir = Path(data_dir)
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the data directory {self.data_dir}: {exc}") from exc
        # interval 0: every read checks for a newer commit, so a long-lived connection (Streamlit)
        # sees what the CLI or another session just wrote.
        self.db = lancedb.connect(self.data_dir, read_consistency_interval=timedelta(0))

    # Tables ------------------------------------------------------------------------------------

    def _open(self, name: str) -> Any | None:
        # table_exists() is not implemented for local connections in lancedb 0.40.
        try:
            return self.db.open_table(name)
        except ValueError:
            return None

    @property
    def chunks(self) -> Any | None:
        return self._open(CHUNKS)

    @property
    def posts(self) -> Any:
        table = self._open(POSTS)
        if table is None:
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
            table = self.db.create_table(CHUNKS, schema=chunks_schema(dim, model_id), exist_ok=True)
            # With an (unenforced) primary key on a NOT NULL column, concurrent merge_inserts of the
            # same new chunk_id don't store it twice (measured on lancedb 0.40).
            table.set_unenforced_primary_key("chunk_id")
        return table

    # Writes ------------------------------------------------------------------------------------

    def replace_posts(self, post_rows: list[dict], chunk_rows: list[dict], model_id: str, dim: int) -> None:
        """Replace the chunks of these posts atomically, then record the posts as done."""
        if not post_rows:
            return
        post_ids = [row["post_id"] for row in post_rows]
        table = self.ensure_chunks_table(model_id, dim)
        data = pa.Table.from_pylist(chunk_rows, schema=table.schema)
        (
            table.merge_insert("chunk_id")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete(sql_in("post_id", post_ids))
            .execute(data)
        )
        posts = pa.Table.from_pylist(post_rows, schema=POSTS_SCHEMA)
        self.posts.merge_insert("post_id").when_matched_update_all().when_not_matched_insert_all().execute(
            posts
        )

    def overwrite_chunks(self, chunk_rows: list[dict], model_id: str, dim: int) -> None:
        """Replace the whole chunks table in one commit, e.g. re-embedded with another model.

        An overwrite is a new version of the same table (LanceDB OSS cannot rename tables), so a
        crash before it leaves the old table as it was, and undo can still go back.
        """
        schema = chunks_schema(dim, model_id)
        data = pa.Table.from_pylist(chunk_rows, schema=schema)
        table = self.db.create_table(CHUNKS, data, schema=schema, mode="overwrite")
        table.set_unenforced_primary_key("chunk_id")

    def update_chunk(self, chunk_id: str, values: dict[str, Any]) -> None:
        table = self.chunks
        if table is None:
            raise StoreError("there are no chunks yet")
        table.update(where=f"chunk_id = {sql_str(chunk_id)}", values=values)

    def delete_posts(self, post_ids: Sequence[str]) -> int:
        """Delete posts and their chunks; returns how many of the ids existed."""
        if not post_ids:
            return 0
        existing = {row["post_id"] for row in self.list_posts()} & set(post_ids)
        table = self.chunks
        # Chunks first: if we die in between, the post row remains with no chunks and a later
        # ingest sees the count mismatch and rebuilds it.
        if table is not None:
            table.delete(sql_in("post_id", post_ids))
        self.posts.delete(sql_in("post_id", post_ids))
        return len(existing)

    def optimize(self) -> None:
        """Compact small commits: thousands of tiny commits slow search ~20× until this runs."""
        for table in (self.chunks, self._open(POSTS)):
            if table is not None:
                table.optimize()
        table = self.chunks
        if (
            table is not None
            and table.count_rows() >= VECTOR_INDEX_MIN_ROWS
            and not any(ix.index_type.startswith("IVF") for ix in table.list_indices())
        ):
            table.create_index(metric="cosine", index_type="IVF_HNSW_SQ")

    # Versions (undo) ---------------------------------------------------------------------------

    def versions(self) -> Versions:
        chunks, posts = self.chunks, self._open(POSTS)
        return Versions(chunks.version if chunks else None, posts.version if posts else None)

    def restore(self, versions: Versions) -> None:
        """Put both tables back to the given versions (a new commit; history is kept)."""
        for name, version in ((CHUNKS, versions.chunks), (POSTS, versions.posts)):
            table = self._open(name)
            if table is None:
                continue
            if version is None:
                self.db.drop_table(name)
            else:
                table.restore(version)

    # Reads -------------------------------------------------------------------------------------

    def list_posts(self) -> list[dict]:
        table = self._open(POSTS)
        if table is None:
            return []
        columns = ["post_id", "title", "collection", "date", "tags", "source", "format", "n_chunks"]
        rows = table.to_arrow().select([*columns, "ingested_at"]).to_pylist()
        return sorted(rows, key=lambda r: (r["collection"] or "", r["date"] or "", r["title"] or ""))

    def get_post(self, post_id: str) -> dict | None:
        table = self._open(POSTS)
        if table is None:
            return None
        rows = table.search().where(f"post_id = {sql_str(post_id)}").limit(1).to_list()
        return rows[0] if rows else None

    def post_states(self) -> dict[str, PostState]:
        """What an ingest needs to skip unchanged posts without reading their text."""
        table = self._open(POSTS)
        if table is None:
            return {}
        posts = table.to_arrow().select(["post_id", "content_hash", "n_chunks"]).to_pylist()
        counts = self.chunk_counts()
        return {
            row["post_id"]: PostState(row["content_hash"], row["n_chunks"], counts.get(row["post_id"], 0))
            for row in posts
        }

    def post_terms(self, exclude: set[str] = frozenset()) -> list[list[str]]:
        table = self._open(POSTS)
        if table is None:
            return []
        rows = table.to_arrow().select(["post_id", "terms"]).to_pylist()
        return [row["terms"] or [] for row in rows if row["post_id"] not in exclude]

    def chunk_counts(self) -> dict[str, int]:
        table = self.chunks
        if table is None:
            return {}
        grouped = table.to_arrow().select(["post_id"]).group_by("post_id").aggregate([([], "count_all")])
        return dict(zip(grouped["post_id"].to_pylist(), grouped["count_all"].to_pylist(), strict=True))

    def list_chunks(self, post_id: str | None = None, columns: Sequence[str] | None = None) -> list[dict]:
        table = self.chunks
        if table is None:
            return []
        cols = list(columns or [c for c in table.schema.names if c != "vector"])
        query = table.search().select(cols).limit(table.count_rows() or 1)
        if post_id is not None:
            query = query.where(f"post_id = {sql_str(post_id)}")
        rows = query.to_list()
        return sorted(rows, key=lambda r: (r.get("post_id", ""), r.get("idx", 0)))

    def get_chunk(self, chunk_id: str) -> dict | None:
        table = self.chunks
        if table is None:
            return None
        rows = table.search().where(f"chunk_id = {sql_str(chunk_id)}").limit(1).to_list()
        return rows[0] if rows else None

    def cached_vectors(self, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """Vectors already stored for these content hashes (the embedding cache)."""
        table = self.chunks
        wanted = sorted(set(hashes))
        if table is None or not wanted:
            return {}
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            rows = (
                table.search()
                .where(sql_in("embed_hash", batch))
                .select(["embed_hash", "vector"])
                .limit(len(batch) * 4)
                .to_arrow()
            )
            for h, v in zip(rows["embed_hash"].to_pylist(), rows["vector"].to_pylist(), strict=True):
                found[h] = np.asarray(v, dtype=np.float32)
        return found

    def counts(self) -> tuple[int, int]:
        """(posts, chunks) stored."""
        posts, chunks = self._open(POSTS), self.chunks
        return (posts.count_rows() if posts else 0, chunks.count_rows() if chunks else 0)

    def collections(self) -> list[str]:
        table = self._open(POSTS)
        if table is None:
            return []
        return sorted({c for c in table.to_arrow().column("collection").to_pylist() if c})

    def vector_search(
        self, vector: np.ndarray, limit: int, collections: Sequence[str] | None = None
    ) -> list[dict]:
        """Top `limit` chunks by cosine distance, optionally only from some collections."""
        table = self.chunks
        if table is None:
            return []
        query = table.search(np.asarray(vector, dtype=np.float32)).distance_type("cosine").limit(limit)
        if collections:
            # Prefilter: a postfilter on top-k can return nothing when the collection is small.
            query = query.where(sql_in("collection", collections), prefilter=True)
        if any(ix.index_type.startswith("IVF") for ix in table.list_indices()):
            query = query.refine_factor(10)
        return query.select([*(c for c in table.schema.names if c != "vector"), "_distance"]).to_list()
