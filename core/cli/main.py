"""The `inkwell` command line: the same core API the app uses, for scripting and batch work.

Output for people goes to stdout, progress and warnings to stderr, and `--json` gives stable
machine-readable output, so commands compose: `inkwell posts list --ids | inkwell posts delete`.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from functools import wraps
from typing import Any

import click

from core.cli.output import EscapingGroup, echo, print_json
from core.config import ConfigError, Settings

DATA_DIR_HELP = (
    "Folder of the LanceDB tables, or object storage as s3://bucket/prefix, gs://… or az://… "
    "(env INKWELL_DATA_DIR, default data/lancedb)."
)
EMBED_MODEL_HELP = (
    "Embedding model of a new table (env INKWELL_EMBED_MODEL): all-MiniLM-L6-v2 (English) or "
    "multilingual-e5-small (questions in any language); default: chosen by the posts' language. An "
    "existing table keeps its model: switch with `inkwell reembed --embed-model`."
)


class NumberRange(click.FloatRange):
    """A FloatRange that also refuses "nan", which every comparison with a bound lets through."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number.", param, ctx)
        return number


# The numeric options' ranges: a value outside one is a usage error (exit 2) that names the option, before
# a huge one can reach LanceDB or the clock as "Python int too large to convert to C long".
HITS = click.IntRange(1, 1000)  # --k: hits, posts, the recall cut-off
CHUNK_TOKENS = click.IntRange(20, 8192)
CONCURRENCY = click.IntRange(1, 64)
DIMENSIONS = click.IntRange(1, 8192)
DAYS = NumberRange(0, 36500)
RELEVANCE = NumberRange(0, 1)


def settings_for(data_dir: str | None, **overrides: Any) -> Settings:
    values = {k: v for k, v in overrides.items() if v is not None}
    if data_dir:
        values["data_dir"] = data_dir
    return Settings.load(values)


def known_errors() -> tuple[type[BaseException], ...]:
    from core.embed import EmbedError
    from core.llm import LLMError
    from core.store import StoreError

    return (ConfigError, StoreError, EmbedError, LLMError, ValueError, FileNotFoundError)


def command(group: click.Group, name: str | None = None) -> Callable:
    """A subcommand with `--data-dir`, whose known errors print as one line instead of a traceback
    (exit 1); under `--json` the error is also printed on stdout as a JSON object (`error_json`), so a
    script reading stdout always gets JSON."""

    def decorate(fn: Callable) -> Callable:
        @wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except known_errors() as exc:
                raise reported(exc, bool(kwargs.get("as_json"))) from exc

        wrapper = click.option("--data-dir", envvar="INKWELL_DATA_DIR", help=DATA_DIR_HELP)(wrapper)
        return group.command(name)(wrapper)

    return decorate


def reported(exc: BaseException, as_json: bool) -> click.ClickException:
    """A known error as the one-line error click prints (exit 1); under `--json` it is first printed on
    stdout as a JSON object (`error_json`)."""
    if as_json:
        print_json(error_json(exc))
    return click.ClickException(str(exc))


def checked_question(question: str | None, settings: Settings, hint: str = "QUESTION") -> str:
    """The question, stripped; a usage error (exit 2) before any work if it is empty or too long."""
    from core.text import QuestionError, check_question

    try:
        return check_question(question, settings.max_question_chars)
    except QuestionError as exc:
        extra = (
            " (setting max_question_chars, env INKWELL_MAX_QUESTION_CHARS)" if exc.kind == "too_long" else ""
        )
        raise click.BadParameter(f"{exc}{extra}", param_hint=hint) from None


def read_question(question: str, hint: str = "QUESTION") -> str:
    """The question as given or, for '-', standard input decoded as UTF-8 (a byte-order mark dropped);
    input that is not UTF-8 is a usage error (exit 2) naming the first bad byte. Whether it is empty or
    too long is `checked_question`'s to say, as for a typed question."""
    if question != "-":
        return question
    # Bytes: text-mode stdin would turn what it cannot decode into surrogates ("surrogates not allowed").
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise click.BadParameter(
            f"standard input is not UTF-8 (byte 0x{data[exc.start]:02X} at offset {exc.start}): "
            "give the question in UTF-8",
            param_hint=hint,
        ) from None


def error_json(exc: BaseException) -> dict[str, str]:
    """{"error": the one-line message, "kind": the error's tag (LLMError's kind) or its class name}; for
    every usage error (a bad option value, a missing argument, an unknown command or option) the message
    click shows after "Error: " and the kind "UsageError", whichever of click's subclasses it is."""
    if isinstance(exc, click.UsageError):
        return {"error": exc.format_message(), "kind": "UsageError"}
    return {"error": str(exc), "kind": str(getattr(exc, "kind", "") or type(exc).__name__)}


def wants_json(args: Sequence[str]) -> bool:
    """Whether the command line asks for JSON: `--json` among its options (not after `--`)."""
    options = args[: list(args).index("--")] if "--" in args else args
    return "--json" in options


class InkwellGroup(EscapingGroup):
    """The `inkwell` group. Ctrl-C ends any command with exit status 130 and "Interrupted." on stderr
    (click's default was "Aborted!", exit 1, which a script cannot tell from a failure). Under `--json`
    a usage error (exit 2) is also printed on stdout as a JSON object (`error_json`), as the commands'
    known errors are, so a script reading stdout always gets JSON."""

    def error_seen(self, exc: click.ClickException, args: Sequence[str]) -> None:
        if isinstance(exc, click.UsageError) and wants_json(args):
            print_json(error_json(exc))

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            if sys.stderr.isatty():
                echo(err=True)  # a line of its own after the terminal's "^C"
            echo("Interrupted.", err=True)
            raise click.exceptions.Exit(130) from None


def listed(values: tuple[str, ...], allowed: tuple[str, ...], default: str, hint: str) -> list[str]:
    """Option values, repeatable and/or comma-separated, in order, without repeats."""
    chosen = [v.strip().lower() for value in values for v in value.split(",") if v.strip()]
    for value in chosen:
        if value not in allowed:
            raise click.BadParameter(f"{value!r} is not one of {', '.join(allowed)}", param_hint=hint)
    return list(dict.fromkeys(chosen)) or [default]


def shorten(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


@click.group(cls=InkwellGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="inkwell")
def main() -> None:
    """Inkwell: ask an author's writings. Ingest posts, search them, and get grounded answers."""
