"""Ingestion: posts → chunks → keywords → vectors → LanceDB, idempotently.

A post whose content, metadata and chunking settings are unchanged is skipped without any work. A
changed post is re-chunked; each chunk's vector is looked up by a hash of (model, embedded text) and
only new texts are embedded, so editing one paragraph re-embeds one chunk. Posts are written in
windows, each window one atomic commit, so a run killed half-way keeps every finished window and
leaves no partial post.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from core.chunk import add_keywords, chunk_post, post_terms
from core.config import Settings
from core.embed import (
    Embedder,
    chunk_embedded_text,
    content_hash,
    embedder_for_new_table,
    embedder_for_store,
    language_shares,
    readers_mismatch,
)
from core.ingest.report import IngestReport, PostOutcome, Progress
from core.ingest.timed import POST_TIME_LIMIT, TimedEmbedder
from core.models import Chunk, LeftOutDraft, ParseError, Post
from core.parse import ImportOptions, parse_paths
from core.parse.addresses import permalink_url, resolve_url
from core.parse.exported import PLATFORMS, export_stamp
from core.parse.platforms import NOT_AN_EXPORT, ExportFile, export_file
from core.store import CommitConflictError, Store, StoreError
from core.store.corpus import write_corpus_language
from core.store.schema import PostState
from core.text import check_reader_languages, plural

if TYPE_CHECKING:
    from core.prepare import LLMPrepOptions, Prepared

# Bump when chunking or keyword logic changes in a way that should re-process stored posts.
PIPELINE_VERSION = "1"
WINDOW_CHUNKS = 256
LARGE_FILE = 1_000_000  # characters: posts of larger files are stored after the others
# Appended to the content hash of a post whose LLM stage failed: it is stored with its built-in chunks
# but not current, so the next run prepares it again.
LLM_FAILED = ":llm-failed"


def post_hash(post: Post, settings: Settings, llm: dict | None = None) -> str:
    """What decides whether a stored post is still current (`llm`: the LLM preparation's options)."""
    payload = {
        "v": PIPELINE_VERSION,
        "raw": post.raw,
        "text": post.text,
        "title": post.title,
        "collection": post.collection,
        "date": post.date,
        "tags": post.tags,
        "prechunked": [c.__dict__ for c in post.prechunked] if post.prechunked is not None else None,
        "chunking": [
            settings.chunk_strategy,
            settings.chunk_tokens,
            settings.fixed_chars,
            settings.fixed_overlap,
        ],
    }
    address = post_address(post, settings)
    if address:  # only then: the posts stored before addresses existed stay current
        payload["url"] = address
    if llm is not None:
        payload["llm"] = llm
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def post_address(post: Post, settings: Settings) -> str:
    """The address stored for a post: its own (a root path joined to `site_url`), else the one the
    site's permalink pattern gives it, else ""."""
    own = resolve_url(post.url, settings.site_url)
    if own:
        return own
    return permalink_url(
        settings.site_url,
        settings.permalink,
        post_id=post.post_id,
        date=post.date,
        collection=post.collection,
    )


def prepare_chunks(
    post: Post, settings: Settings, corpus_df: dict[str, int] | None = None, corpus_size: int = 0
) -> list[Chunk]:
    """Chunk a post and pick keywords: everything before embedding (also the UI's preview)."""
    chunks = chunk_post(post, settings)
    if post.prechunked is None:  # imported chunks keep the keywords they came with
        add_keywords(chunks, post, corpus_df, corpus_size)
    return chunks


def _corpus_frequencies(store: Store, batch_terms: dict[str, set[str]]) -> tuple[dict[str, int], int]:
    """Document frequencies over the stored corpus, with this batch's posts counted as they are now.

    Keywords are chosen relative to the whole corpus, so re-ingesting one post alone gives it the
    same keywords (and so the same vectors) as ingesting it with all the others.
    """
    df, stored = store.term_frequencies(exclude=set(batch_terms))
    counted: Counter[str] = Counter(df)
    for terms in batch_terms.values():
        counted.update(terms)
    return dict(counted), stored + len(batch_terms)


def _llm_stage(
    todo: list[tuple[Post, str, str]],
    settings: Settings,
    llm: LLMPrepOptions,
    corpus_df: dict[str, int],
    corpus_size: int,
    report: IngestReport,
    progress: Progress | None,
    done: int,
    total: int,
) -> dict[str, Prepared]:
    """The LLM preparation of the posts to (re)process, concurrently, before any write."""
    from core.llm import LLMCache, LLMStats
    from core.prepare import prepare_posts

    def step(finished: int, count: int) -> None:
        if progress:
            progress(done, total, f"LLM preparation: {finished}/{count} posts")

    step(0, len(todo))
    with LLMCache(settings.local_home) as cache:
        prepared = prepare_posts(
            [p for p, _, _ in todo],
            settings,
            llm,
            cache=cache,
            corpus_df=corpus_df,
            corpus_size=corpus_size,
            progress=step,
        )
    report.llm = LLMStats()
    for prep in prepared.values():
        report.llm.merge(prep.stats)
    return prepared


def _after_writes(
    settings: Settings,
    report: IngestReport,
    prepared: dict[str, Prepared],
    llm: LLMPrepOptions | None,
    posts: list[Post],
    states: dict,
    store: Store,
) -> None:
    """Notes on the outcomes; the rewrites stored beside the originals; the posts' languages recorded
    and the corpus's main language (what questions are translated into) stored with the posts table.
    Never fails the ingest."""
    import logging

    from core.llm import LLMCache, endpoint_label
    from core.llm.cache import text_hash
    from core.text import detect_language

    stored = {o.post_id for o in report.outcomes if o.status in ("new", "updated")}
    for outcome in report.outcomes:
        prep = prepared.get(outcome.post_id)
        if prep is not None and outcome.status in ("new", "updated"):
            outcome.llm, outcome.note, outcome.rewritten = prep.status, prep.note, prep.rewritten_sentences
    try:
        with LLMCache(settings.local_home) as cache:
            languages = []
            for post in posts:
                if post.post_id not in stored:
                    continue
                prep = prepared.get(post.post_id)
                lang = prep.language if prep is not None else detect_language(f"{post.title}\n{post.text}")
                languages.append((post.post_id, lang, len(post.text)))
                proposal = prep.proposal if prep is not None and prep.chunks is not None else None
                if proposal is None or not proposal.changes:
                    cache.delete_rewrites([post.post_id])  # what is stored is the author's own text
                    continue
                decision = llm.decisions.get(post.post_id) if llm else None
                cache.save_rewrite(
                    post.post_id,
                    source_hash=text_hash(proposal.original),
                    original=proposal.original,
                    rewritten=proposal.rewritten,
                    changes=[c.to_json() for c in proposal.changes],
                    status={True: "accepted", False: "rejected", None: "applied"}[decision],
                    model=endpoint_label(settings),
                )
            main = cache.record_languages(languages, present=set(states) | stored)
    except Exception as exc:  # a side record: the posts are stored already
        logging.getLogger(__name__).warning("could not record languages/rewrites: %s", exc)
        return
    try:
        write_corpus_language(store, main)
    except Exception as exc:  # readers fall back to the local record
        logging.getLogger(__name__).warning("could not store the corpus language with the posts: %s", exc)


def ingest_posts(
    posts: Sequence[Post],
    settings: Settings,
    *,
    store: Store | None = None,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
    errors: Iterable[ParseError] = (),
    warnings: Iterable[ParseError] = (),
    force: bool = False,
    llm: LLMPrepOptions | None = None,
    replace: bool = False,
    label: str | None = None,
    time_limit: float | None = POST_TIME_LIMIT,
    drafts: Iterable[LeftOutDraft] = (),
) -> IngestReport:
    """Ingest posts; `llm` turns on the optional LLM preparation stages (core/prepare/). `errors` and
    `warnings` (the parser's) go into the report. Posts of files over LARGE_FILE characters go last, so
    a huge file cannot hold the others back; a post whose chunks take longer than `time_limit` seconds
    to embed (None: no limit) fails, naming it (core/ingest/timed.py).

    A changed post whose id is stored already from another file that still exists is refused (failed,
    naming that file) unless `replace`, or unless both files are exports of one blog platform and the
    new one was made later (_made_later: by the exports' own dates, else their file names', else when
    the files were saved), so a newer export of the same blog replaces the posts of an earlier one. One
    whose old file is gone (moved, renamed) replaces it. Either replacement has a note naming the old
    file. `drafts` are the posts the parser left out as unpublished (ParseResult.drafts): one stored
    from the same file, and not among `posts`, is removed ("removed", "now a draft"), since its author
    unpublished it. The posts written and removed are logged as one change (`label`, for people),
    undoable with `store.undo`."""
    started = time.perf_counter()
    check_reader_languages(settings.reader_language_codes)  # before any work: a typo is no language
    llm = llm if llm is not None and llm.enabled else None
    store = store or Store(settings.data_dir)
    table_model = store.model_id()
    model_note = ""
    if embedder is None and table_model is None:  # a new table: non-English posts get the multilingual model
        embedder, model_note = embedder_for_new_table(settings, posts)
    embedder = embedder or embedder_for_store(settings, table_model)
    store.check_model(embedder.model_id)
    if not model_note and settings.reader_language_codes and posts:
        writing = next(iter(language_shares(posts)), "en")
        model_note = readers_mismatch(embedder.model_id, settings.reader_language_codes, writing) or ""
    report = IngestReport(
        errors=list(errors), warnings=list(warnings), notes=[model_note] if model_note else []
    )

    # One post per id: a later duplicate in the same run would silently overwrite the first.
    seen: dict[str, Post] = {}
    unique: list[Post] = []
    for post in posts:
        if post.post_id in seen:
            report.errors.append(
                ParseError(
                    post.source, f"duplicate post id {post.post_id!r} (also in {seen[post.post_id].source})"
                )
            )
            continue
        seen[post.post_id] = post
        unique.append(post)

    orphans = store.remove_orphans()
    if orphans:
        report.notes.append(
            f"removed the chunks of {plural(len(orphans), 'post')} that had no post row (a write cut off earlier)"
        )
    before = store.versions()
    states = store.post_states()
    removed = _remove_drafts(store, drafts, states, seen, report)
    todo: list[tuple[Post, str, str]] = []
    replaced: dict[str, str] = {}  # post id -> the note naming the other file it was read from before
    exports: dict[str, ExportFile] = {}  # a stored post's file -> its platform and export date
    for post in unique:
        digest = post_hash(post, settings, llm.hash_key(post.post_id, settings) if llm else None)
        state = states.get(post.post_id)
        if not force and state is not None and state.is_current(digest):
            report.outcomes.append(
                PostOutcome(post.post_id, post.title, post.source, "unchanged", state.stored)
            )
            continue
        if state is not None and not same_source(state.source, post.source):
            note = f"replaced the post read from {state.source}"
            if not replace and other_file_exists(state.source, post.source):
                if post.export and state.source not in exports:
                    exports[state.source] = export_file(state.source)
                old = exports[state.source] if post.export else NOT_AN_EXPORT
                same_platform = bool(post.export) and old.platform == post.export
                if not (same_platform and _made_later(post, state.source, old.exported)):
                    message = _taken(post, state.source, same_platform)
                    report.outcomes.append(
                        PostOutcome(post.post_id, post.title, post.source, "failed", 0, message)
                    )
                    continue
                note += f", an earlier {PLATFORMS[post.export]} export"
            replaced[post.post_id] = note
        address = post_address(post, settings)
        if post.url and not address:
            report.warnings.append(
                ParseError(
                    post.source,
                    f"post {post.title!r}: its address {post.url!r} is a path on the site, but no site URL "
                    "is set (INKWELL_SITE_URL); stored without an address",
                )
            )
        if address != post.url:  # what is stored: the address resolved or built (the caller's post kept)
            post = dataclasses.replace(post, url=address)
        todo.append((post, digest, "updated" if state is not None else "new"))

    total = len(unique)
    done = total - len(todo)
    if progress:
        progress(done, total, f"{done} unchanged")
    if todo:
        _large_files_last(todo)
        # Each changed post's terms, computed once: for the corpus idf now and the posts table later.
        terms = {post.post_id: post_terms(post) for post, _, _ in todo}
        corpus_df, corpus_size = _corpus_frequencies(store, terms)
        prepared: dict[str, Prepared] = {}
        if llm:
            prepared = _llm_stage(todo, settings, llm, corpus_df, corpus_size, report, progress, done, total)
        window: list[tuple[Post, str, str, list[Chunk]]] = []
        window_chunks = 0

        def embedding(embedded: int, of: int) -> None:
            if progress:
                progress(done, total, f"embedding: {embedded:,} of {plural(of, 'chunk')}")

        timed = TimedEmbedder(embedder, time_limit, embedding)
        for post, digest, status in todo:
            prep = prepared.get(post.post_id)
            try:
                if prep is not None and prep.chunks is not None:
                    post, chunks = prep.post, prep.chunks  # rewritten blocks, LLM chunks and keywords
                    terms[post.post_id] = post_terms(post)
                else:
                    chunks = prepare_chunks(post, settings, corpus_df, corpus_size)
                    if prep is not None and prep.status == "failed":
                        digest += LLM_FAILED  # stored the built-in way; the next run tries the LLM again
                if not chunks:
                    raise ValueError("no text left to index after cleaning")
            except Exception as exc:
                report.outcomes.append(
                    PostOutcome(post.post_id, post.title, post.source, "failed", 0, str(exc))
                )
                done += 1
                continue
            if window and len(chunks) >= WINDOW_CHUNKS:  # a huge post alone: its time limit is its own
                done += _write_or_isolate(window, terms, store, timed, report)
                window, window_chunks = [], 0
            window.append((post, digest, status, chunks))
            window_chunks += len(chunks)
            if window_chunks >= WINDOW_CHUNKS:
                done += _write_or_isolate(window, terms, store, timed, report)
                window, window_chunks = [], 0
                if progress:
                    progress(done, total, f"{report.chunks_embedded} chunks embedded")
        if window:
            done += _write_or_isolate(window, terms, store, timed, report)
        for outcome in report.outcomes:
            if outcome.post_id in replaced and outcome.status == "updated":
                outcome.message = replaced[outcome.post_id]
        _after_writes(settings, report, prepared, llm, [p for p, _, _ in todo], states, store)
    if todo or removed:
        written = [o.post_id for o in report.outcomes if o.status in ("new", "updated")]
        try:
            change = store.log_change(label or _label(len(written), len(removed)), before, written + removed)
        except StoreError as exc:  # the posts are stored: only undo is missing
            report.notes.append(f"stored, but not logged for undo ({exc})")
        else:
            report.change_id = change.change_id if change else None
    if todo:
        try:
            store.optimize()
        except CommitConflictError as exc:  # the posts are stored: only the upkeep waits for a calmer moment
            report.notes.append(f"stored, but the table was not compacted and indexed this time ({exc})")
    if progress:
        progress(total, total, "done")
    report.seconds = time.perf_counter() - started
    return report


def _remove_drafts(
    store: Store,
    drafts: Iterable[LeftOutDraft],
    states: dict[str, PostState],
    ingested: dict[str, Post],
    report: IngestReport,
) -> list[str]:
    """Delete the stored posts that their own file now marks as drafts (not logged: the ingest's
    change takes them in, for undo), each reported as "removed"; their ids. A draft whose id is stored
    from another file, or is ingested from one now, leaves that post alone: it is not the one
    unpublished."""
    gone = {
        d.post_id: d
        for d in drafts
        if d.post_id not in ingested
        and d.post_id in states
        and same_source(states[d.post_id].source, d.source)
    }
    if not gone:
        return []
    store.delete_posts(list(gone), logged=False)
    for draft in gone.values():
        report.outcomes.append(
            PostOutcome(draft.post_id, draft.title, draft.source, "removed", 0, "now a draft")
        )
    return list(gone)


def _label(written: int, removed: int) -> str:
    """The change log's label for an ingest with no label of its own."""
    parts = [f"ingest of {plural(written, 'post')}"] if written or not removed else []
    return ", ".join([*parts, *([f"removal of {plural(removed, 'draft')}"] if removed else [])])


def same_source(old: str, new: str) -> bool:
    """Whether two recorded sources name the same file (as written, or the same file on disk)."""
    if not old or old == new:
        return True
    try:
        return Path(old).exists() and Path(new).exists() and os.path.samefile(old, new)
    except OSError:
        return False


def other_file_exists(old: str, new: str) -> bool:
    """Whether `old`, a stored post's source, is still a file of its own beside `new`: then two files
    claim one post id. A source that is no file here (moved, renamed, a paste or an upload) is not."""
    try:
        return Path(old).is_file() and not same_source(old, new)
    except (OSError, ValueError):
        return False


def _made_later(post: Post, old: str, old_exported: str) -> bool:
    """Whether the export `post` was read from was made after the export file `old` (made at
    `old_exported`, "" unknown). Each export's time is its own date or its name's (Post.exported), else
    when its file was saved (an upload, no file here: now); times known to different precision (a day,
    a second) are compared on what they share, and a tie goes to the file saved later. So an older
    export copied later stays older, and two exports both remembered as sources never take a post
    from each other at every sync."""
    try:
        new_file = Path(post.source)
        new_saved = new_file.stat().st_mtime if new_file.is_file() else time.time()
        old_saved = Path(old).stat().st_mtime
    except (OSError, ValueError):
        return False
    new_time = post.exported or export_stamp(datetime.fromtimestamp(new_saved, UTC))
    old_time = old_exported or export_stamp(datetime.fromtimestamp(old_saved, UTC))
    shared = min(len(new_time), len(old_time))
    if new_time[:shared] != old_time[:shared]:
        return new_time[:shared] > old_time[:shared]
    return new_saved > old_saved


def _taken(post: Post, old: str, same_platform: bool) -> str:
    """Why `post` does not replace the stored post of its id read from `old`, a file that still exists,
    with advice that fits the new post's kind of file."""
    taken = f"post id {post.post_id!r} is taken by {old}"
    if same_platform:
        name = PLATFORMS[post.export]
        return (
            f"{taken}, a newer {name} export (another file); not replaced "
            "(ingest with --replace to bring this older one back)"
        )
    if post.export:  # an export's ids are the platform's slugs: there is no front matter to edit
        return (
            f"{taken}, another file; not replaced (ingest with --replace to let this "
            f"{PLATFORMS[post.export]} export's post replace it)"
        )
    return (
        f"{taken}, another file; not replaced "
        "(give one of them its own id in its front matter, or ingest with --replace)"
    )


def _large_files_last(todo: list[tuple[Post, str, str]]) -> None:
    """Move the posts of files over LARGE_FILE characters to the end, smallest file first; the rest,
    and each file's own posts, keep their order (the sort is stable)."""
    sizes: Counter[str] = Counter()
    for post, _, _ in todo:
        sizes[post.source] += len(post.raw)
    todo.sort(key=lambda item: size if (size := sizes[item[0].source]) > LARGE_FILE else 0)


def _write_or_isolate(
    window: list[tuple[Post, str, str, list[Chunk]]],
    terms: dict[str, set[str]],
    store: Store,
    embedder: Embedder,
    report: IngestReport,
) -> int:
    """Write a window; if its data is refused (ValueError: text the table cannot store, a vector of the
    wrong size), write its posts one by one, so only the post at fault fails. Other failures (the
    embedder or the disk gone, other writers) stop the run as before."""
    try:
        return _write_window(window, terms, store, embedder, report)
    except ValueError as exc:
        if len(window) == 1:
            post = window[0][0]
            message = " ".join(f"could not be stored: {exc}".split())[:300]
            report.outcomes.append(PostOutcome(post.post_id, post.title, post.source, "failed", 0, message))
            return 1
    return sum(_write_or_isolate([item], terms, store, embedder, report) for item in window)


def _write_window(
    window: list[tuple[Post, str, str, list[Chunk]]],
    terms: dict[str, set[str]],
    store: Store,
    embedder: Embedder,
    report: IngestReport,
) -> int:
    texts: list[str] = []
    hashes: list[str] = []
    for post, _, _, chunks in window:
        for chunk in chunks:
            text = chunk_embedded_text(chunk, post.title)
            texts.append(text)
            hashes.append(content_hash(embedder.model_id, text))
    vectors = store.cached_vectors(hashes)
    reused = sum(1 for h in hashes if h in vectors)
    missing = list(dict.fromkeys((h, t) for h, t in zip(hashes, texts, strict=True) if h not in vectors))
    if missing:
        new = embedder.embed([t for _, t in missing])
        vectors.update({h: v for (h, _), v in zip(missing, new, strict=True)})
    embedded = len(missing)

    now = datetime.now(UTC).isoformat(timespec="seconds")
    post_rows, chunk_rows, outcomes = [], [], []
    position = 0
    for post, digest, status, chunks in window:
        for chunk in chunks:
            chunk_rows.append(
                {
                    "chunk_id": chunk.chunk_id,
                    "post_id": post.post_id,
                    "idx": chunk.index,
                    "title": post.title,
                    "collection": post.collection,
                    "date": post.date,
                    "section": chunk.section,
                    "text": chunk.text,
                    "keywords": chunk.keywords,
                    "tokens": chunk.tokens,
                    "embed_hash": hashes[position],
                    "vector": vectors[hashes[position]].tolist(),
                }
            )
            position += 1
        post_rows.append(
            {
                "post_id": post.post_id,
                "title": post.title,
                "collection": post.collection,
                "date": post.date,
                "tags": post.tags,
                "source": post.source,
                "format": post.format,
                "raw": post.raw,
                "content_hash": digest,
                "n_chunks": len(chunks),
                "ingested_at": now,
                "terms": sorted(terms[post.post_id]),
                "url": post.url,
            }
        )
        outcomes.append(PostOutcome(post.post_id, post.title, post.source, status, len(chunks)))
    dim = len(chunk_rows[0]["vector"]) if chunk_rows else embedder.dim  # known without loading a model
    store.replace_posts(post_rows, chunk_rows, embedder.model_id, dim)
    report.outcomes.extend(outcomes)
    report.chunks_reused += reused
    report.chunks_embedded += embedded
    return len(window)


def ingest_paths(
    paths: Sequence[str | Path],
    settings: Settings,
    *,
    collection: str | None = None,
    store: Store | None = None,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
    force: bool = False,
    llm: LLMPrepOptions | None = None,
    replace: bool = False,
    options: ImportOptions | None = None,
) -> IngestReport:
    """Parse `paths` (blog exports with `options`: drafts, pages, members-only posts) and ingest their
    posts (see ingest_posts)."""
    parsed = parse_paths(paths, collection=collection, options=options)
    names = ", ".join(str(p) for p in paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    return ingest_posts(
        parsed.posts,
        settings,
        store=store,
        embedder=embedder,
        progress=progress,
        errors=parsed.errors,
        warnings=parsed.warnings,
        force=force,
        llm=llm,
        replace=replace,
        label=f"ingest of {names}",
        drafts=parsed.drafts,
    )


def edit_chunk(
    chunk_id: str,
    settings: Settings,
    *,
    text: str | None = None,
    keywords: Sequence[str] | None = None,
    store: Store | None = None,
    embedder: Embedder | None = None,
) -> dict:
    """Change one chunk's text and/or keywords and re-embed that chunk only; returns the new row. It is
    logged as its own change, "edit of chunk 2 of “Title”", never worded like the post's ingest.
    Keywords past the limits every chunk keeps (core/chunk/keywords.py: at most 6, each at most 4 words
    and 60 characters) raise KeywordError, a ValueError, before anything is read or written."""
    from core.chunk import check_keywords
    from core.embed import embedded_text
    from core.text import count_tokens

    checked = None if keywords is None else check_keywords(keywords)
    store = store or Store(settings.data_dir)
    embedder = embedder or embedder_for_store(settings, store.model_id())
    store.check_model(embedder.model_id)
    before = store.versions()
    row = store.get_chunk(chunk_id)
    if row is None:
        raise ValueError(f"no chunk with id {chunk_id!r}")
    new_text = row["text"] if text is None else text.strip()
    if not new_text:
        raise ValueError("a chunk cannot be empty; delete or re-ingest the post instead")
    new_keywords = list(row["keywords"] or []) if checked is None else checked
    embed_input = embedded_text(row["section"] or "", new_text, new_keywords, row["title"] or "")
    digest = content_hash(embedder.model_id, embed_input)
    vector = store.cached_vectors([digest]).get(digest)
    if vector is None:
        vector = embedder.embed([embed_input])[0]
    changed = store.update_chunk(
        chunk_id,
        {
            "text": new_text,
            "keywords": new_keywords,
            "tokens": count_tokens(new_text),
            "embed_hash": digest,
            "vector": vector.tolist(),
        },
        # Only over the chunk as it was read: a re-ingest or another edit meanwhile is not overwritten.
        expected_hash=row["embed_hash"],
    )
    if not changed:
        raise ValueError(
            f"chunk {chunk_id!r} changed while it was being edited (re-ingested or edited elsewhere); "
            "reload it and edit again"
        )
    # Numbered as the Chunks page numbers it, and named by its post's title as the app's other changes are.
    place = f"chunk {row['idx'] + 1}" if row.get("idx") is not None else "a chunk"
    store.log_change(f"edit of {place} of “{row.get('title') or row['post_id']}”", before, [row["post_id"]])
    return store.get_chunk(chunk_id) or {}
