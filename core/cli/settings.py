"""`inkwell settings show|set|suggest`: the owner's saved settings (persona, decline text, the chat's
title, greeting and starter questions; core/answer/owner.py), for scripting what the Settings page does."""

from __future__ import annotations

import click

from core.cli.main import command, main, settings_for
from core.cli.output import MULTILINE, echo, print_json


@main.group(name="settings")
def settings_group() -> None:
    """Show and change the owner's saved settings (shared with the app; no restart needed)."""


@command(settings_group, "show")
@click.option("--json", "as_json", is_flag=True, help="Print the saved settings as one JSON object.")
def settings_show(as_json: bool, data_dir: str | None) -> None:
    """The saved settings, one per line: key, then the value ("-" when not set: the default or the
    environment applies)."""
    from core.answer.owner import load_owner
    from core.store import Store

    owner = load_owner(Store(settings_for(data_dir).data_dir))
    if as_json:
        print_json(owner.to_json())
        return
    for key, value in owner.to_json().items():
        if key == "starters":
            echo(f"{key}:{'' if value else ' -'}")
            for question in value:
                echo(f"  {question}")
        else:
            echo(f"{key}: {value or '-'}", keep=MULTILINE)


@command(settings_group, "set")
@click.argument("key")
@click.argument("values", nargs=-1)
def settings_set(key: str, values: tuple[str, ...], data_dir: str | None) -> None:
    """Save one setting: `inkwell settings set author_name "Maya"`; starters take one argument per
    question (3 to 6). No value (or "") clears it, so the default or the environment applies again."""
    from core.answer.owner import KEYS, LABELS, SettingError, cleared_keys, cleared_note, save_owner
    from core.store import Store

    if key not in KEYS:
        raise click.BadParameter(f"{key!r} is not one of {', '.join(KEYS)}", param_hint="KEY")
    if key != "starters" and len(values) > 1:
        raise click.BadParameter(f"{key} takes one value (quote it), not {len(values)}", param_hint="VALUES")
    value: object = list(values) if key == "starters" else (values[0] if values else "")
    try:
        saved = save_owner(Store(settings_for(data_dir).data_dir), {key: value})
    except SettingError as exc:  # named as the Settings page labels it, with the key typed here
        raise click.ClickException(exc.with_key()) from exc
    echo(cleared_note(cleared_keys([key], saved)) or f"Saved {LABELS[key]}.", err=True)


@command(settings_group, "suggest")
@click.option("--count", type=click.IntRange(1, 6), default=4, show_default=True, help="How many.")
def settings_suggest(count: int, data_dir: str | None) -> None:
    """Suggest starter questions from the posts' most central chunks, one per line (nothing is saved;
    pass the ones you keep to `inkwell settings set starters`). Only questions the chat answers are
    suggested: each is asked as a reader would (the author's own sentences, no model), and one it would
    decline is left out, and said so, rather than replaced."""
    from core.answer.suggest import answered_starters
    from core.embed import embedder_for_store
    from core.store import Store

    settings = settings_for(data_dir)
    store = Store(settings.data_dir)
    found = answered_starters(store, settings, embedder_for_store(settings, store.model_id()), count)
    if not found.kept and not found.declined:
        echo("no posts to suggest questions from yet (ingest some first)", err=True)
    for starter in found.kept:
        echo(starter.question)
    if found.declined:
        echo(found.declined_note, fg="yellow", err=True)
