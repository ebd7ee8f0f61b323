"""One turn of conversation, one function (core/answer/turn.py): the chat (AppTest), `inkwell ask` and
`inkwell eval --answers` give the same reply to the same question, on a real table with the real embedder;
a follow-up is joined only when it refers back, and a model that fails at the rewrite never fails the
turn."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from core.answer import search_turn, take_turn
from core.cli.main import main
from core.config import Settings
from core.evaluate.answers import run_answer_eval
from core.evaluate.metrics import Query
from core.store import Store
from tests.conftest import open_app


@pytest.fixture
def table(corpus: Store) -> Store:
    return corpus


QUESTIONS = [
    "When does swarming season start?",
    "What are the real enemy of bees?",
    "How is the sourdough starter fed?",
    "Who won the football world cup in 2018?",  # off-topic: the honest reply in all three
]


def cli_answer(question: str) -> dict:
    result = CliRunner().invoke(main, ["ask", question, "--answer-mode", "extractive", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def chat_answer(question: str) -> dict:
    at = open_app()
    at.chat_input[0].set_value(question).run()
    assert not at.exception and not at.error
    return at.session_state["chat_messages"][-1]


def test_the_chat_the_cli_and_the_evaluation_give_the_same_reply(embedder, table: Store):
    settings = Settings.load({"data_dir": table.data_dir, "answer_mode": "extractive"}, environ={})
    store = table
    queries = [Query(f"q{i}", q) for i, q in enumerate(QUESTIONS)]
    (report,) = run_answer_eval(queries, [], settings, ["extractive"], store=store, embedder=embedder)
    evaluated = {row.question: row for row in report.rows}
    modes = set()
    for question in QUESTIONS:
        direct = take_turn(question, settings, store=store, embedder=embedder).reply
        text = "".join(direct)
        cli, chat, row = cli_answer(question), chat_answer(question), evaluated[question]
        assert text and cli["answer"] == text == row.answer, question
        assert cli["answer_mode"] == direct.mode == row.replied == chat["mode"], question
        # The chat draws the same sentences (it adds the "From …" lines around them).
        assert [s["text"] for s in cli["sentences"]] == [q.text for q in direct.quotes], question
        assert all(q.text in chat["content"] for q in direct.quotes), question
        modes.add(direct.mode)
    assert modes == {"extractive", "none"}  # both kinds of reply were compared


def test_a_follow_up_is_joined_only_when_it_refers_back(embedder, table: Store):
    settings = Settings.load({"data_dir": table.data_dir}, environ={})
    store = table
    history = [
        {"role": "user", "content": "When does swarming season start?"},
        {"role": "assistant", "content": "Swarming season starts in May."},
    ]
    follow_up = search_turn(
        "And why does it happen?", settings, store=store, embedder=embedder, history=history
    )
    assert follow_up.rewritten and "swarming" in follow_up.query.lower()
    fresh = search_turn(
        "What is the capital of France?", settings, store=store, embedder=embedder, history=history
    )
    assert not fresh.rewritten and fresh.query == "What is the capital of France?"


def test_a_model_that_fails_the_rewrite_leaves_the_question_as_asked(embedder, table: Store):
    # A real OpenAI client pointed at a closed port on loopback: the rewrite fails with a connection error.
    from tests.e2e_support import free_port

    settings = Settings.load(
        {
            "data_dir": table.data_dir,
            "openai_base_url": f"http://127.0.0.1:{free_port()}/v1",
            "answer_mode": "extractive",
            "translate_question": False,
            "connect_timeout": 1.0,
        },
        environ={},
    )
    store = table
    history = [{"role": "user", "content": "When does swarming season start?"}]
    turn = take_turn("And why does it happen?", settings, store=store, embedder=embedder, history=history)
    assert set(turn.skipped) == {"rewrite"} and turn.query == "And why does it happen?"
    assert turn.reply.mode in ("extractive", "none")
