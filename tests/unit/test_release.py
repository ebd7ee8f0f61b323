"""core.answer.leaks and core.answer.release without a model: prompt markup cut out wherever the stream
splits it, whole sentences only, and the model's whitespace kept."""

from __future__ import annotations

import random

import pytest

from core.answer.grounding import SentenceSupport
from core.answer.leaks import strip_leaks
from core.answer.release import Release, Verdict, is_complete

TITLE = "Build Log: A White Oak Trestle Table for Eight"
LABEL = f"{TITLE} — Finish"
TITLES = [TITLE, LABEL]

# (what the model wrote, what the reader sees)
CASES = [
    (f"[{LABEL} | relevance=0.7692]\nI oiled it. Then I waxed it.", "I oiled it. Then I waxed it."),
    (f"I oiled it [{LABEL} | relevance=0.7692]. Then I waxed it.", "I oiled it. Then I waxed it."),
    (f"I oiled it.\n\n[{LABEL} | relevance=0.7692\nThen I waxed it.", "I oiled it.\n\nThen I waxed it."),
    (
        "I paid $9.50 a board foot (relevance=0.77), more than I hoped.",
        "I paid $9.50 a board foot, more than I hoped.",
    ),
    (
        f'<excerpt post="{LABEL}">\nI oiled it.\n</excerpt>\n\nThen I waxed it.',
        "I oiled it.\n\nThen I waxed it.",
    ),
    ("I oiled it.</excerpt> Then I waxed it. </excerpt", "I oiled it. Then I waxed it."),
    (f"Excerpt 1\nPost: {LABEL}\nI oiled it. Excerpt 2: Then I waxed it.", "I oiled it. Then I waxed it."),
    (
        f"**Excerpt 3:** I oiled it (Excerpt 3).\n\n**Post:** {TITLE}\nThen I waxed it.",
        "I oiled it.\n\nThen I waxed it.",
    ),
    (f"Excerpts from my writings:\n\n{LABEL}\nI oiled it. Then I waxed it.", "I oiled it. Then I waxed it."),
    (f"Excerpts from my writings:\n\n1. {TITLE} – Finish:\nI oiled it.", "I oiled it."),
    (f"## **{LABEL}**\n\nI oiled it.", "I oiled it."),
    # Not markup: kept as written.
    (
        "Excerpt 3 of my notes says I oiled it. Post: none.",
        "Excerpt 3 of my notes says I oiled it. Post: none.",
    ),
    (f"Read {TITLE} [REF: oil] (my favourite).", f"Read {TITLE} [REF: oil] (my favourite)."),
    ("1. I oiled it.\n2. Then I waxed it.\n\n- Done", "1. I oiled it.\n2. Then I waxed it.\n\n- Done"),
]


def stream(deltas: list[str], truncated: bool = False, judge=None) -> tuple[Release, list[str]]:
    release = Release(TITLES, judge)
    pieces = [piece for delta in deltas for piece in release.feed(delta)]
    pieces += release.finish(truncated)
    return release, pieces


@pytest.mark.parametrize(("written", "shown"), CASES)
def test_markup_is_cut_out_wherever_the_stream_splits_it(written, shown):
    assert strip_leaks(written, TITLES)[0] == shown
    for cut in range(1, len(written)):  # every two-delta split
        release, pieces = stream([written[:cut], written[cut:]])
        assert "".join(pieces) == release.text == shown, cut
    rng = random.Random(9)
    for _ in range(30):  # and random many-delta splits
        cuts = sorted(rng.sample(range(1, len(written)), min(6, len(written) - 1)))
        deltas = [written[a:b] for a, b in zip([0, *cuts], [*cuts, len(written)], strict=True)]
        release, pieces = stream(deltas)
        assert "".join(pieces) == shown, deltas
        assert release.raw == written


def test_pieces_are_whole_sentences_released_when_the_next_begins():
    release = Release(TITLES)
    assert release.feed("I oiled it") == []
    assert release.feed(". Then I") == ["I oiled it."]
    assert release.feed(" waxed it.") == []  # the last sentence may go on until the stream ends
    assert release.finish() == [" Then I waxed it."]


@pytest.mark.parametrize(
    ("written", "shown", "cut"),
    [
        ("I oiled it. Then I wax", "I oiled it.", "Then I wax"),
        ("I oiled it. Then I waxed it.", "I oiled it. Then I waxed it.", ""),
        ('I oiled it. He said "wax it."', 'I oiled it. He said "wax it."', ""),
        ("I oiled it.\n\nWhat I did next:", "I oiled it.", "What I did next:"),
        ("I oiled it. [Build Log | relev", "I oiled it.", ""),
        ("I oiled", "", "I oiled"),
    ],
)
def test_a_length_cut_ends_at_the_last_complete_sentence(written, shown, cut):
    release, pieces = stream([written[i : i + 3] for i in range(0, len(written), 3)], truncated=True)
    assert "".join(pieces) == release.text == shown
    assert release.cut == cut


def test_is_complete():
    assert is_complete("I oiled it.") and is_complete('He said "wax it!"') and is_complete("**Done.**")
    assert not is_complete("I oiled") and not is_complete("What I did next:")


def test_a_judge_drops_sentences_and_keeps_paragraph_breaks():
    def judge(sentence: str, so_far: str) -> Verdict:
        keep = "Oakridge" not in sentence
        assert so_far.endswith(sentence)
        return Verdict(keep, SentenceSupport(sentence, judged=True, supported=keep))

    written = "I oiled it.\n\nI bought it at Oakridge. Then I waxed it. Oakridge sold me wax.\n\nDone."
    release, pieces = stream([written[i : i + 5] for i in range(0, len(written), 5)], judge=judge)
    assert "".join(pieces) == release.text == "I oiled it.\n\nThen I waxed it.\n\nDone."
    assert [v.support.sentence for v in release.dropped] == [
        "I bought it at Oakridge.",
        "Oakridge sold me wax.",
    ]
    assert len(release.verdicts) == 5

    release, pieces = stream(["Oakridge is my yard. ", "I oiled it."], judge=judge)
    assert pieces == ["I oiled it."]  # no leading whitespace when the first sentence is dropped


def test_a_short_sentence_goes_with_the_judged_sentence_before_it():
    """Too short to judge ("So true."): kept or dropped with its judged neighbour, never on its own."""

    def judge(sentence: str, so_far: str) -> Verdict:
        short, keep = len(sentence.split()) < 4, "Oakridge" not in sentence
        return Verdict(keep, SentenceSupport(sentence, judged=not short, supported=keep and not short))

    written = (
        "Yes. I oiled the table twice. Indeed. I bought wax at Oakridge yard. So true. Then I waxed the top."
    )
    release, pieces = stream([written], judge=judge)
    assert release.text == "Yes. I oiled the table twice. Indeed. Then I waxed the top."
    assert pieces[0] == "Yes." and [v.support.sentence for v in release.dropped] == [
        "I bought wax at Oakridge yard.",
        "So true.",
    ]

    release, _ = stream(["Sure. I bought wax at Oakridge yard. I oiled the table twice."], judge=judge)
    assert release.text == "I oiled the table twice."  # "Sure." went with the dropped sentence after it

    release, pieces = stream(["Yes. Sure thing."], judge=judge)
    assert pieces == [] and release.text == "" and len(release.dropped) == 2  # nothing vouches for them
