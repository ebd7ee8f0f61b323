"""Crash points: named places between two commits where tests cut a write off, as a power cut would.

`INKWELL_CRASH_AT=<name>` makes the process exit at once (no cleanup, no flush) when it reaches that
point; unset (always, outside tests), a crash point does nothing. The names are listed in CRASH_POINTS.
"""

from __future__ import annotations

import os

ENV_CRASH_AT = "INKWELL_CRASH_AT"
CRASH_EXIT = 75
CRASH_POINTS = (
    "ingest:chunks-written",  # a window's chunks are stored, its post rows not yet
    "undo:posts-written",  # undo put back the post rows, not yet the chunks
    "undo:chunks-written",  # undo put back both, but has not marked the change undone
)


def crash_point(name: str) -> None:
    """Exit the process here when INKWELL_CRASH_AT names this point."""
    if os.environ.get(ENV_CRASH_AT) == name:
        os._exit(CRASH_EXIT)
