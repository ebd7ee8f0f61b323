"""`inkwell changes`, `inkwell undo` and `inkwell doctor`: the change log, undoing one change, and
mending what a cut-off write left behind."""

from __future__ import annotations

import sys

import click

from core.cli.main import command, main, settings_for
from core.cli.output import echo, echo_row, print_json
from core.text import plural


def _when(at: str) -> str:
    return at[:19].replace("T", " ")


@command(main)
@click.option("--limit", type=click.IntRange(1, 10_000), default=20, show_default=True, help="Newest first.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per change.")
def changes(limit: int, as_json: bool, data_dir: str | None) -> None:
    """List the logged changes (ingests, deletions, chunk edits), newest first: id, time (UTC), posts,
    whether undone, label."""
    from core.store import Store

    logged = Store(settings_for(data_dir).data_dir).changes(limit=limit)
    if not logged and not as_json:
        echo("no changes logged yet (ingests, deletions and edits are)", err=True)
    for change in logged:
        if as_json:
            print_json(change.to_json())
        else:
            state = f"undone {_when(change.undone_at)}" if change.undone_at else "-"
            echo_row([change.change_id, _when(change.at), len(change.post_ids), state, change.label])


@command(main)
@click.argument("change_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print what was undone as JSON.")
def undo(change_id: str | None, as_json: bool, data_dir: str | None) -> None:
    """Undo one change (default: the newest not undone; ids from `inkwell changes`): only the posts it
    touched go back to how they were before it. Refused, naming them, when later changes touched
    those posts."""
    from core.store import Store, UndoRefused

    store = Store(settings_for(data_dir).data_dir)
    try:
        undone = store.undo(change_id)
    except UndoRefused as exc:
        if as_json:
            print_json({"undone": False, "error": str(exc)})
        echo(f"Error: {exc}", fg="red", err=True)
        sys.exit(1)
    store.optimize()
    if as_json:
        print_json(
            {
                "undone": True,
                **undone.change.to_json(),
                "restored": undone.restored,
                "removed": undone.removed,
            }
        )
        return
    echo(
        f"undone {undone.change.change_id} ({undone.change.label}): {plural(len(undone.restored), 'post')} put back, "
        f"{len(undone.removed)} removed"
    )


@command(main)
@click.option("--dry-run", is_flag=True, help="Say what is wrong; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
def doctor(dry_run: bool, as_json: bool, data_dir: str | None) -> None:
    """Find and mend what a cut-off write left: chunks without a post row (never served; removed) and
    posts whose chunks do not match their row (re-chunked from their stored text)."""
    from core.ingest import ingest_posts, rebuild_posts
    from core.store import Store

    settings = settings_for(data_dir)
    store = Store(settings.data_dir)
    orphans = store.orphan_posts()
    mismatched = sorted(p for p, state in store.post_states().items() if state.recorded != state.stored)
    findings = {"orphan_chunks_of": orphans, "posts_to_rebuild": mismatched, "fixed": not dry_run}
    if not dry_run:
        store.remove_orphans()
        if mismatched:
            posts, skipped = rebuild_posts(store, mismatched)
            findings["skipped"] = skipped
            if posts:
                report = ingest_posts(posts, settings, store=store, force=True, label="doctor: rebuild posts")
                findings["rebuilt"] = report.count("updated") + report.count("new")
    if as_json:
        print_json(findings)
        return
    if not orphans and not mismatched:
        echo("nothing to mend")
        return
    verb = "would remove" if dry_run else "removed"
    if orphans:
        echo(
            f"{verb} the chunks of {plural(len(orphans), 'post')} with no post row: {', '.join(orphans[:10])}"
        )
    if mismatched:
        verb = "would rebuild" if dry_run else "rebuilt"
        echo(
            f"{verb} {plural(len(mismatched), 'post')} whose chunks did not match: {', '.join(mismatched[:10])}"
        )
