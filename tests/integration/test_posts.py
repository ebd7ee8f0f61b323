"""Document-level views: post vectors, "which posts are about X" (core, CLI, inspector) and the
per-post cap on an answer's context. Real embedder, real LanceDB in temp dirs, Streamlit's AppTest."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from core.answer.generate import build_messages, diversify, fit_context
from core.cli import main
from core.config import POST_SCORINGS, Settings
from core.ingest import edit_chunk, ingest_posts
from core.models import Hit
from core.parse import parse_paths
from core.search import posts_about
from core.search.posts import SCORINGS, mean_vectors, post_vectors
from core.store import Store
from core.text import count_tokens
from tests.conftest import DEMO, CountingEmbedder, open_app

# A slice of the demo blog (fast to ingest) with one clear question for each of three posts.
DEMO_POSTS = [
    "projects/choosing-boards-at-the-sawmill.md",
    "projects/walnut-porch-bench.md",
    "writings/on-walking.html",
    "writings/leaving-the-feed.md",
    "writings/why-this-blog-exists.md",
]
QUESTIONS = {
    "How does she pick wood at the sawmill?": "choosing-boards-at-the-sawmill",
    "Why does she walk the same route every morning without headphones?": "on-walking",
    "Why did she delete her Instagram account?": "leaving-the-feed",
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory, embedder) -> Settings:
    settings = Settings.load({"data_dir": tmp_path_factory.mktemp("demo") / "db"}, environ={})
    parsed = parse_paths([DEMO / "posts" / p for p in DEMO_POSTS])
    for post, path in zip(parsed.posts, DEMO_POSTS, strict=True):
        post.collection = path.split("/")[0]  # as when the whole demo folder is ingested
    report = ingest_posts(parsed.posts, settings, store=Store(settings.data_dir), embedder=embedder)
    assert report.ok and report.count("new") == len(DEMO_POSTS)
    return settings


def expected_vectors(store: Store) -> dict[str, np.ndarray]:
    """The definition, computed the slow way: each post's chunk vectors averaged, then unit length."""
    rows = store.chunks.to_arrow().select(["post_id", "vector"]).to_pylist()
    by_post: dict[str, list] = {}
    for row in rows:
        by_post.setdefault(row["post_id"], []).append(row["vector"])
    means = {p: np.mean(np.asarray(v, dtype=np.float64), axis=0) for p, v in by_post.items()}
    return {p: m / np.linalg.norm(m) for p, m in means.items()}


def assert_current(store: Store) -> None:
    views = post_vectors(store)
    expected = expected_vectors(store)
    assert sorted(views.post_ids) == sorted(expected)
    for post_id, vector in expected.items():
        np.testing.assert_allclose(views.vector(post_id), vector, atol=1e-5)
        assert abs(np.linalg.norm(views.vector(post_id)) - 1) < 1e-5


# Post vectors ------------------------------------------------------------------------------------------


def test_mean_vectors_groups_unsorted_chunks():
    chunk_post = np.array([1, 0, 1, 2, 0])
    vectors = np.array([[1, 0], [0, 1], [1, 0], [3, 4], [0, 1]], dtype=np.float32)
    means = mean_vectors(vectors, chunk_post, 3)
    np.testing.assert_allclose(means, [[0, 1], [1, 0], [0.6, 0.8]], atol=1e-6)
    vectors[0] = [0, 1]  # post 1 now points between its two chunks
    np.testing.assert_allclose(mean_vectors(vectors, chunk_post, 3)[1], [2**-0.5, 2**-0.5], atol=1e-6)


def test_post_vectors_follow_edits_deletes_and_undo(corpus, embedder):
    store = corpus
    assert_current(store)
    assert post_vectors(store).n_chunks.tolist() == [3, 1, 1]  # bees, bread, walks in ingest order
    before = post_vectors(store).vector("bees")

    settings = Settings.load({"data_dir": store.data_dir}, environ={})
    chunk_id = store.list_chunks(post_id="bees", columns=["chunk_id"])[0]["chunk_id"]
    edit_chunk(
        chunk_id, settings, text="Tax forms and invoices fill my evenings.", store=store, embedder=embedder
    )
    assert_current(store)
    assert not np.allclose(post_vectors(store).vector("bees"), before, atol=1e-3)

    store.undo()  # the edit: post vectors are computed from the table, so the old vector comes back
    np.testing.assert_allclose(post_vectors(store).vector("bees"), before, atol=1e-6)

    assert store.delete_posts(["bread"]) == 1
    assert_current(store)
    assert post_vectors(store).vector("bread") is None
    assert post_vectors(store, collections=["recipes"]).post_ids == []


def test_empty_store_has_no_posts(settings, embedder):
    store = Store(settings.data_dir)
    assert post_vectors(store).post_ids == []
    assert posts_about("anything", settings, store=store, embedder=embedder) == []


# Which posts are about X ---------------------------------------------------------------------------------


@pytest.mark.parametrize("scoring", SCORINGS)
def test_posts_about_ranks_the_right_post_first(demo, embedder, scoring):
    store = Store(demo.data_dir)
    for question, post_id in QUESTIONS.items():
        matches = posts_about(question, demo, store=store, embedder=embedder, k=3, scoring=scoring)
        assert [m.rank for m in matches] == [1, 2, 3]
        assert matches[0].post_id == post_id, (question, [m.post_id for m in matches])
        assert all(0 <= m.relevance <= 1 for m in matches)
        assert [m.relevance for m in matches] == sorted((m.relevance for m in matches), reverse=True)
        best = matches[0]
        assert best.best_text and best.best_chunk_id.startswith(post_id)
        assert best.n_chunks == len(store.list_chunks(post_id=post_id, columns=["chunk_id"]))


def test_posts_about_embeds_the_question_once(demo, embedder):
    counting = CountingEmbedder(embedder)
    matches = posts_about(
        "How does she pick wood at the sawmill?", demo, embedder=counting, scoring="combined"
    )
    assert matches[0].post_id == "choosing-boards-at-the-sawmill"
    assert counting.queries == 1  # the search reuses the ranking's vector


def test_posts_about_filters_collections_and_refuses_bad_input(demo, embedder):
    store = Store(demo.data_dir)
    question = "How does she pick wood at the sawmill?"
    matches = posts_about(question, demo, store=store, embedder=embedder, collections=["writings"])
    assert matches and {m.collection for m in matches} == {"writings"}
    with pytest.raises(ValueError, match="empty"):
        posts_about("  ", demo, store=store, embedder=embedder)
    with pytest.raises(ValueError, match="scoring must be one of"):
        posts_about(question, demo, store=store, embedder=embedder, scoring="best")
    with pytest.raises(ValueError, match="k must be"):
        posts_about(question, demo, store=store, embedder=embedder, k=0)


def test_cli_posts_about(demo):
    runner = CliRunner()
    args = ["posts", "--about", "How does she pick wood at the sawmill?", "--data-dir", str(demo.data_dir)]
    result = runner.invoke(main, [*args, "--k", "2"])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 2
    relevance, post_id, collection, date, title, passage = lines[0].split("\t")
    assert (post_id, collection, date) == ("choosing-boards-at-the-sawmill", "projects", "2020-05-16")
    assert title == "Choosing Boards at the Sawmill" and 0 < float(relevance) <= 1 and passage

    as_json = runner.invoke(main, [*args, "--json", "--scoring", "post"])
    rows = [json.loads(line) for line in as_json.output.strip().splitlines()]
    assert len(rows) == len(DEMO_POSTS) and rows[0]["post_id"] == "choosing-boards-at-the-sawmill"
    assert rows[0]["relevance"] == rows[0]["post_similarity"]  # the "post" scoring is the post vector
    assert rows[0]["best_chunk"]["text"]

    misuse = runner.invoke(main, ["posts", "--about", "wood", "list", "--data-dir", str(demo.data_dir)])
    assert misuse.exit_code == 2 and "without a subcommand" in misuse.output
    where = ["--data-dir", str(demo.data_dir)]
    for listing in (["posts", "list", "--ids", *where], ["posts", *where, "list", "--ids"]):
        listed = runner.invoke(main, listing)
        assert sorted(listed.output.split()) == sorted(Path(p).stem for p in DEMO_POSTS), listing
    empty = runner.invoke(main, ["posts", "--about", " ", "--data-dir", str(demo.data_dir)])
    assert empty.exit_code == 2 and "The question is empty" in empty.output  # refused before any work
    assert POST_SCORINGS == SCORINGS  # the CLI's copy of the choices


def test_inspector_posts_mode(corpus):
    at = open_app("pages/chunks.py")
    at.radio(key="inspect_mode").set_value("Posts about…").run()
    assert not at.exception
    at.text_input(key="posts_about_query").input("When do bees swarm?").run()
    assert not at.exception
    frame = at.dataframe[0].value
    assert frame["title"][0] == "On Bees"
    assert len(frame) == 3 and list(frame["rank"]) == [1, 2, 3]
    assert frame["relevance"].is_monotonic_decreasing and frame["relevance"].between(0, 1).all()
    assert frame["chunks"][0] == 3 and "swarm" in frame["text"][0].lower()
    at.multiselect(key="posts_about_coll").set_value(["recipes"]).run()
    assert list(at.dataframe[0].value["title"]) == ["Sourdough"]


# Context diversity ---------------------------------------------------------------------------------------


def hit(post_id: str, relevance: float, n: int = 0, words: int = 40) -> Hit:
    text = " ".join(f"{post_id}{n}w{i}" for i in range(words))
    return Hit(post_id, f"Post {post_id}", "", f"{post_id}#{n}", "", text, [], relevance, 0)


def test_cap_keeps_at_most_n_chunks_per_post_while_others_remain():
    hits = [hit("a", 0.9 - i / 100, i) for i in range(5)] + [hit("b", 0.5), hit("c", 0.4)]
    order = [h.chunk_id for h in diversify(hits, 2)]
    assert order == ["a#0", "a#1", "b#0", "c#0", "a#2", "a#3", "a#4"]
    assert diversify(hits, 0) == sorted(hits, key=lambda h: -h.relevance)

    # Room for four excerpts: two of "a", then the other posts' chunks before a's third.
    budget = count_tokens(fit_context(hits[:4], 100_000)[0])
    context, used = fit_context(hits, budget, max_per_post=2)
    assert [h.chunk_id for h in used] == ["a#0", "a#1", "b#0", "c#0"]  # shown best first
    assert context.index("a0w0") < context.index("a1w0") < context.index("b0w0") < context.index("c0w0")
    _, uncapped = fit_context(hits, budget)
    assert [h.chunk_id for h in uncapped] == ["a#0", "a#1", "a#2", "a#3"]


def test_cap_fills_up_when_no_other_post_remains():
    hits = [hit("a", 0.9 - i / 100, i) for i in range(4)] + [hit("b", 0.2)]
    _, used = fit_context(hits, 100_000, max_per_post=1)
    assert [h.chunk_id for h in used] == ["a#0", "a#1", "a#2", "a#3", "b#0"]  # rank order, all of them
    _, only_a = fit_context(hits[:4], 100_000, max_per_post=1)
    assert len(only_a) == 4


def test_build_messages_uses_the_setting():
    hits = [hit("a", 0.9 - i / 100, i, words=60) for i in range(4)] + [hit("b", 0.3, words=60)]
    budget = count_tokens(fit_context(hits[:3], 100_000)[0])  # room for three excerpts
    capped = Settings(context_token_budget=budget, max_chunks_per_post=2)
    _, used = build_messages("q", hits, capped)
    assert [h.chunk_id for h in used] == ["a#0", "a#1", "b#0"]
    _, used = build_messages("q", hits, capped.replace(max_chunks_per_post=0))
    assert [h.chunk_id for h in used] == ["a#0", "a#1", "a#2"]
