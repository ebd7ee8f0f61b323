"""Optional LLM preparation of posts before embedding: rewriting vague references, LLM chunking and
LLM keywords. At most two requests per post, posts prepared concurrently, replies cached.

    options = LLMPrepOptions(rewrite=True, llm_chunks=True, llm_keywords=True)
    prepared = prepare_posts(posts, settings, options)          # {post_id: Prepared}
    proposal = preview_rewrite(post, settings, options)        # for review before ingesting

Per post:
- Request 1 (when rewrite and/or LLM chunks are on): the post as numbered sentences; the reply gives
  the sentences to rewrite (`rewrites`) and the sentence where each chunk starts (`chunk_starts`), in one
  JSON object. Rewrites are applied sentence by sentence (core/prepare/rewrite.py) when the author accepted them
  (`options.decisions`; missing means accepted, as the CLI does); chunk starts are checked
  (core/prepare/chunks.py) against the post as it will be stored. Since a rewrite keeps sentence numbers,
  one reply serves both the accepted and the rejected version, and the review preview's request is the
  ingestion's request (same cache key).
- Request 2 (LLM keywords): every chunk of the post in one request, 1–6 keywords each
  (core/prepare/keywords.py). A post whose chunks exceed the input budget is sent in several batches.
- Validation problems fall back stage by stage and are noted (`status` "fallback"): unusable JSON or
  invalid chunks → the built-in chunker; chunks without usable keywords → the built-in keywords.
- A failed request (after the client's retries on 429/5xx/timeouts) fails the post's whole LLM stage:
  `status` "failed", `chunks` None, and the caller stores the post's built-in chunks instead, never a mix.

Replies are cached in `<data_dir>/llm_cache.sqlite` by a hash of (model and endpoint, prompt version,
prompt, input, schema): running again with the same posts and options sends nothing and gives the same
chunks.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TYPE_CHECKING

from core.chunk import add_keywords, chunk_post, extract_keywords
from core.config import Settings
from core.llm import LLMCache, LLMError, LLMStats
from core.models import Chunk, Post
from core.prepare.chunks import (
    OVERSIZE_RATIO,
    ChunkValidationError,
    parse_chunk_reply,
    pieces_from_starts,
    pieces_from_texts,
    split_oversize,
    to_chunks,
)
from core.prepare.rewrite import (
    RewriteProposal,
    build_doc,
    rewritten_post,
)
from core.text import detect_language, plural

if TYPE_CHECKING:
    pass

from core.prepare.options import (
    FRAGMENTED_EXTRA,
    FRAGMENTED_RATIO,
    LLMPrepOptions,
    Prepared,
    Progress,
    input_budget,
)
from core.prepare.requests import FirstReply, request_first, request_keywords

log = logging.getLogger(__name__)


# One post -------------------------------------------------------------------------------------------------


def prepare_post(
    post: Post,
    settings: Settings,
    options: LLMPrepOptions,
    *,
    cache: LLMCache | None = None,
    corpus_df: Mapping[str, int] | None = None,
    corpus_size: int = 0,
) -> Prepared:
    """Run the enabled LLM stages for one post (at most two requests when it fits the input budget)."""
    stats = LLMStats()
    lang = detect_language(f"{post.title}\n{post.text}")
    if post.prechunked is not None or not options.enabled:
        return Prepared(
            post,
            None,
            "skipped",
            ["imported chunks are kept as cut"] if options.enabled else [],
            language=lang,
            stats=stats,
        )
    try:
        return _prepare(post, settings, options, cache, corpus_df, corpus_size, stats, lang)
    except LLMError as err:
        return Prepared(
            post,
            None,
            "failed",
            [f"LLM stage failed ({err}); stored with the built-in chunks and keywords"],
            language=lang,
            stats=stats,
        )


def _prepare(
    post: Post,
    settings: Settings,
    options: LLMPrepOptions,
    cache: LLMCache | None,
    corpus_df: Mapping[str, int] | None,
    corpus_size: int,
    stats: LLMStats,
    lang: str,
) -> Prepared:
    doc = build_doc(post.blocks)
    notes: list[str] = []
    fallback = False
    working, current, proposal, applied = post, doc, None, False
    first: FirstReply | None = None
    if options.rewrite or options.llm_chunks:
        first = request_first(post, doc, settings, options, cache, stats, lang)
        if first is None:
            fallback = True
            skipped = [
                w
                for w, on in (("not rewritten", options.rewrite), ("built-in chunks", options.llm_chunks))
                if on
            ]
            notes.append(
                f"too long for one request (input budget {input_budget(settings)} tokens): {', '.join(skipped)}"
            )
        else:
            notes += first.notes  # JSON problems, refused rewrites
            fallback = fallback or bool(first.notes)
            proposal = first.proposal
            if proposal and proposal.changes and first.rewritten and options.applies_rewrite(post.post_id):
                working, current, applied = (
                    rewritten_post(post, first.rewritten.blocks),
                    first.rewritten,
                    True,
                )
            elif proposal and proposal.changes:
                notes.append(f"rewrite of {plural(proposal.changed, 'sentence')} rejected by the author")

    chunks: list[Chunk] | None = None
    if options.llm_chunks and first is not None and not first.unusable:
        try:
            answer = parse_chunk_reply(first.chunk_value)
            pieces = (
                pieces_from_starts(current, answer)  # type: ignore[arg-type]
                if answer and isinstance(answer[0], int)
                else pieces_from_texts(current, answer)  # type: ignore[arg-type]
            )
            if not pieces:
                raise ChunkValidationError("no chunks")
            builtin = len(chunk_post(working, settings))
            if len(pieces) > max(FRAGMENTED_RATIO * builtin, builtin + FRAGMENTED_EXTRA):
                raise ChunkValidationError(
                    f"{len(pieces)} chunks where the built-in chunker makes {builtin}: too fragmented"
                )
            pieces, n_split = split_oversize(pieces, settings.chunk_tokens)
            if n_split:
                notes.append(
                    f"{plural(n_split, 'LLM chunk')} over {int(OVERSIZE_RATIO * settings.chunk_tokens)} tokens re-cut"
                )
            chunks = to_chunks(post.post_id, pieces)
        except ChunkValidationError as err:
            notes.append(f"LLM chunks rejected: {err}")
    if options.llm_chunks and chunks is None:
        fallback = True
        if not any("built-in chunk" in n for n in notes):
            notes.append("built-in chunks used")
    if chunks is None:
        chunks = chunk_post(working, settings)

    if options.llm_keywords and chunks:
        found, kw_notes = request_keywords(working, chunks, settings, cache, stats, lang)
        notes += kw_notes
        missing = [i for i in range(len(chunks)) if i not in found]
        if missing:
            fallback = True
            builtin = extract_keywords(chunks, working, corpus_df, corpus_size)
            for i in missing:
                found[i] = builtin[i]
            notes.append(f"{len(missing)} of {plural(len(chunks), 'chunk')} got built-in keywords")
        for i, chunk in enumerate(chunks):
            chunk.keywords = found[i]
    else:
        add_keywords(chunks, working, corpus_df, corpus_size)
    return Prepared(
        working,
        chunks,
        "fallback" if fallback else "ok",
        notes,
        proposal=proposal,
        rewrite_applied=applied,
        language=lang,
        stats=stats,
    )


def prepare_posts(
    posts: Sequence[Post],
    settings: Settings,
    options: LLMPrepOptions,
    *,
    cache: LLMCache | None = None,
    corpus_df: Mapping[str, int] | None = None,
    corpus_size: int = 0,
    progress: Progress | None = None,
) -> dict[str, Prepared]:
    """Prepare posts concurrently (at most `options.workers(settings)` at a time)."""
    own = cache is None
    cache = cache or LLMCache(settings.local_home)
    results: dict[str, Prepared] = {}
    lock = threading.Lock()

    def work(post: Post) -> Prepared:
        try:
            return prepare_post(
                post, settings, options, cache=cache, corpus_df=corpus_df, corpus_size=corpus_size
            )
        except Exception as exc:  # a bug must not lose the post: it is stored the built-in way
            log.exception("LLM preparation of %s failed", post.post_id)
            return Prepared(post, None, "failed", [f"LLM stage failed ({type(exc).__name__}: {exc})"])

    try:
        with ThreadPoolExecutor(max_workers=options.workers(settings), thread_name_prefix="prep") as pool:
            futures = {pool.submit(work, post): post for post in posts}
            for future in as_completed(futures):
                prepared = future.result()
                with lock:
                    results[futures[future].post_id] = prepared
                    done = len(results)
                if progress:
                    progress(done, len(posts))
    finally:
        if own:
            cache.close()
    return results


def preview_rewrite(
    post: Post,
    settings: Settings,
    options: LLMPrepOptions | None = None,
    *,
    cache: LLMCache | None = None,
) -> RewriteProposal:
    """The rewrite the ingestion would apply to `post`, for review; stores nothing but the cached reply.

    Uses request 1 exactly as ingesting with `options` would (so ingesting afterwards costs no second
    request for it). An LLM failure gives a proposal with `error` set and no changes.
    """
    options = dataclasses.replace(options or LLMPrepOptions(), rewrite=True)
    doc = build_doc(post.blocks)
    original = "\n\n".join(b.text for b in doc.blocks)
    empty = RewriteProposal(post.post_id, post.title, original, original)
    if post.prechunked is not None:
        empty.notes.append("imported chunks are kept as cut")
        return empty
    own = cache is None
    cache = cache or LLMCache(settings.local_home)
    stats = LLMStats()
    started = time.perf_counter()
    try:
        lang = detect_language(f"{post.title}\n{post.text}")
        first = request_first(post, doc, settings, options, cache, stats, lang)
    except LLMError as err:
        empty.error = str(err)
        return empty
    finally:
        stats.seconds = max(stats.seconds, time.perf_counter() - started)
        if own:
            cache.close()
    if first is None:
        empty.notes.append(f"too long for one request (input budget {input_budget(settings)} tokens)")
        result = empty
    elif first.proposal is None:
        empty.notes += first.notes
        result = empty
    else:
        result = first.proposal
    result.stats = stats
    return result


def preview_rewrites(
    posts: Sequence[Post], settings: Settings, options: LLMPrepOptions | None = None
) -> list[RewriteProposal]:
    """`preview_rewrite` for many posts, concurrently; in the posts' order."""
    options = options or LLMPrepOptions(rewrite=True)
    with (
        LLMCache(settings.local_home) as cache,
        ThreadPoolExecutor(max_workers=options.workers(settings), thread_name_prefix="review") as pool,
    ):
        return list(pool.map(lambda p: preview_rewrite(p, settings, options, cache=cache), posts))
