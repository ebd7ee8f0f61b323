"""Dense search over a small table's vectors held in memory.

Below VECTOR_INDEX_MIN_ROWS a table has no vector index and LanceDB scans it: 3–6 ms at 2k chunks,
nearly all of it per-query overhead (plan, read and decode the vectors again), where the matrix product
takes 0.05 ms. So a small table's payload and unit vectors are read once per table version and kept per
process (≈ 4 KB a chunk, at most ≈ 40 MB), and each search is a matrix-vector product plus a take. Any commit
(ours or another process's) changes the version, and the next search reads the table again.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from core.store.schema import VECTOR_INDEX_MIN_ROWS, hit_columns


@dataclass(frozen=True)
class HeldTable:
    key: tuple[int, int]  # (version, rows): a table dropped and made again numbers versions from 1
    payload: pa.Table  # the columns a search returns (schema.HIT_COLUMNS)
    vectors: np.ndarray  # (rows, dim), unit length
    collections: np.ndarray  # each row's collection

    def search(self, vector: np.ndarray, limit: int, collections: Sequence[str] | None = None) -> list[dict]:
        """Rows as Store.vector_search returns them: HIT_COLUMNS plus `_distance` (cosine), nearest first."""
        query = np.asarray(vector, dtype=np.float32)
        query = query / (float(np.linalg.norm(query)) or 1.0)
        # Not `@`: a matrix-vector product goes to BLAS, whose threads spin against other work on a busy
        # machine (17 ms for 10k rows on 2 shared cores, against 2 ms for einsum's single loop).
        sims = np.einsum("ij,j->i", self.vectors, query)
        candidates = np.arange(len(sims))
        if collections:
            candidates = np.flatnonzero(np.isin(self.collections, list(collections)))
            sims = sims[candidates]
        if len(candidates) == 0 or limit < 1:
            return []
        top = np.argpartition(-sims, limit - 1)[:limit] if limit < len(sims) else np.arange(len(sims))
        top = top[np.argsort(-sims[top], kind="stable")]
        rows = self.payload.take(pa.array(candidates[top])).to_pylist()
        for row, sim in zip(rows, sims[top].tolist(), strict=True):
            row["_distance"] = 1.0 - sim
        return rows


_HELD: dict[str, HeldTable] = {}
_LOCK = threading.Lock()


def held_table(where: str, table: Any) -> HeldTable | None:
    """The small table at `where` (a data dir) held in memory, or None when it is too big to hold."""
    rows = table.count_rows()
    if rows == 0 or rows >= VECTOR_INDEX_MIN_ROWS:
        with _LOCK:
            _HELD.pop(where, None)
        return None
    key = (int(table.version), int(rows))
    with _LOCK:
        held = _HELD.get(where)
    if held is not None and held.key == key:
        return held
    columns = [*hit_columns(table), "vector"]
    # Read at the version the key names, so a commit landing in between cannot pair old rows with a new key.
    data = table.search().select(columns).limit(rows).to_arrow()
    if data.num_rows != rows or int(table.version) != key[0]:
        return None  # changed while reading: search LanceDB this time
    dim = data.schema.field("vector").type.list_size
    flat = data["vector"].combine_chunks().flatten().to_numpy(zero_copy_only=False)
    vectors = np.asarray(flat, dtype=np.float32).reshape(-1, dim)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms == 0, 1.0, norms)
    labels = np.array([c or "" for c in data["collection"].to_pylist()], dtype=object)
    held = HeldTable(key, data.drop_columns(["vector"]), vectors, labels)
    with _LOCK:
        _HELD[where] = held
    return held
