"""Which blog platform's export a file on disk is, and when it was made, told the way the parsers tell it
(core/parse/reader.py dispatches by suffix): any `.xml` read into posts is a WordPress export (WXR, the
only XML read), a `.json` is Ghost's when it has Ghost's shape, a `.zip` is Substack's when it holds
posts.csv, else Medium's when it holds posts/*.html. Used when a stored post's file and a new export
claim one post id: a newer export of the same platform replaces it (core/ingest/pipeline.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

from core.parse.exported import GHOST, MEDIUM, SUBSTACK, WORDPRESS, export_time
from core.parse.fields import BadInput
from core.parse.ghost import ghost_exported, is_ghost_export
from core.parse.medium import medium_posts
from core.parse.safezip import SafeZip
from core.parse.substack import substack_index
from core.parse.wxr import wxr_exported

MAX_SNIFF_BYTES = 200 * 1024 * 1024  # a bigger file was never read into posts (the reader's cap is lower)


class ExportFile(NamedTuple):
    """A file's platform (a key of core/parse/exported.py PLATFORMS, "" for none) and when the export
    was made, as its posts' `Post.exported` gives it ("" unknown)."""

    platform: str
    exported: str


NOT_AN_EXPORT = ExportFile("", "")


def export_file(path: str | Path) -> ExportFile:
    """The platform whose export the file at `path` is and when it was made; NOT_AN_EXPORT for any
    other file, or one that cannot be read now. Never raises."""
    file = Path(path)
    suffix = file.suffix.lower()
    if suffix == ".xml":  # the platform is known unread; only the date needs the file
        try:
            with file.open("rb") as source:
                own = wxr_exported(source)
        except OSError:
            own = ""
        return ExportFile(WORDPRESS, export_time(own, file.name))
    if suffix not in (".json", ".zip"):
        return NOT_AN_EXPORT
    try:
        if not file.is_file() or file.stat().st_size > MAX_SNIFF_BYTES:
            return NOT_AN_EXPORT
        data = file.read_bytes()
        if suffix == ".json":
            ghost = json.loads(data)
            if not is_ghost_export(ghost):
                return NOT_AN_EXPORT
            return ExportFile(GHOST, export_time(ghost_exported(ghost), file.name))
        archive = SafeZip(data)
        if substack_index(archive) is not None:
            return ExportFile(SUBSTACK, export_time("", file.name))
        return ExportFile(MEDIUM, export_time("", file.name)) if medium_posts(archive) else NOT_AN_EXPORT
    except (OSError, ValueError, RecursionError, BadInput):  # JSONDecodeError is a ValueError
        return NOT_AN_EXPORT
