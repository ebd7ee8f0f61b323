"""Concurrent writers on one existing table end exact, without a traceback (tests/writers_support.py).

4 `inkwell ingest` processes (the same post edited the same way in each, plus each one's own edit
and new post) and the Inspect page's chunk edit, at once, INKWELL_WRITER_RUNS times: 1 here, to keep
`make test` short (it crashed already in the first run before the fix); `make bench-writers` runs 20
and prints the figure.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.writers_support import (
    build_base,
    build_reference,
    compare,
    embedding_server,
    environ,
    run_writers,
    settings_from,
    snapshot,
    writer_folders,
)

WRITERS = 4
EDITS = 5
RUNS = int(os.environ.get("INKWELL_WRITER_RUNS", "1"))


pytestmark = pytest.mark.slow  # four `inkwell ingest` processes and an edit, each a cold start


@pytest.fixture(scope="module")
def server():
    with embedding_server() as server:
        yield server


def test_concurrent_writers_on_an_existing_table_end_exact(server, tmp_path: Path) -> None:
    from core.ingest import ingest_paths

    base = tmp_path / "base-db"
    build_base(base, tmp_path, environ(server, base))
    folders = writer_folders(tmp_path / "folders", WRITERS)
    reference_db = tmp_path / "reference-db"
    build_reference(base, reference_db, folders, environ(server, reference_db), EDITS)
    reference = snapshot(reference_db)
    assert not reference.problems, reference.problems
    seconds = []
    for run in range(RUNS):
        db = tmp_path / f"run-{run}"
        shutil.copytree(base, db)
        env = environ(server, db)
        outcome = run_writers(folders, env, edits=EDITS)
        seconds.append(outcome.seconds)
        assert not outcome.tracebacks, f"run {run}: " + outcome.tracebacks[0][-3000:]
        assert outcome.codes == [0] * (WRITERS + 1), list(zip(outcome.codes, outcome.stderr, strict=True))

        differences = compare(snapshot(db), reference)
        assert not differences, f"run {run}: " + "\n".join(differences[:20])
        again = ingest_paths(folders, settings_from(env))
        assert again.count("unchanged") == len(again.outcomes) and again.chunks_embedded == 0, again.summary()
        shutil.rmtree(db)
    print(f"\n{WRITERS} writers + 1 editor x {RUNS} runs: exact; {sum(seconds) / len(seconds):.1f} s per run")
