"""Follow-ups: joined with (or rewritten from) the previous turn only when they refer back to it."""

from __future__ import annotations

import itertools
import json

import pytest

from core.answer import rewrite_followup
from core.answer.question import answers_since_question, asks_for_more, needs_context
from core.config import Settings
from tests.conftest import DEMO

PAIRS = [json.loads(line) for line in (DEMO / "eval" / "followups.jsonl").read_text().splitlines()]
HISTORY = [
    {"role": "user", "content": "How often do you feed your starter?"},
    {"role": "assistant", "content": "Twice a day in summer."},
]


@pytest.mark.parametrize("pair", PAIRS, ids=[p["id"] for p in PAIRS])
def test_labelled_followups(pair: dict) -> None:
    assert needs_context(pair["followup"]) is pair["refers"]


@pytest.mark.parametrize(
    ("question", "refers"),
    [
        ("Und im Winter?", True),  # a continuation in German
        ("Et pourquoi ?", True),
        ("Peki ya kışın?", True),
        ("Wie lange füttert man den Sauerteig im Winter und bei welcher Temperatur?", False),
        ("", False),
        # Short, but about something new: searched as asked, never glued onto the previous question.
        ("What is the capital of France?", False),
        ("Why did she start the blog?", False),
        ("How did he react?", True),
        ("How much extra does she buy?", True),
        # Read with the language's own function words (#29), not English STOPWORDS.
        ("Wie lange hat das gedauert?", True),
        ("Wo hat er das gekauft?", True),
        ("Warum gibt es im Blog keine Kommentarfunktion?", False),  # "es gibt": no pointer
        ("Wie sucht sie im Sägewerk das Holz aus?", False),  # "das Holz": an article
        ("Pourquoi a-t-il arrêté ?", True),
    ],
)
def test_other_languages_and_edges(question: str, refers: bool) -> None:
    assert needs_context(question) is refers


def test_the_translated_demo_questions_stand_alone() -> None:
    """The demo questions in German and French, read with their language's function words, are never
    taken for follow-ups (Turkish: two of 15, as with English STOPWORDS before)."""
    for name, most in (("queries_de.jsonl", 0), ("queries_fr.jsonl", 0), ("queries_tr.jsonl", 2)):
        texts = [json.loads(line)["text"] for line in (DEMO / "eval" / name).read_text().splitlines() if line]
        assert sum(needs_context(t) for t in texts) <= most, name


def test_a_language_without_a_record_is_read_with_its_own_function_words() -> None:
    # Italian has no record: no cues, but stop-words' Italian list, so "quanto" and "è" are no content.
    assert needs_context("E quanto è costato?") and not needs_context(
        "Quanto costa il legno di noce americano?"
    )


def test_the_demo_questions_asked_one_after_another_are_never_joined() -> None:
    """Each of the 12 English demo questions stands alone: asked after another, it is searched as asked."""
    questions = [
        json.loads(line)["text"] for line in (DEMO / "eval" / "queries.jsonl").read_text().splitlines()
    ]
    settings = Settings()
    for previous, question in itertools.pairwise(questions[:12]):
        history = [{"role": "user", "content": previous}, {"role": "assistant", "content": "An answer."}]
        assert rewrite_followup(question, history, settings) == question


def test_builtin_model_joins_only_referring_followups() -> None:
    settings = Settings()  # no key, no server: the built-in model, which is never called here
    assert rewrite_followup("And in winter?", HISTORY, settings) == (
        "How often do you feed your starter? And in winter?"
    )
    standalone = "What flour do you use for rye bread, and where do you buy it?"
    assert rewrite_followup(standalone, HISTORY, settings) == standalone


@pytest.mark.parametrize(
    "question",
    ["Tell me more.", "go on", "Go on!", "what else?", "weiter", "Erzähl mir mehr", "dis-m’en plus",
     "Cuéntame más", "devam et", "Dimmi di più", "Conte mais", "Vertel meer", "Расскажи подробнее",
     "もっと教えて", "继续", "더 알려줘"],
)  # fmt: skip
def test_a_request_for_more_is_the_previous_question_again(question: str) -> None:
    history = [
        *HISTORY,
        {"role": "user", "content": "tell me more"},  # an earlier request for more is not a question
        {"role": "assistant", "content": "Once a day in winter."},
    ]
    assert asks_for_more(question)
    # No model call even with a model set up (the address answers nothing): the question is known.
    remote = Settings(openai_base_url="http://127.0.0.1:9/v1", max_retries=0)
    assert rewrite_followup(question, history, remote) == "How often do you feed your starter?"
    assert answers_since_question(history) == ["Twice a day in summer.", "Once a day in winter."]


def test_a_request_for_more_finds_its_question_however_many_came_before() -> None:
    # The model reads the last six messages; the question "tell me more" goes on with was looked for there
    # too, so the fifth "tell me more" was searched as the words "tell me more" and declined.
    more = [{"role": "user", "content": "tell me more"}, {"role": "assistant", "content": "More."}] * 4
    remote = Settings(openai_base_url="http://127.0.0.1:9/v1", max_retries=0)
    assert (
        rewrite_followup("tell me more", [*HISTORY, *more], remote) == "How often do you feed your starter?"
    )
    assert answers_since_question([*HISTORY, *more]) == ["Twice a day in summer.", *["More."] * 4]


def test_a_request_for_more_after_a_joined_follow_up_searches_the_join() -> None:
    # "How much is it?" was searched joined to the question before it: searched alone, "tell me more"
    # after it was declined.
    history = [
        *HISTORY,
        {"role": "user", "content": "And in winter?"},
        {"role": "assistant", "content": "Once a day."},
    ]
    builtin = Settings()
    joined = "How often do you feed your starter? And in winter?"
    assert rewrite_followup("tell me more", history, builtin) == joined


@pytest.mark.parametrize(
    "question", ["Tell me more about the jar", "What else do you bring?", "and the cost?", "More wood?", ""]
)
def test_a_question_with_words_of_its_own_is_no_request_for_more(question: str) -> None:
    assert not asks_for_more(question)
