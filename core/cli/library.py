"""`inkwell posts`, `chunks`, `info` and `clean`: what is stored, and freeing disk space."""

from __future__ import annotations

import sys

import click

from core.cli.main import (
    DATA_DIR_HELP,
    DAYS,
    HITS,
    checked_question,
    command,
    known_errors,
    main,
    reported,
    settings_for,
    shorten,
)
from core.cli.output import MULTILINE, echo, echo_row, print_json
from core.config import POST_SCORINGS, Settings


@main.group(invoke_without_command=True)
@click.option("--about", metavar="QUESTION", help="Rank posts by how much they are about QUESTION.")
@click.option("--k", type=HITS, help="With --about: at most this many posts (10).")
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
        echo(ctx.get_help(), keep="\n")
        return
    try:
        _posts_about(about, k or 10, collections, scoring, as_json, data_dir)
    except known_errors() as exc:
        raise reported(exc, as_json) from exc


def _posts_about(
    question: str,
    k: int,
    collections: tuple[str, ...],
    scoring: str | None,
    as_json: bool,
    data_dir: str | None,
) -> None:
    from core.search import posts_about
    from core.search.posts import DEFAULT_SCORING

    settings = settings_for(data_dir)
    question = checked_question(question, settings, "--about")
    matches = posts_about(
        question,
        settings,
        k=k,
        collections=list(collections) or None,
        scoring=scoring or DEFAULT_SCORING,
    )
    if not matches:
        echo("no posts (ingest some first, or check --collection)", fg="yellow", err=True)
    for match in matches:
        if as_json:
            print_json(match.to_json())
            continue
        fields = [f"{match.relevance:.4f}", match.post_id, match.collection, match.date or "-", match.title]
        echo_row([*fields, shorten(match.best_text, 80)])


@command(posts, "list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per post.")
@click.option("--ids", is_flag=True, help="Print only post ids (one per line).")
def posts_list(as_json: bool, ids: bool, data_dir: str | None) -> None:
    """List stored posts: id, collection, date, chunks, title (tab-separated)."""
    from core.store import Store

    stored = Store(settings_for(data_dir).data_dir).list_posts()
    if not stored and not as_json:
        echo("no posts (ingest some first)", err=True)
    for post in stored:
        if as_json:
            print_json(post)
        elif ids:
            echo(post["post_id"])
        else:
            echo_row(
                [post["post_id"], post["collection"], post["date"] or "-", post["n_chunks"], post["title"]]
            )


@command(posts, "show")
@click.argument("post_id")
@click.option("--raw", is_flag=True, help="Print the post's raw text (as ingested) instead of its details.")
def posts_show(post_id: str, raw: bool, data_dir: str | None) -> None:
    """Show one post's details as JSON (title, date, collection, tags, address, source file, number of
    chunks…), without its text; with --raw, only its raw text as ingested."""
    from core.store import Store

    post = Store(settings_for(data_dir).data_dir).get_post(post_id)
    if post is None:
        raise click.ClickException(f"no post with id {post_id!r} (see `inkwell posts list`)")
    if raw:
        echo(post["raw"], keep=MULTILINE)
        return
    meta = {k: v for k, v in post.items() if k not in ("raw", "terms", "_distance")}
    print_json(meta)


@command(posts, "delete")
@click.argument("post_ids", nargs=-1)
def posts_delete(post_ids: tuple[str, ...], data_dir: str | None) -> None:
    """Delete posts and their chunks. With no ids, reads them from stdin (first column of each line).
    Exits 1 when an id names no post (the others are still deleted), as `posts show` does for one."""
    from core.store import Store
    from core.text import plural

    ids = list(post_ids)
    if not ids and not sys.stdin.isatty():
        ids = [line.split("\t")[0].strip() for line in sys.stdin if line.strip()]
    if not ids:
        raise click.UsageError("give post ids as arguments or on standard input")
    store = Store(settings_for(data_dir).data_dir)
    deleted = store.delete_posts(ids)
    missing = len(set(ids)) - deleted
    echo(f"deleted {plural(deleted, 'post')}" + (f"; {plural(missing, 'id')} not found" if missing else ""))
    if deleted:
        store.optimize()
    if missing:
        sys.exit(1)  # a mistyped id is not a success a script should go on from


@main.group()
def chunks() -> None:
    """List and show chunks."""


@command(chunks, "list")
@click.option("--post", "post_id", help="Only chunks of this post.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per chunk.")
def chunks_list(post_id: str | None, as_json: bool, data_dir: str | None) -> None:
    """List chunks: chunk id, tokens, section, keywords, start of text (tab-separated). A --post that
    names no stored post is an error (exit 1), as for `posts show`, not an empty list."""
    from core.store import Store

    store = Store(settings_for(data_dir).data_dir)
    listed = store.list_chunks(post_id)
    if post_id is not None and not listed and store.get_post(post_id) is None:
        raise click.ClickException(f"no post with id {post_id!r} (see `inkwell posts list`)")
    if not listed and not as_json:
        echo("no chunks (ingest some posts first)", err=True)
    for chunk in listed:
        if as_json:
            print_json(chunk)
        else:
            keywords = ", ".join(chunk["keywords"] or [])
            fields = [chunk["chunk_id"], chunk["tokens"], chunk["section"] or "-", keywords]
            echo_row([*fields, shorten(chunk["text"], 80)])


@command(chunks, "show")
@click.argument("chunk_id")
def chunks_show(chunk_id: str, data_dir: str | None) -> None:
    """Show one chunk with its keywords and the exact text that was embedded."""
    from core.embed import embedded_text
    from core.store import Store

    chunk = Store(settings_for(data_dir).data_dir).get_chunk(chunk_id)
    if chunk is None:
        raise click.ClickException(f"no chunk with id {chunk_id!r} (see `inkwell chunks list`)")
    chunk = {k: v for k, v in chunk.items() if k not in ("vector", "_distance")}
    chunk["embedded_text"] = embedded_text(
        chunk["section"], chunk["text"], chunk["keywords"] or [], chunk["title"]
    )
    print_json(chunk)


@command(main)
@click.option("--json", "as_json", is_flag=True)
def info(as_json: bool, data_dir: str | None) -> None:
    """What is stored and which models are configured."""
    from core.llm import describe_llm
    from core.store import Store
    from core.store.location import describe

    settings = settings_for(data_dir)
    store = Store(settings.data_dir)
    n_posts, n_chunks = store.counts()
    model = store.model_info()
    details = {
        "data_dir": describe(settings.data_dir),
        "posts": n_posts,
        "chunks": n_chunks,
        "collections": store.collections(),
        "table_embedding_model": model.model_id if model else None,
        "embedding_dim": model.dim if model else None,
        "embedder": _active_embedder(settings, model.model_id if model else None),
        "answer_model": describe_llm(settings),
        **_disk_details(settings),
    }
    if as_json:
        print_json(details)
    else:
        for key, value in details.items():
            echo(f"{key:>22}: {value}")


def _disk_details(settings: Settings) -> dict:
    """What `inkwell clean` would free: the evaluation's scratch tables and the cached LLM replies
    (without creating the cache file when there is none)."""
    from core.evaluate.scratch import scratch_tables
    from core.llm import LLMCache
    from core.llm.cache import cache_path

    tables = scratch_tables(settings.data_dir)
    replies = 0
    if cache_path(settings.data_dir).exists():
        with LLMCache(settings.data_dir) as cache:
            replies = cache.count()
    return {
        "eval_tables": len(tables),
        "eval_tables_mb": round(sum(t.bytes for t in tables) / 1e6, 1),
        "llm_cached_replies": replies,
    }


def _active_embedder(settings: Settings, table_model: str | None) -> str:
    """The model questions are embedded with: the configured one, else the table's (nothing is loaded)."""
    from core.embed import EmbedError, embedder_for_store

    try:
        return embedder_for_store(settings, table_model).model_id
    except EmbedError as exc:
        return f"{settings.embed_backend}:{settings.effective_embed_model} ({exc})"


@command(main)
@click.option(
    "--older-than",
    "days",
    type=DAYS,
    default=90,
    show_default=True,
    help="Only what was last written this many days ago or more (0: everything).",
)
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@click.option("--json", "as_json", is_flag=True)
def clean(days: float, dry_run: bool, as_json: bool, data_dir: str | None) -> None:
    """Free disk space: remove the evaluation's scratch tables and cached LLM replies.

    Scratch tables (<data-dir>/eval-tables: one per chunk size compared by `inkwell eval`) come back on
    the next run that needs them, their vectors from the stored table's; a cached reply is asked again
    when an ingest needs it. Posts, chunks, accepted rewrites, routing rules and conversations are
    never touched. Do not run it during an `inkwell eval`.
    """
    from datetime import UTC, datetime, timedelta

    from core.evaluate.scratch import remove_scratch_tables, scratch_dir
    from core.llm import LLMCache
    from core.llm.cache import cache_path
    from core.text import plural

    settings = settings_for(data_dir)
    tables = remove_scratch_tables(settings.data_dir, days, dry_run=dry_run)
    replies = 0
    if cache_path(settings.data_dir).exists():  # nothing cached: no file to make
        with LLMCache(settings.data_dir) as cache:
            replies = cache.prune_replies(datetime.now(UTC) - timedelta(days=days), dry_run=dry_run)
    unlisted = scratch_dir(settings.data_dir) is None
    freed = sum(t.bytes for t in tables)
    if as_json:
        print_json(
            {
                "dry_run": dry_run,
                "older_than_days": days,
                "eval_tables": [t.to_json() for t in tables],
                "eval_tables_bytes": freed,
                "llm_replies": replies,
                "eval_tables_not_listed": unlisted,
            }
        )
        return
    verb = "Would remove" if dry_run else "Removed"
    tables_said = plural(len(tables), "evaluation table")
    replies_said = plural(replies, "cached LLM reply", "cached LLM replies")
    echo(f"{verb} {tables_said} ({freed / 1e6:,.1f} MB) and {replies_said}.")
    for table in tables:
        echo(f"  {table.path}  {table.bytes / 1e6:,.1f} MB, last written {table.age_days:.0f} days ago")
    if unlisted:
        echo(
            "The data directory is on object storage: delete its eval-tables/ prefix with the storage's "
            "own tools to remove the evaluation tables.",
            fg="yellow",
            err=True,
        )
