"""The store at scale: the vector index is built once and kept current incrementally, rows written
after it are searched at once, and bookkeeping reads only the columns it needs (issue 13).

Real LanceDB tables in tmp dirs; vectors are small (16 dimensions) so an indexed table of 10k rows
builds in a couple of seconds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from lancedb.table import LanceTable

from core.store import Store, memory
from core.store.index import MAX_DELTA_SEGMENTS, VECTOR, vector_index
from core.store.memory import held_table
from core.store.schema import HIT_COLUMNS, VECTOR_INDEX_MIN_ROWS
from core.store.tables import POSTS_MAX_FRAGMENTS

DIM = 16
MODEL = "test-embed"
PER_POST = 50


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def rows(post_id: str, vectors: np.ndarray, collection: str = "writings") -> tuple[dict, list[dict]]:
    post = {
        "post_id": post_id,
        "title": post_id.title(),
        "collection": collection,
        "date": "2024-01-01",
        "tags": [],
        "source": f"{post_id}.md",
        "format": "markdown",
        "raw": f"raw text of {post_id}",
        "content_hash": f"hash-{post_id}",
        "n_chunks": len(vectors),
        "ingested_at": "2024-01-01T00:00:00",
        "terms": ["walnut", post_id],
    }
    chunks = [
        {
            "chunk_id": f"{post_id}#{i}",
            "post_id": post_id,
            "idx": i,
            "title": post_id.title(),
            "collection": collection,
            "date": "2024-01-01",
            "section": "",
            "text": f"chunk {i} of {post_id} about walnut",
            "keywords": [],
            "tokens": 8,
            "embed_hash": f"{post_id}#{i}",
            "vector": v.tolist(),
        }
        for i, v in enumerate(vectors)
    ]
    return post, chunks


def write(store: Store, posts: list[tuple[dict, list[dict]]]) -> None:
    store.replace_posts([p for p, _ in posts], [c for _, cs in posts for c in cs], MODEL, DIM)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A table just big enough for the vector index, optimized once (tests copy it)."""
    data_dir = tmp_path_factory.mktemp("indexed") / "db"
    store = Store(data_dir)
    rng = np.random.default_rng(0)
    n_posts = VECTOR_INDEX_MIN_ROWS // PER_POST
    write(store, [rows(f"p{i:04d}", unit(rng, PER_POST), "ab"[i % 2]) for i in range(n_posts)])
    store.optimize()
    return data_dir


@pytest.fixture
def store(indexed: Path, tmp_path: Path) -> Store:
    import shutil

    shutil.copytree(indexed, tmp_path / "db")
    return Store(tmp_path / "db")


def test_the_existing_vector_index_is_recognised_and_not_rebuilt(store: Store):
    index = vector_index(store.chunks)
    assert index is not None and index.num_indexed_rows == VECTOR_INDEX_MIN_ROWS
    files = sorted(p.name for p in (store.data_dir / "chunks.lance" / "_indices").iterdir())
    store.optimize()  # nothing new: the index stays as it is (a rebuild gets a new uuid and directory)
    again = vector_index(store.chunks)
    assert again.index_uuid == index.index_uuid and again.num_segments == 1
    assert sorted(p.name for p in (store.data_dir / "chunks.lance" / "_indices").iterdir()) == files


def test_new_rows_are_found_before_and_after_they_are_folded_into_the_index(store: Store):
    rng = np.random.default_rng(1)
    fresh = unit(rng, 3)
    write(store, [rows("fresh", fresh)])
    assert vector_index(store.chunks).num_unindexed_rows == 3
    # Not yet in the index: LanceDB searches the unindexed rows by brute force beside it.
    assert store.vector_search(fresh[1], 1)[0]["chunk_id"] == "fresh#1"
    store.optimize()
    index = vector_index(store.chunks)
    # Folded in as a delta segment over the same partitions, not rebuilt (a rebuild has one segment).
    assert index.num_unindexed_rows == 0 and index.num_indexed_rows == VECTOR_INDEX_MIN_ROWS + 3
    assert index.num_segments == 2
    assert store.vector_search(fresh[1], 1)[0]["chunk_id"] == "fresh#1"
    assert store.vector_search(fresh[2], 1, collections=["writings"])[0]["chunk_id"] == "fresh#2"


def test_too_many_delta_segments_rebuild_the_index_whole(store: Store):
    rng = np.random.default_rng(2)
    for i in range(MAX_DELTA_SEGMENTS):  # the last one makes MAX_DELTA_SEGMENTS + 1 segments
        write(store, [rows(f"delta{i}", unit(rng, 1))])
        store.optimize()
    index = vector_index(store.chunks)
    assert index.num_segments == 1 and index.num_unindexed_rows == 0
    assert store.vector_search(rng.normal(size=DIM).astype(np.float32), 5)


def test_the_nearest_chunk_per_collection_needs_no_chunk_vectors(store: Store, monkeypatch):
    meta, matrix = store.chunk_vectors()
    labels = np.array(meta["collection"].to_pylist())
    query = matrix[7] + 0.1 * matrix[8]
    query /= np.linalg.norm(query)
    expected = {c: float((matrix[labels == c] @ query).max()) for c in ("a", "b")}

    def no_vectors(*_args, **_kwargs):
        raise AssertionError("read every chunk vector")

    monkeypatch.setattr(store, "chunk_vectors", no_vectors)
    found = store.nearest_by_collection(query, ["a", "b"])
    # Through the index (approximate, refined on full vectors): the same nearest chunk here.
    assert found == pytest.approx(expected, abs=1e-4)


@pytest.fixture
def full_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every whole-table read (`to_arrow` reads every column, vectors and raw text included)."""
    calls: list[str] = []
    original = LanceTable.to_arrow

    def to_arrow(self: LanceTable, *args, **kwargs):
        calls.append(self.name)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(LanceTable, "to_arrow", to_arrow)
    return calls


def test_bookkeeping_reads_only_the_columns_it_needs(tmp_path: Path, full_reads: list[str]):
    store = Store(tmp_path / "db")
    rng = np.random.default_rng(3)
    write(store, [rows("one", unit(rng, 2), "a"), rows("two", unit(rng, 3), "b")])
    states = store.post_states()
    assert {k: (s.content_hash, s.recorded, s.stored) for k, s in states.items()} == {
        "one": ("hash-one", 2, 2),
        "two": ("hash-two", 3, 3),
    }
    assert store.chunk_counts() == {"one": 2, "two": 3}
    assert store.collections() == ["a", "b"]
    assert [p["post_id"] for p in store.list_posts()] == ["one", "two"]
    assert store.post_terms(exclude={"one"}) == [["walnut", "two"]]
    assert full_reads == []
    # The corpus document frequencies an ingest picks keywords with, counted in Arrow.
    assert store.term_frequencies() == ({"walnut": 2, "one": 1, "two": 1}, 2)
    assert store.term_frequencies(exclude={"one"}) == ({"walnut": 1, "two": 1}, 1)
    assert full_reads == []


def test_the_scan_projects_only_the_asked_columns(tmp_path: Path):
    from core.store.reads import scan

    store = Store(tmp_path / "db")
    write(store, [rows("one", unit(np.random.default_rng(4), 2))])
    assert scan(store.chunks, ["post_id"]).column_names == ["post_id"]
    assert VECTOR not in scan(store.chunks, ["chunk_id", "text"], "idx = 1").column_names


def test_a_small_table_is_searched_in_memory_like_lancedb_and_sees_every_commit(tmp_path: Path):
    store = Store(tmp_path / "db")
    rng = np.random.default_rng(5)
    write(store, [rows(f"s{i}", unit(rng, 20), "ab"[i % 2]) for i in range(10)])
    query = unit(rng, 1)[0]
    table = store.chunks
    for collections in (None, ["b"]):
        lance = table.search(query).distance_type("cosine").bypass_vector_index().limit(7)
        if collections:
            lance = lance.where("collection = 'b'", prefilter=True)
        expected = [(r["chunk_id"], r["_distance"]) for r in lance.select(["chunk_id"]).to_list()]
        found = [(r["chunk_id"], r["_distance"]) for r in store.vector_search(query, 7, collections)]
        assert [c for c, _ in found] == [c for c, _ in expected]
        assert [d for _, d in found] == pytest.approx([d for _, d in expected], abs=1e-5)
    hit = store.vector_search(query, 1)[0]
    assert set(hit) >= {"chunk_id", "post_id", "text", "keywords", "_distance"} and "vector" not in hit
    # Another writer's commit (another Store, as another process would be) is seen by the next search.
    write(Store(tmp_path / "db"), [rows("near", query[None, :])])
    assert store.vector_search(query, 1)[0]["chunk_id"] == "near#0"
    Store(tmp_path / "db").delete_posts(["near"])
    assert store.vector_search(query, 1)[0]["chunk_id"] != "near#0"


def test_a_search_returns_the_hit_columns_only_from_the_indexes_and_from_memory(store: Store, tmp_path: Path):
    """The indexed table (LanceDB) and a small one (held in memory) give rows of the same shape: the
    columns a hit needs and the distance, nothing read for nothing (each column costs a read per row).
    `url` is no chunk column: it comes from the posts table, read once per table version."""
    wanted = {*HIT_COLUMNS, "_distance", "url"}
    query = unit(np.random.default_rng(9), 1)[0]
    assert vector_index(store.chunks) is not None
    assert set(store.vector_search(query, 3)[0]) == wanted
    assert set(store.keyword_search("walnut", 3)[0]) == {*HIT_COLUMNS, "vector", "_score", "url"}
    small = Store(tmp_path / "small")
    write(small, [rows("s", unit(np.random.default_rng(10), 5))])
    assert held_table(str(small.data_dir.absolute()), small.chunks) is not None
    assert set(small.vector_search(query, 3)[0]) == wanted


def test_warm_up_loads_what_the_first_search_needs_and_changes_nothing(store: Store, tmp_path: Path):
    empty = Store(tmp_path / "empty")
    empty.warm_up()  # no table: nothing to load, nothing created
    assert empty.chunks is None
    small = Store(tmp_path / "small")
    write(small, [rows("s", unit(np.random.default_rng(11), 5))])
    where = str(small.data_dir.absolute())
    memory._HELD.pop(where, None)
    small.warm_up()
    assert where in memory._HELD  # a small table's vectors are held for the first search
    version = store.chunks.version
    store.warm_up()  # the indexed table: a probe through the vector and keyword indexes
    assert store.chunks.version == version


def test_the_posts_table_is_compacted_only_once_ingests_have_left_many_fragments(tmp_path: Path):
    """Compacting merged the posts table's big fragment with each ingest's new one, rewriting every post's
    raw text on every ingest; now it waits for POSTS_MAX_FRAGMENTS fragments, and still happens."""
    store = Store(tmp_path / "db")
    rng = np.random.default_rng(12)

    def fragments() -> int:
        return store.posts.stats()["fragment_stats"]["num_fragments"]

    for i in range(POSTS_MAX_FRAGMENTS):
        write(store, [rows(f"p{i:02d}", unit(rng, 2))])
        store.optimize()
    assert fragments() == POSTS_MAX_FRAGMENTS  # one per ingest, none merged
    write(store, [rows("last", unit(rng, 2))])
    store.optimize()
    assert fragments() == 1
    states = store.post_states()
    assert len(states) == POSTS_MAX_FRAGMENTS + 1 and all(
        s.stored == s.recorded == 2 for s in states.values()
    )


# The packed `hit` column -----------------------------------------------------------------------------------


def test_the_packed_hit_column_holds_what_the_sql_upgrade_computes(tmp_path: Path):
    """Python (every write) and HIT_SQL (the upgrade of an older table) give the same value, None fields
    and missing keywords included, and a hit read from it has exactly the fields of the columns."""
    from core.store.schema import HIT, HIT_SQL, packed_hit

    store = Store(tmp_path / "db")
    post, chunks = rows("odd", unit(np.random.default_rng(13), 3))
    chunks[0].update(title=None, section=None, keywords=["walnut", "it's"])
    chunks[1].update(date=None, text="", keywords=None)
    write(store, [(post, chunks)])
    table = store.chunks
    table.add_columns({"sql_hit": HIT_SQL})
    stored = {r["chunk_id"]: r for r in store.chunks.search().select(["chunk_id", HIT, "sql_hit"]).to_list()}
    for chunk in chunks:
        assert stored[chunk["chunk_id"]][HIT] == stored[chunk["chunk_id"]]["sql_hit"] == packed_hit(chunk)
    hit = next(h for h in store.keyword_search("walnut", 5) if h["chunk_id"] == "odd#0")
    assert {k: hit[k] for k in HIT_COLUMNS} == {
        **{k: chunks[0][k] or "" for k in HIT_COLUMNS},
        "keywords": ["walnut", "it's"],
    }


def test_a_table_from_before_the_hit_column_gets_it_and_searches_the_same(store: Store, tmp_path: Path):
    """An indexed table without `hit` is searched column by column; the next write adds the column (one
    SQL commit) and the same searches return the same hits. A row another (older) writer adds without it
    is still found whole."""
    import shutil

    from core.store.schema import HIT

    shutil.copytree(store.data_dir, tmp_path / "old")
    old = Store(tmp_path / "old")
    old.chunks.drop_columns([HIT])
    assert HIT not in old.chunks.schema.names
    queries = unit(np.random.default_rng(14), 5)

    def searches(s: Store) -> list:
        return [s.vector_search(q, 5) for q in queries] + [s.keyword_search("walnut chunk 3", 5)]

    before = searches(old)
    write(old, [rows("newer", unit(np.random.default_rng(15), 2))])
    assert HIT in old.chunks.schema.names
    old.delete_posts(["newer"])
    assert searches(old) == before
    # An older Inkwell's write: the row has no packed value, and its hit comes from the columns.
    older, chunks = rows("older", queries[:1])
    import pyarrow as pa

    old.chunks.add(pa.Table.from_pylist(chunks).append_column("search_text", pa.array(["older walnut"])))
    old._merge_posts([older])  # its post row too: chunks without one are never served
    assert old.chunks.search().where("post_id = 'older'").select([HIT]).to_list() == [{HIT: None}]
    [nearest] = old.vector_search(queries[0], 1)
    assert nearest["chunk_id"] == "older#0" and nearest["text"] == chunks[0]["text"]


def test_an_edited_chunk_is_found_with_its_new_text_and_keywords(store: Store):
    """A chunk edit rewrites the packed column too: searches of a big table read only that column."""
    chunk = store.get_chunk("p0007#3")
    assert chunk is not None and "hit" not in chunk
    assert store.update_chunk("p0007#3", {"text": "a tusk tenon in white oak", "keywords": ["tusk tenon"]})
    vector = np.asarray(chunk["vector"], dtype=np.float32)
    [nearest] = store.vector_search(vector, 1)
    assert nearest["chunk_id"] == "p0007#3"
    assert (nearest["text"], nearest["keywords"]) == ("a tusk tenon in white oak", ["tusk tenon"])
    [found] = store.keyword_search("tusk tenon", 1)
    assert found["chunk_id"] == "p0007#3" and found["text"] == "a tusk tenon in white oak"
