"""RSS 2.0, RSS 1.0 and Atom feeds through feedparser, after the hardened XML check (safexml): each
entry's address, title (as text: an html or xhtml title keeps its words only), date, tags, and its full
content when the feed carries it (`content:encoded`, Atom `<content>`), else None, for the caller to
read the linked page instead."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element, tostring

import feedparser

from core.ingest.web.safexml import local_name, parse_xml
from core.parse.fields import plain_title

MAX_ITEMS = 1000  # entries read from one feed (or pages from one sitemap); the rest is named, not read
_FEED_ROOTS = frozenset({"rss", "feed", "rdf"})
_ENTRY_TAGS = frozenset({"item", "entry"})
_MARKUP_TYPES = frozenset({"text/html", "application/xhtml+xml"})


@dataclass(frozen=True)
class Entry:
    link: str
    title: str
    date: str  # YYYY-MM-DD or ""
    tags: list[str]
    content: str | None  # the full HTML (or text) of the post, None when the feed has only a summary
    content_type: str = "text/html"


@dataclass
class Feed:
    title: str
    entries: list[Entry] = field(default_factory=list)
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
    feed = Feed(title=str(parsed.feed.get("title", "")), total=total)
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
    )
