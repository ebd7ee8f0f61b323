"""Reading one source (a feed, a sitemap, a site root or a single page) into posts, politely: pages
fetched a few at a time on the source's host only (core/ingest/web/fetch.py), with the ETag and
Last-Modified each page had at the last sync, so an unchanged page answers 304 and costs nothing.
Validators are sent only for a page whose post is stored from it (`stored`): a page whose post was
refused or failed is fetched in full and reported again at every sync until it goes in. The source's
own document is read in full when asked to (`recheck`: a post it listed is missing from the table, and
its 304 would hide it), and `force` sends no validators at all.

What comes back says, besides the posts and the problems (each naming its page and reason), which
pages the source lists now (`listed`, the post ids), so a sync can tell which posts disappeared, and
whether that list is complete enough to prune by (`complete`: a feed lists only its newest posts, and
a sitemap that could not be read lists nothing for sure). The addresses of one read are named together
(pages.page_ids): two whose last segments are alike get distinct ids, a page keeps the id its post is
stored under, and a second address of the same post (`/oak/` and `/oak/index.html`) is read once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

from lxml import html

from core.ingest.report import Progress
from core.ingest.web.fetch import MAX_XML_BYTES, Fetcher, FetchError, Response, host_of
from core.ingest.web.pages import decoded, fragment_post, looks_like_html, page_ids, page_post
from core.ingest.web.sitemaps import MAX_SITEMAPS, is_sitemap_root, read_sitemap, unpacked
from core.models import LeftOutDraft, ParseError, Post
from core.parse.clean import html_fragment_to_blocks, text_to_blocks
from core.parse.feeds import MAX_ITEMS, Entry, is_feed_root, read_feed
from core.parse.safexml import BadXML, parse_xml
from core.store.sources import Source
from core.text import plural

WORKERS = 4  # pages fetched at once from one host
_XML_TYPES = ("application/rss+xml", "application/atom+xml", "application/rdf+xml", "text/xml")
_XML_OTHER = ("application/xml", "application/gzip", "application/x-gzip")
_XML_START = (b"<rss", b"<feed", b"<urlset", b"<sitemapindex", b"<rdf:rdf")


@dataclass
class SourceRead:
    kind: str
    posts: list[Post] = field(default_factory=list)
    errors: list[ParseError] = field(default_factory=list)
    warnings: list[ParseError] = field(default_factory=list)
    drafts: list[LeftOutDraft] = field(default_factory=list)  # a path's posts now marked unpublished
    items: dict[str, dict[str, str]] = field(default_factory=dict)  # as Source.items, after this read
    listed: set[str] = field(default_factory=set)  # post ids the source lists now
    complete: bool = False  # whether `listed` is the source's whole list (pruning may trust it)
    reached: bool = False  # whether the source itself was read: a feed or sitemap (a site's), a page's post
    not_modified: int = 0  # posts not read again: pages that answered 304, a 304 feed's posts
    # The source's own validators, a site's sitemap or feed, how many posts a feed gave (`feed_posts`)
    state: dict[str, Any] = field(default_factory=dict)

    def error(self, where: str, message: str) -> None:
        self.errors.append(ParseError(where, message))


def read_source(
    source: Source,
    fetcher: Fetcher | None = None,
    *,
    progress: Progress | None = None,
    max_items: int = MAX_ITEMS,
    stored: Mapping[str, str] | None = None,
    recheck: bool = False,
    force: bool = False,
) -> SourceRead:
    """The posts of `source` as it is now (see the module docstring); `stored`: the post id of each of
    its pages whose post is stored from that page (sync.stored_pages). With `recheck` the feed, sitemap
    or page itself is fetched without its validators (no 304 for it); with `force` nothing is asked
    for a 304, neither it nor its pages. Never raises for the web's failures: they are in `errors`."""
    fetcher = fetcher or Fetcher(host_of(source.url))
    reader = _Reader(source, fetcher, progress, max_items, stored or {}, recheck=recheck, force=force)
    return reader.run()


class _Reader:
    def __init__(
        self,
        source: Source,
        fetcher: Fetcher,
        progress: Progress | None,
        max_items: int,
        stored: Mapping[str, str],
        *,
        recheck: bool = False,
        force: bool = False,
    ) -> None:
        self.source = source
        self.stored = stored
        self.named = False
        self.ids: dict[str, str] = {}  # each listed address's post id (page_ids)
        self.aliases: dict[str, str] = {}  # an address -> the address of the same post that is read
        self.fetcher = fetcher
        self.progress = progress
        self.max_items = max_items
        self.out = SourceRead(source.kind)
        self.recheck = recheck or force  # fetch the source's own document in full (no 304 for it)
        self.force = force  # no 304 asked for at all: neither the source nor its pages

    def run(self) -> SourceRead:
        url, state = self.source.url, self.source.state
        target = state.get("via_url") or url  # a site reads the sitemap or feed it was found to have
        known = {} if self.recheck else state
        try:
            response = self.fetcher.get(
                target,
                etag=known.get("etag", ""),
                last_modified=known.get("last_modified", ""),
                max_bytes=MAX_XML_BYTES,
            )
        except FetchError as exc:
            self.out.error(exc.url, exc.reason)
            self.out.items = dict(self.source.items)  # nothing known changed: keep what was known
            return self.out
        self.out.state = {"etag": response.etag, "last_modified": response.last_modified}
        if state.get("via_url"):
            self.out.state["via_url"], self.out.state["via"] = state["via_url"], state.get("via", "")
        kind = state.get("via") or self.source.kind
        if response.not_modified:
            self.out.reached = True
            self.out.state["feed_posts"] = state.get("feed_posts", 0)
            if "feed_items" in state:
                self.out.state["feed_items"] = state["feed_items"]
            self._unchanged(kind)
            return self.out
        self._dispatch(kind, response)
        return self.out

    # What a response is ------------------------------------------------------------------------

    def _dispatch(self, kind: str, response: Response) -> None:
        if _is_xml(response):
            self._xml(response)
        elif not looks_like_html(response):
            what = response.content_type or "no content type"
            self.out.error(response.url, f"not a feed, sitemap or web page ({what}): skipped")
        elif kind in ("", "auto", "site") and urlsplit(response.url).path in ("", "/"):
            self._site(response)
        else:
            self.out.kind = "page"
            self.out.complete = True
            self._pages({self.source.url: ""}, first={self.source.url: response})
            self.out.reached = bool(self.out.posts)

    def _xml(self, response: Response) -> None:
        try:
            data = unpacked(response.body, MAX_XML_BYTES)
            root = parse_xml(data)
        except BadXML as exc:
            self.out.error(response.url, str(exc))
            self.out.items = dict(self.source.items)
            return
        if is_feed_root(root):
            self.out.kind = self.out.kind if self.source.state.get("via") else "feed"
            self._feed(response.url, data, root)
        elif is_sitemap_root(root):
            self.out.kind = self.out.kind if self.source.state.get("via") else "sitemap"
            self._sitemap(response.url, data, root)
        else:
            self.out.error(response.url, "XML, but neither a feed (RSS/Atom) nor a sitemap: skipped")

    def _unchanged(self, kind: str) -> None:
        """The source document answered 304: its list is the one of the last sync."""
        self.out.kind = self.source.kind
        if kind in ("feed", "page"):  # the feed's entries, or the page itself, are as they were
            # A feed counts the posts its last full read gave (a window: not every post ever known).
            feed = self.source.state.get("feed_posts") or len(self.source.items)
            self.out.not_modified += feed if kind == "feed" else 1
            self.out.items = dict(self.source.items)
            self.out.listed = {item["post_id"] for item in self.source.items.values()}
            self.out.complete = kind == "page"
            return
        pages = {page: "" for page in self.source.items}
        self.out.complete = True
        self._pages(pages)

    # A site root: its sitemap or feed ----------------------------------------------------------

    def _site(self, response: Response) -> None:
        self.out.kind = "site"
        for candidate in [*self.fetcher.sitemaps(response.url), urljoin(response.url, "/sitemap.xml")]:
            try:
                found = self.fetcher.get(candidate, max_bytes=MAX_XML_BYTES)
                data = unpacked(found.body, MAX_XML_BYTES)
                root = parse_xml(data)
            except (FetchError, BadXML):
                continue  # the next candidate; none found is said below
            if is_sitemap_root(root):
                self.out.state.update(via_url=found.url, via="sitemap")
                self._sitemap(found.url, data, root)
                return
        feed = _feed_link(response)
        if feed:
            try:
                found = self.fetcher.get(feed, max_bytes=MAX_XML_BYTES)
                data = unpacked(found.body, MAX_XML_BYTES)
                root = parse_xml(data)
            except (FetchError, BadXML) as exc:
                self.out.error(feed, getattr(exc, "reason", str(exc)))
                return
            self.out.state.update(via_url=found.url, via="feed")
            self._feed(found.url, data, root)
            return
        self.out.error(
            response.url, "no sitemap (robots.txt, /sitemap.xml) or feed link found: give a feed's address"
        )

    # Sitemaps ----------------------------------------------------------------------------------

    def _sitemap(self, url: str, data: bytes, root: Any) -> None:
        self.out.reached = True
        pages: dict[str, str] = {}
        queue, seen, complete = [(url, data, root)], {url}, True
        while queue:
            where, body, tree = queue.pop(0)
            try:
                found = read_sitemap(body, tree)
            except BadXML as exc:
                self.out.error(where, str(exc))
                complete = False
                continue
            for page, lastmod in found.pages.items():
                pages.setdefault(page, lastmod)
            for child in found.children:
                if child in seen:
                    continue
                seen.add(child)
                if len(seen) > MAX_SITEMAPS:
                    self.out.error(child, f"more than {MAX_SITEMAPS} sitemaps in the index: not read")
                    complete = False
                    continue
                try:
                    got = self.fetcher.get(child, max_bytes=MAX_XML_BYTES)
                    child_data = unpacked(got.body, MAX_XML_BYTES)
                    queue.append((child, child_data, parse_xml(child_data)))
                except (FetchError, BadXML) as exc:
                    self.out.error(child, getattr(exc, "reason", str(exc)))
                    complete = False
        self.out.complete = complete
        self._pages(pages)

    # Pages -------------------------------------------------------------------------------------

    def _pages(self, pages: dict[str, str], first: dict[str, Response] | None = None) -> None:
        """Fetch the pages (a few at a time) and read each one's post; `first`: pages fetched already."""
        first = first or {}
        on_host = {}
        for page, lastmod in pages.items():
            if host_of(page) != self.fetcher.host:
                self.out.error(page, f"on another host ({host_of(page)}) than the source: refused")
                continue
            on_host[page] = lastmod
        ids = self._name(on_host)
        for page in [p for p in on_host if self._alias(p)]:
            del on_host[page]
        self.out.listed.update(ids[page] for page in on_host)
        todo = list(on_host.items())
        if len(todo) > self.max_items:
            self.out.error(
                self.source.url,
                f"lists {len(todo):,} pages; only the first {self.max_items:,} were read (the limit)",
            )
            todo = todo[: self.max_items]

        def one(
            item: tuple[str, str],
        ) -> tuple[str, Post | None, dict[str, str] | None, FetchError | str | None]:
            page, lastmod = item
            # A page whose post is not stored from it (refused, failed, deleted) must not hide behind
            # a 304; nor any page under --force.
            prior = self.source.items.get(page, {}) if page in self.stored and not self.force else {}
            try:
                response = first.get(page) or self.fetcher.get(
                    page, etag=prior.get("etag", ""), last_modified=prior.get("last_modified", "")
                )
            except FetchError as exc:
                return page, None, None, exc
            if response.not_modified:
                return page, None, dict(prior), None
            try:
                post = page_post(response, collection=self.source.collection, date=lastmod)
            except ValueError as exc:
                return page, None, None, str(exc)
            post.post_id = ids[page]  # the listed address names the post, wherever it redirects
            item = {
                "post_id": post.post_id,
                "source": post.source,
                "etag": response.etag,
                "last_modified": response.last_modified,
            }
            return page, post, item, None

        self._run(todo, one, "page")

    def _run(self, todo: list, one: Callable, noun: str) -> None:
        done = 0
        total = len(todo)
        if self.progress and total:
            self.progress(0, total, f"fetching {plural(total, noun)}")
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            for page, post, item, problem in pool.map(one, todo):
                done += 1
                if self.progress:
                    self.progress(done, total, f"fetched {done:,} of {plural(total, noun)}")
                self._collect(page, post, item, problem)

    def _collect(self, page: str, post: Post | None, item: dict | None, problem: Any) -> None:
        if problem is not None:
            reason = problem.reason if isinstance(problem, FetchError) else str(problem)
            self.out.error(page, reason)
            prior = self.source.items.get(page)
            gone = isinstance(problem, FetchError) and problem.gone
            post_id = self.ids[page]
            if prior and not gone:  # a passing failure: the post is still there, fetched in full next time
                self.out.items[page] = {**prior, "post_id": post_id, "etag": "", "last_modified": ""}
            if gone:
                self.out.listed.discard(post_id)
            return
        if item is None:
            return
        self.out.items[page] = item
        if post is None:
            self.out.not_modified += 1
        else:
            self.out.posts.append(post)

    def _name(self, urls: Iterable[str]) -> dict[str, str]:
        """The post ids of this read's addresses, named together the first time (page_ids)."""
        if not self.named:
            self.ids, self.aliases = page_ids(urls, self.stored)
            self.named = True
        return self.ids

    def _alias(self, url: str) -> bool:
        """Whether `url` is a second address of a post read from another one (then warned about)."""
        other = self.aliases.get(url)
        if other is not None:
            self.out.warnings.append(
                ParseError(url, f"the same post as {other} (post id {self.ids[other]!r}): read from there")
            )
        return other is not None

    # Feeds -------------------------------------------------------------------------------------

    def _feed(self, url: str, data: bytes, root: Any) -> None:
        self.out.reached = True
        feed = read_feed(data, self.max_items, root)
        for problem in feed.problems:
            self.out.warnings.append(ParseError(url, problem))
        if feed.total > self.max_items:
            self.out.error(
                url,
                f"has {feed.total:,} entries; only the newest {self.max_items:,} were read (the limit)",
            )
        fetch: list[tuple[str, str]] = []
        self._name(entry.link for entry in feed.entries if entry.link)
        for entry in feed.entries:
            if self._alias(entry.link):
                continue
            if entry.content is None and entry.link:
                fetch.append((entry.link, entry.date))
                continue
            post = self._entry_post(url, entry)
            if post is not None:
                self.out.posts.append(post)
                self.out.items[post.source] = {"post_id": post.post_id, "source": post.source}
        if fetch:
            self._pages(dict(fetch))
        self.out.state["feed_posts"] = len(self.out.items)
        # What the feed lists now, apart from the posts that fell off it and are still remembered
        # (sync.lost_posts: only these are looked for when the feed answers 304).
        self.out.state["feed_items"] = list(self.out.items)
        self.out.complete = False  # a feed lists its newest posts only: never prune by it

    def _entry_post(self, feed_url: str, entry: Entry) -> Post | None:
        where = entry.link or f"{feed_url} (entry {entry.title!r})"
        text = entry.content or ""
        blocks = text_to_blocks(text) if entry.content_type == "text/plain" else html_fragment_to_blocks(text)
        if not any(not b.heading for b in blocks):
            self.out.error(where, "the entry has no text")
            return None
        post = fragment_post(
            text,
            url=entry.link,
            title=entry.title,
            date=entry.date,
            tags=entry.tags,
            collection=self.source.collection,
            blocks=blocks,
        )
        post.source = where
        if entry.link:
            post.post_id = self.ids[entry.link]
        return post


def _is_xml(response: Response) -> bool:
    """Whether the response is XML (or gzip): by its content type, or by how a feed or sitemap begins
    (servers label feeds text/html or text/plain often enough)."""
    kind = response.content_type
    if (
        kind in _XML_TYPES
        or kind in _XML_OTHER
        or (kind.endswith("+xml") and kind != "application/xhtml+xml")
    ):
        return True
    head = response.body[:512].lstrip().lower()
    if head.startswith(b"<?xml"):
        head = head[head.find(b"?>") + 2 :].lstrip()
        while head.startswith(b"<!--") or head.startswith(b"<?"):  # comments, a stylesheet line
            head = head[head.find(b">") + 1 :].lstrip()
    return head.startswith(_XML_START) or response.body.startswith(b"\x1f\x8b")


def _feed_link(response: Response) -> str:
    """The feed a page's head links to (`<link rel="alternate" type="application/rss+xml">`), or ''."""
    try:
        tree = html.document_fromstring(decoded(response))
    except Exception:  # lxml's ParserError on an empty or odd page: no link
        return ""
    for link in tree.xpath("//link[@rel='alternate'][@href]"):
        if (link.get("type") or "").lower() in ("application/rss+xml", "application/atom+xml"):
            return urljoin(response.url, link.get("href"))
    return ""
