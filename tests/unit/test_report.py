"""The ingest report's summary line (core/ingest/report.py) and the counts it words (core/text/counts.py)."""

from __future__ import annotations

from core.ingest.report import IngestReport, PostOutcome
from core.models import ParseError


def test_the_summary_counts_files_with_warnings_not_warnings() -> None:
    one = IngestReport(warnings=[ParseError("hive.ghost.json", "no site address")])
    assert one.summary().endswith("; 1 file read with a warning")
    # One export that warns twice (its site address, a left-out draft) is still one file.
    twice = IngestReport(
        warnings=[
            ParseError("hive.ghost.json", "no site address"),
            ParseError("hive.ghost.json", "left out 1 draft"),
            ParseError("notes.md", "not UTF-8"),
        ]
    )
    assert twice.summary().endswith("; 2 files read with warnings")


def test_the_summary_words_each_count_for_its_number() -> None:
    from core.llm import LLMStats

    def outcome(llm: str) -> PostOutcome:
        return PostOutcome("bees", "On Bees", "bees.md", "new", chunks=1, llm=llm)

    one = IngestReport([outcome("fallback")], chunks_embedded=1, chunks_reused=0, llm=LLMStats(calls=1))
    assert one.summary().startswith("1 new, 0 updated, 0 unchanged, 0 failed; 1 chunk embedded, 0 reused")
    assert "LLM: 1 call, 0 from cache" in one.summary() and "; 1 post with LLM fallbacks" in one.summary()
    assert "0 chunks embedded" in IngestReport().summary()
    two = IngestReport(
        [outcome("ok"), outcome("failed"), outcome("fallback")], chunks_embedded=2, llm=LLMStats()
    )
    assert "2 chunks embedded" in two.summary() and "; 2 posts with LLM fallbacks" in two.summary()
    assert "LLM: 0 calls" in two.summary()


def test_pages_and_cli_word_counts_with_one_function() -> None:
    from core.text import plural
    from pages.shared import plural as pages_plural

    assert pages_plural is plural
    assert [plural(n, "chunk") for n in (0, 1, 2, 1200)] == [
        "0 chunks",
        "1 chunk",
        "2 chunks",
        "1,200 chunks",
    ]
    assert plural(1, "cached LLM reply", "cached LLM replies") == "1 cached LLM reply"


def test_the_grounding_line_counts_one_sentence_in_the_singular() -> None:
    from core.answer.grounding import Grounding, SentenceSupport

    one = Grounding([SentenceSupport("I keep bees.", judged=True, supported=True)])
    assert one.summary() == "1 of 1 sentence supported by the excerpts"
    two = Grounding([SentenceSupport("A.", judged=True, supported=False)] * 2)
    assert two.summary() == "0 of 2 sentences supported by the excerpts"


def test_the_grounding_line_names_the_sentences_too_short_to_check() -> None:
    # In strict grounding the check covers the model's whole answer: without the short ones named, "1 of 8
    # sentences supported" beside 14 sentences left out read as a miscount.
    from core.answer.grounding import Grounding, SentenceSupport

    sentences = [SentenceSupport("I keep bees.", judged=True, supported=True)]
    sentences += [SentenceSupport("Yes.", judged=False, supported=False)] * 2
    assert (
        Grounding(sentences).summary()
        == "1 of 1 sentence supported by the excerpts (2 more too short to check)"
    )
