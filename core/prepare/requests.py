"""The two requests per post: (1) rewrites and chunk starts, (2) keywords; prompts and reply checks."""

from __future__ import annotations

from dataclasses import dataclass

from core.config import Settings
from core.llm.cache import LLMCache
from core.llm.structured import JSONReplyError, LLMStats, json_call
from core.models import Chunk, Post
from core.prepare import keywords as kw
from core.prepare.chunks import OVERSIZE_RATIO
from core.prepare.options import LLMPrepOptions, input_budget
from core.prepare.rewrite import (
    Doc,
    RewriteProposal,
    apply_rewrites,
    make_proposal,
    parse_rewrites,
    render_numbered,
)
from core.text.language import language_name
from core.text.tokens import count_tokens

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
class FirstReply:
    proposal: RewriteProposal | None
    rewritten: Doc | None
    chunk_value: object  # the parsed reply (for chunk starts), or None
    notes: list[str]
    unusable: bool = False  # the reply had no usable JSON


def request_first(
    post: Post,
    doc: Doc,
    settings: Settings,
    options: LLMPrepOptions,
    cache: LLMCache | None,
    stats: LLMStats,
    lang: str,
) -> FirstReply | None:
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
        return FirstReply(None, None, None, [f"the model's reply was not usable JSON ({err})"], unusable=True)
    notes: list[str] = []
    proposal = rewritten = None
    if options.rewrite:
        wanted, parse_notes = parse_rewrites(value)
        rewritten, changes, refused = apply_rewrites(doc, wanted)
        notes += parse_notes + refused
        proposal = make_proposal(post, doc, rewritten, changes, parse_notes + refused)
    return FirstReply(proposal, rewritten, value if options.llm_chunks else None, notes)


def request_keywords(
    post: Post,
    chunks: list[Chunk],
    settings: Settings,
    cache: LLMCache | None,
    stats: LLMStats,
    lang: str,
) -> tuple[dict[int, list[str]], list[str]]:
    """Cleaned keywords by chunk index (chunks left without any are absent), and notes."""
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
