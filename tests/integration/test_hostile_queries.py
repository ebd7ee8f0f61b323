"""Hostile questions and names (issue #11, part 5): a clear message or a normal result, never a traceback,
never a filter that matches more (or less) than it should; an unknown collection is named as unknown.

Collections and post ids hold quotes, SQL, LIKE wildcards, backslashes and a newline; questions are
empty, 100k characters, only punctuation, full-text syntax and SQL. In-process through core/search and
core/store (vectors from tests/writers_support.py's hash embedder), then through the real command line
(search, ask, route, posts, chunks) and the inspector's filters.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.config import Settings
from core.ingest import ingest_posts
from core.parse import parse_text
from core.search import route, route_and_search, search
from core.store import Store
from tests.hostile_support import CliRun, run_cli
from tests.writers_support import HashEmbedder, embedding_server, environ

COLLECTIONS = [
    "writings",
    "it's",
    'say "hi"',
    "a' OR '1'='1",
    "x'); DROP TABLE chunks; --",
    "back\\slash",
    "%",
    "_",
    "two\nlines",
]
QUESTIONS = [
    "x" * 100_000,
    "?!.,;:…—",
    '"unbalanced',
    "oak*",
    "title:oak",
    "AND OR NOT",
    "oak AND",
    "NOT oak",
    "+oak -walnut",
    "oak~2 bench^3",
    "(((oak",
    "' OR 1=1 --",
    "'; DROP TABLE chunks; --",
    "\x00oak",  # a NUL inside a question (NUL alone is refused as an empty question: test_question.py)
    "🪵🪚",
    "\\",
    "%_%",
    'collection = "it\'s"',
]
MODES = ["dense", "fts", "hybrid"]


def post_id(i: int) -> str:
    return f"id'{i}\"q"


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> tuple[Settings, Store]:
    db = tmp_path_factory.mktemp("hostile-queries") / "db"
    settings = Settings.load({"data_dir": db}, environ={})
    posts = [
        parse_text(
            f"The {c!r} post about oak and walnut benches, number {i}. The bench is planed by hand.",
            f"Post {i}",
            collection=c,
            post_id=post_id(i),
        )
        for i, c in enumerate(COLLECTIONS)
    ]
    report = ingest_posts(posts, settings, embedder=HashEmbedder())
    assert report.ok and report.count("new") == len(COLLECTIONS), report.summary()
    return settings, Store(db)


@pytest.mark.parametrize("mode", MODES)
def test_hostile_questions_give_a_normal_result(table, mode):
    settings, store = table
    for question in QUESTIONS:
        result = search(question, settings.replace(retrieval_mode=mode), store=store, embedder=HashEmbedder())
        assert all(h.post_id in {post_id(i) for i in range(len(COLLECTIONS))} for h in result.hits)


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_an_empty_question_is_a_clear_message(table, question):
    settings, store = table
    with pytest.raises(ValueError, match="the question is empty"):
        search(question, settings, store=store, embedder=HashEmbedder())


@pytest.mark.parametrize("mode", MODES)
def test_a_collection_filter_matches_exactly_its_own_posts(table, mode):
    settings, store = table
    for i, collection in enumerate(COLLECTIONS):
        result = search(
            "oak bench",
            settings.replace(retrieval_mode=mode),
            store=store,
            embedder=HashEmbedder(),
            collections=[collection],
        )
        assert [(h.post_id, h.collection) for h in result.hits] == [(post_id(i), collection)], collection


def test_post_id_filters_match_exactly_one_post(table, tmp_path):
    _, store = table
    for i in range(len(COLLECTIONS)):
        assert [c["post_id"] for c in store.list_chunks(post_id(i))] == [post_id(i)]
        assert store.get_post(post_id(i))["post_id"] == post_id(i)
    for lookalike in ["' OR '1'='1", "id'0", "id''0\"q", "%", "_"]:
        assert store.list_chunks(lookalike) == [] and store.get_post(lookalike) is None
    assert store.get_chunks([f"{post_id(0)}#0000", "' OR '1'='1"]).keys() == {f"{post_id(0)}#0000"}


@settings(max_examples=60, derandomize=True, database=None, deadline=None)
@given(name=st.text(max_size=30))
def test_any_collection_name_filters_exactly(table, name):
    """Generated names (quotes, backslashes, SQL, control characters): a filter on a name no post has
    matches nothing; on a stored name, only its own post."""
    settings, store = table
    result = search(
        "oak bench",
        settings.replace(retrieval_mode="hybrid"),
        store=store,
        embedder=HashEmbedder(),
        collections=[name],
    )
    expected = [post_id(i) for i, c in enumerate(COLLECTIONS) if c == name]
    assert [h.post_id for h in result.hits] == expected


def test_an_unknown_collection_is_named_as_unknown(table):
    settings, store = table
    decision, result = route_and_search(
        "oak", settings, store=store, embedder=HashEmbedder(), chosen=["nope"]
    )
    assert result.hits == []
    assert decision.notes and "unknown collection 'nope'" in decision.notes[0]
    assert "nothing was searched" in decision.notes[0] and '"it\'s"' in decision.notes[0]
    decision, result = route_and_search(
        "oak", settings, store=store, embedder=HashEmbedder(), chosen=["nope", "it's"]
    )
    assert [h.collection for h in result.hits] == ["it's"] and "left out" in decision.notes[0]
    assert route("oak", store, HashEmbedder(), settings, chosen=["it's"]).notes == []


def test_routing_rules_with_hostile_keywords_never_break_a_question(table):
    settings, store = table
    (store.data_dir / "routes.toml").write_text(
        '[writings]\nkeywords = ["c++", "a.b", "(", "it\'s", "[", "\\\\", "*", "x\'); DROP TABLE chunks; --"]\n'
        '["it\'s"]\nkeywords = ["\'"]\n',
        encoding="utf-8",
    )
    try:
        for question in ["c++ and (a.b)", "it's", "\\", "*", "' OR 1=1 --", "x" * 100_000]:
            decision = route(question, store, HashEmbedder(), settings)
            assert decision.status in ("routed", "unsure")
        decision = route("I like c++ a lot", store, HashEmbedder(), settings)
        assert decision.rule_hits.get("writings") == ["c++"]
        assert route("abb", store, HashEmbedder(), settings).rule_hits == {}  # "a.b" is not a pattern
    finally:
        (store.data_dir / "routes.toml").unlink()


# The command line ----------------------------------------------------------------------------------------


def run_in_process(args: list[str], env: dict[str, str]) -> CliRun:
    from click.testing import CliRunner

    from core.cli import main

    result = CliRunner().invoke(main, args, env=env, catch_exceptions=False)
    return CliRun(result.exit_code, result.stdout, result.stderr, 0.0)


def test_the_command_line_answers_hostile_questions_and_names_without_a_traceback(tmp_path: Path) -> None:
    folder, db = tmp_path / "posts", tmp_path / "db"
    folder.mkdir()
    for i, collection in enumerate(COLLECTIONS[:5]):
        meta = json.dumps({"id": post_id(i), "title": f"Post {i}", "collection": collection})
        (folder / f"p{i}.json").write_text(
            json.dumps({**json.loads(meta), "text": f"Oak and walnut bench number {i}."}), encoding="utf-8"
        )
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        "".join(json.dumps({"id": f"q{i}", "text": q}) + "\n" for i, q in enumerate(QUESTIONS))
    )
    with embedding_server() as server:
        env = environ(server, db, chunk_tokens="300")
        assert run_in_process(["ingest", str(folder)], env).code == 0
        runs = {"batch": run_cli(["search", "--queries", str(queries), "--json"], env)}  # a real process
        for name, args in {  # the same command line in this process (each process starts in ~6 s)
            "quoted": ["search", "oak", "--collection", "it's", "--json"],
            "sql": ["search", "oak", "--collection", "a' OR '1'='1", "--json"],
            "unknown": ["search", "oak", "--collection", "nope"],
            "empty": ["search", ""],
            "ask-unknown": ["ask", "oak?", "--collection", "nope"],
            "show": ["posts", "show", post_id(1)],
            "show-sql": ["posts", "show", "' OR '1'='1"],
            "chunks": ["chunks", "list", "--post", post_id(2)],
            "delete": ["posts", "delete", "' OR '1'='1"],
        }.items():
            runs[name] = run_in_process(args, env)
        runs["logged"] = run_in_process(["questions", "--json"], env)
    for name, run in runs.items():
        assert "Traceback" not in run.stderr, (name, run.stderr[-2000:])
    batch = [json.loads(line) for line in runs["batch"].stdout.splitlines()]
    assert [b["id"] for b in batch] == [f"q{i}" for i in range(len(QUESTIONS))] and runs["batch"].code == 0
    assert [h["collection"] for h in json.loads(runs["quoted"].stdout)["hits"]] == ["it's"]
    assert [h["collection"] for h in json.loads(runs["sql"].stdout)["hits"]] == ["a' OR '1'='1"]
    assert "unknown collection 'nope'" in runs["unknown"].stderr and runs["unknown"].stdout == ""
    assert runs["unknown"].code == 2 and runs["ask-unknown"].code == 2  # usage errors, before any search
    assert runs["empty"].code == 2 and "The question is empty" in runs["empty"].stderr  # a usage error
    assert "unknown collection 'nope'" in runs["ask-unknown"].stderr
    assert "oak?" not in runs["logged"].stdout  # a mistyped collection is no reader's unanswered question
    assert json.loads(runs["show"].stdout)["post_id"] == post_id(1)
    assert runs["show-sql"].code == 1 and "no post with id" in runs["show-sql"].stderr
    assert (
        runs["chunks"].stdout.startswith(f"{post_id(2)}#0000")
        and len(runs["chunks"].stdout.splitlines()) == 1
    )
    assert len(Store(db).list_posts()) == 5  # the SQL-looking delete deleted nothing


# The app's filters ---------------------------------------------------------------------------------------


def test_the_inspectors_filters_and_query_take_hostile_text(table, monkeypatch):
    from tests.conftest import isolate_app, open_app

    settings, _ = table
    with embedding_server() as server:
        isolate_app(monkeypatch, settings.data_dir)
        for name, value in environ(server, settings.data_dir).items():
            if name.startswith("INKWELL_EMBED"):
                monkeypatch.setenv(name, value)
        at = open_app("pages/chunks.py")
        for needle, rows in [
            ("' OR 1=1 --", 0),
            ("[(*", 0),
            ("\\", 2),  # back-slash, and "two-lines" whose repr (in the text) has one
            ("%", 1),
            ("it's", 1),
            ("oak", len(COLLECTIONS)),
        ]:
            at.text_input(key="inspect_search").input(needle).run()
            assert not at.exception, needle
            assert len(at.dataframe[0].value) == rows, needle
        at.text_input(key="inspect_search").input("").run()
        for collection in ["a' OR '1'='1", "%", "two\nlines"]:
            at.multiselect(key="inspect_collections").set_value([collection]).run()
            assert list(at.dataframe[0].value["collection"]) == [collection]
        at.radio(key="inspect_mode").set_value("Test a query").run()
        for question in ["' OR 1=1 --", "AND OR NOT *:", "x" * 100_000]:
            at.text_input(key="inspect_query").input(question).run()
            assert not at.exception, question[:40]
