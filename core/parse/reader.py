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
  `=== POST END ===` lines; a post's first line may be `URL: <its address>`.
- Blog-platform exports, many posts each, with their addresses (`Post.url`), tags and slugs as ids:
  WordPress `.xml` (WXR; core/parse/wxr.py), Ghost `.json` (core/parse/ghost.py), Substack and Medium
  `.zip` (core/parse/substack.py, medium.py; zips read by core/parse/safezip.py). Published public
  posts only unless `ImportOptions` asks for drafts, pages or posts for members only.
- `.pdf` (core/parse/pdf.py) and `.docx` (core/parse/word.py): one post each, titled by their metadata.
- An RSS or Atom feed saved as an `.xml` file (core/parse/feeds.py): one post per entry, from its own
  content or summary, its link as the address.

Addresses (`Post.url`, core/parse/addresses.py): front matter or JSON `url`, `permalink`,
`canonical_url` or `link`; an HTML page's `<link rel="canonical">` or `og:url`. Only http(s) addresses
and paths from the site's root are kept; another value is reported as a warning and left out.

Post ids: a given id (front matter `id`/`slug`, JSON `id`) is kept as written; otherwise bundle
posts use the slug of their title and files the slug of their name. `Post.raw` holds that post's
original text, readable again in `Post.format` ("chunks" raw is the JSON of its chunks).

Folders are walked recursively in path order. Hidden files and folders and media/web assets
(images, audio, video, CSS, JS, fonts) are skipped quietly; other unsupported files are reported.
Symbolic links are followed only to files and folders inside the folder given (a link loop, or a link
out of it, such as `posts/passwd.txt -> /etc/passwd`, is reported and skipped); anything that is not a
regular file (a FIFO, a socket, a device) is reported by its type without being opened; a file name
that is not valid UTF-8 is reported, rendered with \\x escapes.

Each file is judged on its own: at most `max_file_bytes` (50 MB, the Ingest page's upload limit too) are read, and it is parsed in a
child process that is stopped after `time_limit` seconds (60; core/parse/isolate.py), so no file can
hang or crash a run. Encodings: UTF-8 (with or without a BOM), UTF-16 and UTF-32 with a BOM; text that
is not UTF-8 is read as Windows-1252 with a warning naming the file, unless it holds UTF-8-shaped
sequences that are invalid (overlong forms, encoded surrogates: damaged or crafted text), which is
refused. Line ends (`\r\n`, an old Mac's lone `\r`) are read as `\n` before any parser sees the text;
text with nothing visible in it (only zero-width or other invisible characters) is refused, and a title
of only invisible characters counts as none.

Problems never stop a run: each becomes a `ParseError` naming the file and a one-line reason, and the
other files (and the good posts of the same file) are still read.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from core.models import ParseError, ParseResult, Post
from core.parse.addresses import checked_url
from core.parse.binary import BYTE_PARSERS
from core.parse.clean import normalise_newlines, shown, visible
from core.parse.decode import decode
from core.parse.fields import (
    DEFAULT_COLLECTION,
    FORMATS,
    URL_KEYS,
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
from core.parse.isolate import FILE_TIME_LIMIT, InputCrash, InputTimeout, run
from core.parse.options import ImportOptions

SUPPORTED_SUFFIXES = frozenset(
    {".txt", ".md", ".markdown", ".html", ".htm", ".json", ".jsonl", *BYTE_PARSERS}
)
# A WordPress export of years of posts with their comments passes 20 MB (a 39 MB one of 4,000 posts
# reads in 2 s); 50 MB is also what the Ingest page accepts (.streamlit/config.toml maxUploadSize).
MAX_FILE_BYTES = 50 * 1024 * 1024
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
    time_limit: float | None = FILE_TIME_LIMIT,
    options: ImportOptions | None = None,
) -> ParseResult:
    """Parse files and folders (walked recursively, in sorted order, hidden entries skipped).

    Collection: `collection` if given, else the post's own (front matter, JSON), else the first
    folder below a given folder (`posts/books/x.md` → "books"), else "writings". Each file is parsed
    in the reader child process within `time_limit` seconds (None: in this process, no limit).
    `options` say what blog-platform exports yield beside published posts (drafts, pages).
    """
    options = options or ImportOptions()
    if isinstance(paths, str | Path):
        paths = [paths]
    result = ParseResult()
    seen: set[str] = set()
    for given in paths:
        root = Path(given)
        source = display_path(root)
        if source != str(root):
            result.errors.append(ParseError(source, _BAD_NAME))
            continue
        try:
            is_dir = stat.S_ISDIR(os.stat(root).st_mode)  # a path given by name is followed, links too
        except FileNotFoundError:
            result.errors.append(ParseError(source, "does not exist"))
            continue
        except (OSError, ValueError) as exc:
            result.errors.append(ParseError(source, _unreadable(exc)))
            continue
        if is_dir:
            files, problems = _walk(root)
            result.errors.extend(problems)
            if not files and not problems:
                result.errors.append(ParseError(source, "folder contains no files to read"))
        else:
            files = [(root, DEFAULT_COLLECTION)]
        for path, folder_collection in files:
            resolved = os.path.realpath(path)
            if resolved in seen:  # the same file named twice (a folder and a file inside it)
                continue
            seen.add(resolved)
            # Opened by its absolute path: the reader child keeps the folder it was started in.
            opened = os.path.abspath(path)
            job = ("file", (str(path), opened, collection, folder_collection, max_file_bytes, options))
            result.extend(_isolated(job, str(path), time_limit))
    return _dedupe(result)


def parse_bytes(
    name: str,
    data: bytes,
    collection: str | None = None,
    *,
    max_file_bytes: int = MAX_FILE_BYTES,
    time_limit: float | None = FILE_TIME_LIMIT,
    options: ImportOptions | None = None,
) -> ParseResult:
    """Parse one uploaded file; `name` (its file name) picks the format and names errors."""
    job = ("bytes", (name, data, collection, max_file_bytes, options or ImportOptions()))
    return _dedupe(_isolated(job, name, time_limit))


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
    url: str = "",
    time_limit: float | None = FILE_TIME_LIMIT,
) -> Post:
    """One post from pasted text. Raises ValueError with a readable message if it cannot be used
    (also when it takes longer than `time_limit` seconds to parse). `url`, the post's address (else
    markdown front matter's), must be an http(s) address or a path from the site's root."""
    options = {
        "url": url,
        "collection": collection,
        "date": date,
        "post_id": post_id,
        "format": format,
        "tags": list(tags),
        "source": source,
    }
    if time_limit is None:
        return _parse_text_here(text, title, **options)
    try:
        return run(("text", (text, title, options)), time_limit, _run_here)
    except InputTimeout:
        raise ValueError(f"the text took longer than {time_limit:g} s to read") from None
    except InputCrash as exc:
        raise ValueError(f"reading the text stopped the reader process ({exc})") from None


def parse_piped(
    data: bytes, title: str, *, collection: str = DEFAULT_COLLECTION
) -> tuple[Post, list[ParseError]]:
    """One post from bytes piped in (`inkwell ingest - --title T`), decoded as a file's bytes are
    (UTF-8, UTF-16/32 by byte-order mark, else Windows-1252 with a warning), and its warnings, named
    "standard input". Raises ValueError with a one-line reason for binary, damaged or empty input."""
    ctx = Context("standard input", Path("standard-input.txt"), collection, DEFAULT_COLLECTION)
    try:
        text = decode(data, ctx)
    except BadInput as exc:
        raise ValueError(f"standard input {exc}") from None
    return parse_text(text, title, collection=collection), ctx.warnings


def _parse_text_here(
    text: str,
    title: str,
    *,
    collection: str = DEFAULT_COLLECTION,
    date: str = "",
    post_id: str | None = None,
    format: str = "text",
    tags: Iterable[str] = (),
    source: str = "pasted text",
    url: str = "",
) -> Post:
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    body, meta = normalise_newlines(text), dict[str, Any]()  # front matter is found by its lines
    if format == "markdown":
        # Pasted from a static-site source file, front matter and all; its YAML is not prose.
        with contextlib.suppress(BadInput):
            meta, body = front_matter(body)
    blocks = to_blocks(body, format)
    if not any(not b.heading for b in blocks):
        raise ValueError(
            "the text is empty after cleaning"
            if visible(text)
            else "the text is empty: no visible text, only spaces or invisible characters"
        )
    title = (
        shown(" ".join(title.split()))
        or shown(as_text(meta.get("title")))
        or first_heading(blocks)
        or title_from_text(blocks)
    )
    try:
        pid = given_id(post_id) if post_id not in (None, "") else slug_id(title)
    except BadInput as exc:
        raise ValueError(str(exc)) from None
    address, problem = checked_url(url)
    if problem:
        raise ValueError(f"the address {url.strip()[:80]!r} {problem}")
    if not address:  # the front matter's, when usable
        address = next((a for a, _ in map(checked_url, (meta.get(k) for k in URL_KEYS)) if a), "")
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
        url=address,
    )


# One input -------------------------------------------------------------------------------------------

_BAD_NAME = "its name is not valid UTF-8 (shown with \\x escapes): rename it to read it"


def display_path(path: str | Path) -> str:
    """The path as text that can be printed and stored: names that are not valid UTF-8 (which Python
    carries as lone surrogates) with \\x escapes for their bytes."""
    text = str(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(text).decode("utf-8", "backslashreplace")
    return text


def _isolated(job: tuple, source: str, time_limit: float | None) -> ParseResult:
    """Run a reading job in the reader child process (in this one when `time_limit` is None)."""
    if time_limit is None:
        return _run_here(job)
    try:
        return run(job, time_limit, _run_here)
    except InputTimeout:
        message = f"took longer than {time_limit:g} s to read; skipped"
    except InputCrash as exc:
        message = f"stopped the reader process ({exc}): too large or too complex to read; skipped"
    return ParseResult(errors=[ParseError(source, message)])


def _run_here(job: tuple) -> Any:
    name, args = job
    return JOBS[name](*args)


def _read_file(
    source: str,
    path: str,
    collection: str | None,
    folder_collection: str,
    max_file_bytes: int,
    options: ImportOptions,
) -> ParseResult:
    result = ParseResult()
    ctx = Context(source, Path(path), collection, folder_collection, options=options)
    _parse_one(ctx, lambda: _read(Path(path), max_file_bytes), result)
    return result


def _read_upload(
    name: str, data: bytes, collection: str | None, max_file_bytes: int, options: ImportOptions
) -> ParseResult:
    def read() -> bytes:
        if len(data) > max_file_bytes:
            raise BadInput(_too_big(len(data), max_file_bytes))
        return data

    result = ParseResult()
    ctx = Context(display_path(name), Path(name), collection, DEFAULT_COLLECTION, options=options)
    _parse_one(ctx, read, result)
    return result


def _read_text(text: str, title: str, options: dict[str, Any]) -> Post:
    return _parse_text_here(text, title, **options)


# What the reader child process may be asked to do (core/parse/worker.py).
JOBS: dict[str, Callable[..., Any]] = {"file": _read_file, "bytes": _read_upload, "text": _read_text}


def _parse_one(ctx: Context, read: Callable[[], bytes], result: ParseResult) -> None:
    suffix = ctx.path.suffix.lower()
    try:
        if suffix not in SUPPORTED_SUFFIXES:
            kind = f"file type {suffix}" if suffix else "file without an extension"
            raise BadInput(f"unsupported {kind}; supported: {_SUPPORTED_LIST}")
        data = read()
        if suffix in BYTE_PARSERS:  # archives, PDF, Word, XML: their parsers read the bytes
            if not data.strip():
                raise BadInput("is empty")
            result.posts.extend(BYTE_PARSERS[suffix](ctx, data))
        else:
            result.posts.extend(_parse_decoded(ctx, suffix, decode(data, ctx)))
    except BadInput as exc:
        ctx.error(str(exc))
    except RecursionError:
        ctx.error("is nested too deeply to read")
    except MemoryError:
        ctx.error("is too large to read in memory")
    except Exception as exc:  # a parser's own failure: this file is reported, the others are still read
        ctx.error(f"could not be read ({_one_line(f'{type(exc).__name__}: {exc}')})")
    result.errors.extend(ctx.errors)
    result.warnings.extend(ctx.warnings)
    result.drafts.extend(ctx.drafts)


def _parse_decoded(ctx: Context, suffix: str, text: str) -> list[Post]:
    # Every parser reads lines ending in \n (front matter is found by its lines, and old Macs end
    # them with \r); a post that is the whole file keeps the file's own line ends as its raw.
    lines = normalise_newlines(text)
    posts = PARSERS[suffix](ctx, lines)
    for post in posts:
        if post.raw is lines:
            post.raw = text
    return posts


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _read(path: Path, limit: int) -> bytes:
    """The file's bytes, refusing anything that is not a regular file without blocking on it (a FIFO
    opened for reading waits for a writer; O_NONBLOCK does not) and reading at most `limit` + 1 bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | os.O_CLOEXEC)
    except (OSError, ValueError) as exc:
        raise BadInput(_unreadable(exc)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise BadInput(f"is {_file_kind(info.st_mode)}, not a regular file; skipped")
        if info.st_size > limit:  # before reading: a huge file must not be loaded to be refused
            raise BadInput(_too_big(info.st_size, limit))
        parts, size = [], 0
        while part := os.read(fd, min(1 << 20, limit + 1 - size)):
            parts.append(part)
            size += len(part)
            if size > limit:  # it grew since stat
                raise BadInput(_too_big(size, limit))
        return b"".join(parts)
    except OSError as exc:
        raise BadInput(_unreadable(exc)) from None
    finally:
        os.close(fd)


def _unreadable(exc: BaseException) -> str:
    reason = getattr(exc, "strerror", None) or str(exc)
    return f"cannot be read ({_one_line(reason)})"


def _file_kind(mode: int) -> str:
    kinds = [
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a folder"),
    ]
    return next((name for test, name in kinds if test(mode)), "a special file")


def _too_big(size: int, limit: int) -> str:
    limit_text = f"{limit / _MB:g} MB" if limit >= _MB else f"{limit:,} bytes"
    return f"is {size / _MB:.1f} MB, over the {limit_text} limit"


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


def _walk(root: Path) -> tuple[list[tuple[Path, str]], list[ParseError]]:
    """Files under `root` in path order, with their folder collection, and the entries not read.

    Hidden entries (.git, .DS_Store, …) and media/web assets (a post's images, a theme's CSS) are
    left out quietly; any other regular file is kept (an unsupported type gets reported when read).
    Symbolic links are followed only to what lies inside `root` (each folder once, so a loop ends);
    a link out of it, a loop, a non-regular file or a name that is not UTF-8 is reported. Nothing is
    opened here: types come from stat.
    """
    inside = Path(os.path.realpath(root))
    found: list[Path] = []
    problems: list[ParseError] = []
    visited = {str(inside)}
    pending = [root]
    linked: list[tuple[Path, str]] = []  # linked folders, read after every real one (so a real one wins)
    while pending or linked:
        if not pending:
            folder, source = linked.pop(0)
            real = os.path.realpath(folder)
            if real in visited:  # a link to a folder read already, or to one it is in: a loop
                problems.append(ParseError(source, "is a link to a folder read already (a loop); skipped"))
                continue
            visited.add(real)
            pending.append(folder)
            continue
        folder = pending.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            problems.append(ParseError(display_path(folder), _unreadable(exc)))
            continue
        for entry in entries:
            name, path = entry.name, Path(entry.path)
            if name.startswith("."):
                continue
            source = display_path(path)
            if source != str(path):
                problems.append(ParseError(source, _BAD_NAME))
                continue
            try:
                link = entry.is_symlink()
                if link:
                    target = Path(os.path.realpath(path, strict=True))
                    if not target.is_relative_to(inside):
                        problems.append(ParseError(source, f"is a link to outside {root}; not followed"))
                        continue
                mode = entry.stat(follow_symlinks=True).st_mode
            except (OSError, ValueError) as exc:
                loop = isinstance(exc, OSError) and exc.errno == errno.ELOOP
                reason = "is a symbolic link loop" if loop else _unreadable(exc)
                problems.append(ParseError(source, f"{reason}; skipped"))
                continue
            if stat.S_ISDIR(mode) and link:
                linked.append((path, source))
            elif stat.S_ISDIR(mode):
                visited.add(os.path.realpath(path))
                pending.append(path)
            elif not stat.S_ISREG(mode):
                problems.append(ParseError(source, f"is {_file_kind(mode)}, not a regular file; skipped"))
            elif path.suffix.lower() not in _ASSET_SUFFIXES:
                found.append(path)
    # Sort by path components, so "a/x.md" comes before "b.md" as in a file browser (and the first of
    # two posts with the same id, the one kept, is predictable).
    found.sort(key=lambda p: p.relative_to(root).parts)
    files = []
    in_folder: dict[Path, int] = {}
    for path in found:
        in_folder[path.parent] = in_folder.get(path.parent, 0) + 1
    for path in found:
        parts = path.relative_to(root).parts
        # A Hugo leaf bundle (`posts/my-post/index.md` and its images) is one post named after its
        # folder, not a collection of its own: its folder collection is the one above, as for a
        # `posts/my-post.md` (else every bundle post was a collection, and routing split the blog).
        bundle = len(parts) == 2 and path.stem.lower() == "index" and in_folder[path.parent] == 1
        files.append((path, parts[0] if len(parts) > 1 and not bundle else DEFAULT_COLLECTION))
    return files, problems
