"""Missing question words looked for by meaning (core/answer/near_words.py) and the relevance bar's
`word_match` (core/answer/abstain.py), on a tiny table of two posts ingested for the test."""

from __future__ import annotations

import pytest

from core.answer.abstain import judge
from core.answer.extractive import extract_answer
from core.answer.near_words import nearest_words, passage_words
from core.config import Settings
from core.ingest import ingest_posts
from core.parse import parse_paths
from core.profiles import Bar
from core.search import route_and_search
from core.store import Store

DESK = """---
title: The cherry desk
date: 2024-03-02
---
The cherry desk will change over the years, darkening in color from pale salmon to a deep red brown.
I finished it with three coats of oil and a paste wax, rubbed out by hand.
"""
BENCH = """---
title: A bench for the porch
date: 2024-05-10
---
The walnut bench lives outside, so every joint is drawbored and the seat floats in its frame.
"""
COLOUR = "Will the desk change colour over the years?"
CHICKENS = "How do I keep chickens in the yard?"


@pytest.fixture(scope="module")
def table(tmp_path_factory, embedder):
    folder = tmp_path_factory.mktemp("posts")
    (folder / "cherry-desk.md").write_text(DESK, encoding="utf-8")
    (folder / "porch-bench.md").write_text(BENCH, encoding="utf-8")
    settings = Settings.load({"data_dir": tmp_path_factory.mktemp("near") / "db"}, environ={})
    store = Store(settings.data_dir)
    ingest_posts(parse_paths([folder]).posts, settings, store=store, embedder=embedder)
    return settings, store


def ask(question, table, embedder, bar):
    settings, store = table
    hits = route_and_search(question, settings, store=store, embedder=embedder)[1].hits
    return judge(question, hits, extract_answer(question, hits, embedder), bar, embedder=embedder)


def test_a_word_spelled_otherwise_is_near_and_a_thing_never_written_about_is_not(embedder):
    passages = [DESK, BENCH]
    assert "color" in passage_words(passages) and "at" not in passage_words(passages)
    near = nearest_words(["colour", "chicken"], passages, embedder)
    assert near["colour"] >= 0.9  # "color"
    assert near["chicken"] < 0.6
    assert nearest_words([], passages, embedder) == {} == nearest_words(["colour"], [], embedder)


def test_the_bar_finds_a_missing_word_by_meaning_only_when_its_profile_says_so(table, embedder):
    """Only missing words decide here (any similarity above 0.2 is close enough, none answers alone):
    "colour" is missing from the posts as written, so the bar on words as written declines; with
    `word_match` 0.6 it is found in "color" and the question is answered. "chickens" stays missing."""
    as_written = Bar(0.99, 0.2, 0.0, 0.05, word_match=1.0)
    by_meaning = Bar(0.99, 0.2, 0.0, 0.05, word_match=0.6)
    declined = ask(COLOUR, table, embedder, as_written)
    assert not declined.answer and declined.missing == ["colour"]
    answered = ask(COLOUR, table, embedder, by_meaning)
    assert answered.answer and answered.missing == []
    for bar in (as_written, by_meaning):
        verdict = ask(CHICKENS, table, embedder, bar)
        assert not verdict.answer and "chicken" in verdict.missing
