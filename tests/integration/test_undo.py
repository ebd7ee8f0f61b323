"""Undo and cut-off writes: an undo reverts only its own change, heals when it is cut off at any step,
and chunks left without a post row are never served and then removed.

Real `inkwell` processes, killed at the store's crash points (core/store/faults.py) as a power cut
would, or running at once; vectors from the hash embedding server (tests/writers_support.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.store.faults import CRASH_EXIT, CRASH_POINTS, ENV_CRASH_AT
from tests.writers_support import (
    BASE_POSTS,
    ROOT,
    build_base,
    build_reference,
    compare,
    embedding_server,
    environ,
    paragraphs,
    post,
    run_writers,
    snapshot,
    write_posts,
    writer_folders,
)

# Each post's last full stop made an exclamation mark: the post keeps its chunk count, so a cut write
# must be healed by the content hash, not by a count that happens to differ.
EDITED = {f"post-{i}": post(f"Post {i}", paragraphs(f"post-{i}")[:-1] + "!") for i in range(6)}


@pytest.fixture(scope="module")
def server():
    with embedding_server() as server:
        yield server


def cli(env: dict[str, str], *args: str, crash_at: str | None = None) -> subprocess.CompletedProcess:
    run_env = {**env, ENV_CRASH_AT: crash_at} if crash_at else env
    return subprocess.run(
        [sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=run_env, capture_output=True, text=True
    )


def texts_by_post(data_dir: Path) -> dict[str, list[str]]:
    """Each post's chunk texts in order (what a reader can be quoted)."""
    snap = snapshot(data_dir)
    out: dict[str, list[tuple[int, str]]] = {}
    for post_id, idx, _, text in snap.chunks.values():
        out.setdefault(post_id, []).append((idx, text))
    return {p: [t for _, t in sorted(rows)] for p, rows in out.items()}


@pytest.fixture
def edited_table(server, tmp_path: Path) -> tuple[Path, dict[str, str], Path, Path]:
    """The base table, then one ingest that rewrote 6 posts (the change to undo); returns the table, its
    environment, the table as it was before the change (a copy) and the edited posts' folder."""
    db = tmp_path / "db"
    env = environ(server, db)
    build_base(db, tmp_path, env)
    shutil.copytree(db, tmp_path / "before-db")
    edits = write_posts(tmp_path / "base", EDITED)  # the same files, rewritten
    edited = cli(env, "ingest", str(edits))
    assert edited.returncode == 0 and "6 updated" in edited.stdout, edited.stderr[-2000:]
    return db, env, tmp_path / "before-db", edits


def test_crash_points_are_the_ones_the_store_has():
    source = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "core" / "store").glob("*.py"))
    for name in CRASH_POINTS:
        assert f'crash_point("{name}")' in source


@pytest.mark.parametrize("point", ["undo:posts-written", "undo:chunks-written"])
def test_an_undo_cut_off_at_any_step_is_finished_by_running_it_again(edited_table, point):
    db, env, before_db, _ = edited_table
    cut = cli(env, "undo", crash_at=point)
    assert cut.returncode == CRASH_EXIT, cut.stderr[-2000:]
    again = cli(env, "undo")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "6 posts put back" in again.stdout
    assert not snapshot(db).problems
    assert texts_by_post(db) == texts_by_post(before_db)
    assert snapshot(db).posts == snapshot(before_db).posts


def test_an_undo_cut_off_between_its_writes_is_healed_by_the_next_ingest(edited_table):
    """The probe's finding: the cut used to leave stale chunks for good ('6 updated', old chunks kept)."""
    db, env, _, edits = edited_table
    cut = cli(env, "undo", crash_at="undo:posts-written")
    assert cut.returncode == CRASH_EXIT
    healed = cli(env, "ingest", str(edits))
    assert healed.returncode == 0 and "6 updated" in healed.stdout, healed.stderr[-2000:]
    snap = snapshot(db)
    assert not snap.problems, snap.problems
    # Every post is what its file says: compare with the files ingested into a new table.
    fresh = db.parent / "fresh-db"
    assert cli(environ_for(env, fresh), "ingest", str(edits)).returncode == 0
    assert texts_by_post(db) == texts_by_post(fresh)


def environ_for(env: dict[str, str], data_dir: Path) -> dict[str, str]:
    return {**env, "INKWELL_DATA_DIR": str(data_dir)}


def test_undo_with_four_ingests_running_reverts_only_its_own_change(server, tmp_path: Path):
    """The probe's finding: 'Undo last change' during four ingests rolled their work back too."""
    db = tmp_path / "db"
    env = environ(server, db)
    build_base(db, tmp_path, env)
    shutil.copytree(db, tmp_path / "base-db")
    quiet = write_posts(tmp_path / "quiet", {"quiet": post("Quiet", "A quiet edit, to be undone.", "notes")})
    assert cli(env, "ingest", "--replace", str(quiet)).returncode == 0
    change = cli(env, "changes").stdout.split("\t")[0]

    folders = writer_folders(tmp_path / "folders", 4)
    undo = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time, sys; time.sleep(1.0); from core.cli import main; main()",
            "undo",
            change,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    outcome = run_writers(folders, env)
    _, err = undo.communicate(timeout=300)
    assert undo.returncode == 0, err[-2000:]
    assert outcome.codes == [0] * 4, outcome.stderr

    # The same writes one after the other, from the base table (where the undone edit never was).
    reference = tmp_path / "reference-db"
    build_reference(tmp_path / "base-db", reference, folders, environ(server, reference), edits=0)
    differences = compare(snapshot(db), snapshot(reference))
    assert not differences, "\n".join(differences[:20])

    # Undoing the base ingest now would roll back what the writers wrote: refused, naming their changes.
    first = cli(env, "changes", "--limit", "100").stdout.strip().splitlines()[-1].split("\t")[0]
    refused = cli(env, "undo", first)
    assert refused.returncode == 1
    assert "changed since, by" in refused.stderr and f"inkwell ingest {folders[0]}" in refused.stderr
    assert not compare(snapshot(db), snapshot(reference))  # and nothing moved


def test_chunks_without_a_post_row_are_never_served_and_then_removed(server, tmp_path: Path):
    """The probe's finding: a crash between the two tables' writes, then the post's file removed, left
    chunks that answers quoted and `posts delete` could not find."""
    db = tmp_path / "db"
    env = environ(server, db)
    build_base(db, tmp_path, env)
    ghost_text = "Ghostwood is a word I made up for spalted maple."
    ghost = write_posts(tmp_path / "ghost", {"ghost": post("Ghost", ghost_text)})
    cut = cli(env, "ingest", str(ghost), crash_at="ingest:chunks-written")
    assert cut.returncode == CRASH_EXIT
    shutil.rmtree(ghost)
    assert cli(env, "doctor", "--dry-run").stdout.startswith("would remove the chunks of 1 post with")

    for mode in ("fts", "dense", "hybrid"):
        found = cli(env, "search", "--json", "--mode", mode, "--no-route", "--threshold", "0", ghost_text)
        assert found.returncode == 0, found.stderr[-2000:]
        assert '"post_id": "ghost"' not in found.stdout, mode
    answered = cli(env, "ask", "--json", "--answer-mode", "extractive", "--no-route", ghost_text)
    reply = json.loads(answered.stdout)
    assert "Ghostwood" not in reply["answer"] and all(s["post_id"] != "ghost" for s in reply["sentences"])

    deleted = cli(env, "posts", "delete", "ghost")
    assert deleted.returncode == 0 and "deleted 1 post" in deleted.stdout.splitlines()
    assert "ghost" not in {row[0] for row in snapshot(db).chunks.values()}


def test_the_next_ingest_removes_chunks_without_a_post_row(server, tmp_path: Path):
    db = tmp_path / "db"
    env = environ(server, db)
    build_base(db, tmp_path, env)
    ghost = write_posts(tmp_path / "ghost", {"ghost": post("Ghost", "Spalted maple, cut too late.")})
    assert cli(env, "ingest", str(ghost), crash_at="ingest:chunks-written").returncode == CRASH_EXIT
    shutil.rmtree(ghost)
    other = write_posts(tmp_path / "other", {"other": post("Other", paragraphs("other"))})
    report = cli(env, "ingest", str(other))
    assert report.returncode == 0 and "had no post row" in report.stdout
    assert not snapshot(db).problems
    assert cli(env, "doctor").stdout.strip() == "nothing to mend"
    assert set(snapshot(db).posts) == {*BASE_POSTS, "other"}


def test_a_cut_off_new_post_is_stored_whole_by_the_next_ingest_of_its_file(server, tmp_path: Path):
    db = tmp_path / "db"
    env = environ(server, db)
    build_base(db, tmp_path, env)
    new = write_posts(tmp_path / "new", {"new": post("New", paragraphs("new post"))})
    assert cli(env, "ingest", str(new), crash_at="ingest:chunks-written").returncode == CRASH_EXIT
    again = cli(env, "ingest", str(new))
    assert again.returncode == 0 and "1 new" in again.stdout, again.stderr[-2000:]
    snap = snapshot(db)
    assert not snap.problems and "new" in snap.posts
