"""One turn of a conversation, from a reader's question to the reply: the one path that the chat, the
HTTP API, `inkwell ask` and `inkwell eval --answers` all take, so what is measured is what readers get.

    turn = take_turn(question, settings, store=store, embedder=embedder, history=turns)
    turn.query        # what was searched for (a follow-up made standalone, a translation), or the question
    turn.route        # which collections were searched, and why
    turn.reply        # core/answer/reply.py's Reply: iterate it for the text (a generated one streams)
    turn.notes        # the router's and the retrieval's notes
    turn.skipped      # the steps that failed and were skipped ("rewrite", "translate"), with the error

The steps, in order: a follow-up that refers back is made standalone with the history (only then: a
new question is searched as asked) → the question is translated into the writings' language (when
configured) → the collections are routed (unless the reader chose them) → retrieval → the reply, which
applies the relevance bar and quotes, generates or declines. A model that fails at the rewrite or the
translation never fails the turn: the question is searched as asked, and the step is in `skipped`.

`search_turn` stops before the reply, for callers that answer one search several ways (the evaluation
compares answer modes on the same hits).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from core.answer.question import FollowUp, followup_query, translate_for_corpus
from core.answer.reply import Reply, reply
from core.config import Settings
from core.embed import Embedder
from core.llm import LLMError
from core.profiles import Bar
from core.search import Retrieval, Route, bar_for_table, route_and_search
from core.store import Store

# What a reader is told when a step was skipped (the error itself is for the owner).
SKIPPED = {"rewrite": "Could not rewrite the follow-up", "translate": "Could not translate the question"}


def skipped_note(step: str, detail: str = "") -> str:
    """The sentence telling that `step` failed and the question was searched as asked; `detail` (the
    error, for the owner only) goes in brackets."""
    return f"{SKIPPED[step]}{f' ({detail})' if detail else ''}; searching for it as asked."


@dataclass
class Searched:
    """A question made ready and searched: everything of a turn but the reply."""

    question: str
    query: str
    route: Route
    retrieval: Retrieval
    history: list[dict] = field(default_factory=list)
    skipped: dict[str, LLMError] = field(default_factory=dict)
    bar: Bar | None = None  # the relevance bar on the searched table's floor (None: the profile's as is)
    follow_up: FollowUp = ""  # "joined", "more" or "" (core/answer/question.py)

    @property
    def rewritten(self) -> bool:
        """Whether what was searched differs from what the reader asked (shown as "Searched for: …")."""
        return self.query.strip() != self.question.strip()

    @property
    def notes(self) -> list[str]:
        """The router's and the retrieval's notes (a broken rules file, a search that fell back)."""
        return [*self.route.notes, *self.retrieval.notes]

    def answer(self, settings: Settings, embedder: Embedder, *, mode: str | None = None) -> Reply:
        """The reply to the question from these hits (see core/answer/reply.py), in `mode` or the
        settings' answer mode."""
        return reply(
            self.question,
            self.retrieval.hits,
            settings,
            embedder,
            history=self.history,
            mode=mode,
            query=self.query,
            bar=self.bar,
            follow_up=self.follow_up,
        )


@dataclass
class Turn:
    """A searched question and its reply (not yet iterated: a generated answer streams when read)."""

    searched: Searched
    reply: Reply

    @property
    def question(self) -> str:
        return self.searched.question

    @property
    def query(self) -> str:
        return self.searched.query

    @property
    def route(self) -> Route:
        return self.searched.route

    @property
    def skipped(self) -> dict[str, LLMError]:
        return self.searched.skipped

    @property
    def rewritten(self) -> bool:
        return self.searched.rewritten

    @property
    def notes(self) -> list[str]:
        return self.searched.notes


def search_turn(
    question: str,
    settings: Settings,
    *,
    store: Store,
    embedder: Embedder,
    history: Sequence[dict] | None = None,
    collections: Sequence[str] | None = None,
    use_model: bool = True,
) -> Searched:
    """Make `question` ready (follow-up rewrite, translation) and search for it.

    `history` is the earlier turns ({"role", "content"} dicts, oldest first); `collections` the ones the
    reader chose (None: the router decides; [] means all); `use_model=False` rewrites a follow-up without
    the model (joined to the previous question), for when every answer slot is taken.
    """
    turns = [dict(m) for m in history or []]
    skipped: dict[str, LLMError] = {}
    query = question
    follow_up: FollowUp = ""
    if turns:
        try:
            query, follow_up = followup_query(question, turns, settings, use_model=use_model)
        except LLMError as exc:
            skipped["rewrite"] = exc
    if settings.should_translate:
        try:
            translated = translate_for_corpus(query, settings, store)
        except LLMError as exc:
            skipped["translate"] = exc
        else:
            if follow_up == "joined" and translated != query:
                # Its quote would be scored against the question as asked, in a language the posts'
                # model may not read: the translated join is scored as any question.
                follow_up = ""
            query = translated
    decision, retrieval = route_and_search(
        query,
        settings,
        store=store,
        embedder=embedder,
        chosen=None if collections is None else list(collections),
    )
    bar = bar_for_table(store, embedder)
    return Searched(question, query, decision, retrieval, turns, skipped, bar, follow_up)


def take_turn(
    question: str,
    settings: Settings,
    *,
    store: Store,
    embedder: Embedder,
    history: Sequence[dict] | None = None,
    collections: Sequence[str] | None = None,
    mode: str | None = None,
    use_model: bool = True,
) -> Turn:
    """One question answered: `search_turn`, then the reply in `mode` (default: the settings')."""
    searched = search_turn(
        question,
        settings,
        store=store,
        embedder=embedder,
        history=history,
        collections=collections,
        use_model=use_model,
    )
    return Turn(searched, searched.answer(settings, embedder, mode=mode))
