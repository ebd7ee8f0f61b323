"""The chunks table's indices: a vector index (IVF_HNSW_SQ) and a full-text index, built once and then
kept current incrementally.

LanceDB 0.40 reports index types as `IvfHnswSq`, `IvfPq`, `FTS`, … (not `IVF_HNSW_SQ` as they are
created), so an index is recognised by the column it covers, not by its type name: testing
`startswith("IVF")` missed it, and every optimize() rebuilt the vector index from scratch (9 s at 50k
chunks, 439 s at 1M) and left another copy of it on disk.

Rows written after the index was built are still found: LanceDB searches unindexed fragments by brute
force beside the index (tests/integration/test_store_index.py). `table.optimize()` folds them in as a small delta
segment against the same IVF centroids, in milliseconds; each optimize adds one segment, and every
search visits every segment, so past MAX_DELTA_SEGMENTS the index is rebuilt whole (lancedb 0.40's
Python API cannot merge segments on its own).
"""

from __future__ import annotations

from typing import Any

from core.store.schema import FTS_CONFIG, SEARCH_TEXT, VECTOR_INDEX_MIN_ROWS

VECTOR = "vector"
COLLECTION = "collection"
VECTOR_INDEX_TYPE = "IVF_HNSW_SQ"
# Partitions searched per query and the re-ranking of candidates by exact distance (refine_factor ×
# limit candidates, re-scored on the full vectors). LanceDB's defaults (nprobes 1-ish adaptive, no
# refine) gave recall@10 0.747 at 1M chunks; 20 + 10 gave 0.953 at a few ms more (issue 13,
# bench/scale.py measures it). Both are ignored by a flat search on a table without an index.
NPROBES = 20
REFINE_FACTOR = 10
# Delta segments (one per optimize that found new rows) before the vector index is rebuilt whole.
MAX_DELTA_SEGMENTS = 16


def vector_index(table: Any) -> Any | None:
    """The table's index on the vector column (its lancedb IndexConfig), or None."""
    return next((ix for ix in table.list_indices() if list(ix.columns) == [VECTOR]), None)


def has_fts_index(table: Any) -> bool:
    return any(ix.index_type == "FTS" and list(ix.columns) == [SEARCH_TEXT] for ix in table.list_indices())


def ensure_vector_index(table: Any | None) -> bool:
    """Build the vector index when the table is big enough and has none (or too many delta segments).

    Returns True when it built one. An existing index is left alone: `table.optimize()` keeps it current.
    """
    if table is None:
        return False
    index = vector_index(table)
    if index is not None and (index.num_segments or 1) <= MAX_DELTA_SEGMENTS:
        return False
    if index is None and table.count_rows() < VECTOR_INDEX_MIN_ROWS:
        return False
    table.create_index(metric="cosine", index_type=VECTOR_INDEX_TYPE, replace=True)
    return True


def ensure_collection_index(table: Any | None) -> bool:
    """A bitmap index on `collection` once the table is big enough for a vector index.

    A collection filter (the reader's choice, and routing's one query per collection) is a prefilter:
    without an index LanceDB evaluates it on every row before each query. optimize() keeps it current.
    """
    if table is None or any(list(ix.columns) == [COLLECTION] for ix in table.list_indices()):
        return False
    if table.count_rows() < VECTOR_INDEX_MIN_ROWS:
        return False
    table.create_scalar_index(COLLECTION, index_type="BITMAP", replace=True)
    return True


def ensure_fts_index(table: Any) -> bool:
    """Build the keyword index when missing (the caller makes sure the column exists)."""
    if has_fts_index(table):
        return False
    table.create_index(SEARCH_TEXT, config=FTS_CONFIG, replace=True)
    return True


def tuned(query: Any) -> Any:
    """A vector query with the recall settings above (no-ops on a flat search)."""
    return query.nprobes(NPROBES).refine_factor(REFINE_FACTOR)
