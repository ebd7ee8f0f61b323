"""Read the author's files (or uploads, or pasted text) into `Post`s.

Formats, by file suffix:
- `.txt`: plain text. Title from the file name.
- `.md` / `.markdown`: optional YAML front matter (title, date, id or slug, tags, collection);
  title falls back to the first `# heading`, then to the file name.
- `.html` / `.htm`: the page's article text (menus, sidebars and footers left out).
- `.json`: a post object, a list of them (or `{"posts": [...]}`), each with `title` and `text` (or
  `content` / `body`) and optional `id`, `date`, `collection`, `tags`, `format`. Without `format`
  the text is read as markdown when it shows markdown or HTML (headings, lists, fences, links to
  URLs, bold, tags), else as plain text: reading scientific prose as markdown turns "[M + K](+)"
  into a link and "(*2*2)" into emphasis. WordPress-style `{"rendered": "..."}` values are unwrapped.
  A list of `{"id", "text", "source", "section", "keywords"}` objects (no titles) is a chunks.json
  export: its chunks are grouped into one post per `source` and kept exactly as cut.
- `.jsonl`: one such object per line (e.g. BEIR corpora); a bad line is reported, the rest is read.
- `.txt` and `.md` files may be bundles: many posts between `=== POST START: <title> ===` and
  `=== POST END ===` lines.

Post ids: a given id (front matter `id`/`slug`, JSON `id`) is kept as written; otherwise bundle
posts use the slug of their title and files the slug of their name. `Post.raw` holds that post's
original text, readable again in `Post.format` ("chunks" raw is the JSON of its chunks).

Folders are walked recursively in path order. Hidden files and folders and media/web assets
(images, audio, video, CSS, JS, fonts) are skipped quietly; other unsupported files are reported.

Problems never stop a run: each becomes a `ParseError` naming the file and the reason, and the
other files (and the good posts of the same file) are still read.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from core.models import ParseError, ParseResult, Post
from core.parse.fields import (
    DEFAULT_COLLECTION,
    FORMATS,
    BadInput,
    Context,
    as_tags,
    as_text,
    first_heading,
    front_matter,
    given_id,
    slug_id,
    title_from_text,
    to_blocks,
)
from core.parse.formats import PARSERS

log = logging.getLogger(__name__)
SUPPORTED_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".html", ".htm", ".json", ".jsonl"})
MAX_FILE_BYTES = 20 * 1024 * 1024
_MB = 1024 * 1024
_SUPPORTED_LIST = ", ".join(sorted(SUPPORTED_SUFFIXES))
# Files that sit beside posts in blog folders and are never posts: skipped in folder walks unreported.
_ASSETS = "jpg jpeg png gif webp avif heic svg ico bmp tif tiff mp3 m4a wav ogg mp4 mov webm css js map woff woff2 ttf"
_ASSET_SUFFIXES = frozenset(f".{ext}" for ext in _ASSETS.split())


# Public API ------------------------------------------------------------------------------------------


def parse_paths(
    paths: Iterable[str | Path] | str | Path,
    collection: str | None = None,
    *,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> ParseResult:
    """Parse files and folders (walked recursively, in sorted order, hidden entries skipped).

    Collection: `collection` if given, else the post's own (front matter, JSON), else the first
    folder below a given folder (`posts/books/x.md` → "books"), else "writings".
    """
    if isinstance(paths, str | Path):
        paths = [paths]
    result = ParseResult()
    seen: set[Path] = set()
    for given in paths:
        root = Path(given)
        if root.is_dir():
            files = _walk(root)
            if not files:
                result.errors.append(ParseError(str(root), "folder contains no files to read"))
        elif root.is_file():
            files = [(root, DEFAULT_COLLECTION)]
        else:
            result.errors.append(ParseError(str(root), "does not exist"))
            continue
        for path, folder_collection in files:
            resolved = path.resolve()
            if resolved in seen:  # the same file named twice (a folder and a file inside it)
                continue
            seen.add(resolved)
            ctx = Context(str(path), path, collection, folder_collection)
            _parse_one(ctx, lambda p=path: _read(p, max_file_bytes), result)
    return _dedupe(result)


def parse_bytes(
    name: str,
    data: bytes,
    collection: str | None = None,
    *,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> ParseResult:
    """Parse one uploaded file; `name` (its file name) picks the format and names errors."""

    def read() -> bytes:
        if len(data) > max_file_bytes:
            raise BadInput(_too_big(len(data), max_file_bytes))
        return data

    result = ParseResult()
    _parse_one(Context(name, Path(name), collection, DEFAULT_COLLECTION), read, result)
    return _dedupe(result)


def parse_text(
    text: str,
    title: str,
    *,
    collection: str = DEFAULT_COLLECTION,
    date: str = "",
    post_id: str | None = None,
    format: str = "text",
    tags: Iterable[str] = (),
    source: str = "pasted text",
) -> Post:
    """One post from pasted text. Raises ValueError with a readable message if it cannot be used."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    body, meta = text, dict[str, Any]()
    if format == "markdown":
        # Pasted from a static-site source file, front matter and all; its YAML is not prose.
        with contextlib.suppress(BadInput):
            meta, body = front_matter(text)
    blocks = to_blocks(body, format)
    if not any(not b.heading for b in blocks):
        raise ValueError("the text is empty after cleaning")
    title = (
        " ".join(title.split())
        or as_text(meta.get("title"))
        or first_heading(blocks)
        or title_from_text(blocks)
    )
    try:
        pid = given_id(post_id) if post_id not in (None, "") else slug_id(title)
    except BadInput as exc:
        raise ValueError(str(exc)) from None
    return Post(
        post_id=pid,
        title=title,
        blocks=blocks,
        raw=text,
        source=source,
        collection=collection.strip() or DEFAULT_COLLECTION,
        date=date,
        tags=as_tags(list(tags)),
        format=format,
    )


# One input -------------------------------------------------------------------------------------------


def _parse_one(ctx: Context, read: Callable[[], bytes], result: ParseResult) -> None:
    suffix = ctx.path.suffix.lower()
    try:
        if suffix not in SUPPORTED_SUFFIXES:
            kind = f"file type {suffix}" if suffix else "file without an extension"
            raise BadInput(f"unsupported {kind}; supported: {_SUPPORTED_LIST}")
        result.posts.extend(PARSERS[suffix](ctx, _decode(read())))
    except BadInput as exc:
        ctx.error(str(exc))
    result.errors.extend(ctx.errors)


def _read(path: Path, limit: int) -> bytes:
    try:
        size = path.stat().st_size  # before reading: a huge file must not be loaded to be refused
        if size > limit:
            raise BadInput(_too_big(size, limit))
        return path.read_bytes()
    except OSError as exc:
        raise BadInput(f"cannot be read ({exc.strerror or exc})") from None


def _too_big(size: int, limit: int) -> str:
    limit_text = f"{limit / _MB:g} MB" if limit >= _MB else f"{limit:,} bytes"
    return f"is {size / _MB:.1f} MB, over the {limit_text} limit"


def _decode(data: bytes) -> str:
    if not data.strip():
        raise BadInput("is empty")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # Windows "Unicode" (UTF-16 with a BOM)
        try:
            return _nonempty(data.decode("utf-16"))
        except UnicodeDecodeError:
            raise BadInput("looks binary (bad UTF-16)") from None
    if b"\x00" in data[:8192] or _control_share(data[:8192]) > 0.1:
        raise BadInput("looks binary (not a text file)")
    try:
        return _nonempty(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        utf8_error = exc
    # Old Western-European exports are often cp1252: accept them when the result is mostly ASCII,
    # which rules out other legacy encodings (Cyrillic, Greek…) that would decode to gibberish, and
    # when no valid UTF-8 sequence appears (then it is damaged UTF-8, and cp1252 would garble it).
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        text = ""
    letters = [c for c in text if not c.isspace()]
    mostly_ascii = bool(letters) and sum(not c.isascii() for c in letters) / len(letters) <= 0.2
    some_utf8 = any(ord(c) > 127 and c != "\ufffd" for c in data.decode("utf-8", "replace"))
    if mostly_ascii and not some_utf8:
        log.warning("decoded as cp1252, not UTF-8")
        return _nonempty(text)
    bad = data[utf8_error.start]
    raise BadInput(f"is not UTF-8 (byte 0x{bad:02X} at offset {utf8_error.start}); re-save it as UTF-8")


def _nonempty(text: str) -> str:
    if not text.strip():
        raise BadInput("is empty")
    return text


def _control_share(sample: bytes) -> float:
    # Text has tabs and newlines but hardly any other control bytes; binary formats are full of them.
    controls = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13))
    return controls / max(len(sample), 1)


def _dedupe(result: ParseResult) -> ParseResult:
    """Keep the first post of each id; report later ones, naming where the first came from."""
    first: dict[str, Post] = {}
    kept = []
    for post in result.posts:
        earlier = first.setdefault(post.post_id, post)
        if earlier is post:
            kept.append(post)
            continue
        where = "earlier in the same file" if earlier.source == post.source else f"from {earlier.source}"
        result.errors.append(
            ParseError(
                post.source,
                f"post {post.title!r} has id {post.post_id!r}, already used by {earlier.title!r} {where}; "
                f"kept the first",
            )
        )
    result.posts = kept
    return result


def _walk(root: Path) -> list[tuple[Path, str]]:
    """Files under `root` in path order, with their folder collection.

    Hidden entries (.git, .DS_Store, …) and media/web assets (a post's images, a theme's CSS) are
    left out quietly; any other file of an unsupported type is kept, so it gets reported.
    """
    found: list[Path] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found.extend(
            Path(folder) / name
            for name in names
            if not name.startswith(".") and Path(name).suffix.lower() not in _ASSET_SUFFIXES
        )
    # Sort by path components, so "a/x.md" comes before "b.md" as in a file browser (and the first of
    # two posts with the same id, the one kept, is predictable).
    found.sort(key=lambda p: p.relative_to(root).parts)
    files = []
    for path in found:
        parts = path.relative_to(root).parts
        files.append((path, parts[0] if len(parts) > 1 else DEFAULT_COLLECTION))
    return files
