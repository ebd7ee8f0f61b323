"""The grounding check with the real embedder."""

from __future__ import annotations

import pytest

from core.answer import GroundingChecker, check_grounding
from core.models import Hit
from core.text.words import content_forms as content_words

EXCERPTS = [
    "I buy almost all my wood at Dunmore Brothers Sawmill in Pelham Falls, a family yard that air-dries "
    "its lumber in open sheds.",
    "Before I buy a board I sight down its edge for twist and check the end grain for checks and pith.",
]


def hits() -> list[Hit]:
    return [
        Hit("p", "Choosing Boards", "projects", f"p#{i}", "", t, [], 0.8, i + 1)
        for i, t in enumerate(EXCERPTS)
    ]


def test_supported_invented_and_unjudged_sentences(embedder):
    answer = (
        "I buy nearly all of my wood at the Dunmore Brothers Sawmill in Pelham Falls. "
        "My favourite football team is Manchester United and I watch every match on television. "
        "Thanks!"
    )
    grounding = check_grounding(answer, hits(), embedder)
    copied, invented, thanks = grounding.sentences
    assert copied.supported and copied.chunk_ids == ["p#0"]
    assert invented.judged and not invented.supported and invented.chunk_ids == []
    assert not thanks.judged
    assert grounding.supported_fraction == pytest.approx(0.5)
    assert [s.sentence for s in grounding.unsupported] == [invented.sentence]
    assert grounding.summary() == "1 of 2 sentences supported by the excerpts (1 more too short to check)"


def test_a_checker_embeds_the_excerpts_once_and_judges_sentence_by_sentence_alike(embedder):
    """What a streamed answer uses: one sentence at a time, the excerpts embedded only with the first."""
    calls: list[list[str]] = []

    class Counting:
        model_id = embedder.model_id

        def embed(self, texts):
            calls.append(list(texts))
            return embedder.embed(texts)

    answer = (
        "I buy nearly all of my wood at the Dunmore Brothers Sawmill in Pelham Falls. "
        "My favourite football team is Manchester United and I watch every match on television. "
        "Thanks! I sight down the edge of every board for twist before I buy it."
    )
    whole = check_grounding(answer, hits(), embedder)
    checker = GroundingChecker(hits(), Counting())
    assert checker.check(answer).to_json() == whole.to_json()  # check_grounding is this, in one call
    assert calls == [[s.sentence for s in whole.judged] + EXCERPTS]

    calls.clear()
    checker = GroundingChecker(hits(), Counting())
    one_by_one = [
        checker.check_sentences([s.sentence], language_of=answer).sentences[0] for s in whole.sentences
    ]
    assert [(s.judged, s.supported, s.chunk_ids) for s in one_by_one] == [
        (s.judged, s.supported, s.chunk_ids) for s in whole.sentences
    ]
    assert [s.similarity for s in one_by_one] == pytest.approx(
        [s.similarity for s in whole.sentences], abs=1e-5
    )
    assert calls[0][1:] == EXCERPTS and [len(c) for c in calls] == [3, 1, 1]  # "Thanks!" is not judged


def test_no_excerpts_means_nothing_is_supported(embedder):
    grounding = check_grounding("The walnut bench took forty hours to build.", [], embedder)
    assert grounding.supported_fraction == 0.0


def test_nothing_to_judge(embedder):
    grounding = check_grounding("Yes. Thanks!", hits(), embedder)
    assert grounding.supported_fraction is None
    assert grounding.to_json()["supported_fraction"] is None


def test_content_words_ignore_stopwords_and_case():
    assert content_words("The Sawmill and THE yard") == {"sawmill", "yard"}


def test_specifics_normalise_numbers_and_find_names():
    from core.answer.grounding import specifics

    assert specifics("I buy at least thirty percent more wood, about 1,200 board feet.") == {"30", "1200"}
    assert specifics("I turned thirty-five in October.") == {"35", "october"}
    assert specifics("Before that I worked at Google in New York.") == {"google", "new", "york"}


@pytest.mark.parametrize(
    "sentence",
    [
        "Yes, I'm sure I buy almost all my wood at Dunmore Brothers Sawmill.",
        "Honestly, I’ve bought almost all my wood at Dunmore Brothers Sawmill for years.",
        "As I'd say, Dunmore Brothers Sawmill in Pelham Falls air-dries its lumber.",
        "Before buying, I’d sight down the edge of a board for twist.",
        "In short: Don't buy a board before you check the end grain for pith.",
        "Sure, I'll check the end grain, and I’ll sight down the edge.",
    ],
)
def test_contractions_are_not_names(sentence):
    from core.answer.grounding import GroundingChecker

    checker = GroundingChecker(hits(), embedder=None)  # details only: nothing is embedded
    assert checker.unknown_details(sentence) == []


def test_a_possessive_is_the_name_with_either_apostrophe():
    from core.answer.grounding import GroundingChecker

    checker = GroundingChecker(hits(), embedder=None)
    assert checker.unknown_details("My wood comes from Dunmore’s yard in Pelham Falls.") == []
    assert checker.unknown_details("My wood comes from Dunmore's yard, not Ezra's.") == ["ezra"]


def test_relevance_scores_copied_from_the_prompt_are_not_details():
    from core.answer.grounding import GroundingChecker

    checker = GroundingChecker(hits(), embedder=None)
    leaked = "[Choosing Boards | relevance=0.7692] I buy almost all my wood at Dunmore Brothers Sawmill."
    assert checker.unknown_details(leaked) == []
    assert checker.unknown_details("That excerpt scored 0.7692, so I buy my wood at Dunmore.") == []
    assert checker.unknown_details("I buy 40 percent of my wood at Dunmore, score: 0.81.") == ["40"]


def test_a_list_items_number_or_bullet_is_not_a_detail():
    from core.answer.grounding import GroundingChecker

    checker = GroundingChecker(hits(), embedder=None)
    assert checker.unknown_details("2. Sight down the edge of a board for twist.") == []
    assert checker.unknown_details("12) I check the end grain for pith.") == []
    assert checker.unknown_details("- Dunmore Brothers Sawmill air-dries its lumber.") == []
    assert checker.unknown_details("3. I check 4 boards for twist.") == ["4"]


def test_a_leaked_header_and_contractions_do_not_fail_a_true_sentence(embedder):
    answer = "[Choosing Boards | relevance=0.7692] Yes, I'm sure: I buy almost all my wood at Dunmore Brothers Sawmill in Pelham Falls."
    [sentence] = check_grounding(answer, hits(), embedder).sentences
    assert sentence.unknown_details == [] and sentence.supported


def test_a_changed_number_or_name_is_unsupported_even_when_the_sentence_is_similar(embedder):
    excerpt = "After five weeks and 61 hours, the walnut bench is sitting on the front porch, and Juniper sleeps on it."
    bench = [Hit("b", "Build Log: The Walnut Porch Bench", "projects", "b#0", "", excerpt, [], 0.9, 1)]
    true = check_grounding("The walnut bench took five weeks and 61 hours.", bench, embedder).sentences[0]
    wrong = check_grounding("The walnut bench took two weeks and 25 hours.", bench, embedder).sentences[0]
    renamed = check_grounding(
        "After five weeks the bench sits on the porch and Biscuit sleeps on it.", bench, embedder
    )
    assert true.supported and true.unknown_details == []
    assert wrong.overlap >= 0.65  # the words match: only the details give it away
    assert not wrong.supported and wrong.unknown_details == ["2", "25"]
    assert renamed.sentences[0].unknown_details == ["biscuit"] and not renamed.sentences[0].supported


def test_a_number_the_posts_give_for_something_else_is_unsupported(embedder):
    """The price list gives $4.00 for ash and $9.50 for walnut: "$4.00" is known, but not for walnut."""
    prices = "For the record, prices at Dunmore Brothers for air-dried stock:\n- Walnut, $9.50 a board foot.\n- Ash, $4.00."
    yard = [Hit("y", "Choosing Boards", "projects", "y#0", "", prices, [], 0.9, 1)]
    checker = GroundingChecker(yard, embedder)
    assert checker.unknown_details("Black walnut cost me $4.00 a board foot.") == ["4.00"]
    assert checker.unknown_details("Black walnut cost me $9.50 a board foot.") == []
    assert checker.unknown_details("Ash was $4.00 at Dunmore Brothers.") == []
    assert checker.unknown_details("It was $4.00.") == []  # no word to place it by: known is enough
    [walnut] = checker.check("Black walnut cost me $4.00 a board foot at Dunmore Brothers.").sentences
    assert not walnut.supported


@pytest.mark.slow  # ~85 s: ingests the demo and embeds every labelled sentence
def test_labelled_set_flags_inventions_without_flagging_the_authors_words(tmp_path):
    """The check on data/demo/eval/grounding.jsonl (core/evaluate/grounding_check.py; bench/grounding.py prints it)."""
    from core.config import Settings
    from core.evaluate.grounding_check import flags, load_labels, measure, scores
    from core.profiles import profile_for

    settings = Settings.load({"data_dir": tmp_path / "db"}, environ={})
    items = measure(settings, load_labels())
    thresholds = profile_for(settings.effective_embed_model).grounding
    result = scores(items, flags(items, thresholds.similarity, thresholds.overlap, details=True))
    assert result["recall"] >= 0.8  # most invented sentences are flagged
    assert result["false_alarm"] <= 0.05  # and the author's own statements almost never are


SAWMILL = [
    "I buy almost all my wood at Dunmore Brothers Sawmill in Pelham Falls, a family yard that saws local logs.",
    "For indoor furniture in a Vermont house I want the wood at 6 to 8 percent moisture content before final milling.",
]
GERMAN_ANSWER = (
    "Ich kaufe fast mein ganzes Holz bei der Sägemühle Dunmore Brothers in Pelham Falls. "
    "Für Möbel im Haus soll das Holz 6 bis 8 Prozent Feuchtigkeit haben, bevor ich es fertig hobele. "
    "Am liebsten arbeite ich mit Kirschholz aus Kanada, das ich online bestelle."
)


def sawmill_hits() -> list[Hit]:
    return [
        Hit("s", "Choosing Boards", "projects", f"s#{i}", "", t, [], 0.8, i + 1)
        for i, t in enumerate(SAWMILL)
    ]


def test_an_answer_in_another_language_is_not_judged_by_an_english_only_model(embedder):
    grounding = check_grounding(GERMAN_ANSWER, sawmill_hits(), embedder)
    assert grounding.judged == [] and grounding.supported_fraction is None
    assert grounding.skipped.startswith("the answer is in German and the excerpts in English")
    assert grounding.summary().startswith("not checked: ") and grounding.to_json()["skipped"]


def test_the_multilingual_model_judges_an_answer_across_languages():
    from core.config import Settings
    from core.embed import get_embedder

    e5 = get_embedder(Settings.load({"embed_model": "multilingual-e5-small"}, environ={}))
    grounding = check_grounding(GERMAN_ANSWER, sawmill_hits(), e5)
    assert [s.supported for s in grounding.sentences] == [True, True, False]  # Kanada is invented
    # German capitalises every noun: across languages only numbers are details, and these are right.
    assert all(s.unknown_details == [] for s in grounding.sentences)
