"""Answer evaluation (core/evaluate/answers.py, `inkwell eval --answers`): the scores are checked against
arithmetic written out by hand and against what the reader was actually shown. Real LanceDB, the real
embedder, the real CLI; a scripted OpenAI-compatible server on 127.0.0.1 where answers are generated."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.evaluate import Query
from core.evaluate.answers import AnswerReport, answer_tokens, invented_share, run_answer_eval, token_f1
from core.text import split_sentences
from tests.cli_support import corpus, run  # noqa: F401  (fixture)
from tests.conftest import write
from tests.servers import ScriptedOpenAIServer

TOMATOES = "The Brandywines split in wet Augusts."
COMPOST = "The compost heap takes all kitchen scraps except citrus peel."
ON_TOPIC = [
    Query("q1", "Which tomatoes split in wet Augusts?", (TOMATOES,), "The Brandywines split in wet Augusts."),
    Query(
        "q2",
        "What does the compost heap take?",
        ("all kitchen scraps except citrus peel",),
        "Kitchen scraps.",
    ),
]
OFF_TOPIC = [Query("o1", "Who won the 2018 football world cup?", kind="general")]


def test_token_f1_by_hand():
    # "the" is dropped: [oak, table, took, 146, hours] against [it, took, 146, hours]; 3 in common.
    assert answer_tokens("The oak table took 146 hours.") == ["oak", "table", "took", "146", "hours"]
    precision, recall = 3 / 5, 3 / 4
    expected = 2 * precision * recall / (precision + recall)
    assert token_f1("The oak table took 146 hours.", "It took 146 hours") == pytest.approx(expected)
    assert token_f1("Nothing alike.", "It took 146 hours") == 0.0
    assert token_f1("", "It took 146 hours") == 0.0


def test_invented_share_counts_content_words_no_excerpt_holds():
    # Content words of the answer: walnut, bench, paris; the excerpts hold walnut and bench.
    assert invented_share("The walnut bench, Paris.", ["A walnut bench.", "Nothing else."]) == pytest.approx(
        1 / 3
    )
    assert invented_share("The walnut bench.", ["A walnut bench."]) == 0.0
    assert invented_share("It is.", ["A walnut bench."]) is None  # no content words to judge


@pytest.fixture
def table(corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: F811
    """The CLI test corpus ingested, and a Store and embedder over it."""
    from core.config import Settings
    from core.embed import embedder_for_store
    from core.store import Store

    db = tmp_path / "db"
    assert run("ingest", str(corpus), data_dir=db).exit_code == 0
    monkeypatch.setenv("INKWELL_ROUTING", "off")
    settings = Settings.load({"data_dir": db}, environ={"INKWELL_ROUTING": "off"})
    store = Store(db)
    return settings, store, embedder_for_store(settings, store.model_id())


def rows_of(report: AnswerReport) -> dict:
    return {row.query_id: row for row in report.rows}


def test_extractive_answers_score_their_quotes(table):
    settings, store, embedder = table
    [report] = run_answer_eval(ON_TOPIC, OFF_TOPIC, settings, ["extractive"], store=store, embedder=embedder)
    rows = rows_of(report)
    assert TOMATOES in rows["q1"].answer and rows["q1"].evidence is True and rows["q1"].invented == 0.0
    assert rows["q2"].evidence is True and rows["q2"].invented == 0.0
    assert rows["o1"].no_answer and rows["o1"].replied == "none"
    summary = report.summary()
    assert summary["evidence_in_answer"] == 1.0 and summary["invented_words"] == 0.0
    assert (summary["no_answer_on_topic"], summary["no_answer_off_topic"]) == (0.0, 1.0)
    # F1 is over the quoted sentences: not the frame, nor a section heading the passage shows (**…**).
    quoted = {
        r.query_id: re.sub(r"\*\*[^\n]*\*\*", " ", r.answer.split(":\n", 1)[1])
        for r in report.rows
        if not r.no_answer
    }
    expected_f1 = (
        token_f1(quoted["q1"], ON_TOPIC[0].answer) + token_f1(quoted["q2"], ON_TOPIC[1].answer)
    ) / 2
    assert summary["token_f1"] == pytest.approx(expected_f1)


def test_questions_without_references_score_no_f1_or_evidence(table):
    # A declined question without a reference answer or evidence was counted as F1 0 and no evidence, so
    # a set with no references printed "token F1 0.000" instead of saying there is nothing to score.
    settings, store, embedder = table
    asked = [Query("q1", ON_TOPIC[0].text), Query("q9", "What colour is the shed roof?")]
    [report] = run_answer_eval(asked, [], settings, ["extractive"], store=store, embedder=embedder)
    assert any(r.no_answer for r in report.rows)  # a declined one is among them
    summary = report.summary()
    assert summary["token_f1"] is None and summary["evidence_in_answer"] is None


def test_the_naive_baseline_quotes_two_sentences_behind_the_same_bar(table):
    """The naive mode answers exactly the questions the extractive one does (the same relevance bar),
    with at most two verbatim sentences, and is scored like any answer."""
    settings, store, embedder = table
    extractive, naive = run_answer_eval(
        ON_TOPIC, OFF_TOPIC, settings, ["extractive", "naive"], store=store, embedder=embedder
    )
    assert naive.mode == "naive"
    assert [r.no_answer for r in naive.rows] == [r.no_answer for r in extractive.rows]
    for row in naive.rows:
        if not row.no_answer:
            body = row.answer.split(":\n", 1)[1]
            assert 1 <= len(split_sentences(body)) <= 2 and row.invented == 0.0
    assert naive.summary()["evidence_in_answer"] is not None


def test_a_generated_answer_grounding_left_nothing_of_counts_as_no_answer(table, monkeypatch):
    """With the default grounding an invented answer never reaches the reader: the reader got "I can't
    answer that…", so the evaluation scores it as no answer, not as an answer full of invented words."""
    settings, store, embedder = table
    with ScriptedOpenAIServer() as server:
        settings = settings.replace(openai_base_url=server.base_url, max_retries=0, translate_question=False)
        server.chat(TOMATOES)  # q1: the post's own sentence
        server.chat("My compost heap was built by Oakridge Landscaping in 1998 for four thousand dollars.")
        [report] = run_answer_eval(
            ON_TOPIC, OFF_TOPIC, settings, ["generative"], store=store, embedder=embedder
        )
        assert len(server.chat_requests) == 2  # the off-topic question never reached the model
    rows = rows_of(report)
    assert rows["q1"].answer == TOMATOES and rows["q1"].evidence is True and not rows["q1"].no_answer
    assert rows["q1"].grounded == 1.0 and rows["q1"].invented == 0.0
    q2 = rows["q2"]
    assert q2.replied == "generative" and q2.declined and q2.no_answer
    assert q2.answer == "I can't answer that from my posts without guessing."
    assert q2.f1 == 0.0 and q2.evidence is False and q2.invented is None
    summary = report.summary()
    assert (summary["no_answer_on_topic"], summary["no_answer_off_topic"]) == (0.5, 1.0)
    assert summary["invented_words"] == 0.0  # over the answered question only


def test_the_cli_prints_one_row_per_answer_mode(corpus, tmp_path):  # noqa: F811
    db = tmp_path / "db"
    run("ingest", str(corpus), data_dir=db)
    queries = write(tmp_path / "q.jsonl", "\n".join(json.dumps(q) for q in [
        {"id": q.id, "text": q.text, "evidence": list(q.evidence), "answer": q.answer} for q in ON_TOPIC
    ]))  # fmt: skip
    qrels = write(tmp_path / "r.tsv", "q1\tgarden\t1\nq2\tgarden\t1\n")
    off = write(
        tmp_path / "off.jsonl", json.dumps({"id": "o1", "text": OFF_TOPIC[0].text, "kind": "general"})
    )
    args = ["eval", "--queries", str(queries), "--qrels", str(qrels), "--answers", "--off-topic", str(off)]
    table = run(*args, "--answer-mode", "extractive,naive", data_dir=db)
    assert table.exit_code == 0, table.output
    header, _, row, naive = [line for line in table.stdout.splitlines() if line.startswith("|")][-4:]
    assert naive.strip("|").split("|")[0].strip() == "naive"
    assert "evidence in answer" in header and "no answer (off topic)" in header
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[0] == "extractive" and cells[2] == "1.000" and cells[3] == "0.000" and cells[6] == "1.000"
    bad = run(*args, "--answer-mode", "poetic", data_dir=db)
    assert bad.exit_code == 2 and "poetic" in bad.output


def test_token_f1_is_squads_normalisation():
    # SQuAD's normalize_answer removes punctuation rather than splitting at it: "don't" is "dont",
    # "$40" is "40", "well-known" is "wellknown"; 4 of 4 reference words, 4 of 5 answer words.
    assert answer_tokens("I don't use a $40 saw.") == ["i", "dont", "use", "40", "saw"]
    assert answer_tokens("A well-known «fact».") == ["wellknown", "fact"]
    assert token_f1("I don't use a $40 saw.", "dont use $40 saw") == pytest.approx(2 * 0.8 * 1.0 / 1.8)


def test_bench_scores_answers_with_the_core_f1():
    import ast

    tree = ast.parse(Path("bench/answers.py").read_text(encoding="utf-8"))
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    imported = {
        a.name
        for n in tree.body
        if isinstance(n, ast.ImportFrom) and n.module == "core.evaluate.answers"
        for a in n.names
    }
    assert "token_f1" not in defined and "token_f1" in imported
