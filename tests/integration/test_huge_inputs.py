"""Huge inputs (issue #31): a post whose chunks take longer than the time limit to embed is refused by
name, the files beside it go in first, and progress is shown on stderr line by line when it is not a
terminal. Through the real `inkwell ingest` into a real table; vectors from the hash embedding server
of tests/writers_support.py, slowed down for the huge post's texts only, so the time limit is met by
that post alone whatever the machine's load. (How time grows with size: bench/huge_inputs.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

from core.store import Store
from tests.hostile_support import GOOD_IDS, make_folder, run_cli
from tests.servers import Reply, ScriptedOpenAIServer
from tests.writers_support import environ, hash_vector, paragraphs, snapshot

MARK = "quagga"  # in every paragraph of the huge post, and nowhere else
SLOW = 0.5  # seconds per embedding request holding the mark


def slow_for_the_huge_post(body: dict) -> Reply:
    texts = body.get("input") or []
    return Reply(vectors=[hash_vector(t) for t in texts], delay=SLOW if any(MARK in t for t in texts) else 0)


def test_a_post_over_its_time_limit_is_refused_by_name_after_the_rest_with_progress(tmp_path: Path) -> None:
    folder, db = tmp_path / "posts", tmp_path / "db"
    folder.mkdir()
    make_folder(folder, [])
    # First in path order, over 1 MB (posts of files that large are stored after the others), and some
    # 900 chunks: 4 slices of 256 texts, each 8 requests of 32 (4 at a time), so about 1 s a slice
    # against a 2 s limit.
    huge = "\n\n".join(f"{paragraphs(f'huge {i}', 1)} The {MARK} grazed." for i in range(4500))
    assert len(huge) > 1_000_000
    (folder / "a-huge.md").write_text(f"---\ntitle: Huge\n---\n\n{huge}\n", encoding="utf-8")
    many = [{"id": f"many-{i}", "title": f"Many {i}", "text": paragraphs(f"many {i}", 1)} for i in range(300)]
    (folder / "many.json").write_text(json.dumps(many), encoding="utf-8")

    with ScriptedOpenAIServer() as server:
        server.responder = slow_for_the_huge_post
        run = run_cli(
            ["ingest", str(folder), "--json", "--time-limit", "2"], environ(server, db, chunk_tokens="300")
        )

    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert run.code == 1, run.stderr[-3000:]
    failed = [o for o in run.report["posts"] if o["status"] == "failed"]
    assert [(o["source"], o["post_id"]) for o in failed] == [(str(folder / "a-huge.md"), "a-huge")]
    assert "took longer than 2 s to embed" in failed[0]["message"], failed[0]["message"]
    assert f"failed {folder}/a-huge.md (a-huge): could not be stored: took longer than 2 s" in run.stderr
    ids = {row["post_id"] for row in Store(db).list_posts()}
    assert ids == GOOD_IDS | {f"many-{i}" for i in range(300)}, ids ^ (GOOD_IDS | {"a-huge"})
    assert not snapshot(db).problems
    # Progress: a line per step, the posts done never going back, ending with all of them.
    total = len(GOOD_IDS) + 300 + 1
    steps = re.findall(r"^ingesting: (\d+)/(\d+) posts; (.*)$", run.stderr, re.MULTILINE)
    assert len(steps) >= 5, run.stderr[-2000:]
    assert {int(of) for _, of, _ in steps} == {total}
    done = [int(d) for d, _, _ in steps]
    assert done == sorted(done) and done[-1] == total and steps[-1][2] == "done"
    # The huge post was embedded (and refused) last, when every other post was stored.
    slices = [
        (int(d), int(m.group(1).replace(",", "")))
        for d, _, message in steps
        if (m := re.fullmatch(r"embedding: [\d,]+ of ([\d,]+) chunks", message))
    ]
    huge_steps = {d for d, of in slices if of > 600}
    assert huge_steps == {total - 1}, steps[-12:]
