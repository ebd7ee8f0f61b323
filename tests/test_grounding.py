"""The grounding check with the real embedder."""

from __future__ import annotations

import pytest

from core.grounding import check_grounding, content_words
from core.models import Hit

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
    assert grounding.summary() == "1 of 2 sentences supported by the excerpts"


def test_no_excerpts_means_nothing_is_supported(embedder):
    grounding = check_grounding("The walnut bench took forty hours to build.", [], embedder)
    assert grounding.supported_fraction == 0.0


def test_nothing_to_judge(embedder):
    grounding = check_grounding("Yes. Thanks!", hits(), embedder)
    assert grounding.supported_fraction is None
    assert grounding.to_json()["supported_fraction"] is None


def test_content_words_ignore_stopwords_and_case():
    assert content_words("The Sawmill and THE yard") == {"sawmill", "yard"}
