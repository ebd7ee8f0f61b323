"""`inkwell sync` and `inkwell sources`: remembered feeds, sitemaps, sites and local paths, read again;
and what `inkwell ingest https://…` (`ingest_web`) and `inkwell ingest PATH --remember`
(`ingest_remembered`) do."""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from core.cli.main import command, main, settings_for
from core.cli.output import echo, echo_row, print_json
from core.config import Settings
from core.ingest import Progress

if TYPE_CHECKING:
    from core.ingest.web.sync import SourceOutcome
    from core.parse import ImportOptions

_INTERVAL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$", re.IGNORECASE)
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def is_web_address(text: str) -> bool:
    return text.lower().startswith(("http://", "https://"))


def check_schemes(paths: Sequence[str]) -> None:
    """A usage error (exit 2) before any work for an address of a scheme that is never fetched
    (`ftp://`, `file://`): read as a path it was "ftp:/example.com/feed.xml: does not exist" (the
    slashes joined), or remembered as such a path with --remember. A file really named so is read."""
    import os

    for path in paths:
        scheme = _SCHEME.match(path)
        if scheme and not is_web_address(path) and not os.path.lexists(path):
            raise click.BadParameter(
                f"{path} is a {scheme.group(1)}:// address: only http:// and https:// addresses can be "
                "fetched (download the file and give its path)",
                param_hint="PATHS",
            )


def interval_seconds(text: str) -> float:
    """'1h' → 3600, '30m' → 1800, '90s' or '90' → 90; ValueError for anything else or under 1 s."""
    match = _INTERVAL.match(text)
    if not match:
        raise ValueError(f"{text!r} is not an interval like 30m, 1h or 1d")
    seconds = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if seconds < 1:
        raise ValueError(f"{text!r} is too short: at least 1 s between syncs")
    return seconds


def interval_option(_ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    """--every's seconds; a value that is not an interval is a usage error (exit 2) before any sync."""
    try:
        return interval_seconds(value) if value else None
    except ValueError as error:
        raise click.BadParameter(str(error), param=param) from None


def progress_lines() -> Progress:
    """Fetch and ingest progress on stderr, one line at most every second (and the last one). Nothing for
    a step with nothing to count (total 0: an address that could not be read, no posts to ingest), whose
    "0/0: done" would say nothing the summary does not."""
    last = [0.0, ""]

    def progress(done: int, total: int, message: str) -> None:
        now = time.monotonic()
        if total and message != last[1] and (now - last[0] >= 1.0 or done >= total):
            echo(f"{done:,}/{total:,}: {message}", err=True)
            last[0], last[1] = now, message

    return progress


@contextmanager
def web_progress(label: str) -> Iterator[Progress]:
    """Fetch and ingest progress on stderr: a bar on a terminal (its length follows the pages found so
    far, its label the step), else `progress_lines` (a log or a pipe, where a bar draws nothing)."""
    if not sys.stderr.isatty():
        yield progress_lines()
        return
    with click.progressbar(length=1, label=label, file=sys.stderr) as bar:

        def progress(done: int, total: int, message: str) -> None:
            bar.length = max(total, done, 1)
            bar.label = f"{label} ({message})" if message else label
            bar.update(max(0, done - bar.pos))

        yield progress


def read_addresses(
    urls: Sequence[str], settings: Settings, collection: str | None, force: bool = False
) -> list[SourceOutcome]:
    """Each address ingested and remembered (core.ingest.web.ingest_url), with its progress shown;
    `force`: no conditional request, every post re-processed."""
    from core.ingest.web import ingest_url

    outcomes = []
    for url in urls:
        with web_progress("Reading") as progress:
            outcomes.append(ingest_url(url, settings, collection=collection, progress=progress, force=force))
    return outcomes


def outcomes_json(outcomes: Sequence) -> dict:
    return {"ok": all(o.ok for o in outcomes), "sources": [o.to_json() for o in outcomes]}


def print_outcomes(outcomes: Sequence, as_json: bool, *, print_report: bool = True) -> bool:
    """Each source's problems (by page), what a prune removes, and its summary (or, with `as_json` and
    `print_report`, the JSON report of them all); whether all went well."""
    for outcome in outcomes:
        for error in outcome.report.errors:
            echo(f"skipped {error}", fg="yellow", err=True)
        for warning in outcome.report.warnings:
            echo(f"warning {warning}", fg="yellow", err=True)
        for o in outcome.report.outcomes:
            if o.status == "failed":
                echo(f"failed {o.source} ({o.post_id}): {o.message}", fg="red", err=True)
        verb = "removed" if outcome.pruned else "gone from the source"
        for post_id, url in outcome.gone:
            echo(f"{verb}: {post_id} ({url})", err=True)
        if not as_json:
            echo(f"{outcome.source.url} ({outcome.source.kind}): {outcome.summary()}")
    if as_json and print_report:
        print_json(outcomes_json(outcomes))
    return all(o.ok for o in outcomes)


def ingest_web(
    urls: Sequence[str],
    settings: Settings,
    *,
    collection: str | None,
    as_json: bool,
    force: bool = False,
) -> list[SourceOutcome]:
    """Ingest each address (a feed, sitemap, site or page) and remember it for `inkwell sync`; prints
    their problems (and summaries unless `as_json`), and leaves the JSON report to the caller, who may
    have files' posts to report in the same document. `force`: as read_addresses."""
    outcomes = read_addresses(urls, settings, collection, force)
    print_outcomes(outcomes, as_json, print_report=False)
    return outcomes


def ingest_remembered(
    urls: Sequence[str],
    paths: Sequence[str],
    settings: Settings,
    force: bool,
    replace: bool,
    as_json: bool,
    *,
    collection: str | None,
    options: ImportOptions,
) -> bool:
    """Ingest each address and each local folder or file, and remember them all for `inkwell sync`."""
    from core.ingest.web import ingest_path

    outcomes = read_addresses(urls, settings, collection, force)
    for path in paths:
        with web_progress("Reading") as progress:
            outcome = ingest_path(
                path,
                settings,
                collection=collection,
                options=options,
                progress=progress,
                force=force,
                replace=replace,
            )
        outcomes.append(outcome)
    return print_outcomes(outcomes, as_json)


@command(main)
@click.option(
    "--prune",
    is_flag=True,
    help="Remove posts a sitemap, site, folder or export no longer lists (named first).",
)
@click.option(
    "--every",
    "every",
    metavar="INTERVAL",
    callback=interval_option,
    help="Sync again every INTERVAL (30m, 1h, 1d) until stopped.",
)
@click.option("--timeout", type=click.FloatRange(0.1, 600), help="Seconds to wait for a server (10).")
@click.option("--runs", type=click.IntRange(1), hidden=True, help="With --every: stop after this many.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def sync(
    prune: bool,
    every: float | None,
    timeout: float | None,
    runs: int | None,
    as_json: bool,
    data_dir: str | None,
) -> None:
    """Read every remembered source again (see `inkwell sources`): new posts are added, changed ones
    re-ingested (unchanged ones cost nothing), and with --prune posts gone from a sitemap, site, folder
    or export file are removed. Exits 1 when any page, file or source failed (a path that is gone too)."""
    from core.ingest.web import Fetcher, sync_sources
    from core.ingest.web.fetch import host_of
    from core.store import Store
    from core.store.sources import Sources

    wait = every
    settings = settings_for(data_dir)
    done = 0
    while True:
        store = Store(settings.data_dir)
        fetchers = (
            {
                host_of(s.url): Fetcher(host_of(s.url), timeout=timeout)
                for s in Sources(store).all()
                if is_web_address(s.url)
            }
            if timeout
            else None
        )
        with web_progress("Syncing") as progress:
            report = sync_sources(settings, store=store, prune=prune, progress=progress, fetchers=fetchers)
        if not report.outcomes:
            echo(
                "no sources yet: add one with `inkwell ingest https://your.blog/feed.xml` or "
                "`inkwell ingest PATH --remember`",
                err=True,
            )
        ok = print_outcomes(report.outcomes, as_json)
        done += 1
        if wait is None or (runs is not None and done >= runs):
            sys.exit(0 if ok else 1)
        time.sleep(wait)


@command(main)
@click.option(
    "--remove", "remove", metavar="URL", help="Forget this source, an address or a path (its posts stay)."
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per source.")
def sources(remove: str | None, as_json: bool, data_dir: str | None) -> None:
    """List the remembered sources (address or path, kind, last sync, result), or forget one."""
    from core.ingest.web.local import source_path
    from core.store import Store
    from core.store.sources import Sources

    book = Sources(Store(settings_for(data_dir).data_dir))
    if remove:
        if not book.remove(remove) and (is_web_address(remove) or not book.remove(source_path(remove))):
            raise click.ClickException(f"no source {remove!r} (see: inkwell sources)")
        echo(f"forgot {remove}; its posts stay (delete them with: inkwell posts delete)")
        return
    remembered = book.all()
    for source in remembered:
        if as_json:
            print_json(source.to_json())
        else:
            echo_row([source.url, source.kind, source.synced_at or "never", source.result])
    if not remembered and not as_json:
        echo("no sources remembered (`inkwell ingest URL` or `--remember` adds one)", err=True)
