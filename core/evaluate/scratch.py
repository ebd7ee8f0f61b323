"""The evaluation's scratch tables (`<data dir>/eval-tables/<chunking>-<model>/`): what is there, and
removing the ones not written to for a while.

`inkwell eval --chunk-tokens N` and `--posts` keep one table per chunking and model so a second run
re-embeds only what changed (core/evaluate/compare.py); each holds a full copy of the chunks, so they
add up on disk. Removing one loses nothing: the next run that needs it builds it again, its vectors
from the stored table's by content hash.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from core.config import as_data_dir
from core.evaluate.compare import SCRATCH_DIR


@dataclass(frozen=True)
class ScratchTable:
    path: Path
    bytes: int
    written: float  # the newest file's modification time (seconds since the epoch)

    @property
    def age_days(self) -> float:
        return max(0.0, time.time() - self.written) / 86_400

    def to_json(self) -> dict:
        return {"path": str(self.path), "bytes": self.bytes, "age_days": round(self.age_days, 1)}


def scratch_dir(data_dir: str | Path) -> Path | None:
    """Where the scratch tables of a local data dir live; None for object storage, which this cannot
    list (delete `<uri>/eval-tables/` with the storage's own tools)."""
    where = as_data_dir(data_dir)
    return where / SCRATCH_DIR if isinstance(where, Path) else None


def scratch_tables(data_dir: str | Path) -> list[ScratchTable]:
    """The scratch tables under a local data dir, oldest first."""
    folder = scratch_dir(data_dir)
    if folder is None or not folder.is_dir():
        return []
    found = []
    for table in folder.iterdir():
        if not table.is_dir() or table.is_symlink():
            continue
        files = [f.stat() for f in table.rglob("*") if f.is_file() and not f.is_symlink()]
        written = max((f.st_mtime for f in files), default=table.stat().st_mtime)
        found.append(ScratchTable(table, sum(f.st_size for f in files), written))
    return sorted(found, key=lambda t: t.written)


def remove_scratch_tables(
    data_dir: str | Path, older_than_days: float, *, dry_run: bool = False
) -> list[ScratchTable]:
    """Remove the scratch tables not written to in `older_than_days` days (0: all); returns them."""
    old = [t for t in scratch_tables(data_dir) if t.age_days >= older_than_days]
    if not dry_run:
        for table in old:
            shutil.rmtree(table.path)
    return old
