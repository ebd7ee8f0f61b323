"""Export and import of chunks in NUMAIN's chunks.json format.

The format is a JSON list of `{"id", "text", "source", "section", "keywords"}`. We add `post_id`,
`post_title`, `collection`, `date`, `tags` and `url` (each post's, on every one of its chunks) so a round
trip keeps each post as it was: its identity, its tags and the address citations link to. Readers of the
plain format ignore the extra keys, and our importer falls back to `source` when they are absent (an
older export, without `tags` and `url`, imports with none, as it always did).
"""

from __future__ import annotations

import json
from pathlib import Path

from core.store import Store


def export_chunks(store: Store) -> list[dict]:
    """Every stored chunk as a chunks.json item, with its post's fields (see the module docstring)."""
    posts = {post["post_id"]: post for post in store.list_posts()}
    rows = store.list_chunks(
        columns=["chunk_id", "post_id", "idx", "title", "collection", "date", "section", "text", "keywords"]
    )
    return [
        {
            "id": row["chunk_id"],
            "text": row["text"],
            "source": row["title"] or row["post_id"],
            "section": row["section"] or "",
            "keywords": list(row["keywords"] or []),
            "post_id": row["post_id"],
            "post_title": row["title"],
            "collection": row["collection"],
            "date": row["date"] or "",
            "tags": list(posts.get(row["post_id"], {}).get("tags") or []),
            "url": posts.get(row["post_id"], {}).get("url") or "",
        }
        for row in rows
    ]


def write_export(store: Store, path: str | Path) -> int:
    """Write all chunks to `path` (written to a temp file first so a failure leaves no half file). A
    symbolic link's file is written, the link kept; a path that is no regular file (/dev/stdout, a
    named pipe) is written into as it is."""
    text, count = export_text(store)
    target = Path(path)
    if target.exists() and not target.is_file():
        # The temp-file-and-rename would put a regular file in its place (as root, /dev/stdout itself).
        with target.open("w", encoding="utf-8") as fh:
            fh.write(text)
        return count
    target = target.resolve()  # a link to the backup on another disk stays a link
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)
    return count


def export_text(store: Store) -> tuple[str, int]:
    """The chunks.json document of every stored chunk (its last line ended), and how many chunks."""
    items = export_chunks(store)
    return json.dumps(items, ensure_ascii=False, indent=2) + "\n", len(items)
