"""The calibrated relevance bar (core/evaluate/calibrate.py, `inkwell calibrate`), held to set-level
figures on the sets it was calibrated on: the demo questions and data/calibration/ (written over the demo
posts for this), and its two other tables, data/calibration/kjv-john and python-howtos. The held-out sets
are never used here: they are only reported (docs/answers.md, docs/models.md)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from core.evaluate import load_queries
from core.evaluate.calibrate import (
    TARGET_ON_TOPIC_DECLINES,
    _Grid,
    calibrate_bar,
    choose_floor_weight,
    collect,
    collect_set,
    small_blogs,
    tally,
    unknown_posts,
)
from core.profiles import PROFILES_DIR_ENV, Bar, ModelProfile, load_profile, profile_for, save_profile
from tests.cli_support import corpus, run  # noqa: F401  (fixture)
from tests.conftest import DEMO, ROOT

EVAL = DEMO / "eval"
CALIBRATION = ROOT / "data" / "calibration"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def samples(demo_table, embedder):
    """The bar's signals for the demo and calibration questions (MiniLM, hybrid), on the demo table."""
    settings, store = demo_table
    on = load_queries(EVAL / "queries.jsonl") + load_queries(CALIBRATION / "questions.jsonl")
    off = load_queries(EVAL / "offtopic.jsonl") + load_queries(CALIBRATION / "offtopic.jsonl")
    return collect(on, off, settings, store=store, embedder=embedder, family="data/demo/posts")


@pytest.fixture(scope="module")
def small_blog_samples(demo_table, embedder, tmp_path_factory):
    """The signals on the demo blog's small blogs (`small_blogs`: three of 3 posts, three of 8), as
    `inkwell calibrate` collects them."""
    from core.parse import parse_paths

    settings, store = demo_table
    on = load_queries(EVAL / "queries.jsonl") + load_queries(CALIBRATION / "questions.jsonl")
    off = load_queries(EVAL / "offtopic.jsonl") + load_queries(CALIBRATION / "offtopic.jsonl")
    found = collect_set(
        "data/demo/posts", store, on, off, settings, embedder=embedder,
        posts=parse_paths([DEMO / "posts"]).posts, root=DEMO / "posts", work_dir=tmp_path_factory.mktemp("small"),
    )  # fmt: skip
    return [s for s in found if s.table]


@pytest.fixture(scope="module")
def other_tables(demo_table, embedder, tmp_path_factory):
    """The bar's signals for the questions of the two other calibration tables (King James prose, the
    Python HOWTOs), each on its own table and its small blogs."""
    from core.evaluate import posts_table
    from core.parse import parse_paths

    settings, _ = demo_table
    samples = []
    for name in ("kjv-john", "python-howtos"):
        folder = CALIBRATION / name
        posts = parse_paths([folder / "posts"]).posts
        store = posts_table(posts, settings, embedder=embedder, work_dir=tmp_path_factory.mktemp(name))
        on, off = load_queries(folder / "questions.jsonl"), load_queries(folder / "offtopic.jsonl")
        samples += collect_set(
            f"data/calibration/{name}/posts", store, on, off, settings, embedder=embedder,
            posts=posts, root=folder / "posts", work_dir=tmp_path_factory.mktemp(f"{name}-small"),
        )  # fmt: skip
    return samples


def test_the_shipped_bar_declines_few_answerable_and_most_off_topic_questions(samples):
    """The thresholds of #25 on the demo table's calibration sets, with the bar on that table's floor. The
    3% target holds over everything calibrated on (11 of 386: the next test); on this table alone 3 of 62
    answerable questions in the posts' language are declined (1 of 62 before small blogs were calibrated
    on), and at least 95% of the English off-topic ones (68 of 69), 10 of the 11 in other languages ("Quelle est la population
    de Paris ?" shares "population" with the posts and passes, as it did with the bar before)."""
    bar = profile_for(MINILM).bar
    same = tally([s for s in samples if not s.signals.other_language], bar)
    assert same.on_topic >= 60 and same.off_topic >= 60
    assert same.on_rate <= 0.05, same
    assert same.off_rate >= 0.95, same
    other = tally([s for s in samples if s.signals.other_language and not s.on_topic], bar)
    assert other.off_topic >= 10 and other.off_rate >= 0.9, other


def test_the_shipped_bar_is_what_calibration_computes_from_its_sets(
    samples, small_blog_samples, other_tables
):
    """The MiniLM profile's bar is the command's result on the three sets it names and their small
    blogs, not a hand edit: at the tables' mean floor, moving by the weight chosen set by set, with the
    figures it records."""
    profile = profile_for(MINILM)
    every = [*samples, *small_blog_samples, *other_tables]
    result = calibrate_bar(every, profile.bar)
    assert result.met_target and result.same_language.on_rate <= TARGET_ON_TOPIC_DECLINES
    assert result.bar == profile.bar
    assert result.same_language.to_json() == profile.calibration["same_language"]
    assert profile.calibration["same_language"]["on_topic"] >= 350
    assert profile.calibration["small_blogs"] == len({(s.family, s.table) for s in every if s.table}) == 18
    floors = sorted({s.floor for s in every})
    assert (profile.bar.floor_low, profile.bar.floor_high) == (round(floors[0], 4), round(floors[-1], 4))


def test_a_bar_that_moves_with_the_floor_errs_less_on_writing_it_was_not_calibrated_on(
    samples, small_blog_samples, other_tables
):
    """What chose the mechanism: leaving each set (its table and small blogs) out in turn, the bar
    calibrated on the other two errs less on it, counted against the targets, when it moves with the
    table's floor (the profile's weight) than when it stays put; and it declines fewer answerable ones."""
    weight = profile_for(MINILM).bar.floor_weight
    every = [*samples, *small_blog_samples, *other_tables]
    _, trials = choose_floor_weight(every, profile_for(MINILM).bar, weights=(0.0, weight))
    still, moving = trials
    assert moving.errors < still.errors and moving.on_declined < still.on_declined, (
        (still.on_declined, still.off_answered),
        (moving.on_declined, moving.off_answered),
    )


def test_small_blogs_keep_the_targets_in_sample(small_blog_samples):
    """On the demo blog's small blogs (3 and 8 posts), the shipped bar on each blog's floor declines few
    answerable questions and most off-topic ones (the bar that moved with the nearest chunk's cosine
    answered 89 of their 420 off-topic questions)."""
    counts = tally(small_blog_samples, profile_for(MINILM).bar)
    assert counts.on_topic >= 60 and counts.off_topic >= 400
    assert counts.on_rate <= 0.05 and counts.off_rate >= 0.9, counts


def test_the_grid_counts_what_decide_decides(samples, small_blog_samples):
    """The calibration counts every bar of its grid at once (`_Grid`, vectorised): for bars drawn from
    it, at a floor that moves them, its counts are `tally`'s, which asks `decide` question by question."""
    import random

    english = [s for s in [*samples, *small_blog_samples] if not s.signals.other_language]
    scored = _Grid.of(english).declines(profile_for(MINILM).bar)
    for on, off, bar in random.Random(7).sample(scored, 40):
        counts = tally(english, bar)
        assert (on, off) == (counts.on_declined, counts.off_declined), bar


def test_small_blogs_are_drawn_the_same_way_with_the_questions_of_their_posts():
    from core.parse import parse_paths

    posts = parse_paths([CALIBRATION / "kjv-john" / "posts"]).posts
    questions = load_queries(CALIBRATION / "kjv-john" / "questions.jsonl")
    blogs = small_blogs(posts, CALIBRATION / "kjv-john" / "posts", questions, sizes=((3, 2), (50, 1)))
    assert [b.name for b in blogs] == ["3 posts #1", "3 posts #2"]  # 50 posts would be every post
    again = small_blogs(posts, CALIBRATION / "kjv-john" / "posts", questions, sizes=((3, 2),))
    assert [[p.post_id for p in b.posts] for b in blogs] == [[p.post_id for p in b.posts] for b in again]
    for blog in blogs:
        paths = {
            Path(p.source).relative_to(CALIBRATION / "kjv-john" / "posts").as_posix() for p in blog.posts
        }
        assert len(paths) == 3 and all(q.post in paths for q in blog.queries)
    unnamed = [dataclasses.replace(q, post="") for q in questions]
    assert small_blogs(posts, CALIBRATION / "kjv-john" / "posts", unnamed) == []
    moved = [dataclasses.replace(questions[0], post="john/john-99.md"), *questions[1:]]
    assert unknown_posts(posts, CALIBRATION / "kjv-john" / "posts", moved) == ["john/john-99.md"]
    assert unknown_posts(posts, CALIBRATION / "kjv-john" / "posts", questions) == []


def test_words_found_by_meaning_decline_more_off_topic_questions_at_the_same_target(samples):
    """What chose the mechanism: calibrated on the same questions, the bar that also finds missing words
    by meaning (`word_match`) declines more off-topic questions than the best bar on words as written,
    both within the 3% target on answerable ones."""
    english = [s for s in samples if not s.signals.other_language]
    as_written = [dataclasses.replace(s, signals=dataclasses.replace(s.signals, near={})) for s in english]
    start = Bar(0.6, 0.3, 0.0, 0.05)
    by_meaning, by_form = calibrate_bar(english, start), calibrate_bar(as_written, start)
    assert by_meaning.met_target and by_form.met_target
    assert by_meaning.same_language.off_declined >= by_form.same_language.off_declined + 3, (
        by_meaning.same_language,
        by_form.same_language,
    )


def test_calibration_declines_at_most_the_target_and_keeps_a_margin(samples):
    """On any set, the chosen bar meets the target when some bar does, and of the bars that tie it is
    the middle one: moving a threshold by one grid step either way changes neither count."""
    english = [s for s in samples if not s.signals.other_language]
    result = calibrate_bar(english, Bar(0.6, 0.3, 0.0, 0.05))
    assert result.same_language.on_declined <= int(TARGET_ON_TOPIC_DECLINES * result.same_language.on_topic)
    assert result.tied >= 1
    loose = tally(english, Bar(0.95, 0.2, 1.0, 0.05))  # answers nearly everything
    assert result.same_language.off_declined > loose.off_declined


def own_minilm_profile(tmp_path, monkeypatch) -> Path:
    """A profiles folder of the user's own whose registry names MiniLM's profile, with the bar
    0.9 / 0.9 / 0.0 / 0.05, in use for this test only; returns the folder."""
    own = tmp_path / "profiles"
    save_profile(ModelProfile(MINILM, Bar(0.9, 0.9, 0.0, 0.05)), own / "minilm.json")
    entry = {"model_id": MINILM, "backend": "sentence-transformers", "profile": "minilm.json"}
    (own / "registry.json").write_text(json.dumps({"models": [entry]}))
    monkeypatch.setenv(PROFILES_DIR_ENV, str(own))
    return own


def test_calibrate_writes_the_profile_of_a_registered_model(corpus, tmp_path, monkeypatch):  # noqa: F811
    """`inkwell calibrate --write` computes the bar from the sets and writes it into the profile the
    registry names (here one of the user's own, replacing MiniLM's for this test only)."""
    own = own_minilm_profile(tmp_path, monkeypatch)
    on, off = tmp_path / "on.jsonl", tmp_path / "off.jsonl"
    on.write_text(
        '{"id": "q1", "text": "Which tomatoes split in wet Augusts?"}\n'
        '{"id": "q2", "text": "What does the compost heap take?"}\n'
    )
    off.write_text(
        '{"id": "o1", "text": "Who won the 2018 football world cup?"}\n{"id": "o2", "text": "qwerty"}\n'
    )
    args = ("calibrate", "--posts", str(corpus), "--queries", str(on), "--off-topic", str(off))
    result = run(*args, "--write", "--json", data_dir=tmp_path / "db")
    assert result.exit_code == 0, result.output
    written = load_profile(own / "minilm.json")
    assert written.bar != Bar(0.9, 0.9, 0.0, 0.05)  # the questions are answered under the new bar
    assert written.calibration["same_language"]["on_topic_declined"] == 0
    assert written.calibration["same_language"]["off_topic_declined"] == 2
    assert (
        json.loads(result.output.splitlines()[-1])["bar"]
        == json.loads((own / "minilm.json").read_text())["bar"]
    )


def test_calibrate_refuses_an_empty_question_file_before_writing_a_bar(corpus, tmp_path, monkeypatch):  # noqa: F811
    """An empty --queries file would give a bar no answerable question moved, and --write would keep it."""
    own = own_minilm_profile(tmp_path, monkeypatch)
    on, off = tmp_path / "on.jsonl", tmp_path / "off.jsonl"
    on.write_text("\n")
    off.write_text('{"id": "o1", "text": "Who won the 2018 football world cup?"}\n')
    args = ("calibrate", "--posts", str(corpus), "--queries", str(on), "--off-topic", str(off), "--write")
    result = run(*args, data_dir=tmp_path / "db")
    assert result.exit_code == 1 and f"{on} holds no questions" in result.output
    assert load_profile(own / "minilm.json").bar == Bar(0.9, 0.9, 0.0, 0.05)


def test_calibrate_refuses_to_write_for_a_model_nobody_registered(corpus, tmp_path):  # noqa: F811
    on = tmp_path / "on.jsonl"
    on.write_text('{"id": "q1", "text": "Which tomatoes split?"}\n')
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    result = run(
        "calibrate", "--model", str(folder), "--posts", str(corpus), "--queries", str(on),
        "--off-topic", str(on), "--write", data_dir=tmp_path / "db",
    )  # fmt: skip
    assert result.exit_code == 1
    assert "no registry entry" in result.output and "Traceback" not in result.output
    assert not Path(folder, "registry.json").exists()
