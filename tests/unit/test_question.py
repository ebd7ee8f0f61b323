"""The check every reader's question passes first (core/text/question.py)."""

from __future__ import annotations

import pytest

from core.config import Settings
from core.text import QuestionError, check_question


def test_a_question_is_stripped_and_kept():
    assert check_question("🦆", 1000) == "🦆" and check_question("?", 1000) == "?"  # visible, if odd
    assert check_question("  Why did you start the blog?\n", 1000) == "Why did you start the blog?"
    assert check_question("x" * 1000, 1000) == "x" * 1000  # the limit itself is allowed
    assert check_question("y" * 50_000, 0) == "y" * 50_000  # 0: no limit


# Invisible characters only (a zero-width space, a BOM, NUL, a word joiner) were answered, logged as a
# reader's question and counted against the rate limit.
@pytest.mark.parametrize(
    "question", [None, "", "   \n\t ", "\u200b", "\ufeff \u200b", "\x00", "\u2060\u00a0"]
)
def test_empty_questions_are_refused(question):
    with pytest.raises(QuestionError, match=r"The question is empty: please type a question\.") as info:
        check_question(question, 1000)
    assert info.value.kind == "empty"


@pytest.mark.parametrize("question", ["Why \ud800?", "\udfff", "Bees\ud83d"])
def test_a_lone_surrogate_is_refused(question):
    # JSON's "\ud800" escape decodes to one; the tokenizer raises on it and UTF-8 cannot hold it.
    with pytest.raises(QuestionError, match="unpaired UTF-16 surrogate") as info:
        check_question(question, 1000)
    assert info.value.kind == "broken"


def test_a_character_beyond_the_basic_plane_is_kept():
    assert check_question("Bees \U0001f41d?", 1000) == "Bees \U0001f41d?"  # a surrogate pair in JSON


def test_a_long_question_is_refused_with_its_length_and_the_limit():
    with pytest.raises(QuestionError) as info:
        check_question("é" * 20_000, Settings().max_question_chars)
    assert str(info.value) == (
        "This question is 20,000 characters long, and questions are limited to 1,000. "
        "Please ask a shorter question."
    )
    assert (info.value.kind, info.value.length, info.value.limit) == ("too_long", 20_000, 1000)
    assert isinstance(info.value, ValueError)  # the app's and the CLI's known errors


@pytest.mark.parametrize(
    "emoji",
    [
        "🙂",  # one code point
        "👍🏽",  # with a skin tone: 2
        "🇹🇷",  # a flag: 2 regional indicators
        "👨‍👩‍👧",  # a ZWJ family: 5 (250 of them were once counted as 1,250 characters)
        "👨‍👩‍👧‍👦",  # 7
        "🏴󠁧󠁢󠁳󠁣󠁴󠁿",  # Scotland's flag: 7
    ],
)
def test_questions_are_measured_in_the_characters_a_reader_sees(emoji):
    question = emoji * 250
    assert check_question(question, 300) == question
    with pytest.raises(QuestionError) as info:
        check_question(emoji * 301, 300)
    assert (info.value.length, info.value.limit) == (301, 300)
    accented = "e\u0301" * 300  # e + a combining acute accent: 300 characters, 600 code points
    assert check_question(accented, 300) == accented


def test_one_character_over_the_limit_is_refused():
    with pytest.raises(QuestionError, match=r"This question is 301 characters long, .* limited to 300\."):
        check_question("x" * 301, 300)


def test_a_flood_of_combining_marks_is_refused_though_it_draws_as_one_character():
    flood = "a" + "\u0301" * 5000  # one grapheme cluster of 5,001 code points
    with pytest.raises(QuestionError) as info:
        check_question(flood, 300)
    assert info.value.kind == "too_long" and (info.value.length, info.value.limit) == (5001, 2400)
    assert "5,001 Unicode code points" in str(info.value) and "limited to 2,400" in str(info.value)
    zalgo = ("a" + "\u0301" * 7) * 300  # 300 characters of 8 code points each: at the cap, allowed
    assert check_question(zalgo, 300) == zalgo
