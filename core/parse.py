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
import datetime as dt
import hashlib
import json
import logging
import os
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import frontmatter
import yaml

from core.clean import (
    html_article,
    html_fragment_to_blocks,
    markdown_title,
    markdown_to_blocks,
    normalise_newlines,
    text_to_blocks,
)
from core.models import Block, ParseError, ParseResult, Post, PreChunk

log = logging.getLogger(__name__)

SUPPORTED_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".html", ".htm", ".json", ".jsonl"})
MAX_FILE_BYTES = 20 * 1024 * 1024
DEFAULT_COLLECTION = "writings"
FORMATS = ("text", "markdown", "html")

_MB = 1024 * 1024
_MAX_ID_CHARS = 200
_MAX_LINE_ERRORS = 10  # per .jsonl file; beyond that one summary error
_SUPPORTED_LIST = ", ".join(sorted(SUPPORTED_SUFFIXES))

_START_RE = re.compile(r"^\s*={3,}\s*POST\s+START\s*:?\s*(?P<title>.*?)\s*={3,}\s*$", re.IGNORECASE)
_END_RE = re.compile(r"^\s*={3,}\s*POST\s+END\b[^=]*={3,}\s*$", re.IGNORECASE)
_DATE_PREFIX_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})[-_ ]+(.+)$")  # Jekyll-style 2021-05-04-title.md
_TEXT_KEYS = ("text", "content", "body")
# Files that sit beside posts in blog folders and are never posts: skipped in folder walks unreported.
_ASSETS = "jpg jpeg png gif webp avif heic svg ico bmp tif tiff mp3 m4a wav ogg mp4 mov webm css js map woff woff2 ttf"
_ASSET_SUFFIXES = frozenset(f".{ext}" for ext in _ASSETS.split())
_WHOLE_PAGE_RE = re.compile(r"<(?:!doctype|html|body)\b", re.IGNORECASE)
# Unmistakable markdown (or HTML, which the markdown reader strips) in a JSON post's text.
_MARKDOWN_SIGNS = re.compile(
    r"^ {0,3}(?:#{1,6} \S|```|~~~|> \S|[-*+] \S.*\n {0,3}[-*+] \S)"  # heading, fence, quote, 2-item list
    r"|\[[^\]\n]+\]\((?:https?://|mailto:|/|#|\.{1,2}/)"  # link to a URL or path
    r"|!\[[^\]\n]*\]\(|\*\*\S[^*\n]*\*\*"  # image, **bold**
    r"|</?(?:p|div|br|a|em|strong|h[1-6]|ul|ol|li|blockquote|img|figure)\b",
    re.MULTILINE | re.IGNORECASE,
)


class _Bad(Exception):
    """A problem with one input (or one post of it); the message is shown to the user as is."""


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
            ctx = _Context(str(path), path, collection, folder_collection)
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
            raise _Bad(_too_big(len(data), max_file_bytes))
        return data

    result = ParseResult()
    _parse_one(_Context(name, Path(name), collection, DEFAULT_COLLECTION), read, result)
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
        with contextlib.suppress(_Bad):
            meta, body = _front_matter(text)
    blocks = _blocks(body, format)
    if not any(not b.heading for b in blocks):
        raise ValueError("the text is empty after cleaning")
    title = (
        " ".join(title.split())
        or _str(meta.get("title"))
        or _first_heading(blocks)
        or _title_from_text(blocks)
    )
    try:
        pid = _given_id(post_id) if post_id not in (None, "") else _slug_id(title)
    except _Bad as exc:
        raise ValueError(str(exc)) from None
    return Post(
        post_id=pid,
        title=title,
        blocks=blocks,
        raw=text,
        source=source,
        collection=collection.strip() or DEFAULT_COLLECTION,
        date=date,
        tags=_tags(list(tags)),
        format=format,
    )


def slugify(text: str, max_length: int = 80) -> str:
    """Lowercase words joined by "-": "Café, Tea & Me!" → "cafe-tea-me". Keeps non-Latin letters."""
    kept: list[str] = []
    for ch in unicodedata.normalize("NFKD", text):
        # Drop accents on Latin letters only; marks on other scripts (e.g. kana voicing) are letters.
        if unicodedata.combining(ch) and kept and kept[-1].isascii():
            continue
        kept.append(ch)
    slug = re.sub(r"[\W_]+", "-", unicodedata.normalize("NFC", "".join(kept)).lower()).strip("-")
    return slug[:max_length].rstrip("-")


# One input -------------------------------------------------------------------------------------------


@dataclass
class _Context:
    """Where a file came from and the collection rules that apply to its posts."""

    source: str
    path: Path
    forced_collection: str | None
    folder_collection: str
    errors: list[ParseError] = field(default_factory=list)

    def collection(self, own: Any = None) -> str:
        for choice in (self.forced_collection, own, self.folder_collection):
            if isinstance(choice, str) and choice.strip():
                return choice.strip()
        return DEFAULT_COLLECTION

    def error(self, message: str) -> None:
        self.errors.append(ParseError(self.source, message))

    @property
    def stem(self) -> str:
        # Hugo page bundles are `my-post/index.md`: the folder is the post's name.
        stem = self.path.stem
        if stem.lower() in ("index", "readme", "_index") and self.path.parent.name:
            return self.path.parent.name
        return stem


def _parse_one(ctx: _Context, read: Callable[[], bytes], result: ParseResult) -> None:
    suffix = ctx.path.suffix.lower()
    try:
        if suffix not in SUPPORTED_SUFFIXES:
            kind = f"file type {suffix}" if suffix else "file without an extension"
            raise _Bad(f"unsupported {kind}; supported: {_SUPPORTED_LIST}")
        result.posts.extend(_PARSERS[suffix](ctx, _decode(read())))
    except _Bad as exc:
        ctx.error(str(exc))
    result.errors.extend(ctx.errors)


def _read(path: Path, limit: int) -> bytes:
    try:
        size = path.stat().st_size  # before reading: a huge file must not be loaded to be refused
        if size > limit:
            raise _Bad(_too_big(size, limit))
        return path.read_bytes()
    except OSError as exc:
        raise _Bad(f"cannot be read ({exc.strerror or exc})") from None


def _too_big(size: int, limit: int) -> str:
    limit_text = f"{limit / _MB:g} MB" if limit >= _MB else f"{limit:,} bytes"
    return f"is {size / _MB:.1f} MB, over the {limit_text} limit"


def _decode(data: bytes) -> str:
    if not data.strip():
        raise _Bad("is empty")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # Windows "Unicode" (UTF-16 with a BOM)
        try:
            return _nonempty(data.decode("utf-16"))
        except UnicodeDecodeError:
            raise _Bad("looks binary (bad UTF-16)") from None
    if b"\x00" in data[:8192] or _control_share(data[:8192]) > 0.1:
        raise _Bad("looks binary (not a text file)")
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
    raise _Bad(f"is not UTF-8 (byte 0x{bad:02X} at offset {utf8_error.start}); re-save it as UTF-8")


def _nonempty(text: str) -> str:
    if not text.strip():
        raise _Bad("is empty")
    return text


def _looks_like_title(line: str) -> bool:
    """A short first line without closing punctuation is the title of a scraped or pasted essay."""
    return (
        len(line) <= 100 and "\n" not in line and not line.rstrip().endswith((".", "!", "?", ":", ";", ","))
    )


def _control_share(sample: bytes) -> float:
    # Text has tabs and newlines but hardly any other control bytes; binary formats are full of them.
    controls = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13))
    return controls / max(len(sample), 1)


# Formats ---------------------------------------------------------------------------------------------


def _parse_txt(ctx: _Context, text: str) -> list[Post]:
    if _is_bundle(normalise_newlines(text)):
        return _parse_bundle(ctx, normalise_newlines(text), "text")
    date, title = _name_parts(ctx.stem)
    blocks = text_to_blocks(text)
    if len(blocks) > 1 and _looks_like_title(blocks[0].text):
        title, blocks = blocks[0].text, blocks[1:]
    post = _make_post(ctx, blocks, raw=text, title=title, post_id=_slug_id(ctx.stem), date=date, fmt="text")
    return [post] if post else []


def _parse_markdown(ctx: _Context, text: str) -> list[Post]:
    if _is_bundle(normalise_newlines(text)):
        return _parse_bundle(ctx, normalise_newlines(text), "markdown")
    date, title = _name_parts(ctx.stem)
    post = _markdown_post(ctx, text, fallback_title=title, fallback_id=_slug_id(ctx.stem), fallback_date=date)
    return [post] if post else []


def _markdown_post(
    ctx: _Context,
    text: str,
    *,
    fallback_title: str,
    fallback_id: str,
    fallback_date: str = "",
    title: str = "",
    where: str = "",
) -> Post | None:
    """A markdown post with optional front matter; `title` (a bundle marker's) beats the front matter's."""
    try:
        meta, body = _front_matter(text)
    except _Bad as exc:
        ctx.error(f"{where}{exc}")
        return None
    blocks = markdown_to_blocks(body)
    title = title or _str(meta.get("title")) or markdown_title(body) or fallback_title
    given = meta.get("id", meta.get("slug"))
    try:
        post_id = _given_id(given) if given not in (None, "") else fallback_id
    except _Bad as exc:
        ctx.error(f"{where}{exc}")
        return None
    return _make_post(
        ctx,
        blocks,
        raw=text,
        title=title,
        post_id=post_id,
        date=_date(meta.get("date")) or fallback_date,
        tags=_tags(meta.get("tags")),
        collection=meta.get("collection"),
        fmt="markdown",
        where=where,
    )


def _front_matter(text: str) -> tuple[dict[str, Any], str]:
    try:
        post = frontmatter.loads(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).split("\n", 1)[0]
        near = f" near line {mark.line + 1}" if mark is not None else ""
        raise _Bad(f"front matter is not valid YAML{near}: {problem}") from None
    return dict(post.metadata), post.content


def _parse_html(ctx: _Context, text: str) -> list[Post]:
    title, date, blocks = html_article(text)
    name_date, name_title = _name_parts(ctx.stem)
    post = _make_post(
        ctx,
        blocks,
        raw=text,
        title=title or name_title,
        post_id=_slug_id(ctx.stem),
        date=_iso_day(date) or name_date,
        fmt="html",
    )
    return [post] if post else []


def _parse_json(ctx: _Context, text: str) -> list[Post]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _Bad(f"is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    if isinstance(data, dict) and isinstance(data.get("posts"), list):
        data = data["posts"]
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not data:
        raise _Bad("JSON must be a post object or a non-empty list of posts")
    return _from_objects(ctx, [(f"item {i}", item) for i, item in enumerate(data, 1)])


def _parse_jsonl(ctx: _Context, text: str) -> list[Post]:
    items: list[tuple[str, Any]] = []
    bad: list[str] = []
    for number, line in enumerate(normalise_newlines(text).split("\n"), 1):
        if not line.strip():
            continue
        try:
            items.append((f"line {number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            bad.append(f"line {number} is not valid JSON ({exc.msg}, column {exc.colno}); skipped")
    for message in bad[:_MAX_LINE_ERRORS]:
        ctx.error(message)
    if len(bad) > _MAX_LINE_ERRORS:
        ctx.error(f"{len(bad) - _MAX_LINE_ERRORS} more lines are not valid JSON; skipped")
    return _from_objects(ctx, items) if items else []


def _from_objects(ctx: _Context, items: list[tuple[str, Any]]) -> list[Post]:
    objects = [obj for _, obj in items if isinstance(obj, dict)]
    if objects and len(objects) == len(items) and all(_is_chunk(obj) for obj in objects):
        return _chunk_posts(ctx, objects)
    posts = []
    for label, obj in items:
        if not isinstance(obj, dict):
            ctx.error(f"{label} is not a JSON object; skipped")
            continue
        post = _json_post(ctx, obj, f"{label}: ")
        if post:
            posts.append(post)
    return posts


def _json_post(ctx: _Context, obj: dict[str, Any], where: str) -> Post | None:
    texts = [_str(obj.get(key), strip=False) for key in _TEXT_KEYS]
    text = next((t for t in texts if t.strip()), "")
    if not text:
        ctx.error(f'{where}has no text (expected a "text", "content" or "body" field)')
        return None
    fmt = _str(obj.get("format")).lower() or _guess_format(text)
    if fmt not in FORMATS:
        ctx.error(f"{where}format must be one of {', '.join(FORMATS)}, not {fmt!r}")
        return None
    blocks = _blocks(text, fmt)
    title = _plain(_str(obj.get("title"))) or _first_heading(blocks) or _title_from_text(blocks)
    try:
        given = obj.get("id")
        post_id = _given_id(given) if given not in (None, "") else _slug_id(title)
    except _Bad as exc:
        ctx.error(f"{where}{exc}")
        return None
    return _make_post(
        ctx,
        blocks,
        raw=text,
        title=title,
        post_id=post_id,
        date=_date(obj.get("date")),
        tags=_tags(obj.get("tags")),
        collection=obj.get("collection"),
        fmt=fmt,
        where=where,
    )


def _guess_format(text: str) -> str:
    return "markdown" if _MARKDOWN_SIGNS.search(text) else "text"


def _is_chunk(obj: dict[str, Any]) -> bool:
    return "source" in obj and "text" in obj and "title" not in obj


def _chunk_posts(ctx: _Context, objects: list[dict[str, Any]]) -> list[Post]:
    """chunks.json: one post per `source`, chunks in file order, each kept exactly as cut."""
    # Our own exports add post_id / post_title / date / collection so a round trip keeps identities.
    groups: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        key = _str(obj.get("post_id")) or _str(obj.get("source")) or ctx.stem
        groups.setdefault(key, []).append(obj)
    posts = []
    for key, chunks in groups.items():
        first = chunks[0]
        source = _str(first.get("post_title")) or _str(first.get("source")) or key
        pre = [
            PreChunk(
                text=_str(c.get("text"), strip=False),
                section=_str(c.get("section")),
                keywords=_tags(c.get("keywords")),
                chunk_id=_str(c.get("id")),
            )
            for c in chunks
            if _str(c.get("text"))  # an empty chunk has nothing to embed
        ]
        blocks: list[Block] = []
        section = ""
        for chunk in pre:
            if chunk.section and chunk.section != section:
                blocks.append(Block(chunk.section, heading=True))
            section = chunk.section
            blocks.append(Block(chunk.text.strip()))
        post = _make_post(
            ctx,
            blocks,
            raw=json.dumps(chunks, ensure_ascii=False, indent=1),
            title=source,
            post_id=_given_id(first["post_id"]) if _str(first.get("post_id")) else _slug_id(source),
            date=_str(first.get("date")),
            collection=first.get("collection"),
            fmt="chunks",
            where=f"source {source!r}: ",
        )
        if post:
            post.prechunked = pre
            posts.append(post)
    return posts


def _is_bundle(text: str) -> bool:
    return any(_START_RE.match(line) for line in text.split("\n"))


def _parse_bundle(ctx: _Context, text: str, fmt: str) -> list[Post]:
    posts = []
    for number, (title, line, raw) in enumerate(_bundle_segments(ctx, text), 1):
        where = f"post {title or number!r} (line {line}): "
        title = title or f"{_name_parts(ctx.stem)[1]} {number}"
        if fmt == "markdown":  # each segment may carry its own front matter
            post = _markdown_post(
                ctx, raw, title=title, fallback_title=title, fallback_id=_slug_id(title), where=where
            )
        else:
            blocks = text_to_blocks(raw)
            post = _make_post(
                ctx, blocks, raw=raw, title=title, post_id=_slug_id(title), fmt=fmt, where=where
            )
        if post:
            posts.append(post)
    return posts


def _bundle_segments(ctx: _Context, text: str) -> list[tuple[str, int, str]]:
    """(title, START line, body) of each post closed by an END line; unterminated posts are reported
    and skipped, so one missing marker costs one post, not the posts after it."""
    segments: list[tuple[str, int, str]] = []
    title: str | None = None
    start_line = 0
    body: list[str] = []
    for number, line in enumerate(text.split("\n"), 1):
        if start := _START_RE.match(line):
            if title is not None:
                ctx.error(
                    f"post {title!r} (started at line {start_line}) has no '=== POST END ===' before "
                    f"the next POST START at line {number}; skipped"
                )
            title, start_line, body = start.group("title").strip(), number, []
        elif _END_RE.match(line):
            if title is None:
                ctx.error(f"line {number}: '=== POST END ===' without a POST START; ignored")
            else:
                segments.append((title, start_line, "\n".join(body).strip("\n")))
                title = None
        elif title is not None:
            body.append(line)
        # Lines outside any post (a header, notes between posts) are not part of any post.
    if title is not None:
        ctx.error(
            f"post {title!r} (started at line {start_line}) has no '=== POST END ===' before the end "
            f"of the file; skipped"
        )
    return segments


_PARSERS: dict[str, Callable[[_Context, str], list[Post]]] = {
    ".txt": _parse_txt,
    ".md": _parse_markdown,
    ".markdown": _parse_markdown,
    ".html": _parse_html,
    ".htm": _parse_html,
    ".json": _parse_json,
    ".jsonl": _parse_jsonl,
}


# Shared helpers --------------------------------------------------------------------------------------


def _make_post(
    ctx: _Context,
    blocks: list[Block],
    *,
    raw: str,
    title: str,
    post_id: str,
    fmt: str,
    date: str = "",
    tags: list[str] | None = None,
    collection: Any = None,
    where: str = "",
) -> Post | None:
    if not any(not b.heading for b in blocks):
        ctx.error(f"{where}has no text after cleaning (only markup, code or images?)")
        return None
    return Post(
        post_id=post_id,
        title=" ".join(title.split()),
        blocks=blocks,
        raw=raw,
        source=ctx.source,
        collection=ctx.collection(collection),
        date=date,
        tags=tags or [],
        format=fmt,
    )


def _blocks(text: str, fmt: str) -> list[Block]:
    if fmt == "markdown":
        return markdown_to_blocks(text)
    if fmt == "html":
        # A whole page (a stored .html file's raw) needs the article extraction, a snippet does not.
        if _WHOLE_PAGE_RE.search(text[:4096]):
            return html_article(text)[2]
        return html_fragment_to_blocks(text)
    return text_to_blocks(text)


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


def _name_parts(stem: str) -> tuple[str, str]:
    """(date, human title) from a file name: "2021-05-04-my_first-post" → ("2021-05-04", "My first post")."""
    date = ""
    match = _DATE_PREFIX_RE.match(stem)
    if match and _iso_day(match.group(1)):
        date, stem = match.group(1), match.group(2)
    words = " ".join(re.sub(r"[-_]+", " ", stem).split())
    return date, (words[:1].upper() + words[1:]) if words else stem


def _slug_id(text: str) -> str:
    # Titles of only punctuation or emoji slug to nothing; a short hash keeps them distinct and stable.
    return slugify(text) or "post-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]


def _given_id(value: Any) -> str:
    """An author-given id, kept as written (BEIR ids are numbers as strings), but usable as a key."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise _Bad(f"id must be a string or a number, not {type(value).__name__}")
    text = str(value).strip()
    if not text or len(text) > _MAX_ID_CHARS or any(unicodedata.category(c)[0] == "C" for c in text):
        raise _Bad(f"id {text[:40]!r} must be 1-{_MAX_ID_CHARS} printable characters")
    return text


def _first_heading(blocks: list[Block]) -> str:
    return next((b.text for b in blocks if b.heading), "")


def _title_from_text(blocks: list[Block], words: int = 8) -> str:
    first = next((b.text for b in blocks if not b.heading), "").split()
    return " ".join(first[:words]) + ("…" if len(first) > words else "")


def _str(value: Any, *, strip: bool = True) -> str:
    if isinstance(value, dict) and "rendered" in value:  # WordPress REST API
        value = value["rendered"]
    if value is None or isinstance(value, dict | list):
        return ""
    text = str(value)
    return text.strip() if strip else text


def _plain(title: str) -> str:
    """Titles may carry HTML (WordPress): keep the words only."""
    if "<" not in title and "&" not in title:
        return title
    return " ".join(b.text for b in html_fragment_to_blocks(title))


def _tags(value: Any) -> list[str]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list | tuple):
        return []
    return [t for t in (_str(v) for v in value) if t]


def _date(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return _str(value)


def _iso_day(text: str) -> str:
    try:
        return dt.date.fromisoformat(text[:10]).isoformat() if text else ""
    except ValueError:
        return ""
