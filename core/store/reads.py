"""The store's reads: posts and chunks, bookkeeping for ingest, vector and keyword search.

Bookkeeping reads (`post_states`, `chunk_counts`, `term_frequencies`, `collections`, `list_posts`) read
only the columns they need (`scan`): `table.to_arrow()` reads every column, vectors and raw text
included, which at a million chunks took 6.6 s and 6.7 GB on every ingest, unchanged re-ingests too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from lancedb.query import MatchQuery

from core.store.commit import retry_commit
from core.store.index import tuned
from core.store.memory import held_table
from core.store.schema import (
    CHUNKS,
    HIT,
    POSTS,
    SEARCH_TEXT,
    KeywordSearchError,
    PostState,
    hit_columns,
    sql_in,
    sql_str,
    unpacked_hit,
)

T = TypeVar("T")

if TYPE_CHECKING:
    from pathlib import Path

    from core.config import DataUri


def scan(table: Any, columns: Sequence[str], where: str | None = None) -> pa.Table:
    """These columns of every row (matching `where`), reading no other column from disk."""
    query = table.search().select(list(columns)).limit(max(table.count_rows(), 1))
    if where is not None:
        query = query.where(where)
    return query.to_arrow()


class Reads:
    """Mixed into Store (core/store/tables.py), which provides `_open` and `chunks`."""

    data_dir: Path | DataUri
    key: str  # core.config.data_dir_key of data_dir

    def _open(self, name: str) -> Any | None:  # pragma: no cover - Store's
        raise NotImplementedError

    @property
    def chunks(self) -> Any | None:
        return self._open(CHUNKS)

    def ensure_fts_index(self, table: Any | None = None) -> None:  # pragma: no cover - Store's
        raise NotImplementedError

    # Posts -------------------------------------------------------------------------------------

    def list_posts(self) -> list[dict]:
        table = self._open(POSTS)
        if table is None:
            return []
        columns = ["post_id", "title", "collection", "date", "tags", "source", "format", "n_chunks"]
        has_url = "url" in table.schema.names  # a table from before addresses: every post's is ""
        rows = scan(table, [*columns, "ingested_at", *(["url"] if has_url else [])]).to_pylist()
        for row in rows:
            row["url"] = row.get("url") or ""
        return sorted(rows, key=lambda r: (r["collection"] or "", r["date"] or "", r["title"] or ""))

    def get_post(self, post_id: str) -> dict | None:
        table = self._open(POSTS)
        if table is None:
            return None
        rows = table.search().where(f"post_id = {sql_str(post_id)}").limit(1).to_list()
        if not rows:
            return None
        rows[0]["url"] = rows[0].get("url") or ""  # none in a table from before addresses
        return rows[0]

    def post_titles(self) -> dict[str, str]:
        """Each stored post's title, read once per posts table version (for naming posts in lists)."""
        table = self._open(POSTS)
        return {} if table is None else dict(per_version(self.key, "post_titles", table, _post_titles))

    def post_urls(self) -> dict[str, str]:
        """Each stored post's address (posts without one left out), read once per posts table version."""
        return post_index(self.key, self._open(POSTS))[1]

    def post_states(self) -> dict[str, PostState]:
        """What an ingest needs to skip unchanged posts without reading their text."""
        table = self._open(POSTS)
        if table is None:
            return {}
        posts = scan(table, ["post_id", "content_hash", "n_chunks", "source"])
        counts = self.chunk_counts()
        return {
            post_id: PostState(content_hash, n_chunks, counts.get(post_id, 0), source or "")
            for post_id, content_hash, n_chunks, source in zip(
                posts["post_id"].to_pylist(),
                posts["content_hash"].to_pylist(),
                posts["n_chunks"].to_pylist(),
                posts["source"].to_pylist(),
                strict=True,
            )
        }

    def post_terms(self, exclude: set[str] = frozenset()) -> list[list[str]]:
        table = self._open(POSTS)
        if table is None:
            return []
        rows = scan(table, ["post_id", "terms"]).to_pylist()
        return [row["terms"] or [] for row in rows if row["post_id"] not in exclude]

    def term_frequencies(self, exclude: set[str] = frozenset()) -> tuple[dict[str, int], int]:
        """(posts containing each term, posts counted) over the stored posts but `exclude`.

        Counted in Arrow: at 100k posts a Python Counter over every post's terms takes seconds.
        """
        table = self._open(POSTS)
        if table is None:
            return {}, 0
        rows = scan(table, ["post_id", "terms"])
        if exclude:
            rows = rows.filter(pc.invert(pc.is_in(rows["post_id"], pa.array(sorted(exclude), pa.string()))))
        if rows.num_rows == 0:
            return {}, 0
        counts = pc.value_counts(pc.list_flatten(rows["terms"]).drop_null()).flatten()
        return dict(zip(counts[0].to_pylist(), counts[1].to_pylist(), strict=True)), rows.num_rows

    def collections(self) -> list[str]:
        table = self._open(POSTS)
        if table is None:
            return []
        names = pc.unique(scan(table, ["collection"])["collection"]).drop_null().to_pylist()
        return sorted(c for c in names if c)

    def counts(self) -> tuple[int, int]:
        """(posts, chunks) stored."""
        posts, chunks = self._open(POSTS), self.chunks
        return (posts.count_rows() if posts else 0, chunks.count_rows() if chunks else 0)

    # Chunks ------------------------------------------------------------------------------------

    def chunk_counts(self) -> dict[str, int]:
        table = self.chunks
        if table is None:
            return {}
        # Once per table version: an ingest asks for it twice (orphans, then post states).
        return dict(per_version(self.key, "chunk_counts", table, _chunk_counts))

    def list_chunks(self, post_id: str | None = None, columns: Sequence[str] | None = None) -> list[dict]:
        table = self.chunks
        if table is None:
            return []
        cols = list(columns or payload_columns(table))
        rows = scan(table, cols, None if post_id is None else f"post_id = {sql_str(post_id)}").to_pylist()
        return sorted(rows, key=lambda r: (r.get("post_id", ""), r.get("idx", 0)))

    def get_chunk(self, chunk_id: str) -> dict | None:
        table = self.chunks
        if table is None:
            return None
        rows = table.search().where(f"chunk_id = {sql_str(chunk_id)}").limit(1).to_list()
        if not rows:
            return None
        for column in (SEARCH_TEXT, HIT):  # derived from the other columns
            rows[0].pop(column, None)
        return rows[0]

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, dict]:
        """Several chunks by id in one query (missing ids are left out), without their vectors."""
        table = self.chunks
        if table is None or not chunk_ids:
            return {}
        rows = table.search().where(sql_in("chunk_id", chunk_ids)).select(payload_columns(table))
        return {row["chunk_id"]: row for row in rows.limit(len(chunk_ids)).to_list()}

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

    def chunk_vectors(self, collections: Sequence[str] | None = None) -> tuple[pa.Table, np.ndarray]:
        """Every chunk's ids and post metadata (no text) with its vector as one (chunks, dim) matrix.

        What post vectors are computed from (core/search/posts.py); reads no text, so it stays cheap.
        """
        columns = ["chunk_id", "post_id", "title", "collection", "date"]
        table = self.chunks
        if table is None or table.count_rows() == 0:
            return pa.table({c: pa.array([], pa.string()) for c in columns}), np.zeros((0, 0), np.float32)
        rows = scan(table, [*columns, "vector"], sql_in("collection", collections) if collections else None)
        posts = post_ids_of(self.key, self._open(POSTS))
        rows = rows.filter(pc.is_in(rows["post_id"], pa.array(sorted(posts), pa.string())))  # no orphans
        dim = rows.schema.field("vector").type.list_size
        flat = rows["vector"].combine_chunks().flatten().to_numpy(zero_copy_only=False)
        return rows.select(columns), np.asarray(flat, dtype=np.float32).reshape(-1, dim)

    def vector_sample(self, limit: int) -> tuple[int, np.ndarray]:
        """(the table's chunk count, up to `limit` of its chunk vectors): all of them when there are no
        more, else rows spread evenly over the table (the same ones for the same table version)."""
        table = self.chunks
        rows = table.count_rows() if table is not None else 0
        if table is None or rows == 0:
            return 0, np.zeros((0, 0), np.float32)
        held = held_table(self.key, table)
        if held is not None and rows <= limit:
            return rows, held.vectors
        offsets = list(range(rows)) if rows <= limit else [i * rows // limit for i in range(limit)]
        vectors = table.take_offsets(offsets).select(["vector"]).to_arrow()["vector"]
        dim = vectors.type.list_size
        flat = vectors.combine_chunks().flatten().to_numpy(zero_copy_only=False)
        return rows, np.asarray(flat, dtype=np.float32).reshape(-1, dim)

    # Search ------------------------------------------------------------------------------------

    def vector_search(
        self, vector: np.ndarray, limit: int, collections: Sequence[str] | None = None
    ) -> list[dict]:
        """Top `limit` chunks by cosine distance, optionally only from some collections."""
        table = self.chunks
        if table is None:
            return []
        held = held_table(self.key, table)
        if held is not None:  # small: its vectors are in memory (core/store/memory.py)
            return self._served(held.search(vector, limit, collections))

        def query() -> Any:
            built = tuned(
                table.search(np.asarray(vector, dtype=np.float32)).distance_type("cosine").limit(limit)
            )
            if collections:
                # Prefilter: a postfilter on top-k can return nothing when the collection is small.
                built = built.where(sql_in("collection", collections), prefilter=True)
            return built

        return self._served(hit_rows(table, query, ["_distance"]))

    def warm_up(self) -> None:
        """Load what a process's first search needs: the vector index (≈ 1.1 s at a million chunks, on the
        first query whatever its vector) or a small table's vectors, and the keyword index. Run beside the
        embedding model's load (core/search/warm.py), they are ready when the question's vector is."""
        table = self.chunks
        if table is None or table.count_rows() == 0:
            return
        probe = np.zeros(table.schema.field("vector").type.list_size, dtype=np.float32)
        probe[0] = 1.0
        self.vector_search(probe, 1)
        if SEARCH_TEXT in table.schema.names:
            self.keyword_search("writing", 1)

    def nearest_by_collection(self, vector: np.ndarray, collections: Sequence[str]) -> dict[str, float]:
        """Per collection, the cosine between `vector` and its nearest chunk (-1 for an empty one).

        One top-1 query per collection through the vector index (or over a small table's vectors held in
        memory): routing never reads every chunk vector.
        """
        table = self.chunks
        best = dict.fromkeys(collections, -1.0)
        if table is None:
            return best
        vector = np.asarray(vector, dtype=np.float32)
        held = held_table(self.key, table)
        for name in collections:
            if held is not None:
                rows = held.search(vector, 1, [name])
                if rows:
                    best[name] = 1.0 - float(rows[0]["_distance"])
                continue
            query = tuned(table.search(vector).distance_type("cosine").limit(1))
            rows = query.where(f"collection = {sql_str(name)}", prefilter=True).select(["chunk_id"]).to_list()
            if rows:
                best[name] = 1.0 - float(rows[0]["_distance"])
        return best

    def keyword_search(self, text: str, limit: int, collections: Sequence[str] | None = None) -> list[dict]:
        """Top `limit` chunks by BM25 over `search_text` (the columns a hit needs, and its vector); `_score` is
        the BM25 score.

        The question is passed as a match query (terms OR-ed), never parsed as query syntax, so quotes,
        colons or a lone "?" cannot break it; a question of only stop words matches nothing.
        """
        table = self.chunks
        if table is None or not text.strip():
            return []
        try:
            if SEARCH_TEXT not in table.schema.names:
                # A table from before keyword search: upgrade it once (column + index).
                retry_commit("build the keyword index", self.ensure_fts_index)
                table = self.chunks

            def query() -> Any:
                built = table.search(MatchQuery(text, SEARCH_TEXT), query_type="fts").limit(limit)
                if collections:
                    built = built.where(sql_in("collection", collections), prefilter=True)
                return built

            rows = hit_rows(table, query, ["vector", "_score"])
        except Exception as exc:  # LanceDB raises ValueError/RuntimeError/OSError variously
            raise KeywordSearchError(f"keyword search failed: {exc}") from exc
        return self._served(rows)

    # Orphans -----------------------------------------------------------------------------------

    def _served(self, rows: list[dict]) -> list[dict]:
        """The hits whose post has a row, each with its post's `url` ("" when none): chunks left without
        one (a write cut off between the two tables, then the post's file removed) are never served.
        Both come from one read of the posts table per version, so a search reads no more than before."""
        posts, urls = post_index(self.key, self._open(POSTS))
        served = [row for row in rows if row["post_id"] in posts]
        for row in served:
            row["url"] = urls.get(row["post_id"], "")
        return served

    def orphan_posts(self) -> list[str]:
        """Post ids that have chunks but no post row."""
        posts = post_ids_of(self.key, self._open(POSTS))
        return sorted(set(self.chunk_counts()) - posts)


_PER_VERSION: dict[tuple[str, str], tuple[tuple[int, int], Any]] = {}
_PER_VERSION_LOCK = threading.Lock()


def per_version(where: str, what: str, table: Any, compute: Callable[[Any], T]) -> T:
    """`compute(table)`, kept per process (under `what`, for data dir `where`) until the table has a new
    version. The version is read before computing, so a commit in between only makes the next call
    compute again."""
    key = (int(table.version), int(table.count_rows()))  # a re-created table numbers versions from 1
    with _PER_VERSION_LOCK:
        cached = _PER_VERSION.get((where, what))
    if cached is not None and cached[0] == key:
        return cached[1]
    value = compute(table)
    with _PER_VERSION_LOCK:
        _PER_VERSION[(where, what)] = (key, value)
    return value


def post_ids_of(where: str, table: Any | None) -> frozenset[str]:
    """The post ids stored in the posts table of data dir `where`, read once per table version."""
    return post_index(where, table)[0]


def post_index(where: str, table: Any | None) -> tuple[frozenset[str], dict[str, str]]:
    """(the post ids, the addresses of the posts that have one) of the posts table of data dir `where`,
    read together once per table version."""
    if table is None:
        return frozenset(), {}
    return per_version(where, "post_index", table, _post_index)


def _post_index(table: Any) -> tuple[frozenset[str], dict[str, str]]:
    if "url" not in table.schema.names:
        return frozenset(scan(table, ["post_id"])["post_id"].to_pylist()), {}
    rows = scan(table, ["post_id", "url"])
    ids, urls = rows["post_id"].to_pylist(), rows["url"].to_pylist()
    return frozenset(ids), {p: u for p, u in zip(ids, urls, strict=True) if u}


def _post_titles(table: Any) -> dict[str, str]:
    rows = scan(table, ["post_id", "title"])
    return dict(zip(rows["post_id"].to_pylist(), rows["title"].to_pylist(), strict=True))


def _chunk_counts(table: Any) -> dict[str, int]:
    grouped = scan(table, ["post_id"]).group_by("post_id").aggregate([([], "count_all")])
    return dict(zip(grouped["post_id"].to_pylist(), grouped["count_all"].to_pylist(), strict=True))


def payload_columns(table: Any) -> list[str]:
    """Every chunk column a search returns, without the big or derived ones."""
    return [c for c in table.schema.names if c not in ("vector", SEARCH_TEXT, HIT)]


def hit_rows(table: Any, query: Callable[[], Any], extra: list[str]) -> list[dict]:
    """The rows of `query()` (a LanceDB query builder) as hits: HIT_COLUMNS and the `extra` columns.

    Read from the packed `hit` column (one read per row instead of eight, schema.HIT) when the table
    has it. A row written without it (by an Inkwell from before it, into an upgraded table) has none:
    then the query runs again reading the columns themselves.
    """
    if HIT in table.schema.names:
        rows = query().select([HIT, *extra]).to_list()
        if all(row[HIT] is not None for row in rows):
            return [{**unpacked_hit(row.pop(HIT)), **row} for row in rows]
    return query().select([*hit_columns(table), *extra]).to_list()
