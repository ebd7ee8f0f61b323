"""`inkwell ask`: a question answered from the posts, with its sources and grounding."""

from __future__ import annotations

import time
from typing import Any

import click

from core.cli.main import (
    checked_question,
    command,
    main,
    read_question,
    settings_for,
    shorten,
)
from core.cli.output import MULTILINE, echo, print_json
from core.cli.search import (
    NO_ROUTE_HELP,
    RERANK_HELP,
    checked_collections,
    checked_ingested,
    print_route,
)
from core.config import ANSWER_MODES, GROUNDINGS, RERANKERS
from core.text import plural

ANSWER_MODE_HELP = (
    "extractive: the author's own sentences, no model; generative: the chat model answers from the "
    "excerpts; auto (default, env INKWELL_ANSWER_MODE): extractive with the built-in model, generative "
    "with an OpenAI key or server."
)


@command(main)
@click.argument("question")
@click.option("--collection", "collections", multiple=True, help="Only these collections (repeatable).")
@click.option("--no-route", is_flag=True, help=NO_ROUTE_HELP)
@click.option("--rerank", type=click.Choice(RERANKERS), help=RERANK_HELP)
@click.option("--answer-mode", type=click.Choice(ANSWER_MODES), help=ANSWER_MODE_HELP)
@click.option(
    "--grounding",
    type=click.Choice(GROUNDINGS),
    help="Generated answers: auto or strict (leave out sentences the excerpts don't support) or check "
    "(show and list them). Env INKWELL_GROUNDING; default auto.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the reply (sentences with their post ids) as JSON."
)
def ask(
    question: str,
    collections: tuple[str, ...],
    no_route: bool,
    rerank: str | None,
    answer_mode: str | None,
    grounding: str | None,
    as_json: bool,
    data_dir: str | None,
) -> None:
    """Answer a question from the author's writings, citing the posts used.

    The answer is the author's own sentences (extractive), a generated answer in their voice
    (generative), or "I haven't written about that" with the closest posts when nothing retrieved
    answers the question.

    QUESTION '-' reads the question from standard input (UTF-8): `inkwell ask - < question.txt`.
    """
    from core.answer import skipped_note, take_turn
    from core.answer.owner import with_owner
    from core.answer.record import record
    from core.embed import embedder_for_store
    from core.llm import describe_llm
    from core.store import Store
    from core.store.questions import QuestionLog

    started = time.perf_counter()
    settings = settings_for(
        data_dir,
        reranker=rerank,
        routing="off" if no_route else None,
        answer_mode=answer_mode,
        grounding=grounding,
    )
    question = checked_question(read_question(question), settings)  # empty or too long: before any work
    store = Store(settings.data_dir)
    checked_ingested(store, settings.data_dir)  # the owner's empty table is no reader's unanswered question
    checked_collections(store, collections)  # a mistyped name is no reader's unanswered question
    settings = with_owner(settings, store)  # the persona and decline text saved on the Settings page
    embedder = embedder_for_store(settings, store.model_id())
    turn = take_turn(
        question, settings, store=store, embedder=embedder, collections=list(collections) or None
    )
    for step, exc in turn.skipped.items():
        echo(skipped_note(step, str(exc)), err=True)
    print_route(turn.route)
    for note in turn.searched.retrieval.notes:  # the router's were printed with the route
        echo(note, fg="yellow", err=True)
    answered, query = turn.reply, turn.query
    label = describe_llm(settings) if answered.mode == "generative" else None
    if not as_json and label:
        echo(f"({label})", dim=True, err=True)
    for delta in answered:
        if not as_json:
            echo(delta, keep=MULTILINE, nl=False)
    if answered.fallback is not None:  # quoted instead: no model answered
        label = None
        if not as_json:
            echo(err=True)  # its own line after the streamed answer: echo would show "\n" as written
            echo(f"{answered.fallback_note} ({answered.fallback})", fg="yellow", err=True)
    logged = QuestionLog.for_settings(settings, store)
    question_id = record(logged, answered, question, "cli", time.perf_counter() - started)
    if as_json:
        print_json(
            {
                "question": question,
                "question_id": question_id,
                "search_query": query,
                **answered.to_json(),
                "model": label,
                "builtin_model": bool(label) and settings.uses_builtin_llm,
                "truncated": answered.truncated,
                "grounding_mode": settings.grounding,
                "dropped": [s.to_json() for s in answered.dropped],
                "grounding": answered.grounding.to_json() if answered.grounding else None,
                "context": [h.to_json() for h in answered.used_hits],
                "route": turn.route.to_json(),
            }
        )
        return
    echo("\n", keep=MULTILINE)
    _explain(answered, settings)


def _explain(answered: Any, settings: Any) -> None:
    """What a reader should know about the reply: where it came from and how far to trust it."""
    if answered.owner_note:
        echo(f"Note: {answered.owner_note}", err=True)
    if answered.mode == "none":
        if answered.suggestions:
            echo("The closest posts:", bold=True)
            for post in answered.suggestions:
                echo(f"  - {post.title} ({post.post_id})" + (f" {post.url}" if post.url else ""))
        return
    if answered.mode == "extractive":
        echo("The author's own sentences, quoted from the posts below (no model wrote them).", err=True)
    if answered.truncated:
        echo(
            "The answer reached the length limit (INKWELL_MAX_TOKENS): it ends at its last complete sentence.",
            fg="yellow",
            err=True,
        )
    grounding = answered.grounding
    if grounding is not None:
        echo(f"Grounding: {grounding.summary()}.", bold=True, err=True)
        listed = answered.dropped or grounding.unsupported
        if answered.dropped:
            echo(f"Left out of the answer: {plural(len(answered.dropped), 'sentence')}.", err=True)
        for item in listed:
            label = "left out, not found in the excerpts" if answered.dropped else "not found in the excerpts"
            echo(f"  {label}: {shorten(item.sentence, 160)}", fg="yellow", err=True)
            if item.unknown_details:
                echo(f"    (no excerpt mentions: {', '.join(item.unknown_details)})", fg="yellow", err=True)
    if answered.mode == "generative" and settings.uses_builtin_llm:
        echo(
            "Generated by the built-in small offline model: expect rough answers. "
            "Set OPENAI_API_KEY or OPENAI_BASE_URL for a real one, or use --answer-mode extractive.",
            fg="yellow",
            err=True,
        )
    if answered.sources:
        echo("Sources:", bold=True)
        for source in answered.sources:
            # With an address: the link that opens the post at the sentences quoted from it.
            link = source.link or source.url
            echo(f"  - {source.title} ({source.post_id})" + (f" {link}" if link else ""))
