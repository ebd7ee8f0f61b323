"""Local paths kept in sync: `inkwell ingest PATH --remember` records a folder or an export file as a
source, and `inkwell sync` re-reads it through the real CLI into real tables: only changed and new posts
are embedded, `--prune` removes only the posts that came from the path and left it, and a path that is
gone is named, prunes nothing and fails the sync (tests/integration/test_backends.py runs a path sync on s3:// too)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from core.cli import main
from core.store import Store
from tests.imports_support import MEMBERS_POSTS, PUBLIC_POSTS, members_substack
from tests.integration.test_imports import FIXTURES


def run(*args: str, data_dir: Path):
    return CliRunner().invoke(main, [*args, "--data-dir", str(data_dir)], catch_exceptions=False)


def stored(data_dir: Path) -> dict[str, dict]:
    return {p["post_id"]: p for p in Store(data_dir).list_posts()}


def write_post(folder: Path, name: str, title: str, *paragraphs: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ntitle: {title}\n---\n\n" + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
    return path


def synced(result) -> dict:
    """The one source's outcome in `--json` output."""
    assert result.exit_code in (0, 1), result.output
    (source,) = json.loads(result.stdout)["sources"]
    return source


def test_a_remembered_folder_syncs_its_edits_additions_and_deletions(tmp_path):
    db, posts, other = tmp_path / "db", tmp_path / "posts", tmp_path / "other"
    write_post(posts, "benches.md", "Benches", "My bench is a Roubo with a leg vise of ash.")
    write_post(posts, "finishes.md", "Finishes", "I finish walnut with three coats of boiled linseed oil.")
    write_post(posts, "clamps.md", "Clamps", "Pipe clamps are cheap and you can never have too many.")
    write_post(posts, "shop/saws.md", "Saws", "A rip saw has chisel teeth; a crosscut saw has knife teeth.")
    write_post(other, "lathe.md", "Lathe", "My lathe is an old Myford, belt driven and quiet.")
    first = run("ingest", str(posts), "--remember", "--json", data_dir=db)
    assert first.exit_code == 0, first.output
    assert synced(first)["report"]["new"] == 4 and synced(first)["kind"] == "path"
    assert run("ingest", str(other), data_dir=db).exit_code == 0  # a post from elsewhere, not remembered

    # Between the syncs: one post edited, one deleted, one added.
    write_post(posts, "finishes.md", "Finishes", "I finish walnut with shellac now: it dries in an hour.")
    (posts / "clamps.md").unlink()
    write_post(posts, "dovetails.md", "Dovetails", "I cut dovetails tails-first with a Japanese dozuki saw.")

    second = synced(run("sync", "--json", data_dir=db))
    statuses = {p["post_id"]: p["status"] for p in second["report"]["posts"]}
    assert statuses == {
        "benches": "unchanged",
        "finishes": "updated",
        "saws": "unchanged",
        "dovetails": "new",
    }
    rows = stored(db)
    assert second["report"]["chunks_embedded"] == rows["finishes"]["n_chunks"] + rows["dovetails"]["n_chunks"]
    assert second["gone"] == [{"post_id": "clamps", "url": str(posts / "clamps.md")}]
    assert "clamps" in rows  # named, not removed, without --prune
    assert rows["saws"]["collection"] == "shop"  # the folder's collection, as a plain ingest gives it

    pruned = run("sync", "--prune", "--json", data_dir=db)
    assert pruned.exit_code == 0, pruned.output
    out = synced(pruned)
    assert out["pruned"] and out["gone"] == [{"post_id": "clamps", "url": str(posts / "clamps.md")}]
    assert out["report"]["chunks_embedded"] == 0 and out["report"]["unchanged"] == 4
    assert f"removed: clamps ({posts / 'clamps.md'})" in pruned.stderr
    assert set(stored(db)) == {"benches", "finishes", "saws", "dovetails", "lathe"}  # lathe: not this path's

    found = json.loads(run("search", "shellac dries in an hour", "--json", "--k", "1", data_dir=db).stdout)
    assert found["hits"][0]["post_id"] == "finishes"
    listed = [json.loads(line) for line in run("sources", "--json", data_dir=db).stdout.splitlines()]
    assert [(s["url"], s["kind"], s["posts"], s["ok"]) for s in listed] == [(str(posts), "path", 4, True)]
    assert "1 removed" in listed[0]["result"]


def test_prune_never_removes_a_post_now_read_from_elsewhere_or_a_file_that_failed(tmp_path):
    db, posts, other = tmp_path / "db", tmp_path / "posts", tmp_path / "other"
    write_post(posts, "oak.md", "Oak", "Oak splits along its rays, so I rive it with a froe.")
    write_post(posts, "ash.md", "Ash", "Ash bends when steamed for an hour per inch of thickness.")
    (posts / "cherry.json").write_text(
        json.dumps({"id": "cherry", "title": "Cherry", "text": "Cherry darkens in the sun within weeks."}),
        encoding="utf-8",
    )
    assert run("ingest", str(posts), "--remember", data_dir=db).exit_code == 0
    # "ash" moves to another folder (ingested from there), and cherry.json is damaged: neither may go.
    moved = write_post(other, "ash.md", "Ash", "Ash bends when steamed; I moved this post.")
    (posts / "ash.md").unlink()
    assert run("ingest", "--replace", str(other), data_dir=db).exit_code == 0
    (posts / "cherry.json").write_text('{"id": "cherry", "title": "Cher', encoding="utf-8")

    result = run("sync", "--prune", "--json", data_dir=db)
    assert result.exit_code == 1  # the damaged file is a failure, named
    out = synced(result)
    assert [e["source"] for e in out["report"]["errors"]] == [str(posts / "cherry.json")]
    assert out["gone"] == [] and not out["pruned"]
    rows = stored(db)
    assert set(rows) == {"oak", "ash", "cherry"}
    assert rows["ash"]["source"] == str(moved)

    # Repaired, cherry is read again; removed, it is pruned.
    (posts / "cherry.json").unlink()
    out = synced(run("sync", "--prune", "--json", data_dir=db))
    assert [g["post_id"] for g in out["gone"]] == ["cherry"] and out["pruned"]
    assert set(stored(db)) == {"oak", "ash"}


def test_a_folder_ingested_by_a_relative_path_prunes_from_any_folder(tmp_path, monkeypatch):
    """Posts stored with a relative source (a plain ingest before) are still this path's to prune when
    `sync` runs elsewhere (cron), though unchanged posts keep their stored source."""
    db = tmp_path / "db"
    work = tmp_path / "blog"
    write_post(work / "posts", "oak.md", "Oak", "Oak splits along its rays.")
    write_post(work / "posts", "ash.md", "Ash", "Ash bends when steamed.")
    monkeypatch.chdir(work)
    plain = run("ingest", "posts", data_dir=db)
    assert plain.exit_code == 0, plain.output
    assert stored(db)["ash"]["source"] == "posts/ash.md"
    assert run("ingest", "posts", "--remember", data_dir=db).exit_code == 0
    (work / "posts" / "ash.md").unlink()
    monkeypatch.chdir(tmp_path)
    out = synced(run("sync", "--prune", "--json", data_dir=db))
    assert out["pruned"] and [g["post_id"] for g in out["gone"]] == ["ash"]
    assert set(stored(db)) == {"oak"}
    assert run("sources", "--remove", "blog/posts", data_dir=db).exit_code == 0  # relative works too
    assert run("sources", "--json", data_dir=db).stdout == "" and set(stored(db)) == {"oak"}


def test_a_wordpress_export_resynced_after_a_post_was_added(tmp_path):
    db, export = tmp_path / "db", tmp_path / "exports" / "woodshop.xml"
    export.parent.mkdir()
    shutil.copyfile(FIXTURES / "wordpress.xml", export)
    first = synced(run("ingest", str(export), "--remember", "--json", data_dir=db))
    assert first["ok"] and first["report"]["new"] == 3

    text = export.read_text(encoding="utf-8")
    start = text.index("\t<item>\n\t\t<title>Caf")
    item = text[start : text.index("</item>", start) + len("</item>")]
    added = (
        item.replace("Caf&#233; Tables &amp; Chairs", "Steam Bending Ash")
        .replace("caf%c3%a9-tables", "steam-bending-ash")
        .replace("?p=77", "?p=91")
        .replace("<wp:post_id>77", "<wp:post_id>91")
    )
    added = added[: added.index("<![CDATA[<p>")] + (
        "<![CDATA[<p>I steam ash for an hour per inch, then bend it over an oak form.</p>]]></content:encoded>"
        + added[added.index("</content:encoded>") + len("</content:encoded>") :]
    )
    export.write_text(text.replace(item, item + "\n" + added, 1), encoding="utf-8")

    second = synced(run("sync", "--prune", "--json", data_dir=db))
    statuses = {p["post_id"]: p["status"] for p in second["report"]["posts"]}
    assert statuses == {
        "oiling-the-walnut-bench": "unchanged",
        "why-i-left-software": "unchanged",
        "cafe-tables": "unchanged",
        "steam-bending-ash": "new",
    }
    rows = stored(db)
    assert second["report"]["chunks_embedded"] == rows["steam-bending-ash"]["n_chunks"]
    assert second["gone"] == [] and set(rows) == set(statuses)
    assert rows["steam-bending-ash"]["source"] == str(export)


def test_a_remembered_export_syncs_members_only_posts_only_when_remembered_with_include_members(tmp_path):
    db, export = tmp_path / "db", tmp_path / "hives-substack.zip"
    export.write_bytes(members_substack())
    first = synced(run("ingest", str(export), "--remember", "--json", data_dir=db))
    assert first["ok"] and set(stored(db)) == PUBLIC_POSTS
    (warning,) = [w["message"] for w in first["report"]["warnings"] if "left out" in w["message"]]
    assert warning.startswith(
        "left out 3 posts for paying or signed-in members only (read them with --include-members"
    )
    again = synced(run("sync", "--json", data_dir=db))  # the sync reads with the remembered options
    assert again["ok"] and set(stored(db)) == PUBLIC_POSTS

    synced(run("ingest", str(export), "--remember", "--include-members", "--json", data_dir=db))
    assert set(stored(db)) == set(MEMBERS_POSTS)
    kept = synced(run("sync", "--prune", "--json", data_dir=db))
    assert kept["report"]["unchanged"] == len(MEMBERS_POSTS) and kept["gone"] == []

    # Remembered again without the flag: a pruning sync takes the members-only posts back out.
    synced(run("ingest", str(export), "--remember", "--json", data_dir=db))
    pruned = synced(run("sync", "--prune", "--json", data_dir=db))
    assert {g["post_id"] for g in pruned["gone"]} == set(MEMBERS_POSTS) - PUBLIC_POSTS and pruned["pruned"]
    assert set(stored(db)) == PUBLIC_POSTS


def test_a_path_that_no_longer_exists_is_named_prunes_nothing_and_fails(tmp_path):
    db, posts = tmp_path / "db", tmp_path / "posts"
    write_post(posts, "oak.md", "Oak", "Oak splits along its rays.")
    write_post(posts, "ash.md", "Ash", "Ash bends when steamed.")
    assert run("ingest", str(posts), "--remember", data_dir=db).exit_code == 0
    posts.rename(tmp_path / "elsewhere")

    result = run("sync", "--prune", data_dir=db)
    assert result.exit_code == 1
    assert f"{posts}: no longer exists here: nothing read, nothing pruned" in result.stderr
    assert "Traceback" not in result.output
    assert set(stored(db)) == {"oak", "ash"}
    (listed,) = [json.loads(line) for line in run("sources", "--json", data_dir=db).stdout.splitlines()]
    assert listed["url"] == str(posts) and not listed["ok"] and listed["posts"] == 2

    (tmp_path / "elsewhere").rename(posts)  # back again: its posts are still known, nothing to do
    back = synced(run("sync", "--prune", "--json", data_dir=db))
    assert back["ok"] and back["report"]["unchanged"] == 2 and back["gone"] == []


def test_remember_refuses_what_a_sync_could_not_repeat(tmp_path):
    posts = tmp_path / "posts"
    write_post(posts, "oak.md", "Oak", "Oak splits along its rays.")
    for extra in (["-", "--title", "Pasted"], ["--llm-keywords"]):
        result = CliRunner().invoke(
            main, ["ingest", str(posts), "--remember", *extra, "--data-dir", str(tmp_path / "db")]
        )
        assert result.exit_code == 2 and "--remember keeps folders and files" in result.output
    assert not (tmp_path / "db").exists()
