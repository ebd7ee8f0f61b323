"""The `inkwell` command line: the same core API the app uses, for scripting and batch work.

Output for people goes to stdout, progress and warnings to stderr, and `--json` gives stable
machine-readable output, so commands compose: `inkwell posts list --ids | inkwell posts delete`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

import click

from core.config import POST_SCORINGS, RERANKERS, RETRIEVAL_MODES, ConfigError, Settings

DATA_DIR_HELP = "Folder of the LanceDB tables (env INKWELL_DATA_DIR, default data/lancedb)."
EMBED_MODEL_HELP = (
    "Embedding model of a new table (env INKWELL_EMBED_MODEL): all-MiniLM-L6-v2 (English) or "
    "multilingual-e5-small (questions in any language); default: chosen by the posts' language. An "
    "existing table keeps its model: switch with `inkwell reembed --embed-model`."
)


def _settings(data_dir: str | None, **overrides: Any) -> Settings:
    values = {k: v for k, v in overrides.items() if v is not None}
    if data_dir:
        values["data_dir"] = data_dir
    return Settings.load(values)


def _known_errors() -> tuple[type[BaseException], ...]:
    from core.embed import EmbedError
    from core.llm import LLMError
    from core.store import StoreError

    return (ConfigError, StoreError, EmbedError, LLMError, ValueError, FileNotFoundError)


def command(group: click.Group, name: str | None = None) -> Callable:
    """A subcommand with `--data-dir`, whose known errors print as one line instead of a traceback."""

    def decorate(fn: Callable) -> Callable:
        @wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except _known_errors() as exc:
                raise click.ClickException(str(exc)) from exc

        wrapper = click.option("--data-dir", envvar="INKWELL_DATA_DIR", help=DATA_DIR_HELP)(wrapper)
        return group.command(name)(wrapper)

    return decorate


def _print_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="inkwell")
def main() -> None:
    """Inkwell: ask an author's writings. Ingest posts, search them, and get grounded answers."""


# Ingest ------------------------------------------------------------------------------------------


@command(main)
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--collection", help="Put every post in this collection (default: front matter or top folder).")
@click.option("--title", help="Title for text read from standard input (PATH '-').")
@click.option("--force", is_flag=True, help="Re-process posts even when unchanged.")
@click.option("--strategy", type=click.Choice(["paragraph", "fixed"]), help="Chunking strategy.")
@click.option("--chunk-tokens", type=int, help="Target chunk size in tokens (paragraph strategy).")
@click.option("--embed-model", help=EMBED_MODEL_HELP)
@click.option("--rewrite", is_flag=True, help="LLM: make 'this', 'those people'… say what they mean.")
@click.option("--llm-chunks", is_flag=True, help="LLM: cut chunks by topic (checked against the post).")
@click.option("--llm-keywords", is_flag=True, help="LLM: 1-6 keywords per chunk, seeing the whole post.")
@click.option("--llm-concurrency", type=click.IntRange(min=1), help="Posts prepared by the LLM at once (4).")
@click.option("--dry-run", is_flag=True, help="With LLM options: print rewrites and chunks, store nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def ingest(
    paths: tuple[str, ...],
    collection: str | None,
    title: str | None,
    force: bool,
    strategy: str | None,
    chunk_tokens: int | None,
    embed_model: str | None,
    rewrite: bool,
    llm_chunks: bool,
    llm_keywords: bool,
    llm_concurrency: int | None,
    dry_run: bool,
    as_json: bool,
    data_dir: str | None,
) -> None:
    """Ingest files and folders (.md .txt .html .json .jsonl, bundles); '-' reads one post from stdin.

    Idempotent: unchanged posts are skipped and unchanged chunks are never embedded again. The LLM
    options (at most two requests per post, replies cached) use the configured chat model.
    """
    from core.ingest import ingest_posts
    from core.parse import parse_paths, parse_text
    from core.prepare import LLMPrepOptions, dry_run_lines, outcome_lines

    llm = LLMPrepOptions(rewrite, llm_chunks, llm_keywords, llm_concurrency)

    settings = _settings(
        data_dir, chunk_strategy=strategy, chunk_tokens=chunk_tokens, embed_model=embed_model
    )
    files = [p for p in paths if p != "-"]
    parsed = parse_paths(files, collection=collection)
    if "-" in paths:
        if not title:
            raise click.UsageError("reading a post from standard input needs --title")
        parsed.posts.append(parse_text(sys.stdin.read(), title, collection=collection or "writings"))
    for error in parsed.errors:
        click.secho(f"skipped {error}", fg="yellow", err=True)
    if dry_run:
        if not llm.enabled:
            raise click.UsageError("--dry-run needs --rewrite, --llm-chunks or --llm-keywords")
        for line in dry_run_lines(parsed.posts, settings, llm):
            click.echo(line)
        return

    with click.progressbar(length=max(1, len(parsed.posts)), label="Ingesting", file=sys.stderr) as bar:
        last = [0]

        def progress(done: int, total: int, message: str) -> None:
            bar.update(done - last[0])
            last[0] = done

        report = ingest_posts(
            parsed.posts, settings, progress=progress, errors=parsed.errors, force=force, llm=llm
        )

    for line in outcome_lines(report, llm):
        click.echo(line, err=True)
    _finish(report, as_json)


def _finish(report: Any, as_json: bool) -> None:
    """Print an ingest report (failures to stderr); exit 1 when any file or post failed."""
    for outcome in report.outcomes:
        if outcome.status == "failed":
            click.secho(f"failed {outcome.source} ({outcome.post_id}): {outcome.message}", fg="red", err=True)
    if as_json:
        _print_json(report.to_json())
    else:
        click.echo(report.summary())
    if not report.ok:
        sys.exit(1)


# Search and ask ----------------------------------------------------------------------------------


MODE_HELP = "Retrieval: dense (embeddings), fts (BM25 keywords) or hybrid (both, fused)."
NO_ROUTE_HELP = "Search every collection: no collections routing for this call (see `inkwell route`)."
RERANK_HELP = (
    "Rerank the best rerank_top_n candidates: none, llm (the chat model judges each) or cross-encoder "
    "(rerank_model). Default: the reranker setting (none)."
)


def _search_settings(
    data_dir: str | None,
    k: int | None,
    threshold: float | None,
    mode: str | None = None,
    rerank: str | None = None,
) -> Settings:
    settings = _settings(data_dir, threshold=threshold, retrieval_mode=mode, reranker=rerank)
    if k is not None:
        if k < 1:
            raise click.BadParameter("--k must be at least 1")
        settings = settings.replace(
            max_chunks=k, min_chunks=min(settings.min_chunks, k), top_k=max(settings.top_k, k)
        )
    return settings


@command(main)
@click.argument("question", required=False)
@click.option(
    "--queries", type=click.Path(exists=True, dir_okay=False), help="JSONL file of {id, text}: batch mode."
)
@click.option("--k", type=int, help="At most this many hits (overrides max_chunks).")
@click.option("--threshold", type=float, help="Relevance threshold (0..1).")
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
    """Find the chunks most relevant to a question (or to every question in --queries).

    Each hit shows its relevance and why it was found: its rank and cosine relevance in the dense
    search, its rank and BM25 score in the keyword search.
    """
    from core.embed import embedder_for_store
    from core.evaluate import load_queries
    from core.route import route_and_search
    from core.store import Store

    if bool(question) == bool(queries):
        raise click.UsageError("give either a QUESTION or --queries FILE")
    settings = _search_settings(data_dir, k, threshold, mode, rerank)
    if no_route:
        settings = settings.replace(routing="off")
    store = Store(settings.data_dir)
    embedder = embedder_for_store(settings, store.model_id())  # loads the model only when used
    batch = [(q.id, q.text) for q in load_queries(queries)] if queries else [(None, question or "")]
    for query_id, text in batch:
        decision, result = route_and_search(
            text, settings, store=store, embedder=embedder, chosen=list(collections) or None
        )
        _print_route(decision)
        for note in result.notes:
            click.secho(note, fg="yellow", err=True)
        if as_json:
            out: dict[str, Any] = {
                "query": text,
                "hits": [h.to_json() for h in result.hits],
                "route": decision.to_json(),
            }
            if query_id is not None:
                out = {"id": query_id, **out}
            _print_json(out)
            continue
        if query_id is not None:
            click.secho(f"# {query_id}: {text}", bold=True)
        for hit in result.hits:
            section = f" — {hit.section}" if hit.section else ""
            click.secho(
                f"{hit.rank:>3}. {hit.relevance:.4f}  {hit.title}{section}  [{hit.chunk_id}]", bold=True
            )
            why = _why(hit, result.mode)
            if why:
                click.secho(f"     {why}", dim=True)
            click.echo("     " + _shorten(hit.text, 220))


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


def _modes(values: tuple[str, ...], default: str) -> list[str]:
    """--mode values, repeatable and/or comma-separated, in order, without repeats."""
    return _listed(values, RETRIEVAL_MODES, default, "'--mode'")


def _listed(values: tuple[str, ...], allowed: tuple[str, ...], default: str, hint: str) -> list[str]:
    """Option values, repeatable and/or comma-separated, in order, without repeats."""
    chosen = [v.strip().lower() for value in values for v in value.split(",") if v.strip()]
    for value in chosen:
        if value not in allowed:
            raise click.BadParameter(f"{value!r} is not one of {', '.join(allowed)}", param_hint=hint)
    return list(dict.fromkeys(chosen)) or [default]


def _print_route(decision: Any) -> None:
    """The router's decision on stderr; silent when the reader chose, routing is off or there is one
    collection, so output stays as it was."""
    for note in decision.notes:
        click.secho(note, fg="yellow", err=True)
    if decision.status in ("routed", "unsure"):
        click.secho(f"route: {decision.summary()}", dim=True, err=True)


def _shorten(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


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
    from core.grounding import check_grounding
    from core.route import route_and_search
    from core.store import Store

    settings = _settings(data_dir, reranker=rerank, routing="off" if no_route else None)
    store = Store(settings.data_dir)
    embedder = embedder_for_store(settings, store.model_id())
    query = translate_for_corpus(question, settings) if settings.should_translate else question
    decision, result = route_and_search(
        query, settings, store=store, embedder=embedder, chosen=list(collections) or None
    )
    _print_route(decision)
    for note in result.notes:
        click.secho(note, fg="yellow", err=True)
    stream = answer(question, result.hits, settings)
    if not as_json:
        click.secho(f"({stream.model_label})", dim=True, err=True)
    for delta in stream:
        if not as_json:
            click.echo(delta, nl=False)
    sources = [s.to_json() for s in stream.sources]
    grounding = check_grounding(stream.text, stream.used_hits, embedder) if stream.called_model else None
    if as_json:
        _print_json(
            {
                "question": question,
                "search_query": query,
                "answer": stream.text,
                "model": stream.model_label,
                "builtin_model": stream.builtin,
                "truncated": stream.truncated,
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
            "The answer reached the length limit (--max-tokens / INKWELL_MAX_TOKENS).", fg="yellow", err=True
        )
    if grounding is not None:
        click.secho(f"Grounding: {grounding.summary()}.", bold=True, err=True)
        for item in grounding.unsupported:
            click.secho(f"  not found in the excerpts: {_shorten(item.sentence, 160)}", fg="yellow", err=True)
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


@command(main, "route")
@click.argument("question")
@click.option("--json", "as_json", is_flag=True, help="Print the decision as one JSON object.")
def route_cmd(question: str, as_json: bool, data_dir: str | None) -> None:
    """Show which collection a question would be searched in, and why (rules file: DATA_DIR/routes.toml).

    Scores are each collection's nearest-chunk similarity, plus the rule weight when one of its keywords
    matched.
    """
    from core.embed import embedder_for_store
    from core.route import route
    from core.store import Store

    settings = _settings(data_dir)
    store = Store(settings.data_dir)
    decision = route(question, store, embedder_for_store(settings, store.model_id()), settings)
    if as_json:
        _print_json(decision.to_json())
        return
    for note in decision.notes:
        click.secho(note, fg="yellow", err=True)
    click.secho(decision.summary(), bold=True)
    for reason in decision.reasons:
        click.echo(f"  {reason}")
    for name, score in decision.scores.items():
        rule = f"  rule: {', '.join(decision.rule_hits[name])}" if name in decision.rule_hits else ""
        click.echo(f"  {name:<20} score {score:.3f}  nearest chunk {decision.similarity[name]:.3f}{rule}")


# Posts and chunks --------------------------------------------------------------------------------


@main.group(invoke_without_command=True)
@click.option("--about", metavar="QUESTION", help="Rank posts by how much they are about QUESTION.")
@click.option("--k", type=click.IntRange(min=1), help="With --about: at most this many posts (10).")
@click.option("--collection", "collections", multiple=True, help="With --about: only these collections.")
@click.option(
    "--scoring",
    type=click.Choice(POST_SCORINGS),
    help="With --about: combined (default: search + post vector), retrieval, post or chunk.",
)
@click.option("--json", "as_json", is_flag=True, help="With --about: one JSON object per post.")
@click.option("--data-dir", envvar="INKWELL_DATA_DIR", help=DATA_DIR_HELP)
@click.pass_context
def posts(
    ctx: click.Context,
    about: str | None,
    k: int | None,
    collections: tuple[str, ...],
    scoring: str | None,
    as_json: bool,
    data_dir: str | None,
) -> None:
    """List, show and delete posts, or find the posts about a topic: inkwell posts --about "QUESTION".

    --about prints relevance (0..1), post id, collection, date, title and the start of the post's
    best chunk (tab-separated), best first.
    """
    if ctx.invoked_subcommand is not None:
        if about is not None or k or collections or scoring or as_json:
            raise click.UsageError("--about, --k, --collection, --scoring and --json go without a subcommand")
        if data_dir:  # `inkwell posts --data-dir X list` means X too
            ctx.default_map = {name: {"data_dir": data_dir} for name in ctx.command.commands}
        return
    if about is None:
        click.echo(ctx.get_help())
        return
    try:
        _posts_about(about, k or 10, collections, scoring, as_json, data_dir)
    except _known_errors() as exc:
        raise click.ClickException(str(exc)) from exc


def _posts_about(
    question: str,
    k: int,
    collections: tuple[str, ...],
    scoring: str | None,
    as_json: bool,
    data_dir: str | None,
) -> None:
    from core.posts import DEFAULT_SCORING, posts_about

    matches = posts_about(
        question,
        _settings(data_dir),
        k=k,
        collections=list(collections) or None,
        scoring=scoring or DEFAULT_SCORING,
    )
    if not matches:
        click.secho("no posts (ingest some first, or check --collection)", fg="yellow", err=True)
    for match in matches:
        if as_json:
            _print_json(match.to_json())
            continue
        fields = [f"{match.relevance:.4f}", match.post_id, match.collection, match.date or "-", match.title]
        click.echo("\t".join([*fields, _shorten(match.best_text, 80)]))


@command(posts, "list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per post.")
@click.option("--ids", is_flag=True, help="Print only post ids (one per line).")
def posts_list(as_json: bool, ids: bool, data_dir: str | None) -> None:
    """List stored posts: id, collection, date, chunks, title (tab-separated)."""
    from core.store import Store

    for row in Store(_settings(data_dir).data_dir).list_posts():
        if as_json:
            _print_json(row)
        elif ids:
            click.echo(row["post_id"])
        else:
            fields = [
                row["post_id"],
                row["collection"],
                row["date"] or "-",
                str(row["n_chunks"]),
                row["title"],
            ]
            click.echo("\t".join(fields))


@command(posts, "show")
@click.argument("post_id")
@click.option("--raw", is_flag=True, help="Print the post's stored raw text only.")
def posts_show(post_id: str, raw: bool, data_dir: str | None) -> None:
    """Show one post's metadata and raw text."""
    from core.store import Store

    row = Store(_settings(data_dir).data_dir).get_post(post_id)
    if row is None:
        raise click.ClickException(f"no post with id {post_id!r} (see `inkwell posts list`)")
    if raw:
        click.echo(row["raw"])
        return
    meta = {k: v for k, v in row.items() if k not in ("raw", "terms", "_distance")}
    _print_json(meta)


@command(posts, "delete")
@click.argument("post_ids", nargs=-1)
def posts_delete(post_ids: tuple[str, ...], data_dir: str | None) -> None:
    """Delete posts and their chunks. With no ids, reads them from stdin (first column of each line)."""
    from core.store import Store

    ids = list(post_ids)
    if not ids and not sys.stdin.isatty():
        ids = [line.split("\t")[0].strip() for line in sys.stdin if line.strip()]
    if not ids:
        raise click.UsageError("give post ids as arguments or on standard input")
    store = Store(_settings(data_dir).data_dir)
    deleted = store.delete_posts(ids)
    missing = len(set(ids)) - deleted
    click.echo(f"deleted {deleted} post(s)" + (f"; {missing} id(s) not found" if missing else ""))
    if deleted:
        store.optimize()


@main.group()
def chunks() -> None:
    """List and show chunks."""


@command(chunks, "list")
@click.option("--post", "post_id", help="Only chunks of this post.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per chunk.")
def chunks_list(post_id: str | None, as_json: bool, data_dir: str | None) -> None:
    """List chunks: chunk id, tokens, section, keywords, start of text (tab-separated)."""
    from core.store import Store

    for row in Store(_settings(data_dir).data_dir).list_chunks(post_id):
        if as_json:
            _print_json(row)
        else:
            fields = [
                row["chunk_id"],
                str(row["tokens"]),
                row["section"] or "-",
                ", ".join(row["keywords"] or []),
            ]
            click.echo("\t".join([*fields, _shorten(row["text"], 80)]))


@command(chunks, "show")
@click.argument("chunk_id")
def chunks_show(chunk_id: str, data_dir: str | None) -> None:
    """Show one chunk with its keywords and the exact text that was embedded."""
    from core.embed import embedded_text
    from core.store import Store

    row = Store(_settings(data_dir).data_dir).get_chunk(chunk_id)
    if row is None:
        raise click.ClickException(f"no chunk with id {chunk_id!r} (see `inkwell chunks list`)")
    row = {k: v for k, v in row.items() if k not in ("vector", "_distance")}
    row["embedded_text"] = embedded_text(row["section"], row["text"], row["keywords"] or [], row["title"])
    _print_json(row)


# Export, import, eval, info ----------------------------------------------------------------------


@command(main, "export")
@click.argument("path", type=click.Path(dir_okay=False, writable=True))
def export_cmd(path: str, data_dir: str | None) -> None:
    """Write every chunk to PATH in NUMAIN's chunks.json format."""
    from core.exchange import write_export
    from core.store import Store

    count = write_export(Store(_settings(data_dir).data_dir), path)
    click.echo(f"exported {count} chunks to {path}")


@command(main, "import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--collection", help="Put every imported post in this collection.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def import_cmd(path: str, collection: str | None, as_json: bool, data_dir: str | None) -> None:
    """Import a chunks.json file (chunks are kept exactly as cut; only new texts are embedded)."""
    from core.ingest import ingest_paths

    report = ingest_paths([path], _settings(data_dir), collection=collection)
    for error in report.errors:
        click.secho(f"skipped {error}", fg="yellow", err=True)
    _finish(report, as_json)


@command(main, "eval")
@click.option(
    "--queries", required=True, type=click.Path(exists=True, dir_okay=False), help="JSONL of {id, text}."
)
@click.option(
    "--qrels",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="TSV query_id, doc_id, score.",
)
@click.option("--k", type=int, default=10, show_default=True, help="Cut-off for recall@k.")
@click.option(
    "--mode",
    "modes",
    multiple=True,
    help="dense, fts and/or hybrid (repeatable or comma-separated, e.g. dense,fts,hybrid): one row "
    "per mode. Default: the retrieval_mode setting.",
)
@click.option(
    "--rerank",
    "rerankers",
    multiple=True,
    help="none, llm and/or cross-encoder (repeatable or comma-separated, e.g. none,llm): one row per "
    "mode and reranker, named like hybrid+llm. Default: the reranker setting (none).",
)
@click.option(
    "--fusion",
    "fusions",
    multiple=True,
    help="score and/or rrf (repeatable or comma-separated): hybrid rows per fusion. "
    "Default: the fusion setting.",
)
@click.option(
    "--chunk-tokens",
    "chunk_tokens",
    type=int,
    multiple=True,
    help="Chunk sizes to compare (repeatable), each searched in a scratch table under "
    "<data-dir>/eval-tables (the stored table is never changed). Default: the stored table as it is.",
)
@click.option(
    "--posts",
    "posts_path",
    type=click.Path(exists=True),
    help="Evaluate on these posts (file or folder, ingested into scratch tables), not the stored table.",
)
@click.option("--per-query", is_flag=True, help="Also print each query's nDCG@10 and evidence found per row.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (one line per row).")
def eval_cmd(
    queries: str,
    qrels: str,
    k: int,
    modes: tuple[str, ...],
    rerankers: tuple[str, ...],
    fusions: tuple[str, ...],
    chunk_tokens: tuple[int, ...],
    posts_path: str | None,
    per_query: bool,
    as_json: bool,
    data_dir: str | None,
) -> None:
    """Measure retrieval against judged queries: recall@k, MRR@10, nDCG@10, evidence hit@k, latency.

    One row per configuration (every combination of --mode, --fusion, --rerank and --chunk-tokens), side
    by side; with a dense row, the last column is each row's nDCG@10 over dense's.
    """
    from core.compare import compare, config_grid
    from core.config import FUSIONS
    from core.evaluate import format_table, load_qrels, load_queries, report_to_json

    settings = _settings(data_dir)
    if k < 1:
        raise click.BadParameter("--k must be at least 1")
    if any(size < 20 for size in chunk_tokens):
        raise click.BadParameter("chunk sizes must be at least 20 tokens", param_hint="'--chunk-tokens'")
    configs = config_grid(
        settings,
        _modes(modes, settings.retrieval_mode),
        _listed(fusions, FUSIONS, settings.fusion, "'--fusion'"),
        _listed(rerankers, RERANKERS, settings.reranker, "'--rerank'"),
        list(chunk_tokens),
    )
    loaded, judgements = load_queries(queries), load_qrels(qrels)
    posts = _eval_posts(posts_path) if posts_path else None
    with click.progressbar(length=1, label="Evaluating", file=sys.stderr) as bar:

        def progress(done: int, total: int, message: str) -> None:
            bar.length = total
            bar.update(done - bar.pos)

        comparison = compare(loaded, judgements, configs, settings, k=k, posts=posts, progress=progress)
    for note in comparison.notes:
        click.secho(note, fg="yellow", err=True)
    for result in comparison.results:
        for note in result.notes:
            click.secho(f"{result.config.name}: {note}", fg="yellow", err=True)
    if as_json:
        for result in comparison.results:
            extra = {"overrides": result.config.overrides, "chunks": result.chunks, "notes": result.notes}
            _print_json({**report_to_json(result.report), **extra})
        return
    baseline = comparison.baseline if len(configs) > 1 else None
    click.echo(format_table(comparison.reports, baseline))
    if per_query:
        click.echo()
        click.echo(_per_query_table(comparison))


def _eval_posts(path: str) -> list[Any]:
    from core.parse import parse_paths

    parsed = parse_paths([path])
    for error in parsed.errors:
        click.secho(f"skipped {error}", fg="yellow", err=True)
    if not parsed.posts:
        raise click.ClickException(f"no posts could be read from {path}")
    return parsed.posts


def _per_query_table(comparison: Any) -> str:
    """Each query's nDCG@10 per configuration, with the evidence quotes found (n/m) when it has some."""
    ndcg = "ndcg@10"
    names = [r.config.name for r in comparison.results]
    rows = [["query", *names, "text"]]
    for i, query in enumerate(comparison.queries):
        cells = [query.id]
        for result in comparison.results:
            scored = result.report.per_query[i]
            value = scored.metrics.get(ndcg)
            cell = "-" if value is None else f"{value:.3f}"
            if query.evidence:
                cell += f" ev {len(scored.evidence_found)}/{len(query.evidence)}"
            cells.append(cell)
        rows.append([*cells, _shorten(query.text, 60)])
    widths = [max(len(row[col]) for row in rows) for col in range(len(rows[0]) - 1)]
    lines = ["  ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)), row[-1]]) for row in rows]
    return "\n".join(line.rstrip() for line in lines)


@command(main)
@click.option(
    "--embed-backend", type=click.Choice(["local", "openai"]), help="Embedding backend to switch to."
)
@click.option(
    "--embed-model",
    help="Model name or path to switch to, e.g. multilingual-e5-small or all-MiniLM-L6-v2 (default: the "
    "configured one).",
)
@click.option("--embed-dimensions", type=int, help="Vector size for OpenAI text-embedding-3 models.")
def reembed(
    embed_backend: str | None, embed_model: str | None, embed_dimensions: int | None, data_dir: str | None
) -> None:
    """Re-embed every stored chunk with another embedding model (texts and keywords are kept)."""
    from core.reembed import reembed as run_reembed

    settings = _settings(
        data_dir, embed_backend=embed_backend, embed_model=embed_model, embed_dimensions=embed_dimensions
    )
    with click.progressbar(length=1, label="Re-embedding", file=sys.stderr) as bar:

        def progress(done: int, total: int, message: str) -> None:
            bar.length = total
            bar.update(done - bar.pos)

        count = run_reembed(settings, progress=progress)
    click.echo(f"re-embedded {count} chunks with {settings.embed_backend}:{settings.effective_embed_model}")


@command(main)
@click.option("--json", "as_json", is_flag=True)
def info(as_json: bool, data_dir: str | None) -> None:
    """What is stored and which models are configured."""
    from core.llm import describe_llm
    from core.store import Store

    settings = _settings(data_dir)
    store = Store(settings.data_dir)
    n_posts, n_chunks = store.counts()
    model = store.model_info()
    details = {
        "data_dir": str(Path(settings.data_dir).resolve()),
        "posts": n_posts,
        "chunks": n_chunks,
        "collections": store.collections(),
        "table_embedding_model": model.model_id if model else None,
        "embedding_dim": model.dim if model else None,
        "embedder": _active_embedder(settings, model.model_id if model else None),
        "answer_model": describe_llm(settings),
    }
    if as_json:
        _print_json(details)
    else:
        for key, value in details.items():
            click.echo(f"{key:>22}: {value}")


def _active_embedder(settings: Settings, table_model: str | None) -> str:
    """The model questions are embedded with: the configured one, else the table's (nothing is loaded)."""
    from core.embed import EmbedError, embedder_for_store

    try:
        return embedder_for_store(settings, table_model).model_id
    except EmbedError as exc:
        return f"{settings.embed_backend}:{settings.effective_embed_model} ({exc})"


if __name__ == "__main__":
    main()
