"""core.evaluate comparing configurations on a real table (the bundled embedder, LanceDB in a tmp dir):
figures checked against arithmetic written out by hand, and `inkwell eval` over the same table."""

from __future__ import annotations

import json
from math import isclose, log2

import pytest

from core.evaluate import (
    Query,
    compare,
    comparison_to_csv,
    comparison_to_json,
    config_grid,
    per_query_rows,
    summary_rows,
)

BEES = [
    "Keeping bees taught me patience. The first hive arrived in April 2019, a nucleus colony of five frames.",
    "Swarming season starts in May. A colony that runs out of space raises a new queen and half of it leaves.",
    "Varroa mites are the real enemy. We count mites on a sticky board every two weeks in summer.",
]
BREAD = "My sourdough starter is fed rye flour twice a day; the loaf proves overnight in the fridge."
WALK = "I walk along the canal every morning before work."
TINY_QUERIES = [
    Query("q1", "sourdough rye flour", ("proves overnight in the fridge",)),
    Query("q2", "varroa mites sticky board"),
    Query("q3", "canal", ("along the canal",)),  # not judged: evidence only
]
TINY_QRELS = {"q1": {"bread": 2, "walks": 1}, "q2": {"bees": 1}}


@pytest.fixture
def tiny(settings, store, embedder):
    """Three posts in a real table, chunked at 30 tokens: bees 3 chunks, bread and walks 1 each."""
    from core.ingest import ingest_posts
    from core.models import Block, Post

    settings = settings.replace(chunk_tokens=30)
    posts = [
        Post("bees", "On Bees", [Block(p) for p in BEES], raw="\n\n".join(BEES), source="bees.txt"),
        Post("bread", "Sourdough", [Block(BREAD)], raw=BREAD, source="bread.txt"),
        Post("walks", "Walking", [Block(WALK)], raw=WALK, source="walks.txt"),
    ]
    report = ingest_posts(posts, settings, store=store, embedder=embedder)
    assert report.ok and store.counts() == (3, 5)
    return settings


def test_compare_gives_one_report_per_configuration_with_hand_computed_metrics(tiny, embedder):
    configs = config_grid(tiny, ["fts", "dense"])
    assert [(c.name, c.overrides["retrieval_mode"]) for c in configs] == [("fts", "fts"), ("dense", "dense")]
    steps: list[tuple[int, int]] = []
    comparison = compare(
        TINY_QUERIES,
        TINY_QRELS,
        configs,
        tiny,
        k=10,
        embedder=embedder,
        progress=lambda d, t, m: steps.append((d, t)),
    )
    assert [r.report.name for r in comparison.results] == ["fts", "dense"]
    assert comparison.baseline == "dense"
    assert steps[-1] == (6, 6)  # 2 configurations × 3 queries, no scratch table
    fts, dense = (r.report for r in comparison.results)
    assert all(r.chunks == 5 and r.table == "stored" for r in comparison.results)

    # fts: q1 only matches bread → [bread]; walks (grade 1) is never retrieved.
    q1, q2, q3 = fts.per_query
    assert q1.ranked_docs == ["bread"]
    assert q1.metrics["recall@10"] == 0.5
    assert q1.metrics["mrr@10"] == 1.0
    assert isclose(q1.metrics["ndcg@10"], 2 / (2 + 1 / log2(3)))  # DCG 2/1; IDCG 2/1 + 1/log2(3)
    assert q1.evidence_found == ["proves overnight in the fridge"] and q1.metrics["evidence_hit@10"] == 1.0
    assert q2.ranked_docs == ["bees"] and q2.metrics["ndcg@10"] == 1.0
    assert not q3.judged and q3.metrics == {"evidence_hit@10": 1.0}
    assert fts.means["recall@10"] == 0.75  # (0.5 + 1) / 2, judged queries only
    assert isclose(fts.means["ndcg@10"], (2 / (2 + 1 / log2(3)) + 1) / 2)
    assert fts.means["evidence_hit@10"] == 1.0  # q1 and q3

    # dense ranks every post (top_k 50 > 5 chunks): recall 1; bread first; nDCG from walks' place.
    q1 = dense.per_query[0]
    assert q1.ranked_docs[0] == "bread" and sorted(q1.ranked_docs) == ["bees", "bread", "walks"]
    walks_rank = q1.ranked_docs.index("walks") + 1
    ideal = 2 + 1 / log2(3)
    assert isclose(q1.metrics["ndcg@10"], (2 + 1 / log2(walks_rank + 1)) / ideal)
    assert dense.means["recall@10"] == 1.0 and dense.means["mrr@10"] == 1.0

    rows = summary_rows(comparison)
    assert [row["config"] for row in rows] == ["fts", "dense"]
    assert rows[0]["judged"] == "2/3" and rows[0]["chunks"] == 5
    assert isclose(rows[0]["recall@10 ×"], 0.75) and rows[1]["ndcg@10 ×"] == 1.0
    per_query = per_query_rows(comparison)
    assert per_query[0]["relevant"] == "bread, walks" and per_query[0]["fts · found"].startswith(
        "1/1: proves"
    )
    assert per_query[1]["fts · found"] == ""  # q2 has no evidence
    data = json.loads(json.dumps(comparison_to_json(comparison)))
    assert [c["name"] for c in data["configs"]] == ["fts", "dense"]
    csv_lines = comparison_to_csv(comparison).splitlines()
    assert len(csv_lines) == 1 + 2 * 3 and csv_lines[0].startswith("config,query_id,query,judged,recall@10")


def test_chunk_size_configurations_use_scratch_tables_and_leave_the_store_alone(tiny, store, embedder):
    before_versions, before_chunks = store.versions(), store.list_chunks()
    configs = config_grid(tiny, ["fts"], chunk_tokens=[30, 200])
    assert [c.name for c in configs] == ["fts 30tok", "fts 200tok"]
    first = compare(TINY_QUERIES, TINY_QRELS, configs, tiny, embedder=embedder)
    stored, bigger = first.results
    assert (stored.table, stored.chunks) == ("stored", 5)
    assert bigger.table.startswith("paragraph-200-") and bigger.chunks == 3  # bees is one chunk at 200
    # Bread and walks chunk the same at both sizes: their vectors come from the stored table's cache.
    assert (first.chunks_embedded, first.chunks_reused) == (1, 2)
    assert bigger.report.per_query[1].ranked_docs == ["bees"]
    assert store.versions() == before_versions and store.list_chunks() == before_chunks
    assert (tiny.data_dir / "eval-tables").is_dir()

    # A second run finds its scratch table in sync: nothing embedded, the same figures.
    again = compare(TINY_QUERIES, TINY_QRELS, configs, tiny, embedder=embedder)
    assert (again.chunks_embedded, again.chunks_reused) == (0, 0)
    assert _scores(again.results[1]) == _scores(first.results[1])
    assert store.versions() == before_versions


def _scores(result) -> dict:
    return {key: value for key, value in result.report.means.items() if not key.startswith("latency")}


def test_compare_rejects_bad_input_clearly(settings, embedder):
    configs = config_grid(settings, ["dense"])
    with pytest.raises(ValueError, match="nothing is stored yet"):
        compare(TINY_QUERIES, TINY_QRELS, configs, settings, embedder=embedder)
    with pytest.raises(ValueError, match="names must differ"):
        compare(TINY_QUERIES, TINY_QRELS, [configs[0], configs[0]], settings, embedder=embedder)
    with pytest.raises(ValueError, match="at least one configuration"):
        compare(TINY_QUERIES, TINY_QRELS, [], settings, embedder=embedder)


def test_cli_eval_compares_chunk_sizes_with_per_query_rows_and_json(tiny, store, tmp_path):
    from click.testing import CliRunner

    from core.cli import main

    queries = tmp_path / "q.jsonl"
    queries.write_text(
        "\n".join(
            json.dumps({"id": q.id, "text": q.text, "evidence": list(q.evidence)}) for q in TINY_QUERIES
        )
    )
    qrels = tmp_path / "r.tsv"
    qrels.write_text("q1\tbread\t2\nq1\twalks\t1\nq2\tbees\t1\n")
    args = ["eval", "--queries", str(queries), "--qrels", str(qrels), "--data-dir", str(tiny.data_dir)]
    args += ["--mode", "dense,fts", "--chunk-tokens", "30", "--chunk-tokens", "200"]
    before = store.versions()
    result = CliRunner(env={"INKWELL_CHUNK_TOKENS": "30"}).invoke(
        main, [*args, "--per-query"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[-2:] == ["nDCG@10", "×"]  # the ratio column: a dense row is the baseline
    rows = {" ".join(line.split()[:2]): line.split() for line in lines[2:6]}
    assert list(rows) == ["dense 30tok", "fts 30tok", "dense 200tok", "fts 200tok"]
    assert rows["fts 30tok"][2:4] == ["2/3", "0.750"] and rows["dense 30tok"][-1] == "1.00"
    per_query = lines[7:]
    assert per_query[0].split()[:5] == ["query", "dense", "30tok", "fts", "30tok"]
    fts_q1 = f"{2 / (2 + 1 / log2(3)):.3f} ev 1/1"  # nDCG@10 of [bread] as above; the quote found
    assert per_query[1].startswith("q1") and per_query[1].count(fts_q1) == 2  # fts at both sizes
    assert per_query[3].startswith("q3") and per_query[3].split()[1:3] == ["-", "ev"]

    out = CliRunner(env={"INKWELL_CHUNK_TOKENS": "30"}).invoke(
        main, [*args, "--json"], catch_exceptions=False
    )
    reports = [json.loads(line) for line in out.stdout.splitlines()]
    assert [(r["name"], r["chunks"]) for r in reports] == [
        ("dense 30tok", 5),
        ("fts 30tok", 5),
        ("dense 200tok", 3),
        ("fts 200tok", 3),
    ]
    assert reports[3]["overrides"]["chunk_tokens"] == 200 and reports[1]["means"]["recall@10"] == 0.75
    assert store.versions() == before
