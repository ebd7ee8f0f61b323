"""One parser per file format, each turning a decoded file into posts (see core/parse/reader.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from core.models import Block, LeftOutDraft, Post, PreChunk
from core.parse.addresses import page_urls
from core.parse.clean import (
    html_article,
    markdown_title,
    markdown_to_blocks,
    normalise_newlines,
    shown,
    text_to_blocks,
)
from core.parse.fields import (
    FORMATS,
    URL_KEYS,
    BadInput,
    Context,
    as_date,
    as_tags,
    as_text,
    first_heading,
    front_matter,
    given_id,
    given_url,
    iso_day,
    looks_like_title,
    make_post,
    name_parts,
    plain_title,
    slug_id,
    title_from_text,
    to_blocks,
)
from core.parse.ghost import is_ghost_export, parse_ghost

_MAX_LINE_ERRORS = 10  # per .jsonl file; beyond that one summary error
_START_RE = re.compile(r"^\s*={3,}\s*POST\s+START\s*:?\s*(?P<title>.*?)\s*={3,}\s*$", re.IGNORECASE)
_END_RE = re.compile(r"^\s*={3,}\s*POST\s+END\b[^=]*={3,}\s*$", re.IGNORECASE)
_TEXT_KEYS = ("text", "content", "body")
# A bundle post's optional first line: its address on the blog.
_URL_LINE_RE = re.compile(r"^\s*URL\s*:\s*(?P<url>.*?)\s*$", re.IGNORECASE)
# Unmistakable markdown (or HTML, which the markdown reader strips) in a JSON post's text.
_MARKDOWN_SIGNS = re.compile(
    r"^ {0,3}(?:#{1,6} \S|```|~~~|> \S|[-*+] \S.*\n {0,3}[-*+] \S)"  # heading, fence, quote, 2-item list
    r"|\[[^\]\n]+\]\((?:https?://|mailto:|/|#|\.{1,2}/)"  # link to a URL or path
    r"|!\[[^\]\n]*\]\(|\*\*\S[^*\n]*\*\*"  # image, **bold**
    r"|</?(?:p|div|br|a|em|strong|h[1-6]|ul|ol|li|blockquote|img|figure)\b",
    re.MULTILINE | re.IGNORECASE,
)


def _parse_txt(ctx: Context, text: str) -> list[Post]:
    if _is_bundle(normalise_newlines(text)):
        return _parse_bundle(ctx, normalise_newlines(text), "text")
    date, title = name_parts(ctx.stem)
    blocks = text_to_blocks(text)
    if len(blocks) > 1 and looks_like_title(blocks[0].text):
        title, blocks = blocks[0].text, blocks[1:]
    post = make_post(ctx, blocks, raw=text, title=title, post_id=slug_id(ctx.stem), date=date, fmt="text")
    return [post] if post else []


def _parse_markdown(ctx: Context, text: str) -> list[Post]:
    if _is_bundle(normalise_newlines(text)):
        return _parse_bundle(ctx, normalise_newlines(text), "markdown")
    date, title = name_parts(ctx.stem)
    post = _markdown_post(ctx, text, fallback_title=title, fallback_id=slug_id(ctx.stem), fallback_date=date)
    return [post] if post else []


def _markdown_post(
    ctx: Context,
    text: str,
    *,
    fallback_title: str,
    fallback_id: str,
    fallback_date: str = "",
    title: str = "",
    where: str = "",
    url: str = "",
) -> Post | None:
    """A markdown post with optional front matter; `title` and `url` (a bundle's) beat the front matter's."""
    try:
        meta, body = front_matter(text)
    except BadInput as exc:
        ctx.error(f"{where}{exc}")
        return None
    unpublished = _draft_mark(meta)
    title = shown(title) or shown(as_text(meta.get("title"))) or markdown_title(body) or fallback_title
    given = meta.get("id", meta.get("slug"))
    try:
        post_id = given_id(given) if given not in (None, "") else fallback_id
    except BadInput as exc:
        if unpublished and not ctx.options.include_drafts:  # a draft is left out, whatever its id
            post_id = ""
        else:
            ctx.error(f"{where}{exc}")
            return None
    if unpublished and not ctx.options.include_drafts:
        ctx.warn(f"{where}is a draft (front matter {unpublished}): left out; --include-drafts reads it")
        if post_id:  # stored when it was published: the ingest removes it (core/models.py LeftOutDraft)
            ctx.drafts.append(LeftOutDraft(post_id, " ".join(title.split()), ctx.source))
        return None
    blocks = markdown_to_blocks(body)
    return make_post(
        ctx,
        blocks,
        raw=text,
        title=title,
        post_id=post_id,
        date=as_date(ctx, meta.get("date"), where) or fallback_date,
        tags=as_tags(meta.get("tags")),
        collection=meta.get("collection"),
        fmt="markdown",
        where=where,
        url=url or given_url(ctx, (meta.get(key) for key in URL_KEYS), where),
    )


def _draft_mark(meta: dict[str, Any]) -> str:
    """The front matter that marks a post unpublished, as written ("draft: true", Hugo's and others';
    "published: false", Jekyll's), else "". Such a post is not on the blog, and answers would quote it
    to any reader, so it is read only with --include-drafts, as an export's drafts are."""
    for key, unpublished in (("draft", True), ("published", False)):
        value = meta.get(key)
        if isinstance(value, str):
            value = {"true": True, "yes": True, "false": False, "no": False}.get(value.strip().lower())
        if value is unpublished:
            return f"{key}: {str(unpublished).lower()}"
    return ""


def _parse_html(ctx: Context, text: str) -> list[Post]:
    title, date, blocks = html_article(text)
    name_date, name_title = name_parts(ctx.stem)
    post = make_post(
        ctx,
        blocks,
        raw=text,
        title=title or name_title,
        post_id=slug_id(ctx.stem),
        date=iso_day(date) or name_date,
        fmt="html",
        url=given_url(ctx, page_urls(text)),
    )
    return [post] if post else []


def _parse_json(ctx: Context, text: str) -> list[Post]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise BadInput("is JSON nested too deeply to read") from None
    if is_ghost_export(data):
        return parse_ghost(ctx, data)
    if isinstance(data, dict) and isinstance(data.get("posts"), list):
        data = data["posts"]
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not data:
        raise BadInput("JSON must be a post object or a non-empty list of posts")
    return _from_objects(ctx, [(f"item {i}", item) for i, item in enumerate(data, 1)])


def _parse_jsonl(ctx: Context, text: str) -> list[Post]:
    items: list[tuple[str, Any]] = []
    bad: list[str] = []
    for number, line in enumerate(normalise_newlines(text).split("\n"), 1):
        if not line.strip():
            continue
        try:
            items.append((f"line {number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            bad.append(f"line {number} is not valid JSON ({exc.msg}, column {exc.colno}); skipped")
        except RecursionError:
            bad.append(f"line {number} is JSON nested too deeply to read; skipped")
    for message in bad[:_MAX_LINE_ERRORS]:
        ctx.error(message)
    if len(bad) > _MAX_LINE_ERRORS:
        ctx.error(f"{len(bad) - _MAX_LINE_ERRORS} more lines are not valid JSON; skipped")
    return _from_objects(ctx, items) if items else []


def _from_objects(ctx: Context, items: list[tuple[str, Any]]) -> list[Post]:
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


def _json_post(ctx: Context, obj: dict[str, Any], where: str) -> Post | None:
    texts = [as_text(obj.get(key), strip=False) for key in _TEXT_KEYS]
    text = next((t for t in texts if t.strip()), "")
    if not text:
        ctx.error(f'{where}has no text (expected a "text", "content" or "body" field)')
        return None
    fmt = as_text(obj.get("format")).lower() or _guess_format(text)
    if fmt not in FORMATS:
        ctx.error(f"{where}format must be one of {', '.join(FORMATS)}, not {fmt!r}")
        return None
    blocks = to_blocks(text, fmt)
    title = plain_title(as_text(obj.get("title"))) or first_heading(blocks) or title_from_text(blocks)
    try:
        given = obj.get("id")
        post_id = given_id(given) if given not in (None, "") else slug_id(title)
    except BadInput as exc:
        ctx.error(f"{where}{exc}")
        return None
    return make_post(
        ctx,
        blocks,
        raw=text,
        title=title,
        post_id=post_id,
        date=as_date(ctx, obj.get("date"), where),
        tags=as_tags(obj.get("tags")),
        collection=obj.get("collection"),
        fmt=fmt,
        where=where,
        url=given_url(ctx, (obj.get(key) for key in URL_KEYS), where),
    )


def _guess_format(text: str) -> str:
    return "markdown" if _MARKDOWN_SIGNS.search(text) else "text"


def _is_chunk(obj: dict[str, Any]) -> bool:
    return "source" in obj and "text" in obj and "title" not in obj


def _chunk_posts(ctx: Context, objects: list[dict[str, Any]]) -> list[Post]:
    """chunks.json: one post per `source`, chunks in file order, each kept exactly as cut."""
    # Our own exports add post_id / post_title / date / collection / tags / url so a round trip keeps each
    # post's identity, tags and address; older exports lack tags and url (none, as before).
    groups: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        key = as_text(obj.get("post_id")) or as_text(obj.get("source")) or ctx.stem
        groups.setdefault(key, []).append(obj)
    posts = []
    for key, chunks in groups.items():
        first = chunks[0]
        source = shown(as_text(first.get("post_title"))) or shown(as_text(first.get("source"))) or key
        pre = [
            PreChunk(
                text=as_text(c.get("text"), strip=False),
                section=as_text(c.get("section")),
                keywords=as_tags(c.get("keywords")),
                chunk_id=as_text(c.get("id")),
            )
            for c in chunks
            if as_text(c.get("text"))  # an empty chunk has nothing to embed
        ]
        blocks: list[Block] = []
        section = ""
        for chunk in pre:
            if chunk.section and chunk.section != section:
                blocks.append(Block(chunk.section, heading=True))
            section = chunk.section
            blocks.append(Block(chunk.text.strip()))
        post = make_post(
            ctx,
            blocks,
            raw=json.dumps(chunks, ensure_ascii=False, indent=1),
            title=source,
            post_id=given_id(first["post_id"]) if as_text(first.get("post_id")) else slug_id(source),
            date=as_text(first.get("date")),
            tags=as_tags(first.get("tags")),
            collection=first.get("collection"),
            fmt="chunks",
            where=f"source {source!r}: ",
            url=given_url(ctx, [first.get("url")], f"source {source!r}: "),
        )
        if post:
            post.prechunked = pre
            posts.append(post)
    return posts


def _is_bundle(text: str) -> bool:
    return any(_START_RE.match(line) for line in text.split("\n"))


def _parse_bundle(ctx: Context, text: str, fmt: str) -> list[Post]:
    posts = []
    for number, (title, line, raw) in enumerate(_bundle_segments(ctx, text), 1):
        where = f"post {title or number!r} (line {line}): "
        title = shown(title) or f"{name_parts(ctx.stem)[1]} {number}"
        raw, given = _url_line(raw)
        url = given_url(ctx, [given], where)
        if fmt == "markdown":  # each segment may carry its own front matter
            post = _markdown_post(
                ctx, raw, title=title, fallback_title=title, fallback_id=slug_id(title), where=where, url=url
            )
        else:
            blocks = text_to_blocks(raw)
            post = make_post(
                ctx, blocks, raw=raw, title=title, post_id=slug_id(title), fmt=fmt, where=where, url=url
            )
        if post:
            posts.append(post)
    return posts


def _url_line(body: str) -> tuple[str, str]:
    """(the body without it, the address) when a bundle post's first line is `URL: <address>`."""
    first, _, rest = body.lstrip("\n").partition("\n")
    match = _URL_LINE_RE.match(first)
    if match is None:
        return body, ""
    return rest.strip("\n"), match.group("url")


def _bundle_segments(ctx: Context, text: str) -> list[tuple[str, int, str]]:
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


PARSERS: dict[str, Callable[[Context, str], list[Post]]] = {
    ".txt": _parse_txt,
    ".md": _parse_markdown,
    ".markdown": _parse_markdown,
    ".html": _parse_html,
    ".htm": _parse_html,
    ".json": _parse_json,
    ".jsonl": _parse_jsonl,
}
