"""A million chunks: Inkwell's own store at 2k, 50k, 200k and 1M chunks (`make bench-scale`).

The tables are synthetic but cluster like real ones: every sentence of the demo posts is embedded with
the default embedder (MiniLM), and each synthetic chunk is one of those vectors plus a share of another
sentence of the same collection plus Gaussian noise, renormalised; its text is those two sentences, so
the keyword index sees real words. Ten chunks make a post, in the demo's collections. Rows are written
in Inkwell's schema through the store's own tables (`Store.ensure_chunks_table`, `Store.posts`) and
indexed by `Store.optimize()`, as an ingest would.

For each size, in one run: dense and hybrid search p50/p95 as Inkwell runs them (`Store.vector_search`,
`core.search.search`), recall@10 of the dense search against exact search on the same queries (LanceDB
with the index bypassed), FAISS flat (IndexFlatIP, exact) on the same vectors as the reference (timed
in alternating blocks with the dense search, three rounds, so both see the same stretch of time), the
index build (the first `optimize()`), a one-post edit (`ingest_posts` of one changed post, undone after),
a cold `inkwell search` in a fresh process (wall time and peak memory) and the size on disk. A fresh
process's time is mostly Python, torch and the model loading, which other work on a shared machine
slows by seconds from one run to the next; so the cold search of the largest table is also compared
with the smallest's in alternating pairs (--cold-pairs), and the median difference is the figure.

Tables are built once into --scratch (default /tmp/inkwell-scale) and reused; `--rebuild` starts over.
Usage: python bench/scale.py [--sizes 2000,50000,200000,1000000] [--queries 100]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.config import Settings  # noqa: E402
from core.embed import embed_query, get_embedder  # noqa: E402
from core.ingest import ingest_posts  # noqa: E402
from core.models import Block, Post  # noqa: E402
from core.parse import parse_paths  # noqa: E402
from core.search import search  # noqa: E402
from core.store import Store  # noqa: E402
from core.store.reads import scan  # noqa: E402
from core.store.schema import HIT, HIT_COLUMNS, packed_hit  # noqa: E402
from core.text import split_sentences  # noqa: E402

CHUNKS_PER_POST = 10
BATCH = 50_000
SIZES = (2_000, 50_000, 200_000, 1_000_000)


@dataclass
class Corpus:
    """The demo's sentences, their vectors and collections: what every synthetic chunk is made from."""

    texts: list[str]
    vectors: np.ndarray
    collections: list[str]
    terms: list[list[str]]


@dataclass
class Figures:
    chunks: int
    dense_p50_ms: float
    dense_p95_ms: float
    hybrid_p50_ms: float
    hybrid_p95_ms: float
    recall_at_10: float
    faiss_p50_ms: float
    dense_over_faiss: float
    index_build_s: float
    optimize_unchanged_s: float
    one_post_edit_s: float
    cold_search_s: float
    cold_search_peak_mb: float
    disk_mb: float
    vector_index: str


def demo_corpus(embedder) -> Corpus:
    parsed = parse_paths([ROOT / "data" / "demo" / "posts"])
    texts, collections = [], []
    for post in parsed.posts:
        for block in post.blocks:
            for sentence in split_sentences(block.text):
                if len(sentence.split()) >= 5:
                    texts.append(sentence)
                    collections.append(post.collection)
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    terms = [sorted(set(re.findall(r"[a-z]{4,}", t.lower()))) for t in texts]
    return Corpus(texts, vectors, collections, terms)


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def synthetic_batch(corpus: Corpus, first_post: int, posts: int, rng: np.random.Generator, schema: pa.Schema):
    """`posts` posts of CHUNKS_PER_POST chunks (chunk rows, post rows), numbered from `first_post`."""
    by_collection: dict[str, np.ndarray] = {}
    for i, c in enumerate(corpus.collections):
        by_collection.setdefault(c, []).append(i)  # type: ignore[union-attr]
    names = sorted(by_collection)
    pools = [np.asarray(by_collection[n]) for n in names]
    post_coll = rng.integers(len(names), size=posts)
    n = posts * CHUNKS_PER_POST
    chunk_coll = np.repeat(post_coll, CHUNKS_PER_POST)
    first = np.empty(n, np.int64)
    second = np.empty(n, np.int64)
    for ci, pool in enumerate(pools):
        mask = chunk_coll == ci
        first[mask] = pool[rng.integers(len(pool), size=int(mask.sum()))]
        second[mask] = pool[rng.integers(len(pool), size=int(mask.sum()))]
    dim = corpus.vectors.shape[1]
    noise = rng.normal(size=(n, dim)).astype(np.float32) * (rng.uniform(0.3, 0.8, size=(n, 1)) / np.sqrt(dim))
    mix = rng.uniform(0.1, 0.5, size=(n, 1)).astype(np.float32)
    vectors = _unit(corpus.vectors[first] + mix * corpus.vectors[second] + noise.astype(np.float32))
    post_ids = [f"syn-{first_post + p:07d}" for p in range(posts)]
    chunk_post = np.repeat(np.arange(posts), CHUNKS_PER_POST)
    texts = [f"{corpus.texts[a]} {corpus.texts[b]}" for a, b in zip(first, second, strict=True)]
    titles = [f"Synthetic post {first_post + p}" for p in range(posts)]
    coll_names = [names[c] for c in post_coll]
    chunk_ids = [f"{post_ids[p]}#{i % CHUNKS_PER_POST}" for i, p in enumerate(chunk_post)]
    chunk_titles = pa.array([titles[p] for p in chunk_post])
    text_arr = pa.array(texts)
    chunks = pa.table(
        {
            "chunk_id": pa.array(chunk_ids),
            "post_id": pa.array([post_ids[p] for p in chunk_post]),
            "idx": pa.array(np.tile(np.arange(CHUNKS_PER_POST, dtype=np.int32), posts)),
            "title": chunk_titles,
            "collection": pa.array([coll_names[p] for p in chunk_post]),
            "date": pa.array(["2024-01-01"] * n),
            "section": pa.array([""] * n),
            "text": text_arr,
            "keywords": pa.array([[] for _ in range(n)], pa.list_(pa.string())),
            "tokens": pa.array(np.full(n, 60, np.int32)),
            "embed_hash": pa.array([f"syn:{c}" for c in chunk_ids]),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), dim),
            "search_text": pc.binary_join_element_wise(chunk_titles, text_arr, " "),
        }
    )
    # The packed `hit` column (core/store/schema.py HIT), as the store computes it on every write.
    fields = chunks.select(list(HIT_COLUMNS)).to_pylist()
    chunks = chunks.append_column(HIT, pa.array([packed_hit(row) for row in fields], pa.list_(pa.string())))
    chunks = chunks.cast(schema)
    raw = ["\n\n".join(texts[p * CHUNKS_PER_POST : (p + 1) * CHUNKS_PER_POST]) for p in range(posts)]
    terms = [
        sorted(
            {t for i in range(p * CHUNKS_PER_POST, (p + 1) * CHUNKS_PER_POST) for t in corpus.terms[first[i]]}
        )
        for p in range(posts)
    ]
    post_rows = pa.table(
        {
            "post_id": pa.array(post_ids),
            "title": pa.array(titles),
            "collection": pa.array(coll_names),
            "date": pa.array(["2024-01-01"] * posts),
            "tags": pa.array([[] for _ in range(posts)], pa.list_(pa.string())),
            "source": pa.array([f"synthetic/{p}.md" for p in post_ids]),
            "format": pa.array(["markdown"] * posts),
            "raw": pa.array(raw),
            "content_hash": pa.array([f"syn:{p}" for p in post_ids]),
            "n_chunks": pa.array(np.full(posts, CHUNKS_PER_POST, np.int32)),
            "ingested_at": pa.array(["2024-01-01T00:00:00"] * posts),
            "terms": pa.array(terms, pa.list_(pa.string())),
        }
    )
    return chunks, post_rows


def build(size: int, data_dir: Path, corpus: Corpus, model_id: str) -> dict:
    """Write `size` chunks through the store and index them with Store.optimize(); returns timings."""
    shutil.rmtree(data_dir, ignore_errors=True)
    store = Store(data_dir)
    dim = corpus.vectors.shape[1]
    table = store.ensure_chunks_table(model_id, dim)
    posts_table = store.posts
    rng = np.random.default_rng(size)
    started = time.perf_counter()
    per_batch = BATCH // CHUNKS_PER_POST
    post_batches = []

    def batches():
        for first in range(0, size // CHUNKS_PER_POST, per_batch):
            count = min(per_batch, size // CHUNKS_PER_POST - first)
            chunks, posts = synthetic_batch(corpus, first, count, rng, table.schema)
            post_batches.append(posts)
            yield from chunks.to_batches()

    # One add(): lance writes few large fragments, so the first optimize() has little to compact.
    table.add(pa.RecordBatchReader.from_batches(table.schema, batches()))
    posts_table.add(pa.concat_tables(post_batches))
    write_s = time.perf_counter() - started
    started = time.perf_counter()
    store.optimize()
    index_s = time.perf_counter() - started
    return {"write_s": write_s, "index_build_s": index_s}


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def queries(corpus: Corpus, count: int) -> tuple[list[str], np.ndarray]:
    """Questions near the content: a sentence's text, and its vector plus independent noise."""
    rng = np.random.default_rng(7)
    picks = rng.choice(len(corpus.texts), size=count, replace=count > len(corpus.texts))
    dim = corpus.vectors.shape[1]
    noise = rng.normal(size=(count, dim)).astype(np.float32) * (0.5 / np.sqrt(dim))
    return [corpus.texts[i] for i in picks], _unit(corpus.vectors[picks] + noise)


def timed(fn, items) -> tuple[list[float], list]:
    times, results = [], []
    for item in items:
        started = time.perf_counter()
        results.append(fn(item))
        times.append((time.perf_counter() - started) * 1000)
    return times, results


def dense_and_faiss(
    store: Store, vectors: np.ndarray, rounds: int = 3
) -> tuple[list[float], list, list[float]]:
    """Store.vector_search (top 10) and FAISS flat (IndexFlatIP, exact) on the same vectors, in
    alternating blocks (all queries dense, all FAISS, `rounds` times over): the two react differently
    to a busy machine (FAISS reads all the vectors per query and follows memory bandwidth; the dense
    search is small random reads), so the ratio is taken over the same stretch of time. Not query by
    query: after FAISS has swept its 1.5 GB through the CPU caches a dense search took 13 ms, against 8
    ms in a block of its own. FAISS runs with its own threads or one thread, whichever a first pass
    finds faster (threads pay off only on big tables).
    Returns (dense ms, dense rows of the first round, FAISS ms)."""
    import faiss

    table = store.chunks
    matrix = scan(table, ["vector"])["vector"].combine_chunks().flatten().to_numpy(zero_copy_only=False)
    matrix = np.ascontiguousarray(matrix, dtype=np.float32).reshape(-1, vectors.shape[1])
    index = faiss.IndexFlatIP(matrix.shape[1])
    index.add(matrix)
    del matrix
    speeds = {}
    for threads in {faiss.omp_get_max_threads(), 1}:
        faiss.omp_set_num_threads(threads)
        for q in vectors[:3]:  # warm up
            index.search(q[None, :], 10)
        speeds[threads] = np.median(timed(lambda q: index.search(q[None, :], 10), vectors[:20])[0])
    faiss.omp_set_num_threads(min(speeds, key=speeds.get))
    for q in vectors[:3]:  # warm up the open files
        store.vector_search(q, 10)
    dense_ms: list[float] = []
    faiss_ms: list[float] = []
    first: list = []
    for _ in range(rounds):
        times, rows = timed(lambda q: store.vector_search(q, 10), vectors)
        dense_ms += times
        first = first or rows
        faiss_ms += timed(lambda q: index.search(q[None, :], 10), vectors)[0]
    return dense_ms, first, faiss_ms


def exact_ids(store: Store, vectors: np.ndarray) -> list[set[str]]:
    table = store.chunks
    out = []
    for q in vectors:
        rows = (
            table.search(q)
            .distance_type("cosine")
            .bypass_vector_index()
            .limit(10)
            .select(["chunk_id"])
            .to_list()
        )
        out.append({r["chunk_id"] for r in rows})
    return out


def one_post_edit(store: Store, settings: Settings, embedder) -> float:
    """Re-ingest one stored post with changed text (as an author's edit would), then undo it."""
    demo = parse_paths([ROOT / "data" / "demo" / "posts" / "projects" / "walnut-porch-bench.md"]).posts[0]
    stamp = f"Edited at {time.time():.0f}."
    post = Post(
        post_id="syn-0000042",
        title=demo.title,
        blocks=[*demo.blocks, Block(stamp)],
        raw=demo.raw + stamp,
        source="edited.md",
        collection=store.get_post("syn-0000042")["collection"],
        date=demo.date,
    )
    started = time.perf_counter()
    report = ingest_posts([post], settings, store=store, embedder=embedder)
    seconds = time.perf_counter() - started
    assert [o.status for o in report.outcomes] == ["updated"], report.outcomes
    store.undo(report.change_id)
    return seconds


def cold_search(data_dir: Path, question: str) -> tuple[float, float]:
    """Wall seconds and peak MB of a fresh `inkwell search` process (embedder load included)."""
    wrapper = (
        "import resource, subprocess, sys, time; t = time.perf_counter(); "
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
        "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    cmd = [sys.executable, "-m", "core.cli", "search", question, "--data-dir", str(data_dir)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", wrapper, *cmd], check=True, capture_output=True, text=True, env=env, cwd=ROOT
    )
    wall, kb = out.stdout.split()
    return float(wall), int(kb) / 1024


def cold_difference(small: Path, large: Path, pairs: int) -> float:
    """Median over `pairs` of (cold search on `large` − cold search on `small`), run one after the other
    so that both of a pair see the same machine."""
    differences = []
    for i in range(pairs):
        question = f"how do I flatten a board with a hand plane ({i})"
        base, _ = cold_search(small, question)
        top, _ = cold_search(large, question)
        print(f"cold pair {i + 1}: {base:.2f} s / {top:.2f} s", flush=True)
        differences.append(top - base)
    return statistics.median(differences)


def disk_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def measure(
    size: int, scratch: Path, corpus: Corpus, embedder, n_queries: int, rebuild: bool, cold_runs: int
) -> Figures:
    data_dir = scratch / f"chunks-{size}"
    meta_path = scratch / f"chunks-{size}.json"
    if rebuild or not meta_path.exists():
        print(f"[{size}] building…", flush=True)
        meta = build(size, data_dir, corpus, embedder.model_id)
        meta_path.write_text(json.dumps(meta))
        print(
            f"[{size}] written in {meta['write_s']:.0f} s, indexed in {meta['index_build_s']:.0f} s",
            flush=True,
        )
    meta = json.loads(meta_path.read_text())
    settings = Settings(data_dir=str(data_dir))
    store = Store(data_dir)
    store.optimize()  # brings a table cached by an older version of the store up to date
    # Nothing new: the indices are recognised and kept (before issue 13 this rebuilt the vector index).
    started = time.perf_counter()
    store.optimize()
    optimize_s = time.perf_counter() - started
    index = next((ix for ix in store.chunks.list_indices() if list(ix.columns) == ["vector"]), None)
    texts, vectors = queries(corpus, n_queries)
    dense_t, dense, faiss_t = dense_and_faiss(store, vectors)
    hybrid_t, _ = timed(
        lambda i: search(
            texts[i], settings, store=store, embedder=embedder, mode="hybrid", query_vector=vectors[i]
        ),
        range(len(texts)),
    )
    exact = exact_ids(store, vectors)
    recall = statistics.mean(
        len({r["chunk_id"] for r in rows} & truth) / max(len(truth), 1)
        for rows, truth in zip(dense, exact, strict=True)
    )
    edit_s = one_post_edit(store, settings, embedder)
    # The median of a few runs: a fresh process's time is mostly loading Python and the model, which
    # other work on the machine slows unevenly.
    colds = sorted(cold_search(data_dir, texts[i]) for i in range(cold_runs))
    cold_s, cold_mb = colds[len(colds) // 2][0], max(mb for _, mb in colds)
    dense_p50, faiss_p50 = percentile(dense_t, 50), percentile(faiss_t, 50)
    return Figures(
        chunks=size,
        dense_p50_ms=dense_p50,
        dense_p95_ms=percentile(dense_t, 95),
        hybrid_p50_ms=percentile(hybrid_t, 50),
        hybrid_p95_ms=percentile(hybrid_t, 95),
        recall_at_10=recall,
        faiss_p50_ms=faiss_p50,
        dense_over_faiss=dense_p50 / faiss_p50,
        index_build_s=meta["index_build_s"],
        optimize_unchanged_s=optimize_s,
        one_post_edit_s=edit_s,
        cold_search_s=cold_s,
        cold_search_peak_mb=cold_mb,
        disk_mb=disk_mb(data_dir),
        vector_index=f"{index.index_type} ({index.num_segments} segment(s))" if index else "none (flat)",
    )


def table(rows: list[Figures]) -> str:
    head = "| | " + " | ".join(f"{r.chunks:,}" for r in rows) + " |"
    lines = [head, "|---" * (len(rows) + 1) + "|"]

    def line(label: str, fmt) -> None:
        lines.append(f"| {label} | " + " | ".join(fmt(r) for r in rows) + " |")

    line("vector index", lambda r: r.vector_index)
    line("dense search p50 / p95", lambda r: f"{r.dense_p50_ms:.1f} / {r.dense_p95_ms:.1f} ms")
    line("recall@10 vs exact", lambda r: f"{r.recall_at_10:.3f}")
    line("FAISS flat p50 (same vectors)", lambda r: f"{r.faiss_p50_ms:.1f} ms")
    line("dense p50 / FAISS flat p50", lambda r: f"{r.dense_over_faiss:.2f}×")
    line("hybrid search p50 / p95", lambda r: f"{r.hybrid_p50_ms:.1f} / {r.hybrid_p95_ms:.1f} ms")
    line("index build (first optimize)", lambda r: f"{r.index_build_s:.1f} s")
    line("optimize() with nothing new", lambda r: f"{r.optimize_unchanged_s:.2f} s")
    line("one-post edit (ingest + optimize)", lambda r: f"{r.one_post_edit_s:.2f} s")
    line(
        "cold `inkwell search`: wall / peak",
        lambda r: f"{r.cold_search_s:.1f} s / {r.cold_search_peak_mb:,.0f} MB",
    )
    line("disk", lambda r: f"{r.disk_mb:,.0f} MB")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--scratch", default="/tmp/inkwell-scale")
    parser.add_argument("--cold-runs", type=int, default=3, help="cold `inkwell search` runs per size")
    parser.add_argument("--cold-pairs", type=int, default=5, help="alternating smallest/largest cold runs")
    parser.add_argument("--rebuild", action="store_true", help="build the tables again")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    scratch = Path(args.scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    embedder = get_embedder(Settings(data_dir=str(scratch / "unused")))
    embed_query(embedder, "warm up")
    corpus = demo_corpus(embedder)
    print(f"{len(corpus.texts)} demo sentences embedded with {embedder.model_id}", flush=True)
    rows = []
    for size in sizes:
        figures = measure(size, scratch, corpus, embedder, args.queries, args.rebuild, args.cold_runs)
        print(json.dumps(asdict(figures)), flush=True)
        rows.append(figures)
    print()
    print(table(rows))
    if len(rows) > 1 and rows[0].chunks <= 2_000:
        base, top = rows[0], rows[-1]
        extra = cold_difference(
            scratch / f"chunks-{base.chunks}", scratch / f"chunks-{top.chunks}", args.cold_pairs
        )
        print(
            f"\n{top.chunks:,} chunks: dense p50 {top.dense_over_faiss:.2f}× FAISS flat (target ≤ 0.2) at "
            f"recall@10 {top.recall_at_10:.3f} (≥ 0.95); one-post edit {top.one_post_edit_s:.1f} s (≤ 10); "
            f"cold search {extra:+.2f} s against {base.chunks:,} chunks, median of {args.cold_pairs} "
            f"alternating pairs (≤ +1 s)"
        )
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=2))


if __name__ == "__main__":
    main()
