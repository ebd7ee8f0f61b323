"""A web page (or a feed entry's HTML) as a Post: the article text through trafilatura
(core/parse/clean.html_article), the title, date and tags the page states, its address as `url`, and an
id from the address's last path segment, the way a file's id comes from its name (from more of its path
when another address of the same source ends alike: `page_ids`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from lxml import html

from core.ingest.web.fetch import Response
from core.models import Block, Post
from core.parse.clean import html_article
from core.parse.feeds import path_post_id, url_post_id
from core.parse.fields import DEFAULT_COLLECTION, slug_id

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([\w-]+)""", re.IGNORECASE)


def page_ids(urls: Iterable[str], stored: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(post id of each address, {address: the address it names the same post as}) for the addresses
    one source lists. An address keeps the id its post is stored under (`stored`); any other gets
    `url_post_id`, unless an address before it (stored ones first, then in address order) has that id:
    then it gets `path_post_id`, so `/2023/12/year-in-review/` stays 'year-in-review' and
    `/2024/12/year-in-review/` becomes '2024-12-year-in-review'. Addresses whose whole paths are alike
    too (`/oak/`, `/oak/index.html`) are one post under two addresses: the later is an alias, no id."""
    ids: dict[str, str] = {}
    aliases: dict[str, str] = {}
    holders: dict[str, str] = {}  # post id -> the address that has it
    for url in sorted(dict.fromkeys(urls), key=lambda u: (u not in stored, u)):
        post_id = stored.get(url) or url_post_id(url)
        holder = holders.get(post_id)
        if holder is not None:
            post_id = path_post_id(url)
            if post_id == path_post_id(holder) or post_id in holders:
                aliases[url] = holders.get(post_id, holder)
                continue
        holders[post_id] = url
        ids[url] = post_id
    return ids, aliases


def decoded(response: Response) -> str:
    """The body as text: the charset the server or the page's <meta> names, else UTF-8 (bad bytes
    replaced, never fatal)."""
    charset = response.charset
    if not charset:
        found = _META_CHARSET.search(response.body[:4096])
        charset = found.group(1).decode("ascii") if found else "utf-8"
    try:
        return response.body.decode(charset, "replace")
    except LookupError:  # a charset Python does not know
        return response.body.decode("utf-8", "replace")


def looks_like_html(response: Response) -> bool:
    if response.content_type in HTML_TYPES:
        return True
    head = response.body[:512].lstrip().lower()
    return not response.content_type and head.startswith((b"<!doctype html", b"<html"))


def page_post(response: Response, *, collection: str = DEFAULT_COLLECTION, date: str = "") -> Post:
    """The post on an HTML page; ValueError naming why not (not HTML, no article text)."""
    if not looks_like_html(response):
        kind = response.content_type or "none given"
        raise ValueError(f"not an HTML page (content type {kind}): skipped")
    page = decoded(response)
    title, found_date, blocks = html_article(page)
    if not any(not b.heading for b in blocks):
        raise ValueError("no article text found on the page")
    return Post(
        post_id=url_post_id(response.url),
        title=" ".join(title.split()) or url_post_id(response.url),
        blocks=blocks,
        raw=page,
        source=response.url,
        collection=collection,
        date=(found_date or date)[:10],
        tags=page_tags(page),
        format="html",
        url=response.url,
    )


def page_tags(page: str) -> list[str]:
    """The tags a page states: `article:tag` meta properties, else its `keywords` meta."""
    try:
        tree = html.document_fromstring(re.sub(r"^\s*<\?xml[^>]*>", "", page))
    except (ValueError, Exception):  # lxml's ParserError and friends: no tags, not a failure
        return []
    tags = [m.get("content", "").strip() for m in tree.xpath("//meta[@property='article:tag']")]
    if not any(tags):
        keywords = tree.xpath("string(//meta[@name='keywords']/@content)")
        tags = [t.strip() for t in str(keywords).split(",")]
    return list(dict.fromkeys(t for t in tags if t))[:20]


def fragment_post(
    html_text: str,
    *,
    url: str,
    title: str,
    date: str,
    tags: list[str],
    collection: str,
    blocks: list[Block],
) -> Post:
    """A feed entry's post from its own HTML content (already cleaned to `blocks`)."""
    return Post(
        post_id=url_post_id(url) if url else slug_id(title),
        title=" ".join(title.split()) or url_post_id(url),
        blocks=blocks,
        raw=html_text,
        source=url,
        collection=collection,
        date=date,
        tags=tags,
        format="html",
        url=url,
    )
