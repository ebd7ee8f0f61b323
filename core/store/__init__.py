"""LanceDB storage: the `chunks` and `posts` tables and their writes (tables), reads and searches (reads),
the change log and undo (changes), the owner's saved settings (settings), their indices (index), small tables searched in memory (memory),
schemas (schema), retried commits (commit) and crash points for tests (faults)."""

from __future__ import annotations

import os

# Lance logs a WARN line to stderr for every compaction that lost a commit race ("Compaction commit
# failed; leaving … fragment(s) in place for GC"); the store retries those (commit.py), so they are
# noise to users. Set before lancedb is first imported; a user's own LANCEDB_LOG wins.
os.environ.setdefault("LANCEDB_LOG", "error")

from core.store.changes import Change, Undone, UndoRefused
from core.store.commit import CommitConflictError
from core.store.schema import KeywordSearchError, ModelMismatchError, StoreError, Versions
from core.store.tables import Store

__all__ = [
    "Change",
    "CommitConflictError",
    "KeywordSearchError",
    "ModelMismatchError",
    "Store",
    "StoreError",
    "UndoRefused",
    "Undone",
    "Versions",
]
