"""Starter questions to suggest to the owner that the chat itself answers.

    suggested = answered_starters(store, settings, embedder, count=4)
    suggested.kept      # the Starters (core/search/starters.py) the blog's own turn answers, in order
    suggested.declined  # the ones it would decline ("I haven't written about that"): not suggested

A starter is made from what a post names (its title, a heading), not from what the relevance bar
accepts, so some, e.g. "What is your post “<title>” about?", would be declined when a reader clicks
them. Each is asked through `take_turn`, the path every reader's question takes, in extractive mode:
the bar decides alike in every mode, and no model writes a word. Nothing takes a declined one's place:
the caller says how many were left out, and the owner types the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.answer.turn import take_turn
from core.config import MODEL_RERANKERS, Settings
from core.embed import Embedder
from core.search.starters import Starter, suggest_starters
from core.store import Store
from core.text import plural


@dataclass(frozen=True)
class Suggested:
    kept: list[Starter] = field(default_factory=list)
    declined: list[Starter] = field(default_factory=list)

    @property
    def declined_note(self) -> str:
        """What was left out and why ("" when nothing was), for the owner."""
        if not self.declined:
            return ""
        asked = "; ".join(f"“{s.question}”" for s in self.declined)
        return (
            f"Left out {plural(len(self.declined), 'suggested question')} the chat would decline "
            f"(“I haven't written about that”): {asked}. Type your own instead."
        )


def answered_starters(store: Store, settings: Settings, embedder: Embedder, count: int = 4) -> Suggested:
    """`suggest_starters(store, count)`, split into those a reader asking them would get an answer to
    and those the chat would decline. No model is called: the starters are in the posts' own words
    (nothing to translate), and a model reranker is left out (the fused order is judged instead)."""
    quiet = settings.replace(
        translate_question=False,
        reranker="none" if settings.reranker in MODEL_RERANKERS else settings.reranker,
    )
    kept: list[Starter] = []
    declined: list[Starter] = []
    for starter in suggest_starters(store, count):
        turn = take_turn(starter.question, quiet, store=store, embedder=embedder, mode="extractive")
        (declined if turn.reply.mode == "none" else kept).append(starter)
    return Suggested(kept, declined)
