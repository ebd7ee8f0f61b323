"""Local paths as remembered sources: a folder of posts, or a blog-platform export file (WordPress,
Ghost, Substack, Medium), read again by `inkwell sync` like a feed or a sitemap (core/ingest/web/sync.py).

A path source is named by its absolute path on the machine that remembered it. The `sources` table may
live on object storage and be shared, but the files are not: a sync reads a path only where it exists,
and elsewhere reports it missing by name (nothing read, nothing pruned).

What a read lists is the whole source (`complete`), except that the posts of a file that could not be
read this time (or of a folder that could not be walked) stay listed: a passing failure never prunes.
Each remembered item keeps the file its post was read from (`file`) and the post's stored `source`,
which pruning compares with the stored post: a post since read from elsewhere is never this path's.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

from core.ingest.pipeline import same_source
from core.ingest.web.read import SourceRead
from core.parse import ImportOptions, parse_paths
from core.store import Store
from core.store.sources import Source

KIND = "path"


def source_path(path: str | Path) -> str:
    """The name a local path is remembered by: absolute (a sync may run from any folder), unresolved
    (a link the owner gave stays the name they know)."""
    return os.path.abspath(os.path.expanduser(str(path)))


def path_source(
    path: str | Path,
    known: Source | None,
    *,
    collection: str | None = None,
    options: ImportOptions | None = None,
) -> Source:
    """The source for `path` as remembered now: a known one keeps its history; the collection and the
    options' choices given (drafts, pages, members-only posts) are the ones every later sync reads the
    path with."""
    source = known or Source(source_path(path), KIND, collection or "")
    source.collection = collection or ""  # "": each post's own (front matter, first folder)
    source.state["options"] = {"collection": collection or "", **(options or ImportOptions()).choices()}
    return source


def read_path(source: Source) -> SourceRead:
    """The posts under `source`'s path as it is now (see the module docstring); never raises for a
    file's problems: they are in `errors`, each naming its file."""
    out = SourceRead(KIND, state={"options": source.state.get("options", {})})
    root = source.url
    if not os.path.lexists(root):
        out.error(
            root,
            "no longer exists here: nothing read, nothing pruned (a path syncs on the machine that has "
            "it; `inkwell sources --remove PATH` forgets it)",
        )
        out.items = dict(source.items)  # nothing known changed
        return out
    options: dict[str, Any] = source.state.get("options", {})
    parsed = parse_paths(
        [root],
        collection=options.get("collection") or None,
        options=ImportOptions.from_choices(options),
    )
    out.posts, out.errors, out.warnings, out.drafts = (
        parsed.posts,
        parsed.errors,
        parsed.warnings,
        parsed.drafts,
    )
    per_file = Counter(post.source for post in parsed.posts)
    for post in parsed.posts:
        key = post.source if per_file[post.source] == 1 else f"{post.source}#{post.post_id}"
        out.items[key] = {"post_id": post.post_id, "source": post.source, "file": post.source}
        out.listed.add(post.post_id)
    unread = [error.source for error in parsed.errors]
    for key, item in source.items.items():
        if item.get("post_id") not in out.listed and _within_any(item.get("file", ""), unread):
            out.items[key] = item
            out.listed.add(item["post_id"])
    out.complete = True
    return out


def settle_items(read: SourceRead, store: Store) -> None:
    """After the ingest: each item's `source` becomes the one stored for its post when that names the
    same file (a post ingested before from a relative path keeps its stored source while unchanged),
    so pruning can tell it is still this path's."""
    states = store.post_states()
    for item in read.items.values():
        stored = states.get(item.get("post_id", ""))
        file = item.get("file", "")
        if stored is not None and file and stored.source != file and same_source(stored.source, file):
            item["source"] = stored.source


def _within_any(file: str, places: list[str]) -> bool:
    """Whether `file` is one of `places` or lies in a folder among them."""
    return bool(file) and any(file == p or file.startswith(p.rstrip(os.sep) + os.sep) for p in places)
