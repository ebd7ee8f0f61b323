"""Everything the `inkwell` command line prints goes through here, so text from the posts or the reader is
shown to the terminal, never obeyed by it.

    echo(f"{title} ({post_id})")            # one line: ESC, CR, backspace... shown as \\x1b, \\r, \\x08
    echo(answer, keep=MULTILINE, nl=False)  # multi-line text keeps its line breaks and tabs
    echo_row([post_id, title])              # tab-separated fields; a tab inside a field is shown as \\t
    print_json(value)                       # one JSON line, C1 controls and U+2028/2029 escaped as well

A post title holding `ESC[2J` would otherwise clear the reader's screen, `ESC]0;…BEL` retitle their
window, and `\\r` or backspace hide the text before them. Errors (click's usage errors included) are
escaped the same way by `EscapingGroup`, the class of the `inkwell` group.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import click

MULTILINE = "\n\t"  # what multi-line text (an answer, a post's raw text, a table) keeps as it is

# What a terminal may act on or that can make it show something other than the text: C0, DEL and C1
# controls, the line and paragraph separators, the bidirectional embeddings, overrides and isolates
# ("Trojan Source"), and lone surrogates (which cannot even be encoded for output).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(char: str) -> str:
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def safe(value: object, *, keep: str = "") -> str:
    """`value` as text in which every control character (see `_UNSAFE`) except those in `keep` is written
    as a visible escape like `\\x1b`; other text, emoji and accents included, is unchanged. Idempotent."""
    text = str(value)
    if "\n" in keep:
        text = text.replace("\r\n", "\n")  # a Windows line end is a line end, not a carriage return
    return _UNSAFE.sub(lambda m: m.group() if m.group() in keep else _escape(m.group()), text)


def echo_row(fields: Iterable[object]) -> None:
    """Print `fields` tab-separated on one line, each made `safe`, so a tab or line break inside a field
    cannot shift the columns or start a row."""
    click.echo("\t".join(safe(field) for field in fields))


def echo(message: object = "", *, keep: str = "", err: bool = False, nl: bool = True, **style: Any) -> None:
    """Print `message` made `safe` (keeping the characters in `keep`), styled with click's `style`
    arguments (fg, bold, dim…) when given, to stdout or with `err` to stderr."""
    text = safe(message, keep=keep)
    click.echo(click.style(text, **style) if style else text, err=err, nl=nl)


def print_json(value: Any) -> None:
    """`value` as one line of JSON. json.dumps escapes C0 controls; DEL, C1 controls, U+2028/2029, the
    bidirectional controls and lone surrogates are escaped here (`\\u009b`), which is still the same JSON."""
    text = json.dumps(value, ensure_ascii=False)
    click.echo(_json_escaped(text))


def print_json_text(text: str) -> None:
    """A JSON document already serialised (indented: its line breaks are between tokens, since JSON
    escapes those inside strings), with the characters `print_json` escapes escaped as it does; printed
    as is otherwise, with no line end added."""
    click.echo(_json_escaped(text, keep="\n"), nl=False)


def _json_escaped(text: str, keep: str = "") -> str:
    """JSON text with every unsafe character but those in `keep` written as a JSON escape (`\\u009b`)."""
    return _UNSAFE.sub(lambda m: m.group() if m.group() in keep else f"\\u{ord(m.group()):04x}", text)


@contextmanager
def _escaped_errors(seen: Callable[[click.ClickException], None]) -> Iterator[None]:
    try:
        yield
    except click.ClickException as exc:
        seen(exc)  # before the escaping, which is for the terminal: a JSON copy escapes on its own
        exc.message = safe(exc.message, keep="\n")  # what `show()` prints, after "Error: "
        raise


_ARGS = "inkwell.args"  # the key of the command line in `ctx.meta`, which the subcommands' contexts share


class EscapingGroup(click.Group):
    """A click group whose errors, and those of every command under it, print with their control
    characters escaped: the messages of its known errors quote stored and typed text. Each error is
    first passed to `error_seen` with the command line, as it was raised."""

    def error_seen(self, exc: click.ClickException, args: Sequence[str]) -> None:
        """Called with every error of the group or a command under it (`args`: the whole command line)
        before it is escaped and shown; nothing here."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        given = list(args)
        with _escaped_errors(lambda exc: self.error_seen(exc, given)):  # errors parsing the group's options
            ctx = super().make_context(info_name, args, parent, **extra)
        ctx.meta[_ARGS] = given
        return ctx

    def invoke(self, ctx: click.Context) -> Any:
        given = ctx.meta.get(_ARGS, [])
        with _escaped_errors(lambda exc: self.error_seen(exc, given)):  # the subcommands' errors, all
            return super().invoke(ctx)
