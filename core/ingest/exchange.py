"""Export and import of chunks in NUMAIN's chunks.json format.

The format is a JSON list of `{"id", "text", "source", "section", "keywords"}`. We add `post_id`,
`post_title`, `collection` and `date` so a round trip keeps each post's identity; readers of the plain
format ignore the extra keys, and our importer falls back to `source` when they are absent.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.store import Store


def export_chunks(store: Store) -> list[dict]:
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
        }
        for row in rows
    ]


def write_export(store: Store, path: str | Path) -> int:
    """Write all chunks to `path` (written to a temp file first so a failure leaves no half file)."""
    items = export_chunks(store)
    text = json.dumps(items, ensure_ascii=False, indent=2)
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(text + "\n", encoding="utf-8")
    tmp.replace(target)
    return len(items)
