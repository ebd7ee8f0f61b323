"""`inkwell search` and `inkwell route`: what retrieval finds for a question, and why."""

from __future__ import annotations

from typing import Any

import click

from core.cli.main import (
    HITS,
    RELEVANCE,
    checked_question,
    command,
    main,
    read_question,
    settings_for,
    shorten,
)
from core.cli.output import echo, print_json
from core.config import RERANKERS, RETRIEVAL_MODES, Settings
from core.text import check_question, plural

MODE_HELP = "Retrieval: dense (embeddings), fts (BM25 keywords) or hybrid (both, fused)."
NO_ROUTE_HELP = "Search every collection: no collections routing for this call (see `inkwell route`)."
RERANK_HELP = (
    "Rerank the best rerank_top_n candidates: none, llm (the chat model judges each) or cross-encoder "
    "(rerank_model). Default: the reranker setting (none)."
)


def search_settings(
    data_dir: str | None,
    k: int | None,
    threshold: float | None,
    mode: str | None = None,
    rerank: str | None = None,
) -> Settings:
    settings = settings_for(data_dir, threshold=threshold, retrieval_mode=mode, reranker=rerank)
    if k is not None:
        settings = settings.replace(
            max_chunks=k, min_chunks=min(settings.min_chunks, k), top_k=max(settings.top_k, k)
        )
    return settings


@command(main)
@click.argument("question", required=False)
@click.option(
    "--queries", type=click.Path(exists=True, dir_okay=False), help="JSONL file of {id, text}: batch mode."
)
@click.option("--k", type=HITS, help="At most this many hits (overrides max_chunks).")
@click.option("--threshold", type=RELEVANCE, help="Relevance threshold (0..1).")
@click.option("--collection", "collections", multiple=True, help="Only these collections (repeatable).")
@click.option("--no-route", is_flag=True, help=NO_ROUTE_HELP)
@click.option("--mode", type=click.Choice(RETRIEVAL_MODES), help=MODE_HELP + " Default: retrieval_mode.")
@click.option("--rerank", type=click.Choice(RERANKERS), help=RERANK_HELP)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per question.")
def search(
    question: str | None,
    queries: str | None,
    k: int | None,
    threshold: float | None,
    collections: tuple[str, ...],
    no_route: bool,
    mode: str | None,
    rerank: str | None,
    as_json: bool,
    data_dir: str | None,
) -> None:
    """Find the chunks most relevant to a question (or to every question in --queries); QUESTION '-'
    reads it from standard input (UTF-8).

    Each hit shows its relevance and why it was found: its rank and cosine relevance in the dense
    search, its rank and BM25 score in the keyword search.
    """
    from core.embed import embedder_for_store
    from core.evaluate import load_queries
    from core.search import route_and_search
    from core.store import Store

    if (question is not None) == bool(queries):
        raise click.UsageError("give either a QUESTION or --queries FILE")
    settings = search_settings(data_dir, k, threshold, mode, rerank)
    if no_route:
        settings = settings.replace(routing="off")
    if question is not None:  # a --queries file is the owner's query set: not limited
        question = checked_question(read_question(question), settings)
    store = Store(settings.data_dir)
    checked_collections(store, collections)
    embedder = embedder_for_store(settings, store.model_id())  # loads the model only when used
    batch = [(q.id, q.text) for q in load_queries(queries)] if queries else [(None, question or "")]
    if not batch:  # an empty --queries file: said, as eval and calibrate say it, not a silent success
        raise click.ClickException(f"{queries} holds no questions")
    failed = 0
    for query_id, text in batch:
        try:
            # Not length-limited (the owner's own set), but a broken character would crash the tokenizer.
            text = check_question(text, 0) if query_id is not None else text
            decision, result = route_and_search(
                text, settings, store=store, embedder=embedder, chosen=list(collections) or None
            )
        except ValueError as exc:  # this question cannot be searched (e.g. empty): say so, go on
            if query_id is None:
                raise
            failed += 1
            if as_json:
                print_json({"id": query_id, "query": text, "error": str(exc)})
            else:
                echo(f"# {query_id}: {exc}", fg="red", err=True)
            continue
        print_route(decision)
        for note in result.notes:
            echo(note, fg="yellow", err=True)
        if as_json:
            out: dict[str, Any] = {
                "query": text,
                "hits": [h.to_json() for h in result.hits],
                "route": decision.to_json(),
            }
            if query_id is not None:
                out = {"id": query_id, **out}
            print_json(out)
            continue
        if query_id is not None:
            echo(f"# {query_id}: {text}", bold=True)
        if not result.hits:
            echo(no_hits_note(result, settings, store), err=True)
        for hit in result.hits:
            section = f" — {hit.section}" if hit.section else ""
            echo(f"{hit.rank:>3}. {hit.relevance:.4f}  {hit.title}{section}  [{hit.chunk_id}]", bold=True)
            why = _why(hit, result.mode)
            if why:
                echo(f"     {why}", dim=True)
            echo("     " + shorten(hit.text, 220))
    if failed:
        raise click.ClickException(f"{failed} of {plural(len(batch), 'question')} could not be searched")


def no_hits_note(result: Any, settings: Settings, store: Any) -> str:
    """Why a search found nothing, for stderr: an empty table, or no candidate reaching the threshold
    (the --json output says it with "hits": [])."""
    if not store.counts()[1]:
        return "no chunks matched: the table is empty (ingest some posts first)"
    if result.candidates:
        return f"no chunks matched: none reached the relevance threshold {settings.threshold:g} (--threshold)"
    return "no chunks matched"


def checked_ingested(store: Any, data_dir: Any) -> None:
    """A data error (exit 1; under --json a JSON error) when the table holds no chunks: the owner asking an
    empty data directory (a fresh one, or a mistyped --data-dir) would otherwise be told "I haven't
    written about that", as a reader is, and the question logged as unanswered."""
    from core.store import StoreError
    from core.store.location import describe

    if not store.counts()[1]:
        raise StoreError(
            f"nothing is ingested in {describe(data_dir)} yet: add posts with `inkwell ingest PATH...` "
            "(files, folders, a blog export or a feed's address), or name another --data-dir"
        )


def checked_collections(store: Any, collections: tuple[str, ...]) -> None:
    """A usage error (exit 2) before any search when every collection named by --collection is one the
    table does not have: a typo would otherwise be answered "I haven't written about that" and logged
    as an unanswered reader question. Some known and some not: the unknown are named and left out."""
    from core.search.route import unknown_collections

    if collections and not set(collections) & set(store.collections()):
        raise click.BadParameter(unknown_collections(store, collections)[0], param_hint="'--collection'")


def _why(hit: Any, mode: str) -> str:
    """Why a hit was found, e.g. `dense #3 0.512 · keyword #1 7.31` ('-': that search missed it), and its
    rerank score when a reranker judged it."""
    keyword = f"keyword #{hit.keyword_rank} {hit.keyword_score:.2f}" if hit.keyword_rank else "keyword -"
    if mode == "dense":
        parts = []  # the relevance is the dense score
    elif mode == "fts":
        parts = [keyword]
    else:
        dense = f"#{hit.dense_rank}" if hit.dense_rank else "-"
        parts = [f"dense {dense} {hit.dense_relevance or 0.0:.3f}", keyword]
    if hit.rerank_score is not None:
        parts.append(f"rerank {hit.rerank_score:.3f}")
    return " · ".join(parts)


def print_route(decision: Any) -> None:
    """The router's decision on stderr; silent when the reader chose, routing is off or there is one
    collection, so output stays as it was."""
    for note in decision.notes:
        echo(note, fg="yellow", err=True)
    if decision.status in ("routed", "unsure"):
        echo(f"route: {decision.summary()}", dim=True, err=True)


@command(main, "route")
@click.argument("question")
@click.option("--json", "as_json", is_flag=True, help="Print the decision as one JSON object.")
def route_cmd(question: str, as_json: bool, data_dir: str | None) -> None:
    """Show which collection a question would be searched in, and why (rules file: DATA_DIR/routes.toml);
    QUESTION '-' reads it from standard input (UTF-8).

    Scores are each collection's nearest-chunk similarity, plus the rule weight when one of its keywords
    matched.
    """
    from core.embed import embedder_for_store
    from core.search import route
    from core.store import Store

    settings = settings_for(data_dir)
    question = checked_question(read_question(question), settings)
    store = Store(settings.data_dir)
    decision = route(question, store, embedder_for_store(settings, store.model_id()), settings)
    if as_json:
        print_json(decision.to_json())
        return
    for note in decision.notes:
        echo(note, fg="yellow", err=True)
    echo(decision.summary(), bold=True)
    for reason in decision.reasons:
        echo(f"  {reason}")
    for name, score in decision.scores.items():
        rule = f"  rule: {', '.join(decision.rule_hits[name])}" if name in decision.rule_hits else ""
        echo(f"  {name:<20} score {score:.3f}  nearest chunk {decision.similarity[name]:.3f}{rule}")
