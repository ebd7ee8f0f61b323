"""Document-level views on the demo blog: post rankings, context diversity, and what post vectors cost.

Run: `.venv/bin/python bench/posts.py` (ingests data/demo/posts into a temporary LanceDB table with the
default settings and the bundled embedder; about a minute on 2 cores).

1. "Which posts are about X": post-level nDCG@10, recall@10 and MRR@10 over the demo eval set
   (data/demo/eval: 15 queries, post-level graded qrels) for
   - the current chunk-based post rankings (a post ranks where its best chunk ranks, as `inkwell eval`
     scores them: core/evaluate/metrics.py doc_ranking) from dense search and from the default hybrid search;
   - core/search/posts.py scorings: "post" (mean-pooled post vector), "chunk" (best chunk cosine, computed
     exactly), "both" (their mean).
2. Context diversity: for each query, the default retrieval (hybrid, threshold rules), then the answer
   context (core/answer/generate.py fit_context) with max_chunks_per_post 0 (no cap) / 2 / 3 / 4, at the
   built-in model's budget (1,200 tokens) and at 6,000. Reported: chunks in the context, distinct posts,
   distinct relevant posts (qrels), graded relevant-post coverage (Σ grades of relevant posts in the
   context / Σ grades of the query's relevant posts), and evidence coverage: the share of the
   quotes below (1-3 per question: every fact it asks for, taken from the posts) that are in the
   context, the share of questions with all of them, and the share of the eval set's own `evidence`
   quotes (queries.jsonl) in the context.
3. Cost: post_vectors() (read every chunk vector, mean per post) on the demo table and on a synthetic
   table of SciFact's size (5,183 chunks, 384 dims, random unit vectors, ~2.6 chunks per post), and a
   whole posts_about call on the demo beside the default search alone (its baseline).

Figures, not asserts; timings on a shared 2-core machine are noisy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from core.answer.generate import BUILTIN_BUDGET_CAP, fit_context
from core.config import Settings
from core.embed import get_embedder
from core.evaluate import evidence_found, load_qrels, load_queries
from core.evaluate.metrics import doc_ranking, mrr_at_k, ndcg_at_k, recall_at_k
from core.ingest import ingest_paths
from core.search import posts_about, search
from core.search.posts import POST_WEIGHT, best_by_post, post_vectors, rank_posts
from core.store import Store

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
CAPS = (0, 2, 3, 4)
BUDGETS = (BUILTIN_BUDGET_CAP, 6_000)
# The facts each demo question needs, quoted from the posts (matching ignores case and whitespace).
EVIDENCE = {
    "q1": [
        "On January 2, 2020, I deleted my Instagram account",
        "I have not missed Instagram for a single day",
    ],
    "q2": [
        "This blog is my version of those notebooks",
        "I want to find out what I think when nobody is waiting",
    ],
    "q3": [
        "a good maker spends more time choosing a board than cutting",
        "Before I look at the face of a board, I look at its end",
        "I pass on a board if it has",
    ],
    "q4": [
        "These are the books that did the most to change how I work and live",
        "The first woodworking book Ezra handed me",
    ],
    "q5": [
        "Ezra has agreed, mostly out of curiosity I think, to teach me",
        "Ezra does not believe in lectures",
        "When I ask a question, he usually answers with a question",
    ],
    "q6": [
        "I do see something new, every single time, precisely because the route is the same",
        "the only rule I am strict about: no headphones",
    ],
    "q7": [
        "A glue-up is a deploy you cannot roll back",
        "Ezra can read a board the way my old tech lead could read a stack trace",
    ],
    "q8": ["After five weeks and 61 hours", "$212"],
    "q9": ["one plain three-by-five index card", "at most, three things I intend to do the next day"],
    "q10": [
        "Comment sections reward the fastest reply, not the most considered one",
        "a comment system would mean adding both",
    ],
    "q11": ["I want the wood at 6 to 8 percent moisture content"],
    "q12": [
        "It is a willingness to let the work tell you how long it needs",
        "The point is to choose it on your own terms, slowly",
    ],
    "q13": ["On January 2, 2020, I deleted my Instagram account", "About 1 hour 50 of that was Instagram"],
    "q14": ["a letter takes time to write, and so I only say what I mean", "letters are objects"],
    "q15": ["It took 146 hours over about eight months", "for Daniel and Priya Okafor"],
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-dir", type=Path, help="keep the demo table here (default: a temporary dir)")
    args = parser.parse_args()
    queries = load_queries(DEMO / "eval" / "queries.jsonl")
    qrels = load_qrels(DEMO / "eval" / "qrels.tsv")
    with tempfile.TemporaryDirectory(prefix="inkwell-posts-") as tmp:
        settings = Settings.load({"data_dir": args.data_dir or Path(tmp) / "db"}, environ={})
        store = Store(settings.data_dir)
        embedder = get_embedder(settings)
        report = ingest_paths([DEMO / "posts"], settings, store=store, embedder=embedder)
        n_posts, n_chunks = store.counts()
        print(f"demo blog: {n_posts} posts, {n_chunks} chunks ({report.summary()}); {len(queries)} queries")
        check_evidence(store, queries)
        post_rankings(queries, qrels, settings, store, embedder)
        context_diversity(queries, qrels, settings, store, embedder)
        cost(settings, store, embedder, Path(tmp) / "synthetic")


def check_evidence(store: Store, queries) -> None:
    """Every quote must be in some chunk, or the evidence figures would be meaningless."""
    texts = [row["text"] for row in store.list_chunks(columns=["text"])]
    quotes = [q for quotes in EVIDENCE.values() for q in quotes] + [
        q for query in queries for q in query.evidence
    ]
    present = set(evidence_found(texts, quotes, len(texts)))
    missing = [q for q in quotes if q not in present]
    if missing:
        print(f"WARNING: {len(missing)} evidence quote(s) are in no chunk: {missing}")


def post_rankings(queries, qrels, settings: Settings, store: Store, embedder) -> None:
    depth = settings.replace(threshold=0.0, min_chunks=0, max_chunks=settings.top_k)  # as `inkwell eval`
    views = post_vectors(store)
    dense = {q.id: search(q.text, depth, store=store, embedder=embedder, mode="dense").hits for q in queries}
    hybrid = {q.id: search(q.text, settings, store=store, embedder=embedder).candidates for q in queries}
    every = {
        q.id: rank_posts(embedder.embed([q.text])[0], views, "post", None, best_by_post(hybrid[q.id]))
        for q in queries
    }

    def combined(weight: float):
        def rank(query) -> list[str]:
            matches = every[query.id]
            best = max(m.post_similarity for m in matches)
            score = {
                m.post_id: weight * m.post_similarity / best + (1 - weight) * m.retrieval_relevance
                for m in matches
            }
            return sorted(score, key=lambda p: -score[p])

        return rank

    rankers = {
        "chunks, dense search": lambda q: doc_ranking([h.post_id for h in dense[q.id]]),
        "chunks, hybrid (now)": lambda q: doc_ranking([h.post_id for h in hybrid[q.id]]),
        "post vector": lambda q: [m.post_id for m in every[q.id]],
        "nearest chunk (exact)": lambda q: [
            m.post_id for m in sorted(every[q.id], key=lambda m: -m.chunk_similarity)
        ],
        "combined 0.25": combined(0.25),
        f"combined {POST_WEIGHT} (default)": lambda q: [
            m.post_id
            for m in rank_posts(
                embedder.embed([q.text])[0], views, "combined", None, best_by_post(hybrid[q.id])
            )
        ],
        "combined 0.75": combined(0.75),
    }
    print("\n1. Which posts are about X: post-level ranking on the demo eval set (judged queries only)")
    print(f"{'ranking':<24} {'nDCG@10':>8} {'recall@10':>10} {'MRR@10':>7} {'recall@3':>9}")
    for name, ranker in rankers.items():
        scores: dict[str, list[float]] = {"ndcg": [], "recall": [], "mrr": [], "recall3": []}
        for query in queries:
            relevant = qrels.get(query.id)
            if not relevant:
                continue
            ranked = ranker(query)
            scores["ndcg"].append(ndcg_at_k(ranked, relevant, 10))
            scores["recall"].append(recall_at_k(ranked, relevant, 10))
            scores["mrr"].append(mrr_at_k(ranked, relevant, 10))
            scores["recall3"].append(recall_at_k(ranked, relevant, 3))
        means = {key: statistics.fmean(values) for key, values in scores.items()}
        print(
            f"{name:<24} {means['ndcg']:8.3f} {means['recall']:10.3f} {means['mrr']:7.3f} {means['recall3']:9.3f}"
        )
    matches = posts_about(queries[0].text, settings, store=store, embedder=embedder)  # the real code path
    print(f"   (posts_about for {queries[0].id}: {', '.join(m.post_id for m in matches[:3])}, …)")


def context_diversity(queries, qrels, settings: Settings, store: Store, embedder) -> None:
    retrieved = {q.id: search(q.text, settings, store=store, embedder=embedder).hits for q in queries}
    print(
        f"\n2. Context diversity: default retrieval ({settings.retrieval_mode}, threshold {settings.threshold}, "
        f"{settings.min_chunks}-{settings.max_chunks} chunks), means over {len(queries)} queries"
    )
    print(
        f"{'budget':>6} {'cap':>4} {'chunks':>7} {'posts':>6} {'relevant posts':>15} "
        f"{'graded coverage':>16} {'evidence':>9} {'all evidence':>13} {'eval evidence':>14}"
    )
    for budget in BUDGETS:
        for cap in CAPS:
            rows = [context_figures(q, retrieved[q.id], qrels.get(q.id, {}), budget, cap) for q in queries]
            mean = {key: _mean([row[key] for row in rows]) for key in rows[0]}
            print(
                f"{budget:>6} {cap or 'none':>4} {mean['chunks']:7.1f} {mean['posts']:6.2f} "
                f"{mean['relevant']:15.2f} {mean['graded']:16.3f} {mean['evidence']:9.3f} {mean['complete']:13.3f} "
                f"{mean['eval']:14.3f}"
            )


def context_figures(query, hits, relevant: dict[str, int], budget: int, cap: int) -> dict[str, float]:
    _, used = fit_context(hits, budget, cap)
    posts = {h.post_id for h in used}
    texts = [h.text for h in used]
    quotes = EVIDENCE.get(query.id, [])
    present = set(evidence_found(texts, [*quotes, *query.evidence], len(texts)))
    found = [q in present for q in quotes]
    eval_found = [q in present for q in query.evidence]
    total_grade = sum(relevant.values()) or 1
    return {
        "chunks": len(used),
        "posts": len(posts),
        "relevant": len(posts & relevant.keys()),
        "graded": sum(g for p, g in relevant.items() if p in posts) / total_grade,
        "evidence": sum(found) / len(found) if found else 0.0,
        "complete": float(all(found)) if found else 0.0,
        # The eval set's own quotes, where queries.jsonl has them (NaN where it has none).
        "eval": sum(eval_found) / len(eval_found) if eval_found else float("nan"),
    }


def _mean(values: list[float]) -> float:
    present = [v for v in values if v == v]  # NaN: not measured for that query
    return statistics.fmean(present) if present else float("nan")


def cost(settings: Settings, store: Store, embedder, synthetic_dir: Path) -> None:
    print("\n3. Cost of post vectors (computed from the chunks table on each call)")
    print(f"   demo ({store.counts()[1]} chunks): {timed(lambda: post_vectors(store))}")
    question = "How does she pick wood at the sawmill?"
    print(
        f"   demo, the default search alone: {timed(lambda: search(question, settings, store=store, embedder=embedder))}"
    )
    print(
        "   demo, posts_about (search + post vectors + ranking + best chunks): "
        + timed(lambda: posts_about(question, settings, store=store, embedder=embedder))
    )
    rng = np.random.default_rng(0)
    n_chunks, dim = 5_183, 384
    vectors = rng.normal(size=(n_chunks, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = [
        {
            "chunk_id": f"c{i}",
            "post_id": f"p{i * 10 // 26}",
            "idx": i,
            "title": f"Post {i * 10 // 26}",
            "collection": "synthetic",
            "text": "word " * 250,  # ~ a 300-token chunk, so reads are as wide as real ones
            "keywords": [],
            "vector": vectors[i].tolist(),
        }
        for i in range(n_chunks)
    ]
    synthetic = Store(synthetic_dir)
    posts = [{"post_id": pid} for pid in dict.fromkeys(r["post_id"] for r in rows)]
    synthetic.replace_posts(posts, rows, "synthetic", dim)
    synthetic.optimize()
    views = post_vectors(synthetic)
    print(
        f"   synthetic ({n_chunks} chunks, {len(views.post_ids)} posts): {timed(lambda: post_vectors(synthetic))}"
    )
    query = vectors[0]
    print(
        f"   ranking them for one question vector, top 10: {timed(lambda: rank_posts(query, views, 'post', 10))}"
    )


def timed(fn, runs: int = 20) -> str:
    fn()  # warm-up
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return f"median {statistics.median(times):.1f} ms, max {max(times):.1f} ms over {runs} runs"


if __name__ == "__main__":
    main()
