"""Which LLM preparation stages run, what one post's preparation produced, and request budgets."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from core.config import Settings
from core.llm.structured import LLMStats, endpoint_label
from core.models import Chunk, Post
from core.prepare.rewrite import RewriteProposal

# Bump when prompts or the way replies are used change: stored posts are then prepared again.
PREP_VERSION = "1"
REMOTE_INPUT_BUDGET = 60_000  # tiktoken tokens per request when prep_max_input_tokens is not set
BUILTIN_TOKEN_RATIO = 1.5  # SmolLM2 tokens per tiktoken token on prose (see core/answer/generate.py)
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


def input_budget(settings: Settings) -> int:
    """Prompt tokens (tiktoken) one preparation request may carry."""
    if settings.prep_max_input_tokens:
        return settings.prep_max_input_tokens
    if settings.uses_builtin_llm:
        return int((settings.local_context - settings.builtin_max_tokens - 256) / BUILTIN_TOKEN_RATIO)
    return REMOTE_INPUT_BUDGET
