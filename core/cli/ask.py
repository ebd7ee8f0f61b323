"""`inkwell ask`: a question answered from the posts, with its sources and grounding."""

from __future__ import annotations

import click

from core.cli.main import (
    command,
    main,
    print_json,
    settings_for,
    shorten,
)
from core.cli.search import NO_ROUTE_HELP, RERANK_HELP, print_route
from core.config import RERANKERS


@command(main)
@click.argument("question")
@click.option("--collection", "collections", multiple=True, help="Only these collections (repeatable).")
@click.option("--no-route", is_flag=True, help=NO_ROUTE_HELP)
@click.option("--rerank", type=click.Choice(RERANKERS), help=RERANK_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print answer, sources and model as one JSON object.")
def ask(
    question: str,
    collections: tuple[str, ...],
    no_route: bool,
    rerank: str | None,
    as_json: bool,
    data_dir: str | None,
) -> None:
    """Answer a question in the author's voice from their writings, citing the posts used."""
    from core.answer import answer, translate_for_corpus
    from core.embed import embedder_for_store
    from core.search import route_and_search
    from core.store import Store

    settings = settings_for(data_dir, reranker=rerank, routing="off" if no_route else None)
    store = Store(settings.data_dir)
    embedder = embedder_for_store(settings, store.model_id())
    query = translate_for_corpus(question, settings) if settings.should_translate else question
    decision, result = route_and_search(
        query, settings, store=store, embedder=embedder, chosen=list(collections) or None
    )
    print_route(decision)
    for note in result.notes:
        click.secho(note, fg="yellow", err=True)
    stream = answer(question, result.hits, settings, embedder=embedder)
    if not as_json:
        click.secho(f"({stream.model_label})", dim=True, err=True)
    for delta in stream:
        if not as_json:
            click.echo(delta, nl=False)
    sources = [s.to_json() for s in stream.sources]
    grounding = stream.grounding
    if as_json:
        print_json(
            {
                "question": question,
                "search_query": query,
                "answer": stream.text,
                "model": stream.model_label,
                "builtin_model": stream.builtin,
                "truncated": stream.truncated,
                "grounding_mode": settings.grounding,
                "dropped": [s.to_json() for s in stream.dropped],
                "sources": sources,
                "context": [h.to_json() for h in stream.used_hits],
                "grounding": grounding.to_json() if grounding else None,
                "route": decision.to_json(),
            }
        )
        return
    click.echo("\n")
    if stream.truncated:
        click.secho(
            "The answer reached the length limit (INKWELL_MAX_TOKENS): it ends at its last complete sentence.",
            fg="yellow",
            err=True,
        )
    if grounding is not None:
        click.secho(f"Grounding: {grounding.summary()}.", bold=True, err=True)
        listed = stream.dropped or grounding.unsupported
        for item in listed:
            label = "left out, not found in the excerpts" if stream.dropped else "not found in the excerpts"
            click.secho(f"  {label}: {shorten(item.sentence, 160)}", fg="yellow", err=True)
            if item.unknown_details:
                click.secho(
                    f"    (no excerpt mentions: {', '.join(item.unknown_details)})", fg="yellow", err=True
                )
    if stream.builtin:
        click.secho(
            "Answered by the built-in small offline model: expect rough answers. "
            "Set OPENAI_API_KEY or OPENAI_BASE_URL for a real one.",
            fg="yellow",
            err=True,
        )
    if sources:
        click.secho("Sources:", bold=True)
        for source in sources:
            click.echo(f"  - {source.get('title')} ({source.get('post_id')})")
