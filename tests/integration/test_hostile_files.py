"""The fuzz suite for inputs (issue #11): hostile files never crash an ingest or lose a post.

Through the real `inkwell ingest` into a real table (vectors from the hash embedding server of
tests/writers_support.py, so thousands of chunks embed in seconds): the issue's hostile inputs and their
neighbours in one folder beside good posts (tests/hostile_support.py), then folders of files generated
by Hypothesis (front matter, markup, bundle markers, tags, JSON of any shape, any encoding, raw bytes),
through the same code in-process (many examples) and through the command line (a few). Each time: the
exit code says whether some failed, every good post is stored, every bad file is reported by name with
a one-line reason, the table is consistent (posts <-> chunks, each vector its own text's), no traceback,
bounded time. Hypothesis is derandomized with no example database: the same examples on every run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from core.config import Settings
from core.ingest import ingest_posts
from core.parse import parse_bytes, parse_paths
from core.store import Store
from tests.hostile_support import (
    GOOD_IDS,
    explicit_cases,
    hostile_folder,
    make_folder,
    run_cli,
)
from tests.writers_support import HashEmbedder, embedding_server, environ, snapshot

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)


@pytest.fixture(scope="module")
def server():
    with embedding_server() as server:
        yield server


def stored_ids(db: Path) -> set[str]:
    return {row["post_id"] for row in Store(db).list_posts()}


def assert_consistent(db: Path) -> None:
    problems = snapshot(db).problems
    assert not problems, problems[:10]


def test_the_hostile_files_of_issue_11_are_reported_and_the_rest_is_stored(server, tmp_path: Path) -> None:
    folder, db = tmp_path / "posts", tmp_path / "db"
    folder.mkdir()
    cases = explicit_cases()
    make_folder(folder, cases)

    run = run_cli(["ingest", str(folder), "--json"], environ(server, db, chunk_tokens="300"))

    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert run.code == 1, run.stderr[-3000:]  # "some failed"
    report = run.report
    prefix = f"{folder}/"
    errors = {e["source"].removeprefix(prefix): e["message"] for e in report["errors"]}
    for case in cases:
        if case.outcome == "skipped":
            assert case.name in errors, (case.name, sorted(errors))
            assert case.reason.lower() in errors[case.name].lower(), (case.name, errors[case.name])
    skipped_lines = [line for line in run.stderr.splitlines() if line.startswith("skipped ")]
    assert len(skipped_lines) == len(report["errors"])  # one line each, naming the file
    assert all(line.startswith(f"skipped {folder}/") for line in skipped_lines)
    # Everything else is stored, whole and consistent.
    ids = stored_ids(db)
    wanted = GOOD_IDS | {post_id for case in cases if case.outcome == "stored" for post_id in case.post_ids}
    assert wanted <= ids, wanted - ids
    assert_consistent(db)
    store = Store(db)
    assert "\x00" not in store.get_post("utf32")["raw"] and "UTF-32" in store.get_post("utf32")["title"]
    assert "café" in store.get_post("latin")["raw"]
    assert [w["source"].removeprefix(prefix) for w in report["warnings"]] == ["latin.txt"]
    assert "\ufffd" in store.get_post("lone")["title"]
    assert run.seconds < 300, run.seconds  # a hang guard only


def test_a_file_over_its_time_limit_or_killing_the_reader_is_reported_and_the_next_is_read() -> None:
    from core.parse import isolate

    slow = parse_bytes("slow.md", ("*a [b](c) " * 300_000).encode(), time_limit=0.05)
    assert [e.message for e in slow.errors] == ["took longer than 0.05 s to read; skipped"]
    assert parse_bytes("next.md", b"# Next\n\nRead by a fresh reader.\n").posts[0].title == "Next"

    assert isolate._child is not None
    isolate._child.proc.kill()  # as the kernel's OOM killer would
    crashed = parse_bytes("victim.md", b"# Victim\n\nText.\n")
    assert "stopped the reader process" in crashed.errors[0].message
    assert parse_bytes("after.md", b"# After\n\nText.\n").posts[0].title == "After"


def write_generated(folder: Path, files: list[tuple[str, bytes]]) -> None:
    make_folder(folder, [])
    generated = folder / "generated"
    generated.mkdir()
    for name, data in files:
        (generated / f"gen-{name}").write_bytes(data)


@settings(FUZZ, max_examples=50)
@given(files=hostile_folder())
def test_generated_files_never_crash_an_ingest_nor_lose_a_good_post(tmp_path_factory, files) -> None:
    """In-process (the same reader child process and pipeline as the command line), many examples."""
    root = tmp_path_factory.mktemp("fuzz")
    folder, db = root / "posts", root / "db"
    write_generated(folder, files)
    parsed = parse_paths([folder])
    settings_ = Settings.load({"data_dir": db, "chunk_tokens": 40}, environ={})
    report = ingest_posts(
        parsed.posts, settings_, embedder=HashEmbedder(), errors=parsed.errors, warnings=parsed.warnings
    )

    assert stored_ids(db) >= GOOD_IDS
    sources = {e.source for e in report.errors} | {o.source for o in report.outcomes}
    for name, _ in files:  # every generated file came out as posts or as a reported problem
        assert str(folder / "generated" / f"gen-{name}") in sources, (name, sorted(sources))
    assert all("\n" not in e.message for e in report.errors)
    assert_consistent(db)
    again = ingest_posts(parse_paths([folder]).posts, settings_, embedder=HashEmbedder())
    assert again.chunks_embedded == 0 and again.count("new") == again.count("updated") == 0, again.summary()


@settings(FUZZ, max_examples=2)
@given(files=hostile_folder(max_files=8))
def test_generated_files_through_the_command_line(server, tmp_path_factory, files) -> None:
    root = tmp_path_factory.mktemp("fuzz-cli")
    folder, db = root / "posts", root / "db"
    write_generated(folder, files)

    run = run_cli(["ingest", str(folder), "--json"], environ(server, db, chunk_tokens="300"))

    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    report = run.report
    assert run.code == (1 if report["failed"] else 0)
    assert stored_ids(db) >= GOOD_IDS
    assert_consistent(db)
    assert run.seconds < 300, run.seconds  # a hang guard only


def test_old_mac_line_ends_and_invisible_text_through_the_command_line(server, tmp_path: Path) -> None:
    """Issue #31: CR-only (and CRLF) Markdown keeps its front matter; a file of only zero-width and
    other invisible characters is refused by name ("no visible text"); an invisible title falls back
    as an absent one does; the good posts beside them go in."""
    folder, db = tmp_path / "posts", tmp_path / "db"
    folder.mkdir()
    make_folder(folder, [])
    front = "---\nid: old-mac\ntitle: An Old Mac Post\ncollection: classics\n---\n\n# Heading\n\nSaved on a Mac in 1999.\n"
    (folder / "old-mac.md").write_bytes(front.replace("\n", "\r").encode())
    (folder / "windows.md").write_bytes(front.replace("old-mac", "windows").replace("\n", "\r\n").encode())
    invisible = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\u3164 \u200b\n\u2060\r\n"
    (folder / "invisible.md").write_text(invisible * 50, encoding="utf-8")
    (folder / "zero-width.txt").write_text(invisible, encoding="utf-8")
    (folder / "invisible-title.md").write_text(
        '---\ntitle: "\u200b\u2060\u00ad"\n---\n\n# \u200b\u2060\n\nThe text under an invisible title.\n',
        encoding="utf-8",
    )
    (folder / "untitled-note.txt").write_text(f"\u200b\u200d\n\n{invisible}\n\nA note without a title.\n")
    (folder / "invisible.json").write_text(
        json.dumps(
            [
                {"id": "json-invisible-title", "title": "\u200b\u00ad", "text": "Walnut darkens with age."},
                {"id": "json-invisible-text", "title": "Nothing to see", "text": invisible},
            ]
        )
    )

    run = run_cli(["ingest", str(folder), "--json"], environ(server, db, chunk_tokens="300"))

    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    errors = {(e["source"].removeprefix(f"{folder}/"), e["message"]) for e in run.report["errors"]}
    refused = {name for name, message in errors if "no visible text" in message}
    assert refused == {"invisible.md", "zero-width.txt", "invisible.json"}, errors
    assert f"skipped {folder}/invisible.md: has no visible text" in run.stderr
    store = Store(db)
    for post_id in ("old-mac", "windows"):
        post = store.get_post(post_id)
        assert post is not None, sorted(stored_ids(db))
        assert (post["title"], post["collection"]) == ("An Old Mac Post", "classics")
    ids = stored_ids(db)
    assert (
        GOOD_IDS | {"old-mac", "windows", "invisible-title", "untitled-note", "json-invisible-title"} <= ids
    ), ids
    assert "json-invisible-text" not in ids
    # An invisible title is no title: the file name, the first words, as when none is given.
    titles = {pid: store.get_post(pid)["title"] for pid in ("invisible-title", "json-invisible-title")}
    assert titles == {
        "invisible-title": "Invisible title",
        "json-invisible-title": "Walnut darkens with age.",
    }
    assert store.get_post("untitled-note")["title"] == "Untitled note"
    assert_consistent(db)
