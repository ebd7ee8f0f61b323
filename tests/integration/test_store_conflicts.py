"""Commit conflicts: every write path retries them (core/store/commit.py), and a post two writers store
at once ends whole, never one writer's chunks under the other's content hash.

Conflicts are injected by making LanceDB's own table methods raise the error lance raises when another
writer won, a given number of times; tests/integration/test_concurrent_writers.py runs real concurrent processes.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from lancedb.table import LanceTable

from core.config import Settings
from core.ingest import edit_chunk, ingest_paths, reembed
from core.store import CommitConflictError, Store
from core.store.commit import RetryPolicy, is_commit_conflict, retry_commit
from tests.conftest import write
from tests.writers_support import DIM, hash_vector

CONFLICT = (
    "lance error: Retryable commit conflict for version 5: This Rewrite transaction was preempted by "
    "concurrent transaction Update at version 5. Please retry., conflict_resolver.rs:1363:34"
)


class HashEmbedder:
    """Deterministic vectors, no model: these tests are about commits."""

    def __init__(self, model_id: str = "hash-embed") -> None:
        self.model_id = model_id
        self.dim = DIM
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        return np.array([hash_vector(self.model_id + t) for t in texts], dtype=np.float32).reshape(-1, DIM)

    query = embed


def fast_policy(**changes) -> RetryPolicy:
    return RetryPolicy(sleep=lambda _s: None, rng=random.Random(0), **changes)


@pytest.fixture
def small(settings: Settings) -> Settings:
    return settings.replace(chunk_tokens=40)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "posts"
    for name in ("alpha", "beta", "gamma"):
        body = " ".join(
            f"The {name} bench has a walnut top, planed by hand in {year}." for year in range(2001, 2013)
        )
        write(
            root / f"{name}.md", f"# {name.title()}\n\n{body}\n\nA second paragraph about {name} joinery.\n"
        )
    return root


def conflict_times(monkeypatch: pytest.MonkeyPatch, method: str, times: int) -> list[int]:
    """LanceTable.<method> raises a commit conflict `times` times, then works; returns the call count."""
    original = getattr(LanceTable, method)
    calls = [0]

    def flaky(self, *args, **kwargs):
        calls[0] += 1
        if calls[0] <= times:
            raise RuntimeError(CONFLICT)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(LanceTable, method, flaky)
    return calls


# retry_commit --------------------------------------------------------------------------------------------


def test_conflicts_are_recognised_by_message_and_other_errors_are_not():
    assert is_commit_conflict(RuntimeError(CONFLICT))
    assert is_commit_conflict(OSError("Too many concurrent writers. Please retry"))
    assert not is_commit_conflict(RuntimeError("lance error: Invalid user input: no such column"))
    assert not is_commit_conflict(KeyError("commit conflict"))


def test_retry_commit_retries_with_growing_waits_then_succeeds():
    waits: list[float] = []
    attempts = [0]

    def flaky() -> str:
        attempts[0] += 1
        if attempts[0] < 4:
            raise RuntimeError(CONFLICT)
        return "done"

    policy = RetryPolicy(sleep=waits.append, rng=random.Random(1))
    assert retry_commit("write", flaky, policy) == "done"
    assert attempts[0] == 4 and len(waits) == 3
    assert waits[0] < waits[2] <= policy.max_wait  # backoff grows (with jitter within [½, 1] of it)


def test_retry_commit_raises_other_errors_at_once():
    attempts = [0]

    def broken() -> None:
        attempts[0] += 1
        raise ValueError("lance error: Invalid user input")

    with pytest.raises(ValueError, match="Invalid user input"):
        retry_commit("write", broken, fast_policy())
    assert attempts[0] == 1


def test_retry_commit_gives_up_with_a_clear_error():
    def always() -> None:
        raise RuntimeError(CONFLICT)

    with pytest.raises(
        CommitConflictError, match=r"could not compact the table: other writers kept changing"
    ):
        retry_commit("compact the table", always, fast_policy(attempts=3))


# Every write path retries --------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["optimize", "create_index", "_do_merge"])
def test_ingest_retries_conflicting_commits(monkeypatch, small, corpus, method):
    calls = conflict_times(monkeypatch, method, 2)
    report = ingest_paths([corpus], small, embedder=HashEmbedder())
    assert report.ok and report.count("new") == 3, report.summary()
    assert calls[0] >= 3
    assert Store(small.data_dir).counts()[0] == 3


def test_delete_edit_undo_and_reembed_retry_conflicting_commits(monkeypatch, small, corpus):
    embedder = HashEmbedder()
    ingest_paths([corpus], small, embedder=embedder)
    store = Store(small.data_dir)

    conflict_times(monkeypatch, "update", 2)
    row = edit_chunk("alpha#0000", small, text="Edited.", store=store, embedder=embedder)
    assert row["text"] == "Edited."
    edit = store.changes(1)[0]

    conflict_times(monkeypatch, "delete", 2)
    assert store.delete_posts(["beta"]) == 1
    assert "beta" not in {p["post_id"] for p in store.list_posts()}

    conflict_times(monkeypatch, "merge_insert", 2)
    store.undo()  # the deletion
    store.undo(edit.change_id)
    assert store.get_chunk("alpha#0000")["text"] != "Edited."
    assert "beta" in {p["post_id"] for p in store.list_posts()}

    conflict_times(monkeypatch, "optimize", 2)
    assert reembed(small, store=store, embedder=HashEmbedder("hash-embed-2")) == store.counts()[1]
    assert store.model_id() == "hash-embed-2"


def test_a_write_that_keeps_conflicting_is_a_clear_error_not_a_traceback(monkeypatch, small, corpus):
    from click.testing import CliRunner

    from core.cli import main

    ingest_paths([corpus], small, embedder=HashEmbedder())
    monkeypatch.setattr("core.store.commit.DEFAULT_POLICY", fast_policy(attempts=3))
    conflict_times(monkeypatch, "delete", 100)
    result = CliRunner().invoke(main, ["posts", "delete", "alpha", "--data-dir", str(small.data_dir)])
    assert result.exit_code == 1
    assert "could not delete the chunks: other writers kept changing the table" in result.output
    assert "Traceback" not in result.output


# Two writers of one post ---------------------------------------------------------------------------------


def test_a_post_written_by_two_writers_at_once_ends_whole(monkeypatch, small, tmp_path):
    """A's chunks, then B's chunks and row, then A's row: A reads back, sees B's chunks under its own
    content hash, and writes its chunks again, so the post is A's version whole."""
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    long = " ".join(f"Sentence {i} about the cherry desk and its drawers." for i in range(30))
    write(a_dir / "desk.md", f"# Desk\n\n{long}\n")
    write(b_dir / "desk.md", "# Desk\n\nA short rewrite of the desk post.\n")
    embedder = HashEmbedder()
    store_a, store_b = Store(small.data_dir), Store(small.data_dir)
    original = Store._merge_posts
    interleaved = [False]

    def merge_posts_after_b(self, rows):
        if self is store_a and not interleaved[0]:
            interleaved[0] = True
            report = ingest_paths([b_dir], small, store=store_b, embedder=embedder)
            assert report.ok
        return original(self, rows)

    monkeypatch.setattr(Store, "_merge_posts", merge_posts_after_b)
    report = ingest_paths([a_dir], small, store=store_a, embedder=embedder)
    assert report.ok and interleaved[0]
    monkeypatch.undo()

    post = store_a.get_post("desk")
    chunks = store_a.list_chunks("desk")
    assert post["n_chunks"] == len(chunks) > 1  # A's long version, whole
    assert all("cherry desk" in c["text"] for c in chunks)
    again = ingest_paths([a_dir], small, embedder=embedder)
    assert again.count("unchanged") == 1 and again.chunks_embedded == 0


def test_an_edit_over_a_chunk_reingested_meanwhile_is_refused(monkeypatch, small, corpus):
    embedder = HashEmbedder()
    ingest_paths([corpus], small, embedder=embedder)
    store = Store(small.data_dir)
    original = Store.get_chunk
    reingested = [False]

    def get_then_reingest(self, chunk_id):
        row = original(self, chunk_id)
        if not reingested[0]:
            reingested[0] = True
            write(corpus / "alpha.md", "# Alpha\n\nThe alpha post, rewritten while someone edited it.\n")
            assert ingest_paths([corpus], small, embedder=embedder).ok
        return row

    monkeypatch.setattr(Store, "get_chunk", get_then_reingest)
    with pytest.raises(ValueError, match="changed while it was being edited"):
        edit_chunk("alpha#0000", small, text="My edit.", store=store, embedder=embedder)
    monkeypatch.undo()
    assert "rewritten while someone edited it" in store.get_chunk("alpha#0000")["text"]


def test_reembed_reads_again_when_chunks_change_meanwhile(small, corpus, tmp_path):
    ingest_paths([corpus], small, embedder=HashEmbedder())
    extra = write(tmp_path / "late" / "late.md", "# Late\n\nA post ingested during the re-embed.\n")

    class IngestingDuringEmbed(HashEmbedder):
        def embed(self, texts):
            if self.calls == 0:
                assert ingest_paths([extra], small, embedder=HashEmbedder()).ok
            return super().embed(texts)

    store = Store(small.data_dir)
    # The late post is embedded with the old model's vectors by its ingest, then re-embedded here.
    count = reembed(small, store=store, embedder=IngestingDuringEmbed("hash-embed-2"))
    assert count == store.counts()[1]
    assert store.get_chunk("late#0000") is not None


def test_undo_back_to_an_emptied_table_keeps_the_table(small, corpus):
    """Every post deleted, then an ingest, then undo: the empty table comes back, not no table at all."""
    embedder = HashEmbedder()
    ingest_paths([corpus], small, embedder=embedder)
    store = Store(small.data_dir)
    assert store.delete_posts(["alpha", "beta", "gamma"]) == 3
    ingest_paths([corpus], small, embedder=embedder)
    store.undo()
    assert store.counts()[:2] == (0, 0)
    assert store.model_id() == "hash-embed"  # the table and its model are still there
