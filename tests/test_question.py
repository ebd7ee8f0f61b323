"""The check every reader's question passes first (core/text/question.py)."""

from __future__ import annotations

import pytest

from core.config import Settings
from core.text import QuestionError, check_question


def test_a_question_is_stripped_and_kept():
    assert check_question("  Why did you start the blog?\n", 1000) == "Why did you start the blog?"
    assert check_question("x" * 1000, 1000) == "x" * 1000  # the limit itself is allowed
    assert check_question("y" * 50_000, 0) == "y" * 50_000  # 0: no limit


@pytest.mark.parametrize("question", [None, "", "   \n\t "])
def test_empty_questions_are_refused(question):
    with pytest.raises(QuestionError, match=r"The question is empty: please type a question\.") as info:
        check_question(question, 1000)
    assert info.value.kind == "empty"


def test_a_long_question_is_refused_with_its_length_and_the_limit():
    with pytest.raises(QuestionError) as info:
        check_question("é" * 20_000, Settings().max_question_chars)
    assert str(info.value) == (
        "This question is 20,000 characters long, and questions are limited to 1,000. "
        "Please ask a shorter question."
    )
    assert (info.value.kind, info.value.length, info.value.limit) == ("too_long", 20_000, 1000)
    assert isinstance(info.value, ValueError)  # the app's and the CLI's known errors
