"""`make bench`: speed and quality figures on the public SciFact benchmark, with same-run baselines.

Prints, in one run:
- ingest time and chunks/s for the SciFact corpus, beside the embedder's raw throughput on the same
  texts (the baseline: what the pipeline costs on top of embedding);
- re-ingest time when nothing changed (and how many chunks it embedded: should be 0);
- dense search p50/p95 over the 300 SciFact queries, beside an exact numpy dot-product search over the
  same vectors (the baseline: what LanceDB costs on top of the math);
- the quality table: nDCG@10, recall@10 and p50 latency of each retrieval configuration through
  `inkwell eval`'s code path (dense, fts, hybrid with score fusion, hybrid with RRF), with dense-only
  (the seed) as the baseline row and every other row's ratio to it;
- the BM25 check: the fts row against BM25's 0.665 from the BEIR paper (a check of the metric code);
- only when asked (`BENCH_RERANK=1` or --rerank; slow: the built-in LLM judges rerank_top_n chunks
  per query): a reranking table on the first --rerank-queries queries (50), dense and hybrid beside
  hybrid + llm rerank (the built-in SmolLM2 through core/search/rerank.py), all on the same query subset.

SciFact documents are indexed whole (chunk_tokens=2000: one chunk per document), as BEIR does; the
keyword index sees title + text (+ the chunk's keywords). Figures, not asserts: these machines are
noisy. Use --limit to try it on a slice first, and --data-dir to keep the ingested table between runs
(a second run then re-uses it: its ingest figures measure a no-op).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from core.config import Settings
from core.embed import Embedder, chunk_embedded_text, get_embedder
from core.evaluate import EvalReport, Query, format_table, load_qrels, load_queries, percentile, run_eval
from core.ingest import ingest_posts, prepare_chunks
from core.parse import parse_paths
from core.search import prepare_reranker, search
from core.store import Store

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "eval" / "scifact"
BEIR_BM25_NDCG10 = 0.665
BM25_TOLERANCE = 0.02
# (row name, retrieval_mode, fusion); the first row is the baseline.
CONFIGS = [
    ("dense (seed)", "dense", "score"),
    ("fts (BM25)", "fts", "score"),
    ("hybrid score", "hybrid", "score"),
    ("hybrid RRF", "hybrid", "rrf"),
]
# The reranking table (only when asked): (row name, retrieval_mode, reranker), same query subset.
RERANK_CONFIGS = [
    ("dense (seed)", "dense", "none"),
    ("hybrid score", "hybrid", "none"),
    ("hybrid+llm", "hybrid", "llm"),
]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scifact", type=Path, default=SCIFACT)
    parser.add_argument("--limit", type=int, default=0, help="only the first N documents (0 = all)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--data-dir", type=Path, help="keep the table here (default: a temporary dir)")
    parser.add_argument(
        "--rerank",
        action="store_true",
        default=os.environ.get("BENCH_RERANK") == "1",
        help="also measure hybrid + llm rerank (slow; env BENCH_RERANK=1)",
    )
    parser.add_argument("--rerank-queries", type=int, default=50, help="queries in the rerank table (50)")
    parser.add_argument("--rerank-top-n", type=int, default=0, help="candidates judged (0: rerank_top_n)")
    args = parser.parse_args()
    if not (args.scifact / "corpus.jsonl").exists():
        sys.exit(f"SciFact not found at {args.scifact} (expected corpus.jsonl, queries.jsonl, qrels.tsv)")

    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="inkwell-bench-") as tmp:
        data_dir = args.data_dir or Path(tmp) / "db"
        # Whole documents, as BEIR indexes them; everything else at its defaults.
        settings = Settings.load({"data_dir": data_dir, "chunk_tokens": 2000}, environ={})
        store = Store(settings.data_dir)
        embedder = get_embedder(settings)
        posts = parse_paths([args.scifact / "corpus.jsonl"], collection="scifact").posts
        if args.limit:
            posts = posts[: args.limit]
        print(f"SciFact: {len(posts)} documents; embedder {embedder.model_id}; {os.cpu_count()} cores")

        started = time.perf_counter()
        report = ingest_posts(posts, settings, store=store, embedder=embedder)
        ingest_s = time.perf_counter() - started
        n_chunks = store.counts()[1]
        figures.update(ingest_s=ingest_s, chunks=n_chunks, chunks_per_s=n_chunks / ingest_s)

        # Baseline: the embedder alone on a sample of the same embedded texts.
        sample = [chunk_embedded_text(c, p.title) for p in posts[:200] for c in prepare_chunks(p, settings)]
        started = time.perf_counter()
        embedder.embed(sample)
        raw_rate = len(sample) / (time.perf_counter() - started)
        figures["embed_only_chunks_per_s"] = raw_rate

        started = time.perf_counter()
        again = ingest_posts(posts, settings, store=store, embedder=embedder)
        figures.update(reingest_s=time.perf_counter() - started, reingest_embedded=again.chunks_embedded)

        queries = load_queries(args.scifact / "queries.jsonl")
        qrels = load_qrels(args.scifact / "qrels.tsv")
        search_ms = []
        for q in queries:
            t0 = time.perf_counter()
            search(q.text, settings, store=store, embedder=embedder, mode="dense")
            search_ms.append((time.perf_counter() - t0) * 1000)

        # Baseline: exact numpy search over the same vectors, with the same query embedding cost.
        table = store.chunks.to_arrow().select(["post_id", "vector"])
        matrix = np.asarray(table["vector"].to_pylist(), dtype=np.float32)
        numpy_ms = []
        for q in queries:
            t0 = time.perf_counter()
            vec = embedder.embed([q.text])[0]
            np.argsort(-(matrix @ vec))[: settings.top_k]
            numpy_ms.append((time.perf_counter() - t0) * 1000)

        # As `inkwell eval` does: the full top_k ranking, no answer-context rules.
        depth = settings.replace(threshold=0.0, min_chunks=0, max_chunks=settings.top_k)
        reports = []
        for name, mode, fusion in CONFIGS:
            config = depth.replace(retrieval_mode=mode, fusion=fusion)
            reports.append(
                run_eval(
                    queries,
                    qrels,
                    lambda text, config=config: [
                        (h.post_id, h.text) for h in search(text, config, store=store, embedder=embedder).hits
                    ],
                    k=10,
                    name=name,
                )
            )
        rerank_reports = []
        if args.rerank:
            top_n = args.rerank_top_n or depth.rerank_top_n
            rerank_reports = rerank_table(
                queries[: args.rerank_queries], qrels, depth.replace(rerank_top_n=top_n), store, embedder
            )

    figures.update(
        search_p50_ms=percentile(search_ms, 50),
        search_p95_ms=percentile(search_ms, 95),
        numpy_p50_ms=percentile(numpy_ms, 50),
        numpy_p95_ms=percentile(numpy_ms, 95),
    )
    for quality in reports:
        key = quality.name.split()[0] + ("_rrf" if quality.name.endswith("RRF") else "")
        figures[f"{key}_ndcg10"] = quality.means["ndcg@10"]
        figures[f"{key}_recall10"] = quality.means["recall@10"]
        figures[f"{key}_mrr10"] = quality.means["mrr@10"]
        figures[f"{key}_p50_ms"] = quality.means["latency_p50_ms"]
    print()
    if report.chunks_embedded == 0 and report.count("unchanged"):
        print("(the table in --data-dir was already ingested: the ingest figures below measure a no-op)")
    print(f"ingest         {ingest_s:8.1f} s   {n_chunks} chunks   {figures['chunks_per_s']:.1f} chunks/s")
    print(
        f"  baseline     embedder alone {raw_rate:.1f} chunks/s → pipeline runs at "
        f"{figures['chunks_per_s'] / raw_rate:.2f}× the embedder's speed ({report.summary()})"
    )
    print(
        f"re-ingest      {figures['reingest_s']:8.1f} s   {again.chunks_embedded} chunks embedded "
        f"({figures['reingest_s'] / ingest_s:.3f}× the first ingest)"
    )
    print(
        f"search (dense) p50 {figures['search_p50_ms']:.1f} ms  p95 {figures['search_p95_ms']:.1f} ms "
        f"over {len(queries)} queries (embedding included)"
    )
    print(
        f"  baseline     numpy exact p50 {figures['numpy_p50_ms']:.1f} ms  p95 {figures['numpy_p95_ms']:.1f} ms "
        f"→ ratio p50 {figures['search_p50_ms'] / figures['numpy_p50_ms']:.2f}×"
    )
    print()
    print(f"Retrieval quality on SciFact (top_k {settings.top_k}; baseline: the first row)")
    print(quality_table(reports))
    print()
    print(format_table(reports))
    fts = figures["fts_ndcg10"]
    verdict = "within" if abs(fts - BEIR_BM25_NDCG10) <= BM25_TOLERANCE else "OUTSIDE"
    print(
        f"\nBM25 check: fts nDCG@10 {fts:.3f} vs BEIR paper BM25 {BEIR_BM25_NDCG10:.3f} "
        f"(difference {fts - BEIR_BM25_NDCG10:+.3f}, {verdict} ±{BM25_TOLERANCE})"
    )
    if rerank_reports:
        n, top_n = rerank_reports[0].n_queries, args.rerank_top_n or settings.rerank_top_n
        print(f"\nReranking on the first {n} SciFact queries (rerank_top_n {top_n}, built-in SmolLM2-135M)")
        print(quality_table(rerank_reports))
        for quality in rerank_reports:
            key = "rerank_subset_" + quality.name.split()[0].replace("+", "_")
            figures[f"{key}_ndcg10"] = quality.means["ndcg@10"]
            figures[f"{key}_p50_ms"] = quality.means["latency_p50_ms"]
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


def rerank_table(
    queries: list[Query],
    qrels: dict[str, dict[str, int]],
    settings: Settings,
    store: Store,
    embedder: Embedder,
) -> list[EvalReport]:
    """dense, hybrid and hybrid + llm rerank on the same queries (reranking is too slow for all 300)."""
    reports = []
    for name, mode, reranker in RERANK_CONFIGS:
        config = settings.replace(retrieval_mode=mode, reranker=reranker)
        prepare_reranker(config)  # start the built-in model before the clock
        failed: list[str] = []

        def retrieve(text: str, config: Settings = config, failed: list[str] = failed) -> list:
            result = search(text, config, store=store, embedder=embedder)
            failed.extend(n for n in result.notes if "failed" in n)
            return [(h.post_id, h.text) for h in result.hits]

        reports.append(run_eval(queries, qrels, retrieve, k=10, name=name))
        if failed:
            print(f"{name}: reranking failed on {len(failed)} queries: {failed[0]}", file=sys.stderr)
    return reports


def quality_table(reports: list) -> str:
    """nDCG@10, recall@10 and p50 latency per configuration, each with its ratio to the first row."""
    base = reports[0].means
    lines = [
        f"{'config':<14} {'nDCG@10':>8} {'×base':>6} {'recall@10':>10} {'×base':>6} {'p50 ms':>8} {'×base':>6}",
    ]
    for quality in reports:
        m = quality.means
        lines.append(
            f"{quality.name:<14} {m['ndcg@10']:8.3f} {m['ndcg@10'] / base['ndcg@10']:6.2f} "
            f"{m['recall@10']:10.3f} {m['recall@10'] / base['recall@10']:6.2f} "
            f"{m['latency_p50_ms']:8.1f} {m['latency_p50_ms'] / base['latency_p50_ms']:6.2f}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
