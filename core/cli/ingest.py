"""`inkwell ingest`, `import`, `export` and `reembed`: getting posts in and out."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from core.cli.main import (
    CHUNK_TOKENS,
    CONCURRENCY,
    DIMENSIONS,
    EMBED_MODEL_HELP,
    command,
    main,
    settings_for,
)
from core.cli.output import echo, print_json, print_json_text
from core.config import Settings, language_codes
from core.ingest import IngestReport, Progress
from core.ingest.timed import POST_TIME_LIMIT
from core.llm import LLMStats
from core.models import Post
from core.prepare import LLMPrepOptions, prepare_posts
from core.text import check_reader_languages, plural, unknown_languages_problem


@command(main)
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--collection", help="Put every post in this collection (default: front matter or top folder).")
@click.option("--title", help="Title for text read from standard input (PATH '-').")
@click.option(
    "--force",
    is_flag=True,
    help="Re-process posts even when unchanged (an address: read in full, no 304 asked for).",
)
@click.option(
    "--include-drafts",
    is_flag=True,
    help="Blog exports (WordPress, Ghost, Substack, Medium): also read drafts, scheduled and private posts; "
    "Markdown: also posts whose front matter says draft: true or published: false.",
)
@click.option("--include-pages", is_flag=True, help="Blog exports: also read pages (About, Contact…).")
@click.option(
    "--include-members",
    is_flag=True,
    help="Blog exports (Ghost, Substack): also read posts for paying or signed-in members only; answers "
    "quote stored posts to any reader.",
)
@click.option(
    "--include-type",
    "include_types",
    multiple=True,
    metavar="NAME",
    help="WordPress exports: also read this post type as posts (a plugin's 'podcast', 'portfolio'; "
    "repeatable). The import's warning names the types it left out.",
)
@click.option(
    "--replace",
    is_flag=True,
    help="Let a post replace a stored one of the same id read from another file (refused otherwise, "
    "unless from an earlier export of the same blog platform).",
)
@click.option(
    "--remember",
    is_flag=True,
    help="Remember each folder or export file as a source: `inkwell sync` reads it again (docs/web-sources.md).",
)
@click.option("--strategy", type=click.Choice(["paragraph", "fixed"]), help="Chunking strategy.")
@click.option("--chunk-tokens", type=CHUNK_TOKENS, help="Target chunk size in tokens (paragraph strategy).")
@click.option("--embed-model", help=EMBED_MODEL_HELP)
@click.option(
    "--reader-languages",
    callback=lambda ctx, param, value: known_languages(value),
    help="Languages readers ask in, e.g. en,tr,de (INKWELL_READER_LANGUAGES): others than the posts' "
    "own give a new table the bundled multilingual model.",
)
@click.option("--rewrite", is_flag=True, help="LLM: make 'this', 'those people'… say what they mean.")
@click.option("--llm-chunks", is_flag=True, help="LLM: cut chunks by topic (checked against the post).")
@click.option("--llm-keywords", is_flag=True, help="LLM: 1-6 keywords per chunk, seeing the whole post.")
@click.option("--llm-concurrency", type=CONCURRENCY, help="Posts prepared by the LLM at once (4).")
@click.option("--dry-run", is_flag=True, help="With LLM options: print rewrites and chunks, store nothing.")
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0),
    default=POST_TIME_LIMIT,
    show_default=True,
    help="Seconds a post's chunks may take to embed before it is refused (0: no limit).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def ingest(
    paths: tuple[str, ...],
    collection: str | None,
    title: str | None,
    force: bool,
    include_drafts: bool,
    include_pages: bool,
    include_members: bool,
    include_types: tuple[str, ...],
    replace: bool,
    remember: bool,
    strategy: str | None,
    chunk_tokens: int | None,
    embed_model: str | None,
    reader_languages: str | None,
    rewrite: bool,
    llm_chunks: bool,
    llm_keywords: bool,
    llm_concurrency: int | None,
    dry_run: bool,
    time_limit: float,
    as_json: bool,
    data_dir: str | None,
) -> None:
    """Ingest files and folders (.md .txt .html .json .jsonl .pdf .docx, bundles; WordPress .xml, Ghost
    .json, Substack and Medium .zip exports); '-' reads one post from stdin; a web address (a feed,
    sitemap, site or page) is read and remembered for `inkwell sync`, and so is a path with --remember.

    Idempotent: unchanged posts are skipped and unchanged chunks are never embedded again. The LLM
    options (at most two requests per post, replies cached) use the configured chat model.
    """
    from core.cli.ingest import dry_run_lines, outcome_lines
    from core.cli.sources import check_schemes, ingest_remembered, ingest_web, is_web_address, outcomes_json
    from core.ingest import ingest_posts
    from core.parse import ImportOptions, parse_paths, parse_piped, post_types
    from core.prepare import LLMPrepOptions

    llm = LLMPrepOptions(rewrite, llm_chunks, llm_keywords, llm_concurrency)
    if "-" in paths and not title:  # said before any address is fetched or file read
        raise click.UsageError("reading a post from standard input needs --title")
    if title and "-" not in paths:  # a file's or page's title is its own: --title would be lost
        raise click.UsageError("--title names the post read from standard input: give '-' as a PATH")
    check_schemes(paths)

    settings = settings_for(
        data_dir,
        chunk_strategy=strategy,
        chunk_tokens=chunk_tokens,
        embed_model=embed_model,
        reader_languages=reader_languages,
    )
    check_reader_languages(settings.reader_language_codes)  # INKWELL_READER_LANGUAGES: before any fetch
    urls = [p for p in paths if is_web_address(p)]
    options = ImportOptions(
        include_drafts=include_drafts,
        include_pages=include_pages,
        include_members=include_members,
        include_types=post_types(include_types),
    )
    if remember:
        if "-" in paths or llm.enabled or dry_run:
            raise click.UsageError(
                "--remember keeps folders and files, without the LLM options or --dry-run ('-' is no path)"
            )
        files = [p for p in paths if p not in urls]
        remembered = ingest_remembered(
            urls, files, settings, force, replace, as_json, collection=collection, options=options
        )
        sys.exit(0 if remembered else 1)
    web = ingest_web(urls, settings, collection=collection, as_json=as_json, force=force) if urls else []
    web_ok = all(o.ok for o in web)
    if urls and len(urls) == len(paths):
        if as_json:
            print_json(outcomes_json(web))
        sys.exit(0 if web_ok else 1)
    files = [p for p in paths if p != "-" and p not in urls]
    parsed = parse_paths(files, collection=collection, options=options)
    if "-" in paths and title:
        # Bytes, decoded as a file's are: a Latin-1 text piped in is read with a warning, not refused
        # with "surrogates not allowed" (what text-mode stdin makes of the bytes it cannot decode).
        post, warnings = parse_piped(sys.stdin.buffer.read(), title, collection=collection or "writings")
        parsed.posts.append(post)
        parsed.warnings.extend(warnings)
    for error in parsed.errors:
        echo(f"skipped {error}", fg="yellow", err=True)
    for warning in parsed.warnings:
        echo(f"warning {warning}", fg="yellow", err=True)
    if dry_run:
        if not llm.enabled:
            raise click.UsageError("--dry-run needs --rewrite, --llm-chunks or --llm-keywords")
        for line in dry_run_lines(parsed.posts, settings, llm):
            echo(line)
        return

    with click.progressbar(length=max(1, len(parsed.posts)), label="Ingesting", file=sys.stderr) as bar:
        progress = progress_shown(bar)
        report = ingest_posts(
            parsed.posts,
            settings,
            progress=progress,
            errors=parsed.errors,
            warnings=parsed.warnings,
            force=force,
            llm=llm,
            replace=replace,
            label=f"inkwell ingest {' '.join(paths)}"[:200],
            time_limit=time_limit or None,
            drafts=parsed.drafts,
        )

    for warning in report.warnings[len(parsed.warnings) :]:  # the ingest's own (a path without a site URL)
        echo(f"warning {warning}", fg="yellow", err=True)
    for line in outcome_lines(report, llm):
        echo(line, err=True)
    # Addresses beside files: one JSON document, the files' report with the addresses' sources in it.
    finish_report(report, as_json, outcomes_json(web) if web else None)
    if not web_ok:
        sys.exit(1)


def known_languages(value: str | None) -> str | None:
    """The --reader-languages value; a usage error (exit 2) naming the known codes for a code that is not
    one (a typo such as "xx" was taken silently)."""
    if value is not None and (problem := unknown_languages_problem(language_codes(value))):
        raise click.BadParameter(problem, param_hint="'--reader-languages'")
    return value


def progress_shown(bar: Any) -> Progress:
    """An ingest's progress on stderr: the bar on a terminal, else (a log, a pipe) one line per step,
    "ingesting: 3/10 posts; embedding: 512 of 16,564 chunks", since the bar draws nothing there; no line
    when there are no posts to ingest ("0/0 posts; done" says nothing the summary does not)."""
    last = [0]
    interactive = sys.stderr.isatty()

    def progress(done: int, total: int, message: str) -> None:
        if interactive:
            bar.label = f"Ingesting ({message})" if message else "Ingesting"
            bar.update(done - last[0])
        elif total:
            echo(f"ingesting: {done:,}/{total:,} posts; {message}", err=True)
        last[0] = done

    return progress


def finish_report(report: Any, as_json: bool, sources: dict | None = None) -> None:
    """Print an ingest report (failures to stderr); exit 1 when any file or post failed. `sources`:
    the report of web addresses ingested beside (core/cli/sources.py outcomes_json), merged into the
    JSON document, whose "ok" then says whether both went well."""
    for outcome in report.outcomes:
        if outcome.status == "failed":
            echo(f"failed {outcome.source} ({outcome.post_id}): {outcome.message}", fg="red", err=True)
        elif outcome.message:
            echo(f"{outcome.status} {outcome.source} ({outcome.post_id}): {outcome.message}", err=True)
    if report.change_id:
        echo(f"undo with: inkwell undo {report.change_id}", err=True)
    if as_json:
        data = report.to_json()
        if sources:
            data |= {"sources": sources["sources"], "ok": report.ok and sources["ok"]}
        print_json(data)
    else:
        echo(report.summary())
    if not report.ok:
        sys.exit(1)


@command(main, "export")
@click.argument("path", type=click.Path(writable=True))
@click.option(
    "--static",
    "static",
    is_flag=True,
    help="Write a static site to the folder PATH instead: a page that answers readers in the browser "
    "alone (docs/static.md).",
)
@click.option("--json", "as_json", is_flag=True, help="With --static: print the report (sizes) as JSON.")
def export_cmd(path: str, static: bool, as_json: bool, data_dir: str | None) -> None:
    """Write every chunk to PATH ('-': standard output) as a chunks.json file: a JSON list with one
    object per chunk (its id, text, post title, section heading and keywords, and its post's id, date,
    collection, tags and address), which `inkwell ingest` or `inkwell import` reads back, or any tool
    that reads JSON. With --static, a static site instead."""
    from core.ingest import write_export
    from core.store import Store

    if static:
        from core.publish import export_static

        try:
            report = export_static(settings_for(data_dir), path)
        except OSError as exc:  # a parent that is a file, a read-only or missing place: said, no traceback
            raise click.ClickException(
                f"could not write the static site to {path}: {exc.strerror or exc}"
            ) from exc
        if as_json:
            print_json(report.to_json())
        else:
            for line in report.summary().splitlines():  # one echo a line: echo escapes a line break
                echo(line)
        return
    if path == "-":  # for a pipe: `inkwell export - | gzip > chunks.json.gz` (it wrote a file named "-")
        from core.ingest.exchange import export_text

        text, count = export_text(Store(settings_for(data_dir).data_dir))
        print_json_text(text)
        echo(f"exported {plural(count, 'chunk')} to standard output", err=True)
        return
    if Path(path).is_dir():
        raise click.BadParameter(f"{path!r} is a folder (a static site needs --static)", param_hint="PATH")
    try:
        count = write_export(Store(settings_for(data_dir).data_dir), path)
    except OSError as exc:  # its folder missing, or a file where a folder should be
        raise click.ClickException(f"could not write {path}: {exc.strerror or exc}") from exc
    echo(f"exported {plural(count, 'chunk')} to {path}")


@command(main, "import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--collection", help="Put every imported post in this collection.")
@click.option("--replace", is_flag=True, help="Let imported posts replace stored ones read from other files.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def import_cmd(path: str, collection: str | None, replace: bool, as_json: bool, data_dir: str | None) -> None:
    """Import a chunks.json file (chunks are kept exactly as cut; only new texts are embedded)."""
    from core.ingest import ingest_paths

    report = ingest_paths([path], settings_for(data_dir), collection=collection, replace=replace)
    for error in report.errors:
        echo(f"skipped {error}", fg="yellow", err=True)
    for warning in report.warnings:
        echo(f"warning {warning}", fg="yellow", err=True)
    finish_report(report, as_json)


@command(main)
@click.option(
    "--embed-backend", type=click.Choice(["local", "openai"]), help="Embedding backend to switch to."
)
@click.option(
    "--embed-model",
    help="Model name or path to switch to, e.g. multilingual-e5-small or all-MiniLM-L6-v2 (default: the "
    "configured one).",
)
@click.option("--embed-dimensions", type=DIMENSIONS, help="Vector size for OpenAI text-embedding-3 models.")
def reembed(
    embed_backend: str | None, embed_model: str | None, embed_dimensions: int | None, data_dir: str | None
) -> None:
    """Re-embed every stored chunk with another embedding model (texts and keywords are kept)."""
    from core.ingest import reembed as run_reembed

    settings = settings_for(
        data_dir, embed_backend=embed_backend, embed_model=embed_model, embed_dimensions=embed_dimensions
    )
    with click.progressbar(length=1, label="Re-embedding", file=sys.stderr) as bar:

        def progress(done: int, total: int, message: str) -> None:
            bar.length = total
            bar.update(done - bar.pos)

        count = run_reembed(settings, progress=progress)
    echo(
        f"re-embedded {plural(count, 'chunk')} with {settings.embed_backend}:{settings.effective_embed_model}"
    )


# LLM preparation output ---


def outcome_lines(report: IngestReport, options: LLMPrepOptions) -> list[str]:
    """One line per stored post that went through the LLM stages: rewritten sentences, status, notes."""
    lines = []
    for o in report.outcomes:
        if not o.llm:
            continue
        parts = [f"{plural(o.rewritten, 'sentence')} rewritten"] if options.rewrite else []
        parts.append(f"LLM {o.llm}")
        if o.note:
            parts.append(o.note)
        lines.append(f"{o.post_id}: {'; '.join(parts)}")
    return lines


def dry_run_lines(posts: Sequence[Post], settings: Settings, options: LLMPrepOptions) -> list[str]:
    """What ingesting with `options` would do to each post (rewrites as a sentence diff, the chunks and
    their keywords), without storing anything but the cached replies."""
    prepared = prepare_posts(posts, settings, options)
    total = LLMStats()
    lines: list[str] = []
    for post in posts:
        prep = prepared[post.post_id]
        total.merge(prep.stats)
        lines.append(
            f"== {post.title} ({post.post_id}): LLM {prep.status}" + (f"; {prep.note}" if prep.note else "")
        )
        if options.rewrite:
            changed = prep.proposal.changed if prep.proposal else 0
            lines.append(f"   {plural(changed, 'sentence')} rewritten")
            lines += [f"   {line}" for line in (prep.proposal.diff_lines() if prep.proposal else [])]
        chunks = prep.chunks or []
        for chunk in chunks:
            flat = " ".join(chunk.text.split())
            flat = flat if len(flat) <= 100 else flat[:99] + "…"
            section = f" [{chunk.section}]" if chunk.section else ""
            lines.append(
                f"   chunk {chunk.index}{section} {plural(chunk.tokens, 'token')} ({', '.join(chunk.keywords)}): {flat}"
            )
    lines.append(total.summary())
    return lines
