"""Collections routing on the demo eval set: router accuracy, how often it routes, and quality on vs off.

Run: `.venv/bin/python bench/routing.py` (ingests data/demo/posts into a temporary dir; --data-dir keeps it).

Each query is labelled with the collections of its relevant posts (qrels + the posts table): `primary`
is the collection of its most relevant posts, `all` every collection holding a relevant post. Printed:
- the nearest-chunk similarity per query and collection, and the default router's decision with an
  example rules file;
- per configuration (routing off; nearest chunk per collection, the shipped signal, and the centroid,
  the mean chunk vector, each at several margins; each with the example rules at the default margin):
  how often it routed / stayed unsure, best-guess accuracy against `primary`,
  routes that were safe (every relevant post inside the chosen collection) or hid a relevant post, and
  nDCG@10 / recall@10 through `inkwell eval`'s code path (the default hybrid retrieval, full ranking).
Figures, not asserts.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from core.config import Settings
from core.embed import embed_query, get_embedder, relevance_scale, rescale
from core.evaluate import format_table, load_qrels, load_queries, percentile, run_eval
from core.ingest import ingest_paths
from core.search import Route, route_and_search, search
from core.search.route import ROUTE_MARGIN, collection_vectors, decide, parse_rules
from core.store import Store

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
MARGINS = [0.10, 0.15, 0.20, 0.25, 0.30, ROUTE_MARGIN]
# What the demo's author might plausibly write, without looking at the eval set.
EXAMPLE_RULES = """
[projects]
keywords = ["build log", "workbench", "sawmill", "lumber", "board", "bench", "table", "desk", "stool"]

[books]
keywords = ["book", "book notes", "Krenov", "Pye", "Crawford", "Solnit"]
"""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-dir", type=Path, help="keep the demo table here (default: a temporary dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="inkwell-routing-") as tmp:
        run(args.data_dir or Path(tmp) / "db")


def run(data_dir: Path) -> None:
    settings = Settings.load({"data_dir": data_dir}, environ={})
    store = Store(settings.data_dir)
    embedder = get_embedder(settings)
    report = ingest_paths([DEMO / "posts"], settings, store=store, embedder=embedder)
    print(f"demo: {report.summary()}")
    queries, qrels = load_queries(DEMO / "eval" / "queries.jsonl"), load_qrels(DEMO / "eval" / "qrels.tsv")
    post_collection = {row["post_id"]: row["collection"] for row in store.list_posts()}
    labels = {q.id: _labels(qrels.get(q.id, {}), post_collection) for q in queries}

    started = time.perf_counter()
    index = collection_vectors(store)
    index_ms = (time.perf_counter() - started) * 1000
    scale = relevance_scale(embedder.model_id)
    signals: dict[str, dict[str, dict[str, float]]] = {"nearest": {}, "centroid": {}}
    route_ms = []
    for q in queries:
        t0 = time.perf_counter()
        vector = embed_query(embedder, q.text)
        nearest = index.nearest(vector)
        route_ms.append((time.perf_counter() - t0) * 1000)
        signals["nearest"][q.id] = {
            c: rescale(float(v), scale) for c, v in zip(index.names, nearest, strict=True)
        }
        centroid = index.centroids @ vector
        signals["centroid"][q.id] = {
            c: rescale(float(v), scale) for c, v in zip(index.names, centroid, strict=True)
        }
    print(
        f"collection vectors: {index.chunks} chunks, read in {index_ms:.1f} ms (then cached per table version)"
    )
    print(f"question embedding + similarities alone: p50 {percentile(route_ms, 50):.1f} ms")
    # End to end: route_and_search embeds the question once for both, so routing costs the table lookups.
    plain_ms, routed_ms = [], []
    for _ in range(3):
        for q in queries:
            t0 = time.perf_counter()
            search(q.text, settings, store=store, embedder=embedder)
            plain_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            route_and_search(q.text, settings, store=store, embedder=embedder)
            routed_ms.append((time.perf_counter() - t0) * 1000)
    print(
        f"search p50 {percentile(plain_ms, 50):.1f} ms; route_and_search p50 {percentile(routed_ms, 50):.1f} ms "
        f"(3 × {len(queries)} questions, interleaved)"
    )

    example, problems = parse_rules(EXAMPLE_RULES, index.names)
    assert not problems, problems
    configs: dict[str, dict[str, Route | None]] = {"routing off": {q.id: None for q in queries}}
    for signal, similarity in signals.items():
        for margin in MARGINS:
            configs[f"{signal} m={margin:.2f}"] = {
                q.id: decide(similarity[q.id], {}, margin) for q in queries
            }
        configs[f"rules+{signal} m={ROUTE_MARGIN:.2f}"] = {
            q.id: decide(similarity[q.id], example.matches(q.text), ROUTE_MARGIN) for q in queries
        }
    similarity = signals["nearest"]

    print(
        "\nper query (primary | all relevant collections: nearest-chunk similarity → rules+nearest decision)"
    )
    rules_config = configs[f"rules+nearest m={ROUTE_MARGIN:.2f}"]
    for q in queries:
        primary, every = labels[q.id]
        sims = " ".join(f"{c}={s:.2f}" for c, s in sorted(similarity[q.id].items(), key=lambda x: -x[1]))
        decision = rules_config[q.id]
        print(f"  {q.id:>4} {','.join(primary):<10}| {','.join(every):<19} {sims}  → {decision.summary()}")

    depth = settings.replace(threshold=0.0, min_chunks=0, max_chunks=settings.top_k)
    cache: dict[tuple[str, tuple[str, ...]], list[tuple[str, str]]] = {}

    def retrieve(text: str, routes: dict[str, Route | None]) -> list[tuple[str, str]]:
        query_id = next(q.id for q in queries if q.text == text)
        decision = routes[query_id]
        only = tuple(decision.collections) if decision is not None else ()
        if (text, only) not in cache:
            hits = search(text, depth, store=store, embedder=embedder, collections=list(only) or None).hits
            cache[(text, only)] = [(h.post_id, h.text) for h in hits]
        return cache[(text, only)]

    reports = [
        run_eval(queries, qrels, lambda text, r=routes: retrieve(text, r), k=10, name=name)
        for name, routes in configs.items()
    ]
    print("\nrouter (n = 15 queries)")
    print(
        f"  {'config':<30} routed unsure  guess=primary  guess∈all  safe routes  routes hiding a relevant post"
    )
    for name, routes in configs.items():
        if name == "routing off":
            continue
        print("  " + _router_row(name, routes, labels))
    print("\nquality (latency columns are cached searches here; see routing cost above)")
    print(format_table(reports, baseline="routing off"))


def _labels(relevant: dict[str, int], post_collection: dict[str, str]) -> tuple[list[str], list[str]]:
    positive = {doc: grade for doc, grade in relevant.items() if grade > 0}
    if not positive:
        return [], []
    best = max(positive.values())
    primary = sorted({post_collection.get(d, "?") for d, g in positive.items() if g == best})
    return primary, sorted({post_collection.get(d, "?") for d in positive})


def _router_row(name: str, routes: dict[str, Route | None], labels: dict[str, tuple[list, list]]) -> str:
    decisions = [(routes[qid], labels[qid]) for qid in routes]
    routed = [(d, lab) for d, lab in decisions if d is not None and d.routed]
    unsure = sum(1 for d, _ in decisions if d is not None and not d.routed)
    guess_primary = sum(1 for d, (primary, _) in decisions if d is not None and d.guess in primary)
    guess_any = sum(1 for d, (_, every) in decisions if d is not None and d.guess in every)
    safe = sum(1 for d, (_, every) in routed if set(every) <= set(d.collections))
    hiding = _ids([qid for qid in routes if routes[qid] and routes[qid].routed], routes, labels)
    n = len(decisions)
    return (
        f"{name:<30} {len(routed):>6} {unsure:>6}  {guess_primary:>2}/{n} ({guess_primary / n:.0%})"
        f"   {guess_any:>2}/{n}      {safe:>2}/{len(routed):<2}       {hiding}"
    )


def _ids(
    routed_ids: Sequence[str], routes: dict[str, Route | None], labels: dict[str, tuple[list, list]]
) -> str:
    hiding = [qid for qid in routed_ids if not set(labels[qid][1]) <= set(routes[qid].collections)]
    return ", ".join(hiding) or "none"


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
