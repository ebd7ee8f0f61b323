"""Tests for core.evaluate: metric values are checked against arithmetic written out by hand."""

from __future__ import annotations

import json
from math import isclose, log2
from pathlib import Path

import pytest

from core.evaluate import (
    EvalConfig,
    EvalReport,
    Query,
    config_grid,
    format_table,
    load_qrels,
    load_queries,
    percentile,
    report_to_json,
    run_eval,
)
from core.evaluate.loaders import decode_upload, read_qrels, read_queries
from core.evaluate.metrics import doc_ranking, evidence_hit_at_k, mrr_at_k, ndcg_at_k, recall_at_k
from core.evaluate.querysets import check_set
from tests.conftest import SHARED

SCIFACT = SHARED / "eval" / "scifact"


# --- doc_ranking ------------------------------------------------------------------------------------


def test_doc_ranking_keeps_first_occurrence_order():
    # Chunks of p2 at ranks 1 and 3: p2 ranks where its best chunk does, and appears once.
    assert doc_ranking(["p2", "p1", "p2", "p3", "p1"]) == ["p2", "p1", "p3"]


def test_doc_ranking_empty():
    assert doc_ranking([]) == []


# --- recall@k ---------------------------------------------------------------------------------------


def test_recall_counts_relevant_within_top_k():
    # Top-2 of [d3, d1, d2] is {d3, d1}; relevant {d1, d2} → 1 of 2 found = 0.5.
    assert recall_at_k(["d3", "d1", "d2"], {"d1": 1, "d2": 2}, k=2) == 0.5
    # Top-3 holds both → 2/2 = 1.0.
    assert recall_at_k(["d3", "d1", "d2"], {"d1": 1, "d2": 2}, k=3) == 1.0


def test_recall_with_k_larger_than_ranking_and_unretrieved_relevant():
    # Only 2 docs returned for k=10; relevant {d1, d9, d8}, d1 found → 1/3.
    assert isclose(recall_at_k(["d1", "d2"], {"d1": 1, "d9": 1, "d8": 1}, k=10), 1 / 3)


def test_recall_ignores_non_positive_grades():
    # d2 has grade 0 (judged not relevant) and d3 grade -1: relevant is just {d1}; d1 at rank 1 → 1/1.
    assert recall_at_k(["d1", "d2", "d3"], {"d1": 1, "d2": 0, "d3": -1}, k=3) == 1.0


def test_metrics_are_zero_without_relevant_docs():
    assert recall_at_k(["d1"], {}, k=10) == 0.0
    assert mrr_at_k(["d1"], {}) == 0.0
    assert ndcg_at_k(["d1"], {"d1": 0}) == 0.0


def test_k_must_be_positive():
    with pytest.raises(ValueError):
        recall_at_k(["d1"], {"d1": 1}, k=0)


# --- MRR --------------------------------------------------------------------------------------------


def test_mrr_is_reciprocal_rank_of_first_relevant():
    # First relevant doc (d1) sits at rank 2 → 1/2.
    assert mrr_at_k(["d3", "d1", "d2"], {"d1": 1, "d2": 2}) == 0.5
    # Relevant doc at rank 4 → 1/4.
    assert mrr_at_k(["a", "b", "c", "d"], {"d": 1}) == 0.25


def test_mrr_is_cut_at_k():
    # Relevant doc at rank 3 but k=2 → nothing found within the cut → 0.
    assert mrr_at_k(["a", "b", "c"], {"c": 1}, k=2) == 0.0
    # Rank 11 is outside the default depth of 10.
    ranked = [f"x{i}" for i in range(10)] + ["hit"]
    assert mrr_at_k(ranked, {"hit": 1}) == 0.0


# --- nDCG -------------------------------------------------------------------------------------------


def test_ndcg_graded_linear_gain():
    # ranked [d3, d1, d2], grades d1=1, d2=2, d3 unjudged:
    #   DCG  = 0/log2(2) + 1/log2(3) + 2/log2(4) = 0.6309 + 1.0 = 1.6309
    #   IDCG = ideal order [d2, d1] = 2/log2(2) + 1/log2(3) = 2 + 0.6309 = 2.6309
    #   nDCG = 1.6309 / 2.6309 = 0.6199
    expected = (1 / log2(3) + 2 / log2(4)) / (2 / log2(2) + 1 / log2(3))
    assert isclose(ndcg_at_k(["d3", "d1", "d2"], {"d1": 1, "d2": 2}), expected)
    assert isclose(expected, 0.61990, abs_tol=1e-5)


def test_ndcg_perfect_ranking_is_one():
    assert isclose(ndcg_at_k(["d2", "d1", "x"], {"d1": 1, "d2": 2}), 1.0)


def test_ndcg_binary_single_relevant_at_rank_two():
    # One relevant doc at rank 2: DCG = 1/log2(3), IDCG = 1/log2(2) = 1 → 0.6309 (rank 2 IS discounted).
    assert isclose(ndcg_at_k(["x", "d1"], {"d1": 1}), 1 / log2(3))


def test_ndcg_idcg_counts_unretrieved_relevant_docs():
    # Relevant {a, b, c} (all grade 1), only a retrieved at rank 1:
    #   DCG  = 1/log2(2) = 1
    #   IDCG = 1/log2(2) + 1/log2(3) + 1/log2(4) = 1 + 0.6309 + 0.5 = 2.1309
    #   nDCG = 1 / 2.1309 = 0.4693
    expected = 1 / (1 + 1 / log2(3) + 1 / log2(4))
    assert isclose(ndcg_at_k(["a", "x"], {"a": 1, "b": 1, "c": 1}), expected)


def test_ndcg_cut_at_k_on_both_dcg_and_idcg():
    # k=2, ranked [x, a, b], relevant {a:1, b:1, c:1}:
    #   DCG@2  = 0 + 1/log2(3) = 0.6309            (b at rank 3 is past the cut)
    #   IDCG@2 = 1/log2(2) + 1/log2(3) = 1.6309    (only two ideal slots)
    #   nDCG@2 = 0.6309 / 1.6309 = 0.3869
    expected = (1 / log2(3)) / (1 + 1 / log2(3))
    assert isclose(ndcg_at_k(["x", "a", "b"], {"a": 1, "b": 1, "c": 1}, k=2), expected)


def test_ndcg_uses_linear_not_exponential_gain():
    # Grade 3 doc at rank 2, grade 1 doc at rank 1.
    # Linear:      DCG = 1/1 + 3/log2(3) = 2.8928; IDCG = 3/1 + 1/log2(3) = 3.6309 → 0.7967
    # Exponential (2^g - 1) would give (1 + 7/log2(3)) / (7 + 1/log2(3)) = 0.7358 instead.
    linear = (1 + 3 / log2(3)) / (3 + 1 / log2(3))
    assert isclose(ndcg_at_k(["lo", "hi"], {"lo": 1, "hi": 3}), linear)


def test_ndcg_does_not_double_count_duplicates():
    # A doc listed twice earns its gain once: [d1, d1] with {d1: 1} is a perfect ranking, 1.0, not > 1.
    assert isclose(ndcg_at_k(["d1", "d1"], {"d1": 1}), 1.0)


# --- evidence ---------------------------------------------------------------------------------------


def test_evidence_hit_normalises_case_and_whitespace():
    chunks = ["Intro text.", "The  Quick\nbrown   FOX jumps."]
    assert evidence_hit_at_k(chunks, ["quick brown fox"], k=2) == 1.0


def test_evidence_hit_only_looks_at_top_k_chunks():
    chunks = ["nothing here", "the quote lives here"]
    assert evidence_hit_at_k(chunks, ["quote lives"], k=1) == 0.0
    assert evidence_hit_at_k(chunks, ["quote lives"], k=2) == 1.0


def test_evidence_hit_any_of_several_quotes():
    assert evidence_hit_at_k(["alpha beta"], ["gamma", "BETA"], k=5) == 1.0


def test_evidence_hit_none_without_evidence():
    assert evidence_hit_at_k(["anything"], [], k=3) is None
    # A blank quote would match everything, so it counts as no evidence.
    assert evidence_hit_at_k(["anything"], ["   "], k=3) is None


def test_evidence_hit_nbsp_matches_space():
    # NFKC folds the no-break space that HTML-derived text often carries.
    assert evidence_hit_at_k(["a\u00a0b c"], ["A B C"], k=1) == 1.0


# --- percentile -------------------------------------------------------------------------------------


def test_percentile_linear_interpolation():
    # Sorted [1, 2, 3, 4]: p50 position = 3 * 0.5 = 1.5 → 2 + 0.5 * (3 - 2) = 2.5
    assert percentile([4, 1, 3, 2], 50) == 2.5
    # p95 position = 3 * 0.95 = 2.85 → 3 + 0.85 * (4 - 3) = 3.85
    assert isclose(percentile([4, 1, 3, 2], 95), 3.85)
    assert percentile([7.0], 95) == 7.0
    assert percentile([1, 9], 0) == 1
    assert percentile([1, 9], 100) == 9


def test_percentile_rejects_empty_and_bad_p():
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile([1.0], 101)


# --- loading ----------------------------------------------------------------------------------------


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_load_queries_reads_ids_as_strings_and_evidence(tmp_path):
    lines = [
        {"id": 7, "text": "What is chunking?"},
        {"id": "q2", "text": "Why RAG?", "evidence": "grounded answers"},
        {"_id": "q3", "text": "BEIR style id", "evidence": ["one", "two", ""]},
    ]
    path = _write(tmp_path / "q.jsonl", "\n".join(json.dumps(line) for line in lines) + "\n\n")
    queries = load_queries(path)
    assert queries == [
        Query("7", "What is chunking?"),
        Query("q2", "Why RAG?", ("grounded answers",)),
        Query("q3", "BEIR style id", ("one", "two")),
    ]


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("{not json", "invalid JSON"),
        ('["a list"]', "JSON object"),
        ('{"text": "no id"}', '"id"'),
        ('{"id": "q9", "text": ""}', '"text"'),
        ('{"id": "q9", "text": "t", "evidence": 5}', '"evidence"'),
        ('{"id": "q1", "text": "again"}', "duplicate"),
    ],
)
def test_load_queries_bad_line_names_file_and_line(tmp_path, bad_line, message):
    path = _write(tmp_path / "q.jsonl", '{"id": "q1", "text": "fine"}\n\n' + bad_line + "\n")
    with pytest.raises(ValueError, match=message) as info:
        load_queries(path)
    # The bad line is line 3 (line 2 is blank and skipped, but still counted).
    assert f"{path}:3:" in str(info.value)


def test_load_qrels_with_header_keeps_grades_and_drops_non_positive(tmp_path):
    path = _write(
        tmp_path / "qrels.tsv",
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t2\nq1\td3\t0\nq2\td4\t-1\nq3\td5\t1\n",
    )
    # q2 has only a non-relevant judgement, so it has no relevant docs and is absent.
    assert load_qrels(path) == {"q1": {"d1": 1, "d2": 2}, "q3": {"d5": 1}}


def test_load_qrels_without_header_and_trec_format(tmp_path):
    plain = _write(tmp_path / "plain.tsv", "q1\td1\t1\n")
    trec = _write(tmp_path / "trec.txt", "q1 0 d1 3\nq1 0 d2 1\n")
    assert load_qrels(plain) == {"q1": {"d1": 1}}
    assert load_qrels(trec) == {"q1": {"d1": 3, "d2": 1}}


def test_load_qrels_tab_separated_ids_may_contain_spaces(tmp_path):
    path = _write(tmp_path / "qrels.tsv", "q1\tmy post\t1\n")
    assert load_qrels(path) == {"q1": {"my post": 1}}


@pytest.mark.parametrize("bad_line", ["q1\td1", "q1\td1\tyes", "q1\t\t1"])
def test_load_qrels_bad_line_names_file_and_line(tmp_path, bad_line):
    path = _write(tmp_path / "qrels.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\n" + bad_line + "\n")
    with pytest.raises(ValueError) as info:
        load_qrels(path)
    assert f"{path}:3:" in str(info.value)


@pytest.mark.skipif(not (SCIFACT / "qrels.tsv").exists(), reason="shared SciFact data not present")
def test_load_real_scifact_qrels():
    qrels = load_qrels(SCIFACT / "qrels.tsv")
    assert len(qrels) == 300
    assert sum(len(docs) for docs in qrels.values()) == 339
    # The first data row of the file is "1  31715818  1".
    assert qrels["1"] == {"31715818": 1}


@pytest.mark.skipif(not (SCIFACT / "queries.jsonl").exists(), reason="shared SciFact data not present")
def test_real_scifact_queries_match_qrels():
    queries = load_queries(SCIFACT / "queries.jsonl")
    assert len(queries) == 300
    assert {q.id for q in queries} == set(load_qrels(SCIFACT / "qrels.tsv"))


# --- run_eval ---------------------------------------------------------------------------------------

# A stand-in search engine: query text → ranked (post_id, chunk_text) chunks.
FAKE_INDEX = {
    "alpha?": [("p1", "alpha intro"), ("p1", "alpha detail"), ("p2", "Alpha  QUOTE here"), ("p3", "x")],
    "beta?": [("p3", "beta one"), ("p4", "beta two")],
    "gamma?": [("p5", "gamma")],
}
QUERIES = [
    Query("a", "alpha?", ("alpha quote",)),
    Query("b", "beta?"),
    Query("c", "gamma?", ("missing quote",)),  # no qrels: skipped for ranking metrics
]
QRELS = {"a": {"p2": 1}, "b": {"p3": 1, "p9": 1}}


def fake_retrieve(text: str) -> list[tuple[str, str]]:
    return FAKE_INDEX[text]


def test_run_eval_per_query_metrics():
    report = run_eval(QUERIES, QRELS, fake_retrieve, k=2, name="fake")
    a, b, c = report.per_query
    # Query a: chunks p1, p1, p2, p3 → posts [p1, p2, p3]; relevant p2 at post rank 2.
    assert a.ranked_docs == ["p1", "p2", "p3"]
    assert a.metrics["recall@2"] == 1.0  # p2 is within the top-2 posts
    assert a.metrics["mrr@10"] == 0.5  # 1/2
    assert isclose(a.metrics["ndcg@10"], 1 / log2(3))  # DCG 1/log2(3), IDCG 1
    # The quote is in the 3rd chunk, outside the top-2 chunks: evidence counts chunks, not posts.
    assert a.metrics["evidence_hit@2"] == 0.0
    # Query b: posts [p3, p4], relevant {p3, p9}: recall 1/2, MRR 1, nDCG 1 / (1 + 1/log2(3)).
    assert b.metrics["recall@2"] == 0.5
    assert b.metrics["mrr@10"] == 1.0
    assert isclose(b.metrics["ndcg@10"], 1 / (1 + 1 / log2(3)))
    assert "evidence_hit@2" not in b.metrics
    # Query c: no qrels, so only the evidence metric; not judged.
    assert c.metrics == {"evidence_hit@2": 0.0}
    assert (a.judged, b.judged, c.judged) == (True, True, False)
    assert all(r.latency_ms >= 0 for r in report.per_query)


def test_run_eval_means_only_over_judged_queries():
    report = run_eval(QUERIES, QRELS, fake_retrieve, k=2, name="fake")
    assert (report.n_queries, report.n_judged, report.n_evidence) == (3, 2, 2)
    # Means over a and b only (c has no qrels): recall (1 + 0.5)/2 = 0.75, MRR (0.5 + 1)/2 = 0.75.
    assert report.means["recall@2"] == 0.75
    assert report.means["mrr@10"] == 0.75
    expected_ndcg = (1 / log2(3) + 1 / (1 + 1 / log2(3))) / 2
    assert isclose(report.means["ndcg@10"], expected_ndcg)
    # Evidence mean over a and c (both 0.0).
    assert report.means["evidence_hit@2"] == 0.0
    assert {"latency_p50_ms", "latency_p95_ms"} <= report.means.keys()


def test_run_eval_evidence_hit_with_larger_k():
    report = run_eval(QUERIES, QRELS, fake_retrieve, k=3)
    # With 3 chunks the quote chunk ("Alpha  QUOTE here") is in reach for query a.
    assert report.per_query[0].metrics["evidence_hit@3"] == 1.0
    assert report.means["evidence_hit@3"] == 0.5  # a hits, c misses


def test_run_eval_leaves_out_unmeasured_means():
    report = run_eval([Query("z", "gamma?")], {}, fake_retrieve, k=10)
    assert report.n_judged == 0
    assert "ndcg@10" not in report.means
    assert "evidence_hit@10" not in report.means


def test_run_eval_latency_comes_from_perf_counter(monkeypatch):
    ticks = iter([0.0, 0.010, 1.0, 1.030])  # two calls: 10 ms and 30 ms
    monkeypatch.setattr("core.evaluate.metrics.time.perf_counter", lambda: next(ticks))
    report = run_eval(QUERIES[:2], QRELS, fake_retrieve)
    assert [round(r.latency_ms, 6) for r in report.per_query] == [10.0, 30.0]
    # p50 of [10, 30] = 10 + 0.5 * 20 = 20; p95 = 10 + 0.95 * 20 = 29
    assert isclose(report.means["latency_p50_ms"], 20.0)
    assert isclose(report.means["latency_p95_ms"], 29.0)


# --- output -----------------------------------------------------------------------------------------


def test_format_table_lists_each_config_and_figures():
    first = run_eval(QUERIES, QRELS, fake_retrieve, k=2, name="dense")
    second = EvalReport(
        name="hybrid-rerank",
        k=2,
        per_query=[],
        means={
            "recall@2": 0.9,
            "mrr@10": 0.8124,
            "ndcg@10": 0.7,
            "latency_p50_ms": 12.34,
            "latency_p95_ms": 45.6,
        },
        n_queries=3,
        n_judged=2,
    )
    table = format_table([first, second])
    lines = table.splitlines()
    assert lines[0].split() == [
        "config",
        "n",
        "recall@2",
        "MRR@10",
        "nDCG@10",
        "evidence@2",
        "p50",
        "ms",
        "p95",
        "ms",
    ]
    assert lines[2].split()[:5] == ["dense", "2/3", "0.750", "0.750", f"{first.means['ndcg@10']:.3f}"]
    assert lines[3].split() == ["hybrid-rerank", "2/3", "0.900", "0.812", "0.700", "-", "12.3", "45.6"]


def test_report_to_json_round_trips_through_json():
    report = run_eval(QUERIES, QRELS, fake_retrieve, k=2, name="fake")
    data = json.loads(json.dumps(report_to_json(report)))
    assert data["name"] == "fake"
    assert data["n_judged"] == 2
    assert data["per_query"][0]["ranked_docs"] == ["p1", "p2", "p3"]
    assert data["means"]["recall@2"] == 0.75


# --- loading from uploads ---------------------------------------------------------------------------


def test_read_queries_and_qrels_from_uploaded_bytes():
    lines = decode_upload("q.jsonl", '\ufeff{"id": 1, "text": "bees?", "evidence": ["a quote"]}\n'.encode())
    assert read_queries(lines, "q.jsonl") == [Query("1", "bees?", ("a quote",))]
    assert read_qrels(["query-id\tcorpus-id\tscore", "1\tbees\t2"], "r.tsv") == {"1": {"bees": 2}}
    with pytest.raises(ValueError, match=r"^q\.jsonl:2: invalid JSON"):
        read_queries(['{"id": "a", "text": "x"}', "{oops"], "q.jsonl")
    with pytest.raises(ValueError, match=r"^r\.tsv: not UTF-8 text"):
        decode_upload("r.tsv", b"q1\t\xff\xfe\t1")


def test_check_set_warns_about_ids_that_do_not_match():
    queries = [Query("a", "x"), Query("b", "y")]
    warnings = check_set(queries, {"a": {"p": 1}, "zz": {"p": 1}})
    assert warnings == [
        "the qrels judge 1 query ids that are not in the queries file: zz",
        "1 of 2 queries have no judgements: only their evidence and latency count",
    ]
    with pytest.raises(ValueError, match="nothing to score"):
        check_set(queries, {"zz": {"p": 1}})


def test_demo_evidence_quotes_occur_verbatim_in_the_relevant_posts_chunks():
    """Every demo query has evidence, and each quote is inside one chunk of its most relevant post, at
    the default chunk size and at the sizes the Evaluate page offers (quotes never straddle chunks)."""
    from core.chunk import chunk_post
    from core.config import Settings
    from core.evaluate import CHUNK_SIZES, demo_set, evidence_found

    demo = demo_set()
    posts = {post.post_id: post for post in demo.posts or []}
    assert len(demo.queries) == 15 and all(q.evidence for q in demo.queries)
    for size in sorted({*CHUNK_SIZES, 300}):
        settings = Settings.load({"chunk_tokens": size}, environ={})
        for query in demo.queries:
            best = max(demo.qrels[query.id], key=demo.qrels[query.id].get)
            texts = [chunk.text for chunk in chunk_post(posts[best], settings)]
            assert evidence_found(texts, query.evidence, len(texts)) == list(query.evidence), (size, query.id)


def test_config_grid_names_only_what_varies_and_adds_the_baseline(settings):
    grid = config_grid(settings, ["hybrid"], ["score", "rrf"], ["none", "llm"], with_baseline=True)
    assert [c.name for c in grid] == [
        "dense",
        "hybrid score",
        "hybrid rrf",
        "hybrid score+llm",
        "hybrid rrf+llm",
    ]
    assert grid[0].overrides == {"retrieval_mode": "dense", "reranker": "none", "chunk_tokens": 300}
    assert [c.name for c in config_grid(settings, ["dense", "fts"], ["rrf"])] == ["dense", "fts"]
    with pytest.raises(ValueError, match="cannot override threshold"):
        EvalConfig("x", {"threshold": 0.5}).apply(settings)
