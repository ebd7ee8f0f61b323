"""Remembered sources, kept in sync: `ingest_url` reads a new address and remembers it, `sync_sources`
reads every remembered source again. Changed posts go through the ordinary per-post upsert
(core/ingest/pipeline.py), so an unchanged post costs no embedding and an edited one re-embeds only its
changed chunks; pages that answer 304 are not even read. A source whose sync had a failure is read in
full next time (its own ETag / Last-Modified are not kept), and a page is asked for a 304 only while its
post is stored from it, so what failed or was refused is fetched and reported again. A feed or page
whose 304 would hide a post it listed that is in no row of the posts table (deleted by hand, undone,
lost) is read in full instead, so the post comes back (counted as new). With `prune`,
posts that a source no longer lists are deleted (one logged change per source, undoable); without it
they are only named.

Pruning trusts only a complete list: a sitemap (or a site's sitemap) read without errors, a single
page that answers 404/410, or a local path (core/ingest/web/local.py) that exists. A feed lists only its
newest posts, so posts that fell off it are never pruned; a sitemap that could not be read, or a path
that is gone, prunes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from core.config import Settings
from core.embed import Embedder
from core.ingest.pipeline import ingest_posts
from core.ingest.report import IngestReport, Progress
from core.ingest.web.fetch import Fetcher, check_url, host_of
from core.ingest.web.local import KIND as PATH_KIND
from core.ingest.web.local import path_source, read_path, settle_items, source_path
from core.ingest.web.read import SourceRead, read_source
from core.parse import ImportOptions
from core.parse.feeds import MAX_ITEMS
from core.store import Store
from core.store.schema import PostState
from core.store.sources import Source, Sources, now
from core.text import plural


@dataclass
class SourceOutcome:
    """What one source's sync did: the ingest report, and the posts it no longer lists (`gone`, as
    (post id, address)), deleted when `pruned`."""

    source: Source
    read: SourceRead
    report: IngestReport
    gone: list[tuple[str, str]] = field(default_factory=list)
    pruned: bool = False
    notes: list[str] = field(default_factory=list)
    remembered: bool = False

    @property
    def ok(self) -> bool:
        return self.report.ok

    def summary(self) -> str:
        r = self.report
        parts = [
            f"{r.count('new')} new, {r.count('updated')} updated, "
            f"{r.count('unchanged') + self.read.not_modified} unchanged, {r.failed} failed",
            f"{plural(r.chunks_embedded, 'chunk')} embedded",
        ]
        if self.gone:
            parts.append(
                f"{len(self.gone)} removed"
                if self.pruned
                else f"{len(self.gone)} gone (sync --prune removes)"
            )
        return "; ".join(parts + self.notes)

    def to_json(self) -> dict:
        return {
            **self.source.to_json(),
            "not_modified": self.read.not_modified,
            "gone": [{"post_id": p, "url": u} for p, u in self.gone],
            "pruned": self.pruned,
            "remembered": self.remembered,
            "report": self.report.to_json(),
        }


@dataclass
class SyncReport:
    outcomes: list[SourceOutcome] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outcomes)

    @property
    def chunks_embedded(self) -> int:
        return sum(o.report.chunks_embedded for o in self.outcomes)

    def to_json(self) -> dict:
        return {"ok": self.ok, "sources": [o.to_json() for o in self.outcomes]}


def ingest_url(
    url: str,
    settings: Settings,
    *,
    collection: str | None = None,
    store: Store | None = None,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
    fetcher: Fetcher | None = None,
    max_items: int = MAX_ITEMS,
    remember: bool = True,
    force: bool = False,
) -> SourceOutcome:
    """Read a feed, sitemap, site or page at `url`, ingest its posts, and (with `remember`) keep it as
    a source for `sync_sources`: a new address only if it could be read (not one that is down, a 404,
    not a feed, sitemap or page), a remembered one whatever this read gave (its failure may pass). A
    source already remembered is synced (its collection kept unless `collection` is given). `force`:
    no conditional request (every page read in full) and every post re-processed, as ingest_posts's
    `force`. ValueError for an address that is not http(s)."""
    store = store or Store(settings.data_dir)
    url = check_url(url)
    known = Sources(store).get(url)
    source = known or Source(url, "auto", collection or "writings")
    if collection:
        source.collection = collection
    return _sync_one(
        source,
        settings,
        store,
        embedder,
        progress,
        fetcher,
        max_items,
        False,
        remember,
        force,
        new=known is None,
    )


def ingest_path(
    path: str,
    settings: Settings,
    *,
    collection: str | None = None,
    options: ImportOptions | None = None,
    store: Store | None = None,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
    force: bool = False,
    replace: bool = False,
) -> SourceOutcome:
    """Ingest a local folder or export file and remember it (by its absolute path) for `sync_sources`,
    which reads it again with the same collection and `options` (drafts, pages, members-only posts); a
    path remembered already is synced, with these from now on. `force` and `replace` apply to this
    ingest only (see ingest_posts)."""
    store = store or Store(settings.data_dir)
    known = Sources(store).get(source_path(path))
    source = path_source(path, known, collection=collection, options=options)
    return _sync_one(
        source, settings, store, embedder, progress, None, MAX_ITEMS, False, True, force, replace
    )


def sync_sources(
    settings: Settings,
    *,
    store: Store | None = None,
    embedder: Embedder | None = None,
    prune: bool = False,
    progress: Progress | None = None,
    fetchers: dict[str, Fetcher] | None = None,
    max_items: int = MAX_ITEMS,
) -> SyncReport:
    """Read every remembered source again and ingest what changed (see the module docstring);
    `fetchers`: per host, for tests that need short time limits."""
    store = store or Store(settings.data_dir)
    report = SyncReport()
    for source in Sources(store).all():
        fetcher = (fetchers or {}).get(host_of(source.url))
        report.outcomes.append(
            _sync_one(source, settings, store, embedder, progress, fetcher, max_items, prune, True)
        )
    return report


def _sync_one(
    source: Source,
    settings: Settings,
    store: Store,
    embedder: Embedder | None,
    progress: Progress | None,
    fetcher: Fetcher | None,
    max_items: int,
    prune: bool,
    remember: bool,
    force: bool = False,
    replace: bool = False,
    new: bool = False,
) -> SourceOutcome:
    if source.kind == PATH_KIND:
        read = read_path(source)
    else:
        states = store.post_states() if source.items or source.state.get("gone") else {}
        read = read_source(
            source,
            fetcher,
            progress=progress,
            max_items=max_items,
            stored=stored_pages(source, store, states),
            recheck=bool(lost_posts(source, states)),
            force=force,
        )
    report = ingest_posts(
        read.posts,
        settings,
        store=store,
        embedder=embedder,
        progress=progress,
        errors=read.errors,
        warnings=read.warnings,
        label=f"{'ingest' if new else 'sync'} of {source.url}"[:200],
        force=force,
        replace=replace,
        drafts=read.drafts,
    )
    if source.kind == PATH_KIND:
        settle_items(read, store)
    failed = {o.post_id for o in report.outcomes if o.status == "failed"}
    for item in read.items.values():
        if item.get("post_id") in failed:  # not stored as it is now: read it in full next time
            item["etag"] = item["last_modified"] = ""
    outcome = SourceOutcome(source, read, report)
    outcome.gone = _gone(source, read, store)
    if outcome.gone and prune:
        if read.complete:
            store.delete_posts([p for p, _ in outcome.gone], label=f"prune of {source.url}"[:200])
            outcome.pruned = True
        else:
            outcome.notes.append("not pruned: the source's list could not be read whole")
    if not read.complete and read.kind == "feed" and prune:
        outcome.notes.append("a feed lists only its newest posts: nothing is pruned by it")
    if remember and new and not read.reached:
        outcome.notes.append("not remembered: the address could not be read")
    elif remember:
        if source.kind == "auto" and not read.reached:  # remembered by an earlier version, never read
            outcome.notes.append("never read yet: `inkwell sources --remove` forgets it")
        _remember(source, read, outcome)
        Sources(store).save(source)
        outcome.remembered = True
    return outcome


def stored_pages(
    source: Source, store: Store, states: Mapping[str, PostState] | None = None
) -> dict[str, str]:
    """The post id of each page of `source` (listed now or gone) whose post is stored from that page,
    by its listed address or the one it redirected to; `states`: store.post_states(), if read already."""
    if not source.items and not source.state.get("gone"):
        return {}  # a new source: no need to scan the posts table
    states = store.post_states() if states is None else states
    stored = {}
    for page, item in {**source.state.get("gone", {}), **source.items}.items():
        state = states.get(item.get("post_id", ""))
        if state is not None and state.source in (page, item.get("source", page)):
            stored[page] = item["post_id"]
    return stored


def lost_posts(source: Source, states: Mapping[str, PostState]) -> list[str]:
    """The posts `source` listed at its last read that are in no row of the posts table (`states`:
    store.post_states()) — deleted by hand, undone, lost — when its own 304 would hide them: a feed
    (or a site read through its feed) or a single page, whose 304 stands for all it lists. A sitemap's
    304 needs no such care: its pages are asked again one by one, a 304 only from those whose post is
    stored. A feed's posts that fell off it are not looked for (it no longer lists them; reading it
    would not bring them back)."""
    if (source.state.get("via") or source.kind) not in ("feed", "page"):
        return []
    listed = source.state.get("feed_items")  # absent for a feed remembered before it was kept
    items = source.items if listed is None else {p: source.items[p] for p in listed if p in source.items}
    return [i["post_id"] for i in items.values() if i.get("post_id") and i["post_id"] not in states]


def _gone(source: Source, read: SourceRead, store: Store) -> list[tuple[str, str]]:
    """Posts the last sync had from this source that it no longer lists, and that are still stored
    from it (a post since ingested from elsewhere is not this source's to remove)."""
    if not read.complete:
        return []
    states = store.post_states()
    gone = []
    for page, item in {**source.state.get("gone", {}), **source.items}.items():
        post_id = item.get("post_id", "")
        stored = states.get(post_id) if post_id and post_id not in read.listed else None
        if stored is not None and stored.source in (page, item.get("source", page)):
            gone.append((post_id, page))
    return gone


def _remember(source: Source, read: SourceRead, outcome: SourceOutcome) -> None:
    """The source as this sync leaves it: kind, validators (only when nothing failed), pages (minus the
    pruned ones), result."""
    pruned = {p for p, _ in outcome.gone} if outcome.pruned else set()
    source.kind = read.kind if read.kind not in ("", "auto") else source.kind
    items = {page: item for page, item in read.items.items() if item.get("post_id") not in pruned}
    if not read.complete and read.kind == "feed":
        # Posts that fell off the feed stay known: the feed is a window, not the whole blog.
        items = {**{p: i for p, i in source.items.items() if i.get("post_id") not in pruned}, **items}
    # Gone but not pruned: remembered apart, so a later `sync --prune` still knows them.
    known = {**source.state.get("gone", {}), **source.items}
    kept = {page: known[page] for _, page in outcome.gone if not outcome.pruned and page in known}
    state = {k: v for k, v in read.state.items() if v}
    if not outcome.ok:
        # Something it lists failed (a 404, a timeout, a refused post): without the source's own
        # validators the next sync reads its list in full, so the failed entries are tried again
        # instead of hiding behind a 304 (the pages that did go in still answer 304 by their own).
        state.pop("etag", None)
        state.pop("last_modified", None)
    source.state = {**state, "items": items, "gone": kept}
    source.synced_at = now()
    source.ok = outcome.ok
    source.result = outcome.summary()
