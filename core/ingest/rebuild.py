"""Stored posts rebuilt from their raw text: for a forced re-ingest (Ingest page) or re-chunking (core/evaluate/compare.py).

The posts table keeps each post's raw text, format and metadata, so a post can be parsed again into the
same post (same id, title, collection, date, tags and source) without its original file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import PurePath

from core.models import Post
from core.store import Store

# Formats whose stored raw text parse_text turns back into the same post (others go through parse_bytes).
REBUILDABLE_FORMATS = ("text", "markdown")


def rebuild_post(row: dict) -> Post:
    """A stored post rebuilt from its raw text with the same id, title, collection, date, tags, source
    and address.

    Raises ValueError when its format can't be rebuilt from the raw text alone.
    """
    from core.parse import SUPPORTED_SUFFIXES, parse_bytes, parse_text

    fmt, raw, post_id = row.get("format") or "text", row.get("raw") or "", row["post_id"]
    if not raw.strip():
        raise ValueError("no raw text is stored for it")
    keep = {
        "post_id": post_id,
        "title": row.get("title") or post_id,
        "collection": row.get("collection") or "writings",
        "date": row.get("date") or "",
        "tags": list(row.get("tags") or []),
        "source": row.get("source") or "",
        "url": row.get("url") or "",  # as stored: the file's, the site pattern's or the owner's edit
    }
    # Posts of blog exports, PDFs and Word files keep an HTML body or plain text as their raw, which
    # parse_text reads as their parser did (a .html file's raw is a whole page, read differently).
    from_export = fmt == "html" and PurePath(keep["source"]).suffix.lower() not in (".html", ".htm")
    if fmt in REBUILDABLE_FORMATS or from_export:
        return parse_text(raw, keep["title"], format=fmt, **{k: v for k, v in keep.items() if k != "title"})
    # Files whose parser differs from parse_text's (HTML pages, chunks.json): parse the raw text as that file.
    name = PurePath(keep["source"]).name
    if PurePath(name).suffix.lower() not in SUPPORTED_SUFFIXES:
        name = f"{post_id}.{ {'html': 'html', 'chunks': 'json'}.get(fmt, fmt) }"
    parsed = parse_bytes(name, raw.encode("utf-8"), collection=keep["collection"])
    if len(parsed.posts) != 1:
        raise ValueError(f"its stored {fmt!r} text can't be rebuilt into one post")
    return dataclasses.replace(parsed.posts[0], **keep)


def rebuild_posts(store: Store, post_ids: Sequence[str]) -> tuple[list[Post], list[str]]:
    """Stored posts rebuilt for a forced re-ingest; returns (posts, why each skipped one was skipped)."""
    posts: list[Post] = []
    skipped: list[str] = []
    for post_id in post_ids:
        row = store.get_post(post_id)
        if row is None:
            skipped.append(f"{post_id}: no longer stored")
            continue
        try:
            posts.append(rebuild_post(row))
        except ValueError as exc:
            skipped.append(f"{row.get('title') or post_id}: {exc}")
    return posts, skipped
