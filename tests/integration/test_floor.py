"""A table's floor and the relevance bar moved to it (core/search/floor.py, Bar.on_floor), and the
calibration that writes the bar at its tables' floors and chooses how far it moves
(core/evaluate/calibrate.py: on_floors, choose_floor_weight)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from core.answer.abstain import Signals
from core.evaluate.calibrate import (
    Sample,
    Tally,
    WeightTrial,
    calibrate_bar,
    choose_floor_weight,
    family_of,
    small_blogs,
    tally,
)
from core.ingest import ingest_posts
from core.models import Block, Post
from core.profiles import Bar, load_profile, save_profile
from core.profiles.profile import ModelProfile
from core.search import bar_for_table, table_floor
from core.search.floor import measure_floor
from core.store import Store
from tests.cli_support import corpus, run  # noqa: F401  (fixture)
from tests.conftest import Settings

MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def test_the_bar_moves_by_the_weighted_floor_difference_held_within_the_calibrated_floors():
    bar = Bar(0.5, 0.3, 0.2, 0.1, 0.6, floor=0.17, floor_weight=3.0, floor_low=0.15, floor_high=0.19)
    moved = bar.on_floor(0.16)
    assert moved.similarity == pytest.approx(0.47) and moved.supported == pytest.approx(0.27)
    assert (moved.max_missing, moved.cross_language, moved.word_match) == (0.2, 0.1, 0.6)
    assert moved.floor is None and moved.on_floor(0.1) == moved  # moved once, it stays put
    assert bar.on_floor(0.05).similarity == pytest.approx(0.5 + 3 * (0.15 - 0.17))  # not extrapolated
    assert bar.on_floor(0.40).similarity == pytest.approx(0.5 + 3 * (0.19 - 0.17))
    assert bar.on_floor(None) == bar
    unmoored = Bar(0.5, 0.3, 0.2, 0.1)
    assert unmoored.on_floor(0.05) == unmoored


def test_a_profile_keeps_its_floor_and_one_without_reads_as_before(tmp_path: Path):
    bar = Bar(0.5, 0.3, 0.2, 0.1, 0.6, floor=0.17, floor_weight=3.0, floor_low=0.15, floor_high=0.19)
    save_profile(ModelProfile("test/model", bar), tmp_path / "p.json")
    assert load_profile(tmp_path / "p.json").bar == bar
    data = json.loads((tmp_path / "p.json").read_text())
    for key in ("floor", "floor_weight", "floor_low", "floor_high"):
        del data["bar"][key]
    (tmp_path / "p.json").write_text(json.dumps(data))
    assert load_profile(tmp_path / "p.json").bar == Bar(0.5, 0.3, 0.2, 0.1, 0.6)


def _table(tmp_path: Path, name: str, paragraphs: list[str], embedder) -> Store:
    settings = Settings.load({"data_dir": tmp_path / name}, environ={})
    store = Store(settings.data_dir)
    posts = [
        Post(f"{name}-{i}", f"Post {i}", [Block(p)], raw=p, source=f"{name}-{i}.txt")
        for i, p in enumerate(paragraphs)
    ]
    ingest_posts(posts, settings, store=store, embedder=embedder)
    return store


EVERYDAY = [
    "We boiled eggs for six minutes, then made pancakes and coffee in the French press for breakfast.",
    "Our flight from London to New York was cheap in March; Iceland in summer was the better trip.",
    "The cat learned the litter box in a week. Dogs must never eat grapes, the vet told us.",
    "I reset my email password again and finally installed the printer driver on Windows.",
]
ARCHAIC = [
    "And the word of the Lord came unto the prophet, saying, Arise, go unto the city and cry against it.",
    "Vanity of vanities, saith the Preacher; all is vanity, and vexation of spirit under the sun.",
    "Wherefore, my beloved brethren, let every man be swift to hear, slow to speak, slow to wrath.",
    "Then went the disciples unto their own home, and the multitude tarried by the sea until evening.",
]


def test_everyday_questions_come_closer_to_everyday_writing_than_to_archaic_prose(tmp_path, embedder):
    """The floor measures the writing: the probes (everyday questions) come closer to a blog about
    everyday things than to King James prose, and the bar is lower on the archaic table."""
    everyday = _table(tmp_path, "everyday", EVERYDAY, embedder)
    archaic = _table(tmp_path, "archaic", ARCHAIC, embedder)
    high, low = measure_floor(everyday, embedder), measure_floor(archaic, embedder)
    assert high is not None and low is not None and high > low + 0.015, (high, low)
    bar = Bar(0.5, 0.3, 0.0, 0.1, floor=(high + low) / 2, floor_low=low, floor_high=high)
    assert bar.on_floor(low).similarity < bar.on_floor(high).similarity


def test_a_tables_floor_is_measured_again_when_the_table_changes(tmp_path, embedder):
    store = _table(tmp_path, "grows", ARCHAIC, embedder)
    before = table_floor(store, embedder)
    assert before == pytest.approx(measure_floor(store, embedder))
    settings = Settings.load({"data_dir": tmp_path / "grows"}, environ={})
    ingest_posts(
        [Post("new", "New", [Block(p) for p in EVERYDAY], raw="", source="new.txt")],
        settings,
        store=store,
        embedder=embedder,
    )
    after = table_floor(store, embedder)
    assert after > before and after == pytest.approx(measure_floor(store, embedder))


def test_the_turns_bar_is_the_profiles_moved_to_the_tables_floor(tmp_path, embedder, monkeypatch):
    from core.answer import search_turn

    store = _table(tmp_path, "turn", ARCHAIC, embedder)
    settings = Settings.load({"data_dir": tmp_path / "turn"}, environ={})
    searched = search_turn("Who is the Preacher?", settings, store=store, embedder=embedder)
    assert searched.bar == bar_for_table(store, embedder)
    assert searched.bar.floor is None  # the shipped MiniLM bar moves with floors: this one has moved


def _signals(similarity: float) -> Signals:
    return Signals(MINILM, similarity, True, 3, [], [], [], False)


def _samples(floor: float, lift: float) -> list[Sample]:
    """A table's questions whose similarities sit `lift` above (or below) where they would on a floor
    of 0.2: answerable ones at 0.55–0.65, off-topic ones at 0.35–0.45."""
    on = [Sample(f"{floor}-q{i}", "q", True, _signals(0.55 + 0.01 * i + lift), floor) for i in range(10)]
    off = [Sample(f"{floor}-o{i}", "o", False, _signals(0.35 + 0.01 * i + lift), floor) for i in range(10)]
    return on + off


def test_a_bar_at_its_tables_floors_separates_what_one_bar_for_all_cannot():
    """Three tables whose scores all move with their floor (twice its difference): calibrated at the
    floors, one bar declines none of the answerable questions and all the off-topic ones; without, the
    answerable questions of the lowest table score like the highest table's off-topic ones."""
    samples = _samples(0.1, -0.2) + _samples(0.2, 0.0) + _samples(0.3, 0.2)
    start = Bar(0.6, 0.3, 0.0, 0.1, floor_weight=2.0)
    moving, fixed = calibrate_bar(samples, start), calibrate_bar(samples, start, floors=False)
    assert moving.bar.floor == pytest.approx(0.2) and (moving.bar.floor_low, moving.bar.floor_high) == (
        0.1,
        0.3,
    )
    assert (moving.same_language.on_declined, moving.same_language.off_declined) == (0, 30)
    assert fixed.bar.floor is None
    assert fixed.same_language.off_declined < 30 and fixed.same_language.on_declined == 0


def test_the_floor_weight_is_chosen_on_tables_left_out_of_the_calibration():
    samples = _samples(0.15, -0.1) + _samples(0.2, 0.0) + _samples(0.25, 0.1) + _samples(0.3, 0.2)
    weights = (0.0, 1.0, 2.0, 3.0, 20.0)
    weight, trials = choose_floor_weight(samples, Bar(0.6, 0.3, 0.0, 0.1), weights=weights)
    # at 20, the highest table's bar sits above 1: no bar meets the target even in sample
    assert [t.met_target for t in trials] == [True, True, True, True, False]
    errors = {t.weight: t.errors for t in trials if t.met_target}
    assert weight >= 2.0 and errors[weight] == min(errors.values()), errors
    assert errors[0.0] > errors[weight], errors  # a bar that stays put errs on a new table
    with pytest.raises(ValueError, match="three tables"):
        choose_floor_weight(_samples(0.1, 0.0) + _samples(0.2, 0.0), Bar(0.6, 0.3, 0.0, 0.1))


def test_a_weights_errors_count_each_kind_against_its_target():
    """Declining 3% of the answerable questions weighs as much as answering 5% of the off-topic ones."""
    trial = WeightTrial(1.0, {"a": Tally(100, 3, 100, 95), "b": Tally(100, 3, 100, 95)})
    assert trial.errors == pytest.approx(2.0)
    assert WeightTrial(1.0, {"a": Tally(100, 0, 100, 90)}).errors == pytest.approx(2.0)


def test_tables_of_one_family_are_left_out_together():
    """A set's small blogs are not calibrated on when their set is left out: with families, three
    tables of one family and two of others make three folds, not five."""
    samples = [
        dataclasses.replace(s, family=family)
        for family, floor, lift in (
            ("a", 0.15, -0.1),
            ("a", 0.16, -0.1),
            ("a", 0.17, -0.1),
            ("b", 0.2, 0.0),
            ("c", 0.3, 0.2),
        )
        for s in _samples(floor, lift)
    ]
    _, trials = choose_floor_weight(samples, Bar(0.6, 0.3, 0.0, 0.1), weights=(0.0, 2.0))
    assert all(sorted(t.held_out) == ["a", "b", "c"] for t in trials)
    assert family_of(Sample("q", "q", True, _signals(0.5), 0.2)) == "floor 0.2"


def test_tally_moves_the_bar_to_each_samples_floor():
    bar = Bar(0.5, 0.5, 0.0, 0.1, floor=0.2, floor_weight=1.0, floor_low=0.0, floor_high=1.0)
    low = [Sample("a", "a", True, _signals(0.45), 0.1)]  # the bar there is 0.4: answered
    high = [Sample("b", "b", True, _signals(0.55), 0.3)]  # the bar there is 0.6: declined
    assert tally(low, bar).on_declined == 0 and tally(high, bar).on_declined == 1
    assert tally(low, dataclasses.replace(bar, floor=None)).on_declined == 1


def test_calibrate_on_several_tables_writes_a_bar_that_moves_with_the_floor(corpus, tmp_path):  # noqa: F811
    on, off = tmp_path / "on.jsonl", tmp_path / "off.jsonl"
    on.write_text(
        '{"id": "q1", "text": "Which tomatoes split in wet Augusts?"}\n'
        '{"id": "q2", "text": "What do the bees eat?", "post": "no-such-post.md"}\n'
    )
    off.write_text('{"id": "o1", "text": "Who won the 2018 football world cup?"}\n')
    args = ("calibrate", "--set", str(corpus), str(on), str(off), "--json")
    result = run(*args, data_dir=tmp_path / "db")
    assert result.exit_code == 0, result.output
    # a question naming a post that is not there is said, not silently dropped from the small blogs
    assert "warning: 1 post named" in result.output and "no-such-post.md" in result.output
    bar = json.loads(result.output.splitlines()[-1])["bar"]
    assert bar["floor"] is not None and bar["floor_low"] == bar["floor_high"]
    missing = run("calibrate", "--queries", str(on), data_dir=tmp_path / "db")
    assert missing.exit_code == 2 and "go together" in missing.output


def _nearest_chunk_floor(store: Store, embedder) -> float:
    """The floor as it was first measured: the median of each probe's nearest chunk (raw cosine)."""
    import statistics

    from core.embed.memo import query_vectors
    from core.search.floor import PROBES

    vectors = query_vectors.embed(embedder, list(PROBES))
    return statistics.median(1 - float(store.vector_search(v, 1)[0]["_distance"]) for v in vectors)


@pytest.fixture(scope="module")
def small_demo_blog(embedder, tmp_path_factory):
    """Three posts of the demo blog as a blog of their own, with the calibration questions they answer."""
    from core.evaluate import load_queries
    from core.parse import parse_paths
    from tests.conftest import DEMO, ROOT

    posts = parse_paths([DEMO / "posts"]).posts
    questions = load_queries(ROOT / "data" / "calibration" / "questions.jsonl")
    (blog,) = small_blogs(posts, DEMO / "posts", questions, sizes=((3, 1),))
    small_settings = Settings.load({"data_dir": tmp_path_factory.mktemp("small") / "db"}, environ={})
    store = Store(small_settings.data_dir)
    ingest_posts(blog.posts, small_settings, store=store, embedder=embedder)
    return small_settings, store, blog


def test_a_small_blogs_floor_is_its_writings_not_its_size(demo_table, small_demo_blog, embedder):
    """Three posts of the demo blog have fewer chunks for a probe to come near: the nearest one is
    farther only by chance. The floor, estimated as if the blog had at least MIN_CHUNKS chunks, falls
    less than the nearest chunk's cosine does (which put a three-post blog's bar as low as King James
    prose's, and answered nonsense)."""
    from core.embed.scales import relevance_scale, rescale

    _, whole = demo_table
    _, small, _ = small_demo_blog
    scale = relevance_scale(embedder.model_id)
    estimated = measure_floor(whole, embedder) - measure_floor(small, embedder)
    nearest = rescale(_nearest_chunk_floor(whole, embedder), scale) - rescale(
        _nearest_chunk_floor(small, embedder), scale
    )
    assert abs(estimated) < abs(nearest) / 2, (estimated, nearest)


def test_a_small_blog_declines_nonsense_and_answers_its_questions(small_demo_blog, embedder):
    """On a blog of three posts, with the shipped bar on its floor: nonsense and everyday questions are
    declined, and the questions its posts answer are answered (at most one of them declined)."""
    from core.answer import take_turn

    settings, store, blog = small_demo_blog
    for question in (
        "purple monkey dishwasher",
        "colorless green ideas sleep furiously",
        "Does the refrigerator sing in triangles on Tuesdays?",
        "Why is the sky blue?",
        "How do I change a flat tire on my bike?",
    ):
        turn = take_turn(question, settings, store=store, embedder=embedder, mode="extractive")
        assert turn.reply.mode == "none", (question, turn.reply.text)
    assert len(blog.queries) >= 3
    declined = [
        q.text
        for q in blog.queries
        if take_turn(q.text, settings, store=store, embedder=embedder, mode="extractive").reply.mode == "none"
    ]
    assert len(declined) <= 1, declined


def test_a_tables_vector_sample_is_spread_over_its_rows(tmp_path, embedder):
    """`Store.vector_sample` reads every vector of a table no larger than the limit, else rows spread
    evenly over it (read from the table, not from the vectors held in memory), the same on every call."""
    import numpy as np

    store = _table(tmp_path, "sampled", EVERYDAY + ARCHAIC, embedder)
    rows, every = store.vector_sample(100)
    assert rows == len(every) == store.chunks.count_rows() >= 8
    count, some = store.vector_sample(3)
    assert count == rows and some.shape == (3, every.shape[1])
    by_offset = store.chunks.to_arrow()["vector"].to_pylist()
    for i, vector in zip([0, rows // 3, 2 * rows // 3], some, strict=True):
        assert np.allclose(vector, by_offset[i])
    assert np.array_equal(some, store.vector_sample(3)[1])
