"""RSS 2.0, RSS 1.0 and Atom feeds through feedparser, after the hardened XML check (safexml): each
entry's address, title (as text: an html or xhtml title keeps its words only), date, tags, and its full
content when the feed carries it (`content:encoded`, Atom `<content>`), else None, for the caller to
read the linked page instead (core/ingest/web/read.py), and its summary (`description`, `<summary>`).

A feed saved as a file (`feed.xml`) has no pages to read: `feed_file_posts` makes each entry a post from
its own content, else its summary. Post ids come from addresses as a file's come from its name
(`url_post_id`), for feed entries here and for web pages (core/ingest/web/pages.py).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from urllib.parse import unquote, urljoin, urlsplit
from xml.etree.ElementTree import Element, tostring

import feedparser

from core.models import Post
from core.parse.clean import html_fragment_to_blocks, text_to_blocks
from core.parse.fields import Context, given_url, make_post, plain_title, slug_id, title_from_text
from core.parse.safexml import local_name, parse_xml

MAX_ITEMS = 1000  # entries read from one feed (or pages from one sitemap); the rest is named, not read
_FEED_ROOTS = frozenset({"rss", "feed", "rdf"})
_ENTRY_TAGS = frozenset({"item", "entry"})
_MARKUP_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_PAGE_SUFFIX = re.compile(r"\.(?:html?|php|aspx?)$", re.IGNORECASE)
_INDEX = frozenset({"index", "default", "index.html", "index.htm"})


@dataclass(frozen=True)
class Entry:
    link: str
    title: str
    date: str  # YYYY-MM-DD or ""
    tags: list[str]
    content: str | None  # the full HTML (or text) of the post, None when the feed has only a summary
    content_type: str = "text/html"
    summary: str = ""  # RSS <description>, Atom <summary> (HTML or text): "" when none
    summary_type: str = "text/html"


@dataclass
class Feed:
    title: str
    entries: list[Entry] = field(default_factory=list)
    link: str = ""  # the site's address the feed gives (RSS <link>, Atom <link rel="alternate">)
    total: int = 0  # entries the feed has, read or not
    problems: list[str] = field(default_factory=list)  # e.g. recovered from malformed XML


def is_feed_root(root: Element) -> bool:
    return local_name(root) in _FEED_ROOTS


def read_feed(data: bytes, max_items: int = MAX_ITEMS, root: Element | None = None) -> Feed:
    """The feed's entries, the first `max_items` of them (feeds list the newest first); BadXML for
    hostile or malformed XML (from parse_xml)."""
    root = root if root is not None else parse_xml(data)
    total = _trim(root, max_items)
    parsed = feedparser.parse(tostring(root) if total > max_items else data, sanitize_html=True)
    feed = Feed(title=str(parsed.feed.get("title", "")), total=total, link=str(parsed.feed.get("link") or ""))
    if parsed.get("bozo") and parsed.get("bozo_exception") is not None:
        feed.problems.append(f"read despite: {parsed.bozo_exception}")
    feed.entries = [_entry(e) for e in parsed.entries[:max_items]]
    return feed


def _trim(root: Element, max_items: int) -> int:
    """How many entries the feed has; those past `max_items` are dropped from the tree, so feedparser
    never walks a 10,000-item feed."""
    parents = [root, *(child for child in root if local_name(child) == "channel")]
    total = 0
    for parent in parents:
        for child in list(parent):
            if local_name(child) in _ENTRY_TAGS:
                total += 1
                if total > max_items:
                    parent.remove(child)
    return total


def _entry(raw: dict) -> Entry:
    content = None
    content_type = "text/html"
    for part in raw.get("content") or []:
        value = part.get("value") or ""
        if value.strip():
            content, content_type = value, part.get("type") or "text/html"
            break
    when = raw.get("published_parsed") or raw.get("updated_parsed")
    title = str(raw.get("title") or "")
    # feedparser hands an html/xhtml title (Atom's type="html", an RSS title it finds markup in) back
    # as markup, its entities still escaped once: keep the words.
    if (raw.get("title_detail") or {}).get("type") in _MARKUP_TYPES:
        title = plain_title(title)
    return Entry(
        link=str(raw.get("link") or "").strip(),
        title=" ".join(title.split()),
        date=time.strftime("%Y-%m-%d", when) if when else "",
        tags=[t["term"].strip() for t in raw.get("tags") or [] if (t.get("term") or "").strip()],
        content=content,
        content_type=content_type,
        summary=str(raw.get("summary") or ""),
        summary_type=(raw.get("summary_detail") or {}).get("type") or "text/html",
    )


def feed_file_posts(ctx: Context, root: Element, data: bytes) -> list[Post]:
    """The posts of a feed saved as a file (`root` its parsed XML): one per entry, from its content,
    else its summary, titled, dated and tagged as the entry is, its link as the post's address. An
    entry with neither is an error naming it (its page can be read by ingesting the feed's address)."""
    feed = read_feed(data, root=root)
    for problem in feed.problems:
        ctx.warn(problem)
    if feed.total > MAX_ITEMS:
        ctx.warn(f"has {feed.total:,} entries; only the first {MAX_ITEMS:,} were read (the limit)")
    posts = []
    for number, entry in enumerate(feed.entries, 1):
        where = f"entry {entry.title or number!r}: "
        post = _entry_file_post(ctx, entry, where, feed.link)
        if post is not None:
            posts.append(post)
    return posts


def _entry_file_post(ctx: Context, entry: Entry, where: str, site: str = "") -> Post | None:
    text, kind = (entry.content, entry.content_type) if entry.content else (entry.summary, entry.summary_type)
    if not text.strip():
        ctx.error(
            f"{where}has no content or summary in the file"
            + (
                f" (its page, {entry.link}, is read when the feed is ingested by its address)"
                if entry.link
                else ""
            )
        )
        return None
    plain = kind == "text/plain"
    blocks = text_to_blocks(text) if plain else html_fragment_to_blocks(text)
    link = entry.link
    if link and not urlsplit(link).scheme and urlsplit(site).scheme in ("http", "https"):
        link = urljoin(site, link)  # "/posts/fish/" on the site the feed names: a file has no address
    url = given_url(ctx, [link], where)
    title = entry.title or title_from_text(blocks)
    return make_post(
        ctx,
        blocks,
        raw=text,
        title=title,
        post_id=url_post_id(url) if urlsplit(url).hostname else slug_id(title),
        fmt="text" if plain else "html",
        date=entry.date,
        tags=entry.tags,
        where=where,
        url=url,
    )


def url_post_id(url: str) -> str:
    """The post id of an address: the slug of its last path segment ('/2021/05/my-post/' and
    '/my-post.html' → 'my-post'), as a file `my-post.md` gets 'my-post'; the host for a site's root."""
    segments = _segments(url)
    return slug_id(segments[-1] if segments else urlsplit(url).hostname or url)


def path_post_id(url: str) -> str:
    """The slug of the address's whole path ('/2024/12/year-in-review/' → '2024-12-year-in-review');
    the host for a site's root."""
    segments = _segments(url)
    return slug_id(" ".join(segments) if segments else urlsplit(url).hostname or url)


def _segments(url: str) -> list[str]:
    """The address's path segments, without an index page's name and a page suffix ('.html', '.php')."""
    segments = [unquote(s) for s in urlsplit(url).path.split("/") if s]
    while segments and _PAGE_SUFFIX.sub("", segments[-1]).lower() in _INDEX:
        segments.pop()
    return [*segments[:-1], _PAGE_SUFFIX.sub("", segments[-1])] if segments else []
