"""Answer a reader's question in the author's voice, grounded only in retrieved excerpts.

    stream = answer(question, hits, settings, history, embedder=embedder)
    for piece in stream: ...          # the answer, a sentence at a time, as the reader may see it
    stream.text, stream.sources, stream.used_hits, stream.model_label, stream.builtin, stream.usage
    stream.truncated, stream.cut, stream.dropped, stream.grounding, stream.raw_text, stream.leaks

The excerpts go in the last user message, best first, as many as fit the token budget, each as

    <excerpt post="<title> — <section>">
    <text>
    </excerpt>

separated by blank lines: no relevance numbers (the order says the rank), and a tag whose copy is
plain to see. What the model writes goes through core/answer/release.py before the reader sees
it: prompt markup it copied is cut out, only whole sentences are released (a reply cut at max_tokens
ends at its last complete sentence), and with `grounding = "strict"` or "auto" (the default) only
sentences the grounding check supports.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from core.answer.grounding import Grounding, GroundingChecker, SentenceSupport
from core.answer.release import Release, StrictJudge
from core.config import Settings
from core.embed import Embedder
from core.llm import Usage, describe_llm, stream_chat
from core.models import Hit
from core.text import count_tokens, encoding

DEFAULT_PROMPT_TEMPLATE = (
    "You are {author_name}, {author_description}. "
    "Answer the reader's question in your own voice (first person), using ONLY the provided excerpts from "
    "your writings. If the excerpts don't support an answer, say so plainly rather than guessing. "
    "Recommend at most two posts for further reading, by title. "
    "Answer in the language of the question."
)

NO_HITS_MESSAGE = "I haven't written about that, so I can't answer it from my posts."
# Shown instead when the model wrote something but none of it may be shown: in strict grounding mode
# no sentence was supported (or none could be checked); or the token limit came before the first
# sentence ended; or the reply was nothing but copied prompt markup.
NOTHING_SUPPORTED_MESSAGE = "I can't answer that from my posts without guessing."
CUT_SHORT_MESSAGE = "My answer ran past its length limit before its first sentence ended."

# Budget for the excerpts when settings.context_token_budget is not set. Budgets are counted with
# tiktoken (o200k); the built-in SmolLM2 tokenizer needs more tokens for the same text (measured: English
# ~1.2x, French/German ~1.45x, Japanese ~2.3x), so its share of local_context is divided by
# BUILTIN_TOKEN_RATIO, and capped because prompt processing on a small CPU is slow (a 2-core machine
# takes tens of seconds for a few thousand tokens) and a 135M model makes little use of long contexts.
REMOTE_CONTEXT_BUDGET = 12_000
BUILTIN_HEADROOM = 1_000  # system prompt, question, chat template
BUILTIN_TOKEN_RATIO = 2.3
BUILTIN_BUDGET_CAP = 1_200
MIN_CONTEXT_BUDGET = 300
HISTORY_MESSAGES = 6  # previous turns kept in the prompt (3 exchanges)
SEPARATOR = "\n\n"


@dataclass
class Source:
    """A post cited by an answer: one per distinct post among the used excerpts."""

    post_id: str
    title: str
    relevance: float
    collection: str = ""
    date: str = ""
    url: str = ""  # the post's address on the blog ("" when unknown)
    link: str = ""  # the address opened at the sentences quoted from it (quoted replies; else the url)

    def to_json(self) -> dict:
        return {
            "post_id": self.post_id,
            "title": self.title,
            "relevance": round(float(self.relevance), 6),
            "collection": self.collection,
            "date": self.date,
            "url": self.url,
            "link": self.link or self.url,
        }


# Prompt ---------------------------------------------------------------------------------------------------


def system_prompt(settings: Settings, prompt_template: str | None = None) -> str:
    """The persona rules with the author's name and description filled in: `prompt_template`, else the
    owner's `settings.persona_prompt`, else DEFAULT_PROMPT_TEMPLATE.

    A template may use `{author_name}` and `{author_description}`; other braces are kept as written.
    """
    template = prompt_template or settings.persona_prompt or DEFAULT_PROMPT_TEMPLATE
    return template.replace("{author_name}", settings.author_name).replace(
        "{author_description}", settings.author_description
    )


def hit_label(hit: Hit) -> str:
    """The post a hit comes from as the prompt names it: its title, and its section when it has one."""
    return f"{hit.title} — {hit.section}" if hit.section and hit.section != hit.title else hit.title


def post_labels(hits: list[Hit]) -> list[str]:
    """The titles and labels the prompt named the hits' posts by: what a copied label line would say."""
    return sorted({h.title for h in hits} | {hit_label(h) for h in hits})


def _attribute(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def format_hit(hit: Hit, text: str | None = None) -> str:
    """One excerpt as the model sees it (`text`: a shortened text instead of the hit's)."""
    body = hit.text.strip() if text is None else text
    return f'<excerpt post="{_attribute(hit_label(hit))}">\n{body}\n</excerpt>'


def context_budget(settings: Settings) -> int:
    """Tokens (tiktoken o200k) allowed for the excerpts."""
    if settings.context_token_budget:
        return settings.context_token_budget
    if settings.uses_builtin_llm:
        room = (settings.local_context - settings.max_tokens - BUILTIN_HEADROOM) / BUILTIN_TOKEN_RATIO
        return max(MIN_CONTEXT_BUDGET, min(int(room), BUILTIN_BUDGET_CAP))
    return REMOTE_CONTEXT_BUDGET


def _truncate(text: str, tokens: int) -> str:
    enc = encoding()
    ids = enc.encode(text, disallowed_special=())
    return enc.decode(ids[: max(0, tokens)]).rstrip() + " …"


def diversify(hits: list[Hit], max_per_post: int = 0) -> list[Hit]:
    """Hits best first, except that a post's chunks after its best `max_per_post` wait until every other
    post's chunks have had their turn (then they follow in rank order). 0 = no cap: plain rank order."""
    ordered = sorted(hits, key=lambda h: float(h.relevance), reverse=True)
    if max_per_post <= 0:
        return ordered
    taken: dict[str, int] = {}
    first: list[Hit] = []
    later: list[Hit] = []
    for hit in ordered:
        count = taken.get(hit.post_id, 0)
        (first if count < max_per_post else later).append(hit)
        taken[hit.post_id] = count + 1
    return first + later


def fit_context(hits: list[Hit], budget: int, max_per_post: int = 0) -> tuple[str, list[Hit]]:
    """Format hits best-first until the budget is full; returns the context and the hits used.

    With `max_per_post` > 0 the hits are taken in `diversify` order, so one long post cannot fill the
    context while other posts' passing chunks wait; what is used is still shown best first.
    Stops at the first excerpt that does not fit (lower-ranked ones are not tried). If even the best one
    alone is too big, its text is cut to fit, so there is always some context when there are hits.
    """
    blocks: list[str] = []
    used: list[Hit] = []
    total = 0
    for hit in diversify(hits, max_per_post):
        block = format_hit(hit)
        # The tokens this block adds to the joined context: the tokenizer merges across the separator
        # (">\n\n" is one token), so a block after another costs less than alone plus the separator.
        if blocks:
            cost = count_tokens(blocks[-1] + SEPARATOR + block) - count_tokens(blocks[-1])
        else:
            cost = count_tokens(block)
        if total + cost > budget:
            if not blocks:
                room = budget - count_tokens(format_hit(hit, "")) - 2
                if room > 0:
                    blocks.append(format_hit(hit, _truncate(hit.text.strip(), room)))
                    used.append(hit)
            break
        blocks.append(block)
        used.append(hit)
        total += cost
    # Best first again (a stable sort keeps rank order among equal relevances).
    pairs = sorted(zip(used, blocks, strict=True), key=lambda pair: float(pair[0].relevance), reverse=True)
    return SEPARATOR.join(block for _, block in pairs), [hit for hit, _ in pairs]


def clean_history(history: list[dict] | None, limit: int | None = HISTORY_MESSAGES) -> list[dict]:
    """The user and assistant messages of `history` with text, as plain dicts; the last `limit` (None:
    all of them)."""
    turns = [
        {"role": m["role"], "content": str(m["content"])}
        for m in history or []
        if isinstance(m, dict) and m.get("role") in ("user", "assistant") and m.get("content")
    ]
    return turns if limit is None else turns[-limit:]


def build_messages(
    question: str,
    hits: list[Hit],
    settings: Settings,
    history: list[dict] | None = None,
    *,
    prompt_template: str | None = None,
) -> tuple[list[dict], list[Hit]]:
    """The chat messages for one answer, and the hits that made it into the context.

    history: earlier turns as {"role": "user"|"assistant", "content": str}; the last few are kept and
    their tokens come out of the excerpt budget.
    """
    turns = clean_history(history)
    budget = context_budget(settings) - sum(count_tokens(m["content"]) for m in turns)
    context, used = fit_context(hits, max(budget, MIN_CONTEXT_BUDGET), settings.max_chunks_per_post)
    user = (
        f"Excerpts from my writings:\n\n{context}\n\nReader's question: {question.strip()}"
        if used
        else f"(No excerpts from my writings match this question.)\n\nReader's question: {question.strip()}"
    )
    messages = [{"role": "system", "content": system_prompt(settings, prompt_template)}, *turns]
    messages.append({"role": "user", "content": user})
    return messages, used


def sources_of(hits: list[Hit]) -> list[Source]:
    """Distinct posts of the hits, ordered by their best relevance (ties: first seen)."""
    best: dict[str, Source] = {}
    for hit in hits:
        current = best.get(hit.post_id)
        if current is None:
            best[hit.post_id] = Source(
                hit.post_id, hit.title, float(hit.relevance), hit.collection, hit.date, hit.url
            )
        elif hit.relevance > current.relevance:
            current.relevance = float(hit.relevance)
    return sorted(best.values(), key=lambda s: s.relevance, reverse=True)


# Answer ---------------------------------------------------------------------------------------------------


class AnswerStream:
    """Iterate for the answer as the reader may see it, a sentence (or a few) per piece; the model is
    called on first iteration, not before.

    Known before iterating: `messages`, `used_hits`, `sources`, `model_label`, `builtin`, `strict`.
    After iterating:
    - `text`: the reader-facing answer (what was yielded): prompt markup the model copied is cut out
      (`leaks`), whole sentences only, and in strict grounding mode only supported ones;
    - `truncated`: the model stopped at max_tokens; the text then ends at its last complete sentence
      and `cut` holds the unfinished one left out;
    - `dropped`: in strict mode, the sentences left out because the check could not support them
      (SentenceSupport: similarity, overlap, unknown details);
    - `grounding`: the check of the answer's sentences when an embedder was given (check mode: of
      `text`, as check_grounding gives it; strict mode: of every sentence judged, kept or dropped);
    - `declined`: the model wrote something but none of it could be shown (every sentence left out,
      cut before its first sentence ended, or only copied markup): `text` is then a fixed message;
    - `raw_text` (everything the model sent), `usage`, `done`, `called_model`.
    Iterating again replays `text` in one piece. LLMError propagates out of the iteration; `text` then
    holds the sentences released before it.
    """

    def __init__(
        self,
        question: str,
        hits: list[Hit],
        settings: Settings,
        history: list[dict] | None = None,
        *,
        prompt_template: str | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.question = question
        self.settings = settings
        if settings.grounding == "strict" and embedder is None:
            raise ValueError("strict grounding checks each sentence: answer() needs the embedder")
        # Sentences are judged before the reader sees them in strict and auto mode (auto: only where the
        # check can run; without an embedder there is no check, as in check mode).
        self.strict = settings.grounding == "strict" or (
            settings.grounding == "auto" and embedder is not None
        )
        self.embedder = embedder
        self.messages, self.used_hits = build_messages(
            question, hits, settings, history, prompt_template=prompt_template
        )
        self.sources = sources_of(self.used_hits)
        self.model_label = describe_llm(settings)
        self.builtin = settings.uses_builtin_llm
        self.usage = Usage()
        self.text = ""
        self.raw_text = ""
        self.done = False
        self.called_model = False
        self.truncated = False  # the model stopped at max_tokens, mid-answer
        self.cut = ""  # the unfinished sentence left out when truncated
        self.leaks: list[str] = []  # prompt markup cut out of the model's text
        self.dropped: list[SentenceSupport] = []
        self.grounding: Grounding | None = None
        self.declined = False  # the model wrote, but none of it could be shown: `text` is a fixed message

    def __iter__(self) -> Iterator[str]:
        if self.done:
            if self.text:
                yield self.text
            return
        if not self.used_hits:
            self.text = NO_HITS_MESSAGE
            self.done = True
            yield self.text
            return
        self.called_model = True
        checker = GroundingChecker(self.used_hits, self.embedder) if self.embedder is not None else None
        judge = None
        if self.strict and checker is not None:
            judge = StrictJudge(checker, lenient=self.settings.grounding == "auto")
        release = Release(post_labels(self.used_hits), judge)
        try:
            for delta in stream_chat(
                self.settings,
                self.messages,
                temperature=self.settings.temperature,
                max_tokens=self.settings.max_tokens,
                usage=self.usage,
                on_finish=self._finished,
            ):
                for piece in release.feed(delta):
                    self.text = release.text
                    yield piece
            for piece in release.finish(truncated=self.truncated):
                self.text = release.text
                yield piece
        finally:
            self.text, self.raw_text = release.text, release.raw
            self.cut, self.leaks = release.cut, release.leaks
            self.dropped = [v.support for v in release.dropped]
        shown = bool(self.text.strip())
        if checker is not None and (shown or self.strict):
            self.grounding = self._grounding(checker, release)
        if not shown and self.raw_text.strip():
            nothing_checked = self.truncated and not release.verdicts
            self.text = CUT_SHORT_MESSAGE if nothing_checked else NOTHING_SUPPORTED_MESSAGE
            self.declined = True
            yield self.text
        self.done = True

    def _grounding(self, checker: GroundingChecker, release: Release) -> Grounding:
        if not self.strict:
            return checker.check(self.text)
        skipped = [v.skipped for v in release.verdicts if v.skipped]
        judged = any(v.support.judged for v in release.verdicts)
        return Grounding(
            [v.support for v in release.verdicts], skipped=skipped[0] if skipped and not judged else ""
        )

    def _finished(self, reason: str) -> None:
        self.truncated = reason == "length"


def answer(
    question: str,
    hits: list[Hit],
    settings: Settings,
    history: list[dict] | None = None,
    *,
    prompt_template: str | None = None,
    embedder: Embedder | None = None,
) -> AnswerStream:
    """Prepare an answer; iterate the result to stream it. No hits → a fixed message, no model call.

    `embedder` (the table's): the answer's grounding is checked (`stream.grounding`); strict grounding
    (settings.grounding) needs it.
    """
    return AnswerStream(question, hits, settings, history, prompt_template=prompt_template, embedder=embedder)
