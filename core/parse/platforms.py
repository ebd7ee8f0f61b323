"""Which blog platform's export a file on disk is, told the way the parsers tell it (core/parse/reader.py
dispatches by suffix): any `.xml` read into posts is a WordPress export (WXR, the only XML read), a
`.json` is Ghost's when it has Ghost's shape, a `.zip` is Substack's when it holds posts.csv, else
Medium's when it holds posts/*.html. Used when a stored post's file and a new export claim one post id:
a newer export of the same platform replaces it (core/ingest/pipeline.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from core.parse.exported import GHOST, MEDIUM, SUBSTACK, WORDPRESS
from core.parse.fields import BadInput
from core.parse.ghost import is_ghost_export
from core.parse.medium import medium_posts
from core.parse.safezip import SafeZip
from core.parse.substack import substack_index

MAX_SNIFF_BYTES = 200 * 1024 * 1024  # a bigger file was never read into posts (the reader's cap is lower)


def export_platform(path: str | Path) -> str:
    """The platform (a key of core/parse/exported.py PLATFORMS) whose export the file at `path` is, or
    "" for any other file, or one that cannot be read now. Never raises."""
    file = Path(path)
    suffix = file.suffix.lower()
    if suffix == ".xml":
        return WORDPRESS
    if suffix not in (".json", ".zip"):
        return ""
    try:
        if not file.is_file() or file.stat().st_size > MAX_SNIFF_BYTES:
            return ""
        data = file.read_bytes()
        if suffix == ".json":
            return GHOST if is_ghost_export(json.loads(data)) else ""
        archive = SafeZip(data)
        if substack_index(archive) is not None:
            return SUBSTACK
        return MEDIUM if medium_posts(archive) else ""
    except (OSError, ValueError, RecursionError, BadInput):  # JSONDecodeError is a ValueError
        return ""
