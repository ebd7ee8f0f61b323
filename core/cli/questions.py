"""`inkwell questions`: what readers asked (the question log, core/store/questions.py), the unanswered
ones grouped into topics, and `inkwell questions purge`."""

from __future__ import annotations

import csv
import re
import sys
from datetime import UTC, datetime, timedelta

import click

from core.cli.main import DATA_DIR_HELP, command, known_errors, main, reported, settings_for
from core.cli.output import echo, echo_row, print_json

_SINCE = re.compile(r"(\d+(?:\.\d+)?)\s*([hdw])")
_UNITS = {"h": "hours", "d": "days", "w": "weeks"}


def parse_since(value: str | None, now: datetime | None = None) -> datetime | None:
    """`7d`, `24h`, `2w` (ago) or a date `2026-01-31` as a UTC time; None for None."""
    if value is None:
        return None
    now = now or datetime.now(UTC)
    text = value.strip().lower()
    match = _SINCE.fullmatch(text)
    if match:
        amount = float(match.group(1))
        if amount > 36500 * (24 if match.group(2) == "h" else 1):
            raise click.BadParameter(f"{value!r} is too far back", param_hint="--since")
        return now - timedelta(**{_UNITS[match.group(2)]: amount})
    try:
        day = datetime.fromisoformat(text)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is neither an age (7d, 24h, 2w) nor a date (2026-01-31)", param_hint="--since"
        ) from None
    return day if day.tzinfo else day.replace(tzinfo=UTC)


@main.group(invoke_without_command=True)
@click.option("--since", metavar="AGE|DATE", help="Only questions asked since: 7d, 24h, 2w or 2026-01-31.")
@click.option("--unanswered", is_flag=True, help="Only questions declined or rated down.")
@click.option(
    "--topics",
    "as_topics",
    is_flag=True,
    help="Group the unanswered questions into topics: what readers asked that the posts do not answer.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per question (or topic).")
@click.option("--csv", "as_csv", is_flag=True, help="CSV with a header row.")
@click.option("--data-dir", envvar="INKWELL_DATA_DIR", help=DATA_DIR_HELP)
@click.pass_context
def questions(
    ctx: click.Context,
    since: str | None,
    unanswered: bool,
    as_topics: bool,
    as_json: bool,
    as_csv: bool,
    data_dir: str | None,
) -> None:
    """What readers asked, newest first: time, source, mode, declined, feedback, question (tab-separated).

    The log keeps no reader identity; INKWELL_QUESTION_LOG=off stops logging, rows older than
    INKWELL_QUESTION_RETENTION_DAYS (180) are deleted. --topics groups the declined and rated-down
    questions: count, name, the closest post and example questions.
    """
    if ctx.invoked_subcommand is not None:
        if since or unanswered or as_topics or as_json or as_csv:
            raise click.UsageError(
                "--since, --unanswered, --topics, --json and --csv go without a subcommand"
            )
        if data_dir:
            ctx.default_map = {name: {"data_dir": data_dir} for name in ctx.command.commands}
        return
    if as_json and as_csv:
        raise click.UsageError("choose one of --json and --csv")
    after = parse_since(since)
    try:
        _list(after, unanswered, as_topics, as_json, as_csv, data_dir)
    except known_errors() as exc:
        raise reported(exc, as_json) from exc


def _list(
    since: datetime | None,
    unanswered: bool,
    as_topics: bool,
    as_json: bool,
    as_csv: bool,
    data_dir: str | None,
) -> None:
    from core.store import Store
    from core.store.questions import QuestionLog

    settings = settings_for(data_dir)
    store = Store(settings.data_dir)
    log = QuestionLog.for_settings(settings, store)
    if not log.enabled:
        echo(
            "the question log is off (INKWELL_QUESTION_LOG=off): nothing new is logged", fg="yellow", err=True
        )
    rows = log.query(since, unanswered=unanswered or as_topics)
    if as_topics:
        _topics([r.question for r in rows], settings, log, as_json, as_csv)
        return
    if as_csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        fields = ["question_id", "at", "source", "language", "mode", "declined", "posts", "seconds"]
        writer.writerow([*fields, "feedback", "comment", "question"])
        for row in rows:
            data = row.to_json()
            data["posts"] = " ".join(row.posts)
            writer.writerow([data[f] for f in [*fields, "feedback", "comment", "question"]])
        return
    for row in rows:
        if as_json:
            print_json(row.to_json())
            continue
        rating = {1: "up", -1: "down"}.get(row.feedback or 0, "-")
        declined = "declined" if row.declined else "answered"
        echo_row([row.at, row.source, row.mode, declined, rating, row.question])
    if not rows and not as_json:
        echo("no questions logged" + (" in that time" if since else ""), err=True)


def _topics(texts: list[str], settings, log, as_json: bool, as_csv: bool) -> None:
    """The texts grouped into topics (vectors kept in the question `log`, as the Readers page does)."""
    from core.embed import embedder_for_store
    from core.search.topics import find_topics

    if not texts:
        if not as_json and not as_csv:
            echo("no unanswered questions logged", err=True)
        return
    store = log.store
    embedder = embedder_for_store(settings, store.model_id())
    topics = find_topics(texts, embedder, store=store, log=log)
    if as_csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(["count", "topic", "closest_post", "closest_relevance", "examples"])
        for t in topics:
            closest = t.closest
            writer.writerow(
                [
                    t.count,
                    t.name,
                    closest.post_id if closest else "",
                    f"{closest.relevance:.3f}" if closest else "",
                    " | ".join(t.examples),
                ]
            )
        return
    for topic in topics:
        if as_json:
            print_json(topic.to_json())
            continue
        closest = f"closest post: {topic.closest.title} ({topic.closest.post_id})" if topic.closest else ""
        echo_row([topic.count, topic.name, closest])
        for example in topic.examples:
            echo(f"    - {example}")


@command(questions, "purge")
@click.option("--yes", is_flag=True, help="Really delete every logged question.")
def questions_purge(yes: bool, data_dir: str | None) -> None:
    """Delete every logged question (asks for --yes)."""
    from core.store import Store
    from core.store.questions import QuestionLog

    if not yes:
        raise click.UsageError("this deletes every logged question: run it again with --yes")
    settings = settings_for(data_dir)
    deleted = QuestionLog.for_settings(settings, Store(settings.data_dir)).purge()
    echo(f"deleted {deleted} logged question{'s' * (deleted != 1)}", err=True)
