"""Ingestion into a real LanceDB table with the real bundled embedder."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.embed import content_hash
from core.ingest import edit_chunk, ingest_paths, ingest_posts
from core.parse import parse_paths
from core.store import ModelMismatchError, Store
from tests.conftest import write

BEES = [
    "Keeping bees taught me patience. The first hive arrived in April 2019, a nucleus colony of five frames.",
    "Swarming season starts in May. A colony that runs out of space raises a new queen and half of it leaves.",
    "Honey harvest is in August. We take only the supers above the queen excluder and leave the brood box full.",
    "Varroa mites are the real enemy. We count mites on a sticky board every two weeks in summer.",
]
BREAD = [
    "Sourdough needs a lively starter. Mine is fed rye flour and water twice a day at room temperature.",
    "The dough rises overnight in the fridge, which gives a sour, open crumb and a blistered crust.",
]


def md(title: str, paragraphs: list[str], slug: str, collection: str = "writings") -> str:
    body = "\n\n".join(paragraphs)
    return f"---\ntitle: {title}\nslug: {slug}\ndate: 2024-05-01\ncollection: {collection}\n---\n\n{body}\n"


@pytest.fixture
def small(settings):
    # Small chunks so a short post makes several of them.
    return settings.replace(chunk_tokens=40)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "posts"
    write(root / "bees.md", md("On Bees", BEES, "bees"))
    write(root / "bread.md", md("Bread", BREAD, "bread", "recipes"))
    return root


def chunk_rows(store: Store) -> list[tuple[str, str]]:
    return [(r["chunk_id"], r["text"]) for r in store.list_chunks()]


def test_ingest_then_reingest_is_idempotent_and_embeds_nothing(small, store, embedder, corpus):
    first = ingest_paths([corpus], small, store=store, embedder=embedder)
    assert first.count("new") == 2 and first.ok
    assert first.chunks_embedded > 2
    rows = chunk_rows(store)
    assert len(rows) == first.chunks_embedded == store.counts()[1]
    assert {r["post_id"] for r in store.list_posts()} == {"bees", "bread"}

    second = ingest_paths([corpus], small, store=store, embedder=embedder)
    assert second.count("unchanged") == 2
    assert second.chunks_embedded == 0
    assert chunk_rows(store) == rows


def test_editing_one_paragraph_reembeds_one_chunk(small, store, embedder, corpus):
    ingest_paths([corpus], small, store=store, embedder=embedder)
    before = dict(chunk_rows(store))
    edited = [*BEES[:3], BEES[3].replace("every two weeks", "every ten days")]
    write(corpus / "bees.md", md("On Bees", edited, "bees"))

    report = ingest_paths([corpus], small, store=store, embedder=embedder)
    assert report.count("updated") == 1 and report.count("unchanged") == 1
    assert report.chunks_embedded == 1
    after = dict(chunk_rows(store))
    assert after.keys() == before.keys()
    changed = [cid for cid in after if after[cid] != before[cid]]
    assert len(changed) == 1 and "every ten days" in after[changed[0]]


def test_shortened_post_leaves_no_stale_chunks(small, store, embedder, corpus):
    ingest_paths([corpus], small, store=store, embedder=embedder)
    n_before = len(store.list_chunks("bees"))
    write(corpus / "bees.md", md("On Bees", BEES[:1], "bees"))
    ingest_paths([corpus], small, store=store, embedder=embedder)
    remaining = store.list_chunks("bees")
    assert 0 < len(remaining) < n_before
    assert [r["idx"] for r in remaining] == list(range(len(remaining)))
    assert store.get_post("bees")["n_chunks"] == len(remaining)


def test_delete_removes_post_and_chunks(small, store, embedder, corpus):
    ingest_paths([corpus], small, store=store, embedder=embedder)
    assert store.delete_posts(["bees", "nope"]) == 1
    assert store.list_chunks("bees") == []
    assert store.get_post("bees") is None
    assert {r["post_id"] for r in store.list_chunks()} == {"bread"}


def test_vectors_are_cached_by_model_and_text(small, store, embedder, corpus):
    ingest_paths([corpus], small, store=store, embedder=embedder)
    row = store.list_chunks("bread", columns=["embed_hash"])[0]
    cached = store.cached_vectors([row["embed_hash"], "not-a-hash"])
    assert list(cached) == [row["embed_hash"]]
    assert cached[row["embed_hash"]].shape == (embedder.dim,)
    assert content_hash("model-a", "x") != content_hash("model-b", "x")


def test_model_mismatch_is_refused_with_the_fix(small, store, embedder, corpus):
    ingest_paths([corpus], small, store=store, embedder=embedder)

    class OtherModel:
        model_id = "some/other-model"
        dim = embedder.dim

        def embed(self, texts):
            raise AssertionError("must not embed with a mismatched model")

    with pytest.raises(ModelMismatchError, match="inkwell reembed"):
        ingest_paths([corpus], small.replace(chunk_tokens=50), store=store, embedder=OtherModel())


def test_bad_files_are_reported_and_the_rest_ingested(small, store, embedder, corpus):
    (corpus / "empty.md").write_text("", encoding="utf-8")
    (corpus / "blob.txt").write_bytes(b"\x00\x01\x02binary\xff")
    (corpus / "notes.xyz").write_text("what is this", encoding="utf-8")
    report = ingest_paths([corpus], small, store=store, embedder=embedder)
    assert report.count("new") == 2
    named = {Path(e.source).name for e in report.errors}
    assert named == {"empty.md", "blob.txt", "notes.xyz"}
    assert all(e.message for e in report.errors)
    assert not report.ok
    assert {r["post_id"] for r in store.list_posts()} == {"bees", "bread"}


class FailingEmbedder:
    """The real embedder, failing on a chosen call: simulates a crash half-way through a run."""

    def __init__(self, inner, fail_on_call: int):
        self.inner, self.fail_on_call, self.calls = inner, fail_on_call, 0
        self.model_id, self.dim = inner.model_id, inner.dim

    def embed(self, texts):
        self.calls += 1
        if self.calls == self.fail_on_call:
            raise RuntimeError("simulated crash")
        return self.inner.embed(texts)


def test_crash_half_way_keeps_finished_posts_and_no_partial_post(
    small, store, embedder, tmp_path, monkeypatch
):
    import core.ingest.pipeline

    monkeypatch.setattr(core.ingest.pipeline, "WINDOW_CHUNKS", 1)  # one post per commit
    root = tmp_path / "many"
    for i in range(4):
        write(root / f"p{i}.md", md(f"Post {i}", [f"{BEES[i]} Number {i}.", BREAD[i % 2]], f"p{i}"))
    posts = parse_paths([root]).posts

    with pytest.raises(RuntimeError, match="simulated crash"):
        ingest_posts(posts, small, store=store, embedder=FailingEmbedder(embedder, fail_on_call=3))
    stored = {r["post_id"]: r["n_chunks"] for r in store.list_posts()}
    assert set(stored) == {"p0", "p1"}
    counts = store.chunk_counts()
    assert all(counts[pid] == n for pid, n in stored.items())
    assert set(counts) == {"p0", "p1"}

    report = ingest_posts(posts, small, store=store, embedder=embedder)
    assert report.count("unchanged") == 2 and report.count("new") == 2


def test_duplicate_ids_in_one_run_keep_the_first(small, store, embedder, tmp_path):
    root = tmp_path / "dups"
    write(root / "a" / "same.md", md("First", BEES[:1], "same"))
    write(root / "b" / "same.md", md("Second", BREAD[:1], "same"))
    report = ingest_paths([root], small, store=store, embedder=embedder)
    assert [p["title"] for p in store.list_posts()] == ["First"]
    assert any("same" in e.message for e in report.errors)


def test_collections_are_stored_per_chunk(small, store, embedder, corpus):
    ingest_paths([corpus], small, store=store, embedder=embedder)
    assert store.collections() == ["recipes", "writings"]
    assert {r["collection"] for r in store.list_chunks("bread")} == {"recipes"}


def test_concurrent_ingests_store_each_chunk_once(small, embedder, corpus):
    import threading

    # Two connections (as two app sessions or a CLI beside the app) ingest the same new posts at once.
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            ingest_paths([corpus], small, store=Store(small.data_dir), embedder=embedder)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = [r["chunk_id"] for r in Store(small.data_dir).list_chunks(columns=["chunk_id", "post_id", "idx"])]
    assert len(ids) == len(set(ids)) > 0
    assert errors == [] or all("conflict" in str(e).lower() or "commit" in str(e).lower() for e in errors)


def test_a_chunk_edit_is_logged_as_an_edit_not_as_an_ingest(small, store, embedder, corpus):
    ingest_posts(
        parse_paths([corpus / "bees.md"]).posts,
        small,
        store=store,
        embedder=embedder,
        label="ingest of “On Bees”",
    )
    second = next(r for r in store.list_chunks() if r["post_id"] == "bees" and r["idx"] == 1)
    edit_chunk(second["chunk_id"], small, text="Swarms leave in May.", store=store, embedder=embedder)
    edit, ingest = store.changes()
    assert (edit.label, ingest.label) == ("edit of chunk 2 of “On Bees”", "ingest of “On Bees”")
    assert edit.post_ids == ingest.post_ids == ("bees",)
    store.undo(edit.change_id)  # its own change: undone alone, the ingest stays
    assert store.get_chunk(second["chunk_id"])["text"] == second["text"]
    assert not store.changes()[1].undone
