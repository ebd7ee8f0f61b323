"""Optional LLM preparation of posts before embedding: rewriting vague references, LLM chunking and
LLM keywords. At most two requests per post, posts prepared concurrently, replies cached.

    options = LLMPrepOptions(rewrite=True, llm_chunks=True, llm_keywords=True)
    prepared = prepare_posts(posts, settings, options)          # {post_id: Prepared}
    proposal = preview_rewrite(post, settings, options)        # for review before ingesting

Per post:
- Request 1 (when rewrite and/or LLM chunks are on): the post as numbered sentences; the reply gives
  the sentences to rewrite (`rewrites`) and the sentence where each chunk starts (`chunk_starts`), in one
  JSON object. Rewrites are applied sentence by sentence (core/rewrite.py) when the author accepted them
  (`options.decisions`; missing means accepted, as the CLI does); chunk starts are checked
  (core/llm_chunk.py) against the post as it will be stored. Since a rewrite keeps sentence numbers,
  one reply serves both the accepted and the rejected version, and the review preview's request is the
  ingestion's request (same cache key).
- Request 2 (LLM keywords): every chunk of the post in one request, 1–6 keywords each
  (core/llm_keywords.py). A post whose chunks exceed the input budget is sent in several batches.
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
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.chunk import chunk_post
from core.config import Settings
from core.keywords import add_keywords, extract_keywords
from core.language import detect_language, language_name
from core.llm import LLMError
from core.llm_cache import LLMCache
from core.llm_chunk import (
    OVERSIZE_RATIO,
    ChunkValidationError,
    parse_chunk_reply,
    pieces_from_starts,
    pieces_from_texts,
    split_oversize,
    to_chunks,
)
from core.llm_json import JSONReplyError, LLMStats, endpoint_label, json_call
from core.models import Chunk, Post
from core.rewrite import (
    Doc,
    RewriteProposal,
    apply_rewrites,
    build_doc,
    make_proposal,
    parse_rewrites,
    render_numbered,
    rewritten_post,
)
from core.tokens import count_tokens

if TYPE_CHECKING:
    from core.ingest import IngestReport

log = logging.getLogger(__name__)

# Bump when prompts or the way replies are used change: stored posts are then prepared again.
PREP_VERSION = "1"
REMOTE_INPUT_BUDGET = 60_000  # tiktoken tokens per request when prep_max_input_tokens is not set
BUILTIN_TOKEN_RATIO = 1.5  # SmolLM2 tokens per tiktoken token on prose (see core/answer.py)
BUILTIN_CONCURRENCY = 2  # the built-in llama.cpp server decodes one request at a time
# LLM chunks are refused as fragmented beyond max(ratio × the built-in count, built-in count + extra).
FRAGMENTED_RATIO = 3
FRAGMENTED_EXTRA = 5

Progress = Callable[[int, int], None]


@dataclass
class LLMPrepOptions:
    """Which LLM stages run at ingest. `decisions`: post id → whether its reviewed rewrite was accepted
    (posts not in it get their rewrite applied, as `inkwell ingest --rewrite` does)."""

    rewrite: bool = False
    llm_chunks: bool = False
    llm_keywords: bool = False
    concurrency: int | None = None
    decisions: dict[str, bool] = field(default_factory=dict)

    @property
    def enabled(self) -> bool:
        return self.rewrite or self.llm_chunks or self.llm_keywords

    def applies_rewrite(self, post_id: str) -> bool:
        return self.rewrite and self.decisions.get(post_id, True)

    def workers(self, settings: Settings) -> int:
        wanted = self.concurrency or settings.llm_concurrency
        if settings.uses_builtin_llm:
            wanted = min(wanted, BUILTIN_CONCURRENCY)
        return max(1, wanted)

    def hash_key(self, post_id: str, settings: Settings) -> dict:
        """What of the LLM preparation decides whether a stored post is current (part of post_hash)."""
        return {
            "v": PREP_VERSION,
            "model": endpoint_label(settings),
            "rewrite": self.applies_rewrite(post_id),
            "chunks": self.llm_chunks,
            "keywords": self.llm_keywords,
        }

    def label(self) -> str:
        names = [n for n, on in (("rewrite", self.rewrite), ("chunks", self.llm_chunks)) if on]
        return ", ".join([*names, *(["keywords"] if self.llm_keywords else [])])


@dataclass
class Prepared:
    """One post after the LLM stages. `post` is what gets stored (rewritten blocks when a rewrite was
    applied; `raw` is always the author's original). `chunks` is None when the LLM stage failed or did
    not apply: the caller then chunks the original post with the built-in pipeline."""

    post: Post
    chunks: list[Chunk] | None
    status: str  # ok | fallback | failed | skipped
    notes: list[str] = field(default_factory=list)
    proposal: RewriteProposal | None = None
    rewrite_applied: bool = False
    language: str = "und"
    stats: LLMStats = field(default_factory=LLMStats)

    @property
    def note(self) -> str:
        return "; ".join(self.notes)

    @property
    def rewritten_sentences(self) -> int:
        return self.proposal.changed if self.proposal and self.rewrite_applied else 0


# Budgets --------------------------------------------------------------------------------------------------


def input_budget(settings: Settings) -> int:
    """Prompt tokens (tiktoken) one preparation request may carry."""
    if settings.prep_max_input_tokens:
        return settings.prep_max_input_tokens
    if settings.uses_builtin_llm:
        return int((settings.local_context - settings.builtin_max_tokens - 256) / BUILTIN_TOKEN_RATIO)
    return REMOTE_INPUT_BUDGET


# Request 1: rewrites and chunk starts ----------------------------------------------------------------------

INTRO = (
    "You prepare one blog post for a search index. The post is given with every sentence numbered [S1], "
    "[S2], …; paragraphs are separated by blank lines and headings start with '#'. The post is in "
    "{language}."
)
REWRITE_TASK = (
    'Task "rewrites": each paragraph will later be read on its own, without the rest of the post. Find '
    "the sentences that only make sense with an earlier paragraph, because they point with words like "
    '"this", "that", "these", "those people", "it", "he", "she", "they", "there", "the second", "the '
    'former" or "the same" to something named elsewhere, and rewrite each so that it names what it '
    "means, taken from the post. Change as few words as possible; keep the author's voice, tense and "
    "language; add no facts; leave every other sentence alone (most need no change). Keep tags like "
    "[REF: …] and [IMAGE: …] exactly as they are. Give each changed sentence as "
    '{"id": its number, "text": the whole new sentence}; an empty list when none needs it.'
)
CHUNK_TASK = (
    'Task "chunk_starts": split the post into chunks for search. A chunk is a run of consecutive '
    "sentences about one topic that a reader understands on its own, about {target} tokens long (at "
    "most {limit}; shorter where the topic changes). A heading always starts a new chunk. Give the "
    "number of the first sentence of each chunk, in order, starting with 1."
)
_REWRITES_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"id": {"type": "integer"}, "text": {"type": "string"}},
        "required": ["id", "text"],
        "additionalProperties": False,
    },
}
_STARTS_SCHEMA = {"type": "array", "items": {"type": "integer"}}


def first_request(
    post: Post, doc: Doc, settings: Settings, *, rewrite: bool, chunks: bool, lang: str
) -> tuple[str, str, dict, int]:
    """(system prompt, user message, JSON schema, max reply tokens) for request 1."""
    parts = [INTRO.format(language=language_name(lang if lang != "und" else None))]
    properties: dict = {}
    shape: list[str] = []
    if rewrite:
        parts.append(REWRITE_TASK)
        properties["rewrites"] = _REWRITES_SCHEMA
        shape.append('"rewrites": [{"id": <sentence number>, "text": "<the whole new sentence>"}, …]')
    if chunks:
        target = settings.chunk_tokens
        parts.append(CHUNK_TASK.format(target=target, limit=int(OVERSIZE_RATIO * target)))
        properties["chunk_starts"] = _STARTS_SCHEMA
        shape.append('"chunk_starts": [<sentence number>, …]')
    parts.append("Reply with JSON only: {" + ", ".join(shape) + "}.")
    schema = {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
    numbered = render_numbered(doc)
    user = f"Title: {post.title}\n\n{numbered}"
    n = len(doc.sentences)
    max_tokens = 48 + (int(1.3 * count_tokens(numbered)) + 8 * n if rewrite else 0) + (4 * n if chunks else 0)
    return "\n\n".join(parts), user, schema, min(max_tokens, 16_000)


@dataclass
class _First:
    proposal: RewriteProposal | None
    rewritten: Doc | None
    chunk_value: object  # the parsed reply (for chunk starts), or None
    notes: list[str]
    unusable: bool = False  # the reply had no usable JSON


def _request_one(
    post: Post,
    doc: Doc,
    settings: Settings,
    options: LLMPrepOptions,
    cache: LLMCache | None,
    stats: LLMStats,
    lang: str,
) -> _First | None:
    """Request 1 and what it proposes; None when the post is too long for one request. LLMError escapes."""
    system, user, schema, max_tokens = first_request(
        post, doc, settings, rewrite=options.rewrite, chunks=options.llm_chunks, lang=lang
    )
    budget = input_budget(settings)
    needed = count_tokens(system) + count_tokens(user)
    if needed > budget:
        return None
    try:
        value = json_call(
            settings,
            task="prepare",
            system=system,
            user=user,
            schema=schema,
            max_tokens=max_tokens,
            cache=cache,
            stats=stats,
        )
    except JSONReplyError as err:
        return _First(None, None, None, [f"the model's reply was not usable JSON ({err})"], unusable=True)
    notes: list[str] = []
    proposal = rewritten = None
    if options.rewrite:
        wanted, parse_notes = parse_rewrites(value)
        rewritten, changes, refused = apply_rewrites(doc, wanted)
        notes += parse_notes + refused
        proposal = make_proposal(post, doc, rewritten, changes, parse_notes + refused)
    return _First(proposal, rewritten, value if options.llm_chunks else None, notes)


# Request 2: keywords --------------------------------------------------------------------------------------


def _request_keywords(
    post: Post,
    chunks: list[Chunk],
    settings: Settings,
    cache: LLMCache | None,
    stats: LLMStats,
    lang: str,
) -> tuple[dict[int, list[str]], list[str]]:
    """Cleaned keywords by chunk index (chunks left without any are absent), and notes."""
    from core import llm_keywords as kw

    system = kw.system_prompt(lang)
    groups = kw.batches(post.title, chunks, input_budget(settings), system)
    notes = [f"the post needed {len(groups)} keyword requests (too long for one)"] if len(groups) > 1 else []
    found: dict[int, list[str]] = {}
    for ids in groups:
        try:
            value = json_call(
                settings,
                task="keywords",
                system=system,
                user=kw.user_prompt(post.title, chunks, ids),
                schema=kw.SCHEMA,
                max_tokens=kw.max_reply_tokens(len(ids)),
                cache=cache,
                stats=stats,
            )
        except JSONReplyError as err:
            notes.append(f"keyword reply was not usable JSON ({err})")
            continue
        for index, words in kw.parse_reply(value).items():
            if index in ids:
                cleaned = kw.clean_keywords(words, lang)
                if cleaned:
                    found[index] = cleaned
    return found, notes


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
    first: _First | None = None
    if options.rewrite or options.llm_chunks:
        first = _request_one(post, doc, settings, options, cache, stats, lang)
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
                notes.append(f"rewrite of {proposal.changed} sentence(s) rejected by the author")

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
                    f"{n_split} LLM chunk(s) over {int(OVERSIZE_RATIO * settings.chunk_tokens)} tokens re-cut"
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
        found, kw_notes = _request_keywords(working, chunks, settings, cache, stats, lang)
        notes += kw_notes
        missing = [i for i in range(len(chunks)) if i not in found]
        if missing:
            fallback = True
            builtin = extract_keywords(chunks, working, corpus_df, corpus_size)
            for i in missing:
                found[i] = builtin[i]
            notes.append(f"{len(missing)} of {len(chunks)} chunk(s) got built-in keywords")
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


# Many posts -----------------------------------------------------------------------------------------------


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
    cache = cache or LLMCache(settings.data_dir)
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
    cache = cache or LLMCache(settings.data_dir)
    stats = LLMStats()
    started = time.perf_counter()
    try:
        lang = detect_language(f"{post.title}\n{post.text}")
        first = _request_one(post, doc, settings, options, cache, stats, lang)
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
        LLMCache(settings.data_dir) as cache,
        ThreadPoolExecutor(max_workers=options.workers(settings), thread_name_prefix="review") as pool,
    ):
        return list(pool.map(lambda p: preview_rewrite(p, settings, options, cache=cache), posts))


# Command-line text ----------------------------------------------------------------------------------------


def outcome_lines(report: IngestReport, options: LLMPrepOptions) -> list[str]:
    """One line per stored post that went through the LLM stages: rewritten sentences, status, notes."""
    lines = []
    for o in report.outcomes:
        if not o.llm:
            continue
        parts = [f"{o.rewritten} sentence(s) rewritten"] if options.rewrite else []
        parts.append(f"LLM {o.llm}")
        if o.note:
            parts.append(o.note)
        lines.append(f"{o.post_id}: {'; '.join(parts)}")
    return lines


def dry_run_lines(posts: Sequence[Post], settings: Settings, options: LLMPrepOptions) -> list[str]:
    """What ingesting with `options` would do to each post (rewrites as a sentence diff, the chunks and
    their keywords), without storing anything but the cached replies."""
    prepared = prepare_posts(posts, settings, options)
    total = LLMStats()
    lines: list[str] = []
    for post in posts:
        prep = prepared[post.post_id]
        total.merge(prep.stats)
        lines.append(
            f"== {post.title} ({post.post_id}): LLM {prep.status}" + (f"; {prep.note}" if prep.note else "")
        )
        if options.rewrite:
            changed = prep.proposal.changed if prep.proposal else 0
            lines.append(f"   {changed} sentence(s) rewritten")
            lines += [f"   {line}" for line in (prep.proposal.diff_lines() if prep.proposal else [])]
        chunks = prep.chunks or []
        for chunk in chunks:
            flat = " ".join(chunk.text.split())
            flat = flat if len(flat) <= 100 else flat[:99] + "…"
            section = f" [{chunk.section}]" if chunk.section else ""
            lines.append(
                f"   chunk {chunk.index}{section} {chunk.tokens} tokens ({', '.join(chunk.keywords)}): {flat}"
            )
    lines.append(total.summary())
    return lines
