"""Retrieval evaluation: score ranked results against BEIR-style qrels (loaded by core/evaluate/loaders.py),
print and compare them.

Retrieval itself is injected as a callable, so the metric code never touches the store or the embedder and
can be tested with a plain dict standing in for a search engine. core/evaluate/compare.py runs real retrieval:
named configurations side by side (modes, fusion, reranker, chunk sizes).

Metric definitions follow trec_eval 9.x as wrapped by pytrec_eval, which is what BEIR reports
(`ndcg_cut.10`, `recall.10`), and BEIR's own `mrr` helper for MRR@10:

- relevant = the qrels docs with score > 0; their (graded) scores are the nDCG gains;
- recall@k = |relevant ∩ top-k| / |relevant|;
- MRR@10 = 1 / rank of the first relevant doc within the top 10, else 0;
- nDCG@10 = DCG / IDCG with DCG = Σ_{i=1..10} rel_i / log2(i + 1), LINEAR gain rel_i (not 2^rel - 1),
  and IDCG the DCG of all judged relevant docs sorted by grade, cut at the same depth;
- means are taken over judged queries only (pytrec_eval scores only queries present in the qrels).
"""

from __future__ import annotations

import math
import re
import statistics
import time
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

# MRR and nDCG are reported at a fixed depth of 10 (the BEIR headline numbers) whatever k recall uses.
FIXED_DEPTH = 10

Retriever = Callable[[str], Sequence[tuple[str, str]]]


@dataclass(frozen=True)
class Query:
    """One evaluation query. `evidence` holds quotes that a good top-k chunk should contain; `answer` is
    a reference answer (for answer metrics); `kind` labels a query (e.g. an off-topic one's category);
    `post` names the post that answers it (calibration builds small blogs from some posts with it)."""

    id: str
    text: str
    evidence: tuple[str, ...] = ()
    answer: str = ""
    kind: str = ""
    post: str = ""  # the post that answers it, as a path under its posts folder ("" when not given)


@dataclass
class QueryResult:
    query_id: str
    text: str
    ranked_docs: list[str]
    metrics: dict[str, float]
    latency_ms: float
    judged: bool = False
    # The evidence quotes found in the top-k chunks (a subset of the query's quotes).
    evidence_found: list[str] = field(default_factory=list)


@dataclass
class EvalReport:
    name: str
    k: int
    per_query: list[QueryResult]
    means: dict[str, float]
    n_queries: int
    n_judged: int
    n_evidence: int = 0


# --- metrics ----------------------------------------------------------------------------------------


def doc_ranking(chunk_post_ids: Sequence[str]) -> list[str]:
    """Collapse a chunk ranking into a post ranking: a post ranks where its best chunk ranks."""
    # dict keeps insertion order, so this is "first occurrence wins" with O(1) membership tests.
    return list(dict.fromkeys(chunk_post_ids))


def _top_k(ranked: Sequence[str], k: int) -> list[str]:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    # Deduplicate defensively: a doc listed twice must not earn its gain twice.
    return doc_ranking(ranked)[:k]


def _positive(relevant: Mapping[str, int]) -> dict[str, int]:
    return {doc: grade for doc, grade in relevant.items() if grade > 0}


def recall_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """|relevant ∩ top-k| / |relevant|; 0.0 when nothing is relevant (such queries are left out of means)."""
    rel = _positive(relevant)
    top = _top_k(ranked, k)
    if not rel:
        return 0.0
    return sum(1 for doc in top if doc in rel) / len(rel)


def mrr_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = FIXED_DEPTH) -> float:
    """Reciprocal rank of the first relevant doc within the top k, else 0.0."""
    rel = _positive(relevant)
    for rank, doc in enumerate(_top_k(ranked, k), start=1):
        if doc in rel:
            return 1.0 / rank
    return 0.0


def ndcg_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = FIXED_DEPTH) -> float:
    """nDCG@k exactly as trec_eval's `ndcg_cut` (pytrec_eval, hence BEIR) computes it.

    Gain is the qrels grade itself (linear), not 2^grade - 1 as in the Burges/LETOR variant: trec_eval
    says "gain values are the relevance values in the qrels file". The discount is log2(rank + 1), so
    rank 1 is undiscounted (trec_eval >= 9.0; older releases also left rank 2 undiscounted). IDCG is
    built from ALL judged relevant docs sorted by grade, not only the retrieved ones, so missing a
    relevant doc costs score. With binary qrels (SciFact) the two gain conventions coincide.
    """
    rel = _positive(relevant)
    top = _top_k(ranked, k)
    ideal = _dcg(sorted(rel.values(), reverse=True)[:k])
    if ideal == 0.0:
        return 0.0
    return _dcg([rel.get(doc, 0) for doc in top]) / ideal


def _dcg(gains: Sequence[float]) -> float:
    return sum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains, start=1))


_WHITESPACE = re.compile(r"\s+")


def normalise_quote(text: str) -> str:
    # NFKC folds non-breaking spaces and ligatures; casefold beats lower() for ß and friends.
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


def evidence_hit_at_k(chunk_texts: Sequence[str], evidence: Sequence[str], k: int) -> float | None:
    """1.0 if any of the top-k chunks contains any evidence quote, 0.0 if none does, None without evidence.

    k counts chunks here, not posts: the question is whether the passage the answer needs reached the
    prompt. Matching ignores case and whitespace differences, since chunking re-flows lines.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if not any(normalise_quote(e) for e in evidence):
        return None
    return 1.0 if evidence_found(chunk_texts, evidence, k) else 0.0


def evidence_found(chunk_texts: Sequence[str], evidence: Sequence[str], k: int) -> list[str]:
    """The evidence quotes (as given) that occur in one of the top-k chunks, matched as evidence_hit_at_k."""
    chunks = [normalise_quote(text) for text in chunk_texts[:k]]
    return [
        quote for quote in evidence if (q := normalise_quote(quote)) and any(q in chunk for chunk in chunks)
    ]


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0-100) with linear interpolation between ranks (numpy's default method)."""
    if not values:
        raise ValueError("percentile of an empty sequence")
    if not 0 <= p <= 100:
        raise ValueError(f"p must be within [0, 100], got {p}")
    ordered = sorted(values)
    position = (len(ordered) - 1) * p / 100
    lower = math.floor(position)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)


# --- running ----------------------------------------------------------------------------------------


def metric_names(k: int) -> tuple[str, str, str, str]:
    """Keys used in QueryResult.metrics and EvalReport.means: recall@k, mrr@10, ndcg@10, evidence_hit@k."""
    return f"recall@{k}", f"mrr@{FIXED_DEPTH}", f"ndcg@{FIXED_DEPTH}", f"evidence_hit@{k}"


def score_query(
    query: Query, hits: Sequence[tuple[str, str]], relevant: Mapping[str, int], k: int
) -> tuple[list[str], dict[str, float]]:
    """Post ranking and metrics for one query's ranked (post_id, chunk_text) hits."""
    recall_key, mrr_key, ndcg_key, evidence_key = metric_names(k)
    ranked = doc_ranking([post_id for post_id, _ in hits])
    metrics: dict[str, float] = {}
    if _positive(relevant):
        metrics[recall_key] = recall_at_k(ranked, relevant, k)
        metrics[mrr_key] = mrr_at_k(ranked, relevant, FIXED_DEPTH)
        metrics[ndcg_key] = ndcg_at_k(ranked, relevant, FIXED_DEPTH)
    hit = evidence_hit_at_k([text for _, text in hits], query.evidence, k)
    if hit is not None:
        metrics[evidence_key] = hit
    return ranked, metrics


def run_eval(
    queries: Sequence[Query],
    qrels: Mapping[str, Mapping[str, int]],
    retrieve: Retriever,
    k: int = 10,
    name: str = "default",
    after_each: Callable[[QueryResult], None] | None = None,
) -> EvalReport:
    """Run every query through `retrieve` and score it (`after_each` sees each result, outside the clock).

    `retrieve` returns ranked (post_id, chunk_text) pairs; it should return enough chunks for k distinct
    posts, since several chunks of one post collapse into a single rank. Every query is retrieved and
    timed, but only those with a relevant doc in `qrels` count towards the ranking-metric means (as
    in BEIR), and only those with evidence towards the evidence mean.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    results: list[QueryResult] = []
    for query in queries:
        started = time.perf_counter()
        hits = list(retrieve(query.text))
        latency_ms = (time.perf_counter() - started) * 1000
        relevant = qrels.get(query.id, {})
        ranked, metrics = score_query(query, hits, relevant, k)
        judged = bool(_positive(relevant))
        found = evidence_found([text for _, text in hits], query.evidence, k)
        results.append(QueryResult(query.id, query.text, ranked, metrics, latency_ms, judged, found))
        if after_each is not None:
            after_each(results[-1])
    return EvalReport(
        name=name,
        k=k,
        per_query=results,
        means=summarise(results, k),
        n_queries=len(results),
        n_judged=sum(r.judged for r in results),
        n_evidence=sum(metric_names(k)[3] in r.metrics for r in results),
    )


def summarise(results: Sequence[QueryResult], k: int) -> dict[str, float]:
    """Mean of each metric over the queries that have it, plus latency p50/p95 over all queries.

    A metric no query has is left out rather than reported as 0, so "not measured" never reads as "bad".
    """
    means: dict[str, float] = {}
    for key in metric_names(k):
        values = [r.metrics[key] for r in results if key in r.metrics]
        if values:
            means[key] = statistics.fmean(values)
    latencies = [r.latency_ms for r in results]
    if latencies:
        means["latency_p50_ms"] = percentile(latencies, 50)
        means["latency_p95_ms"] = percentile(latencies, 95)
    return means


# --- output -----------------------------------------------------------------------------------------


def format_table(reports: Sequence[EvalReport], baseline: str | None = None) -> str:
    """Plain-text table, one row per configuration, for comparing runs side by side.

    With `baseline` (a report's name), a last column gives each row's nDCG@10 over the baseline's.
    """
    ks = {report.k for report in reports}
    k_label = str(ks.pop()) if len(ks) == 1 else "k"
    header = [
        "config",
        "n",
        f"recall@{k_label}",
        f"MRR@{FIXED_DEPTH}",
        f"nDCG@{FIXED_DEPTH}",
        f"evidence@{k_label}",
        "p50 ms",
        "p95 ms",
    ]
    rows = [header, *(_table_row(report) for report in reports)]
    base = next((r for r in reports if r.name == baseline), None)
    if base is not None:
        header.append(f"nDCG@{FIXED_DEPTH} ×")
        for row, report in zip(rows[1:], reports, strict=True):
            row.append(_cell(ratio(report.means, base.means, metric_names(report.k)[2]), 2))
    widths = [max(len(row[col]) for row in rows) for col in range(len(header))]
    lines = [_format_row(row, widths) for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def _table_row(report: EvalReport) -> list[str]:
    recall_key, mrr_key, ndcg_key, evidence_key = metric_names(report.k)
    means = report.means
    return [
        report.name,
        # judged/total: a low first number flags qrels whose ids don't match the queries file.
        f"{report.n_judged}/{report.n_queries}",
        _cell(means.get(recall_key), 3),
        _cell(means.get(mrr_key), 3),
        _cell(means.get(ndcg_key), 3),
        _cell(means.get(evidence_key), 3),
        _cell(means.get("latency_p50_ms"), 1),
        _cell(means.get("latency_p95_ms"), 1),
    ]


def _cell(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _format_row(row: list[str], widths: list[int]) -> str:
    # Name left-aligned, numbers right-aligned so decimal points line up.
    cells = [
        row[0].ljust(widths[0]),
        *(cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)),
    ]
    return "  ".join(cells).rstrip()


def report_to_json(report: EvalReport) -> dict:
    """A JSON-serialisable dict of the whole report, per-query rows included."""
    return asdict(report)


def ratio(means: Mapping[str, float], base: Mapping[str, float], key: str) -> float | None:
    """means[key] / base[key], or None when either is missing or the base is 0."""
    value, reference = means.get(key), base.get(key)
    if value is None or not reference:
        return None
    return value / reference
