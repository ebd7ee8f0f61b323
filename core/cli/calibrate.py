"""`inkwell calibrate`: the relevance bar of an embedding model from question sets, into its profile."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from typing import Any

import click

from core.cli.main import command, main, settings_for
from core.cli.output import MULTILINE, echo, print_json, safe
from core.text import plural


@command(main, "calibrate")
@click.option(
    "--set",
    "corpora",
    multiple=True,
    nargs=3,
    type=click.Path(exists=True),
    metavar="POSTS QUERIES OFF_TOPIC",
    help="Another corpus to calibrate on: its posts, a JSONL of questions they answer and one of questions "
    "they do not (repeatable; each goes into a scratch table).",
)
@click.option(
    "--no-floor",
    "no_floor",
    is_flag=True,
    help="A bar that stays put on every table (default: it moves with each table's floor).",
)
@click.option(
    "--queries",
    "queries",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="JSONL of questions the posts answer ({id, text}; repeatable).",
)
@click.option(
    "--off-topic",
    "off_topic",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="JSONL of questions the posts do not answer (repeatable).",
)
@click.option(
    "--posts",
    "posts_path",
    type=click.Path(exists=True),
    help="Calibrate on these posts (ingested into a scratch table), not the stored table.",
)
@click.option(
    "--small-blogs/--no-small-blogs",
    "small",
    default=True,
    show_default=True,
    help="Also calibrate on small blogs of 3 and 8 posts drawn from each set whose questions name their "
    "post (a `post` field: its path under the posts folder).",
)
@click.option("--model", "model", help="Embedding model to calibrate (default: the configured one).")
@click.option(
    "--write", is_flag=True, help="Write the bar into the model's profile (its registry entry's file)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def calibrate_cmd(
    corpora: tuple[tuple[str, str, str], ...],
    no_floor: bool,
    small: bool,
    queries: tuple[str, ...],
    off_topic: tuple[str, ...],
    posts_path: str | None,
    model: str | None,
    write: bool,
    as_json: bool,
    data_dir: str | None,
) -> None:
    """Calibrate the relevance bar: decline at most 3% of the answerable questions (--queries, and each
    --set's), then as many off-topic ones as can be.

    Never calibrate on a set you report figures for: keep a held-out set apart (docs/models.md).
    """
    from core.embed import embedder_for_store
    from core.evaluate import posts_table
    from core.evaluate.calibrate import (
        calibrate_bar,
        calibrated_profile,
        choose_floor_weight,
        collect_set,
        unknown_posts,
    )
    from core.profiles import find_entry, profile_for, save_profile
    from core.store import Store

    settings = settings_for(data_dir)
    if model:
        from core.embed.choose import settings_for_model

        settings = settings_for_model(settings, model)
    stored = Store(settings.data_dir)
    embedder = embedder_for_store(settings, stored.model_id())
    entry = find_entry(embedder.model_id)
    if write and entry is None:
        raise click.ClickException(
            f"{embedder.model_id} has no registry entry to write a profile for: add one (docs/models.md)"
        )
    if bool(queries) != bool(off_topic):
        raise click.UsageError("--queries and --off-topic go together (or use --set)")
    if not queries and not corpora:
        raise click.UsageError("give --queries and --off-topic, or --set POSTS QUERIES OFF_TOPIC")
    # (family, table, posts root, its posts as read, answerable questions, off-topic ones)
    sets: list[tuple[str, Any, str | None, list[Any], list[Any], list[Any]]] = []
    if queries:
        on, off = _questions(queries), _questions(off_topic)  # an empty file refused before any embedding
        read = _posts(posts_path) if posts_path else []
        store = posts_table(read, settings, embedder=embedder) if posts_path else stored
        if store.chunks is None:
            raise click.ClickException("nothing is stored yet: ingest posts first (or give --posts)")
        family = posts_path or "the stored table"
        sets.append((family, store, posts_path, read, on, off))
    for root, on_path, off_path in corpora:
        work = settings.data_dir / "eval-tables" / f"calibrate-{len(sets)}"
        on, off = _questions([on_path]), _questions([off_path])
        read = _posts(root)
        store = posts_table(read, settings, embedder=embedder, work_dir=work)
        sets.append((root, store, root, read, on, off))
    samples = []
    for number, (family, store, root, read, on, off) in enumerate(sets, 1):
        posts = read if small else []
        if posts and root and (unknown := unknown_posts(posts, root, on)):
            echo(
                f"warning: {plural(len(unknown), 'post')} named by questions asked of {safe(family)} are not "
                f"under it, so their questions are left out of its small blogs: {safe(', '.join(unknown[:3]))}",
                err=True,
            )
        label = f"Calibrating on {family} ({number}/{len(sets)})"
        with click.progressbar(length=1, label=label, file=sys.stderr) as bar:

            def progress(done: int, total: int, message: str) -> None:
                bar.length = total
                bar.update(done - bar.pos)

            samples += collect_set(
                family, store, on, off, settings, embedder=embedder, progress=progress,
                posts=posts, root=root, work_dir=settings.data_dir / "eval-tables" / f"small-blogs-{number}",
            )  # fmt: skip
    profile = profile_for(embedder.model_id)
    start, trials = profile.bar, []
    if not no_floor and len(sets) >= 3:  # how far the bar moves with the floor, judged set by set
        weight, trials = choose_floor_weight(samples, start)
        start = dataclasses.replace(start, floor_weight=weight)
    result = calibrate_bar(samples, start, floors=not no_floor)
    paths = [*queries, *off_topic, *(path for corpus in corpora for path in corpus)]
    small_count = len({(s.family, s.table) for s in samples if s.table})
    updated = calibrated_profile(
        profile.replace(model_id=embedder.model_id), result, paths, trials, small_count
    )
    if write and entry is not None:
        save_profile(updated, entry.profile)
    if as_json:
        print_json({"model_id": embedder.model_id, "written": bool(write), **updated.to_json()})
        return
    echo(
        _summary(embedder.model_id, profile.bar, updated, write, entry.profile if entry else None),
        keep=MULTILINE,
    )


def _summary(model_id: str, before: Any, profile: Any, written: bool, path: Any) -> str:
    record = profile.calibration
    lines = [f"model: {safe(model_id)}", f"before: {before}", f"after:  {profile.bar}"]
    for group in ("same_language", "other_language"):
        t = record[group]
        if t["on_topic"] or t["off_topic"]:
            lines.append(
                f"{group.replace('_', ' ')}: declines {t['on_topic_declined']}/{t['on_topic']} on topic, "
                f"{t['off_topic_declined']}/{t['off_topic']} off topic"
            )
    for name, t in record.get("by_table", {}).items():
        lines.append(
            f"  {safe(name)}: declines {t['on_topic_declined']}/{t['on_topic']} on topic, "
            f"{t['off_topic_declined']}/{t['off_topic']} off topic"
        )
    for trial in record.get("floor_weights", []):
        lines.append(
            f"floor weight {trial['weight']}: with each set left out, {trial['on_topic_declined']} answerable "
            f"declined, {trial['off_topic_answered']} off-topic answered"
        )
    if not record["met_target"]:
        lines.append("no bar declines at most 3% of the answerable questions: the fewest declines were taken")
    lines.append(f"written to {path}" if written else "not written (add --write)")
    return "\n".join(lines)


def _questions(paths: Sequence[str]) -> list[Any]:
    """Every question in `paths`; a ClickException naming a file that holds none: a bar set without
    answerable (or off-topic) questions would be one no question moved, yet --write would keep it."""
    from core.evaluate import load_queries

    out = []
    for path in paths:
        read = load_queries(path)
        if not read:
            raise click.ClickException(f"{path} holds no questions")
        out += read
    return out


def _posts(path: str) -> list[Any]:
    from core.parse import parse_paths

    parsed = parse_paths([path])
    if not parsed.posts:
        raise click.ClickException(f"no posts could be read from {path}")
    return parsed.posts
