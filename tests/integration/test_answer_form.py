"""Every extractive answer of the demo and held-out sets reads as the author wrote it: only the author's
sentences, the "From *title*:" frame and the headings of sections a passage goes on into (never a "…"
join), no footnote marker, no line of a list without the sentence that leads into it, nor a lead-in
without what it announces. Set-level: the checks run over every answer, whatever the scorer picks, so a
better scorer needs no edit here and a rule that breaks the form fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.answer import take_turn
from core.answer.extractive import ExtractiveAnswer, markdown_literal
from core.answer.quotable import sentence_units
from core.config import Settings
from core.models import Hit
from core.parse.clean import drop_note_markers
from tests.conftest import DEMO, ROOT

PAUL = ROOT / "data" / "heldout2"


def questions(*files: Path) -> list[str]:
    return [json.loads(line)["text"] for f in files for line in f.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def paul_table(tmp_path_factory: pytest.TempPathFactory, embedder):
    """Paul's letters (data/heldout2/posts), the second held-out set's writings."""
    from core.ingest import ingest_posts
    from core.parse import parse_paths
    from core.store import Store

    settings = Settings.load({"data_dir": tmp_path_factory.mktemp("paul") / "db"}, environ={})
    store = Store(settings.data_dir)
    ingest_posts(parse_paths([PAUL / "posts"]).posts, settings, store=store, embedder=embedder)
    return settings, store


def answers(table, embedder, asked: list[str]) -> list[tuple[str, ExtractiveAnswer, list[Hit]]]:
    settings, store = table
    out = []
    for question in asked:
        reply = take_turn(question, settings, store=store, embedder=embedder, mode="extractive").reply
        if reply.mode == "extractive" and reply.extracted is not None:
            out.append((question, reply.extracted, reply.hits))
    return out


def form_problems(question: str, answer: ExtractiveAnswer, hits: list[Hit]) -> list[str]:
    """What is wrong with how the answer reads (empty: nothing)."""
    problems = []
    rest = answer.text
    for quote in answer.sentences:
        rest = rest.replace(quote.text, "", 1)
    for _, title, _ in answer.groups():
        rest = rest.replace(f"From *{markdown_literal(title)}*:", "", 1)
    for quote in answer.sentences:  # the heading of a section the passage goes on into: the author's
        if quote.section:
            rest = rest.replace(f"**{markdown_literal(quote.section)}**", "", 1)
    if set(rest) - set(" \n"):
        problems.append(f"words besides the quotes and the frame: {rest.strip()!r}")
    for quote in answer.sentences:
        if drop_note_markers(quote.text) != quote.text:
            problems.append(f"a footnote marker in {quote.text!r}")
    by_chunk = {hit.chunk_id: hit for hit in hits}
    for _, _, quotes in answer.groups():
        head = quotes[0]
        text = by_chunk[head.chunk_id].text
        paragraph_start = text.rfind("\n\n", 0, head.start) + 2 if "\n\n" in text[: head.start] else 0
        paragraph_end = text.find("\n\n", head.start)
        paragraph = text[paragraph_start : paragraph_end if paragraph_end >= 0 else len(text)]
        before = [s for at, s in sentence_units(text) if at < paragraph_start]
        if "\n" in paragraph.strip() and text.rfind("\n", paragraph_start, head.start) >= 0 and before:
            problems.append(f"a list line without its lead-in {before[-1]!r}: {head.text!r}")
        if quotes[-1].text.rstrip().endswith(":"):
            problems.append(f"a lead-in without what it announces: {quotes[-1].text!r}")
    return [f"{question!r}: {p}" for p in problems]


@pytest.mark.slow
def test_every_answer_of_every_set_is_the_authors_text_in_its_form(demo_table, paul_table, embedder):
    eval_dir = DEMO / "eval"
    demo = answers(
        demo_table,
        embedder,
        questions(
            eval_dir / "queries.jsonl",
            eval_dir / "heldout.jsonl",
            DEMO.parent / "calibration" / "questions.jsonl",
        ),
    )
    paul = answers(paul_table, embedder, questions(PAUL / "eval" / "questions.jsonl"))
    assert len(demo) >= 70 and len(paul) >= 30, (len(demo), len(paul))  # most questions are answered
    problems = [p for question, answer, hits in demo + paul for p in form_problems(question, answer, hits)]
    assert not problems, "\n".join(problems)


def test_the_form_check_can_fail(embedder):
    """The checks above find a list line quoted alone, a footnote marker and a lead-in left alone."""
    text = "I buy from three mills.\n\nDunmore, for white oak.\nPike's, for cherry.[3]"
    hit = Hit("p", "Mills", "writings", "p#0000", "", text, [], 1.0, 1)
    from core.answer.extractive import Quote

    line = text.index("Pike's")
    quote = Quote("Pike's, for cherry.[3]", "p", "Mills", "p#0000", line, 3, 1.0)
    answer = ExtractiveAnswer("Where do you buy cherry?", [quote])
    problems = form_problems("q", answer, [hit])
    assert any("footnote" in p for p in problems) and any("lead-in" in p for p in problems), problems
    lead_in = Quote("For the record, this spring's prices:", "p", "Mills", "p#0000", 0, 0, 1.0)
    alone = form_problems("q", ExtractiveAnswer("What do boards cost?", [lead_in]), [hit])
    assert any("without what it announces" in p for p in alone), alone
