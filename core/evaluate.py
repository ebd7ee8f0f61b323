"""Retrieval evaluation: load BEIR-style queries and qrels, score ranked results, compare configurations.

Retrieval itself is injected as a callable, so the metric code never touches the store or the embedder and
can be tested with a plain dict standing in for a search engine. `compare` (below the metrics) runs real
retrieval: named configurations side by side (modes, fusion, reranker, chunk sizes), chunk sizes in
scratch tables of their own.

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

import json
import math
import re
import statistics
import time
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from core.config import Settings
    from core.embed import Embedder
    from core.models import Post
    from core.store import Store

# MRR and nDCG are reported at a fixed depth of 10 (the BEIR headline numbers) whatever k recall uses.
FIXED_DEPTH = 10

Retriever = Callable[[str], Sequence[tuple[str, str]]]


@dataclass(frozen=True)
class Query:
    """One evaluation query. `evidence` holds quotes that a good top-k chunk should contain."""

    id: str
    text: str
    evidence: tuple[str, ...] = ()


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


# --- loading -----------------------------------------------------------------------------------------


def load_queries(path: str | Path) -> list[Query]:
    """Read a jsonl file of {"id", "text", optional "evidence"} objects (BEIR's "_id" is accepted too)."""
    path = Path(path)
    # utf-8-sig: files saved by Windows editors start with a BOM that would otherwise break line 1.
    with path.open(encoding="utf-8-sig") as fh:
        return read_queries(fh, str(path))


def read_queries(lines: Iterable[str], source: str) -> list[Query]:
    """Queries from jsonl lines; errors name `source` and the line number."""
    queries: list[Query] = []
    seen: set[str] = set()
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            query = _parse_query(line)
        except ValueError as exc:
            raise ValueError(f"{source}:{lineno}: {exc}") from None
        # A repeated id would silently be scored twice and skew every mean.
        if query.id in seen:
            raise ValueError(f"{source}:{lineno}: duplicate query id {query.id!r}")
        seen.add(query.id)
        queries.append(query)
    return queries


def decode_upload(name: str, data: bytes) -> list[str]:
    """An uploaded file's lines; a file that is not UTF-8 text is a ValueError naming it."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}: not UTF-8 text (byte {exc.start})") from None
    return text.splitlines()


def _parse_query(line: str) -> Query:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON ({exc.msg})") from None
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    raw_id = obj.get("id", obj.get("_id"))
    # bool is an int subclass; an id of `true` is a mistake, not a number.
    if raw_id is None or isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
        raise ValueError('missing or invalid "id" (string or integer)')
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError('missing or empty "text"')
    return Query(id=str(raw_id).strip(), text=text, evidence=_parse_evidence(obj.get("evidence")))


def _parse_evidence(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise ValueError('"evidence" must be a string or a list of strings')
    # An empty quote would "match" every chunk, so blank entries are dropped rather than kept.
    return tuple(item for item in items if _normalise(item))


def load_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read relevance judgements: {query_id: {doc_id: grade}}, keeping only grades > 0.

    Accepts BEIR's tsv (`query-id  corpus-id  score`, header optional) and TREC's four-column
    `qid iter docid rel`. Rows with grade <= 0 are judged-not-relevant, so they are dropped here; positive
    grades are kept as they are because nDCG uses them as gains. A later row for the same pair wins.
    """
    path = Path(path)
    with path.open(encoding="utf-8-sig") as fh:
        return read_qrels(fh, str(path))


def read_qrels(lines: Iterable[str], source: str) -> dict[str, dict[str, int]]:
    """Relevance judgements from tsv lines (see load_qrels); errors name `source` and the line number."""
    grades: dict[str, dict[str, int]] = {}
    first_row = True
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        fields = _split_qrels_line(line)
        # Only the first non-blank row may be a header; a non-numeric score later on is an error.
        is_header, first_row = first_row and _is_header(fields), False
        if is_header:
            continue
        try:
            query_id, doc_id, grade = _parse_qrels_fields(fields)
        except ValueError as exc:
            raise ValueError(f"{source}:{lineno}: {exc}") from None
        grades.setdefault(query_id, {})[doc_id] = grade
    relevant = {qid: {d: g for d, g in docs.items() if g > 0} for qid, docs in grades.items()}
    return {qid: docs for qid, docs in relevant.items() if docs}


def _split_qrels_line(line: str) -> list[str]:
    # Tab-separated when tabs are present, so ids may contain spaces; otherwise TREC-style whitespace.
    line = line.rstrip("\r\n")
    parts = line.split("\t") if "\t" in line else line.split()
    return [part.strip() for part in parts]


def _is_header(fields: list[str]) -> bool:
    return len(fields) >= 3 and not _looks_like_int(fields[-1])


def _looks_like_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def _parse_qrels_fields(fields: list[str]) -> tuple[str, str, int]:
    if len(fields) == 3:
        query_id, doc_id, score = fields
    elif len(fields) == 4:
        query_id, _iteration, doc_id, score = fields
    else:
        raise ValueError(f"expected 3 columns (query_id, doc_id, score), got {len(fields)}")
    if not query_id or not doc_id:
        raise ValueError("empty query_id or doc_id")
    try:
        grade = int(score)
    except ValueError:
        raise ValueError(f"score {score!r} is not an integer") from None
    return query_id, doc_id, grade


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


def _normalise(text: str) -> str:
    # NFKC folds non-breaking spaces and ligatures; casefold beats lower() for ß and friends.
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


def evidence_hit_at_k(chunk_texts: Sequence[str], evidence: Sequence[str], k: int) -> float | None:
    """1.0 if any of the top-k chunks contains any evidence quote, 0.0 if none does, None without evidence.

    k counts chunks here, not posts: the question is whether the passage the answer needs reached the
    prompt. Matching ignores case and whitespace differences, since chunking re-flows lines.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if not any(_normalise(e) for e in evidence):
        return None
    return 1.0 if evidence_found(chunk_texts, evidence, k) else 0.0


def evidence_found(chunk_texts: Sequence[str], evidence: Sequence[str], k: int) -> list[str]:
    """The evidence quotes (as given) that occur in one of the top-k chunks, matched as evidence_hit_at_k."""
    chunks = [_normalise(text) for text in chunk_texts[:k]]
    return [quote for quote in evidence if (q := _normalise(quote)) and any(q in chunk for chunk in chunks)]


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


# --- comparing configurations -----------------------------------------------------------------------
#
# Unlike the metric code above, this part runs real retrieval: each configuration is a set of settings
# overrides. Retrieval-only overrides search the user's table as it is (read-only); a configuration
# that chunks differently, or a run on given posts, searches a scratch table of its own under
# `<data_dir>/eval-tables/`, kept between runs so a second run re-embeds only what changed.

# Settings that decide how posts are cut: a configuration that changes any of them needs its own table.
CHUNKING_FIELDS = ("chunk_strategy", "chunk_tokens", "fixed_chars", "fixed_overlap")
# What a configuration may override.
CONFIG_FIELDS = (
    "retrieval_mode",
    "fusion",
    "rrf_k",
    "reranker",
    "rerank_top_n",
    "rerank_model",
    *CHUNKING_FIELDS,
)
SCRATCH_DIR = "eval-tables"
# Chunk sizes (tokens) the Evaluate page offers besides the configured one.
CHUNK_SIZES = (100, 150, 200, 300, 400, 600)

Progress = Callable[[int, int, str], None]


@dataclass
class EvalConfig:
    """A named configuration: Settings overrides, keys from CONFIG_FIELDS."""

    name: str
    overrides: dict[str, Any] = field(default_factory=dict)

    def apply(self, settings: Settings) -> Settings:
        unknown = sorted(set(self.overrides) - set(CONFIG_FIELDS))
        if unknown:
            raise ValueError(f"configuration {self.name!r}: cannot override {', '.join(unknown)}")
        return settings.replace(**self.overrides)


@dataclass
class ConfigResult:
    config: EvalConfig
    report: EvalReport
    chunks: int  # chunks in the table this configuration searched
    table: str  # "stored" (the user's table) or the scratch table's folder
    notes: list[str] = field(default_factory=list)  # e.g. keyword search fell back to dense


@dataclass
class Comparison:
    k: int
    queries: list[Query]
    qrels: dict[str, dict[str, int]]
    results: list[ConfigResult]
    baseline: str | None = None  # the name of the row the others are compared with
    chunks_embedded: int = 0  # for scratch tables in this run; the rest came from the vector cache
    chunks_reused: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def reports(self) -> list[EvalReport]:
        return [r.report for r in self.results]


def config_grid(
    settings: Settings,
    modes: Sequence[str] = (),
    fusions: Sequence[str] = (),
    rerankers: Sequence[str] = (),
    chunk_tokens: Sequence[int] = (),
    *,
    with_baseline: bool = False,
) -> list[EvalConfig]:
    """Every combination of the chosen values (an empty choice: the setting's own value).

    Fusion only varies for hybrid. A name lists a dimension only when the grid varies it or it differs
    from the settings, so `modes=["dense", "hybrid"]` gives rows "dense" and "hybrid"; otherwise names
    read like "hybrid rrf+llm 150tok" (`inkwell eval` names reranked rows mode+reranker too).
    `with_baseline` puts dense retrieval with the configured chunking first when the grid lacks it.
    """
    modes, fusions = _unique(modes) or [settings.retrieval_mode], _unique(fusions) or [settings.fusion]
    rerankers, sizes = (
        _unique(rerankers) or [settings.reranker],
        _unique(chunk_tokens) or [settings.chunk_tokens],
    )
    show_fusion = len(fusions) > 1 or fusions != [settings.fusion]
    show_size = len(sizes) > 1 or sizes != [settings.chunk_tokens]
    configs: list[EvalConfig] = []
    for size in sizes:
        for reranker in rerankers:
            for mode in modes:
                for fusion in fusions if mode == "hybrid" else [settings.fusion]:
                    name = mode + (f" {fusion}" if mode == "hybrid" and show_fusion else "")
                    name += f"+{reranker}" if reranker != "none" else ""
                    name += f" {size}tok" if show_size else ""
                    overrides = {"retrieval_mode": mode, "fusion": fusion, "reranker": reranker}
                    configs.append(EvalConfig(name, {**overrides, "chunk_tokens": int(size)}))
    if with_baseline and baseline_name(configs, settings) is None:
        name = "dense" + (f" {settings.chunk_tokens}tok" if show_size else "")
        overrides = {"retrieval_mode": "dense", "reranker": "none", "chunk_tokens": settings.chunk_tokens}
        configs.insert(0, EvalConfig(name, overrides))
    return configs


def _unique(values: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(values))


def baseline_name(configs: Sequence[EvalConfig], settings: Settings) -> str | None:
    """The first dense-only configuration (no reranker) with the configured chunking: the seed's setup."""
    for config in configs:
        applied = config.apply(settings)
        if (
            applied.retrieval_mode == "dense"
            and applied.reranker == "none"
            and _chunking(applied) == _chunking(settings)
        ):
            return config.name
    return None


def _chunking(settings: Settings) -> tuple:
    return tuple(getattr(settings, name) for name in CHUNKING_FIELDS)


def ranking_settings(settings: Settings, k: int) -> Settings:
    """Rank metrics need a full ranking, not the answer-context rules: the top max(k, 10), all kept."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    depth = max(k, FIXED_DEPTH)
    return settings.replace(
        threshold=0.0, min_chunks=0, max_chunks=max(settings.top_k, depth), top_k=max(settings.top_k, depth)
    )


class CachingEmbedder:
    """An embedder that first looks vectors up by content hash in other tables (the ingest cache, across
    tables): a scratch table re-embeds only chunks no table holds yet."""

    def __init__(self, inner: Embedder, sources: Sequence[Store]):
        self.inner = inner
        self.sources = list(sources)
        self.model_id = inner.model_id
        self.embedded = 0
        self.reused = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.query(texts)  # questions are never cached

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        from core.embed import content_hash

        hashes = [content_hash(self.model_id, text) for text in texts]
        found: dict[str, np.ndarray] = {}
        for store in self.sources:
            missing = [h for h in hashes if h not in found]
            if not missing:
                break
            found.update(store.cached_vectors(missing))
        todo = dict(zip(hashes, texts, strict=True))
        todo = {h: t for h, t in todo.items() if h not in found}
        if todo:
            found.update(zip(todo, self.inner.embed(list(todo.values())), strict=True))
        self.embedded += len(todo)
        self.reused += len(texts) - len(todo)
        if not hashes:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([np.asarray(found[h], dtype=np.float32) for h in hashes])


def compare(
    queries: Sequence[Query],
    qrels: Mapping[str, Mapping[str, int]],
    configs: Sequence[EvalConfig],
    settings: Settings,
    *,
    k: int = 10,
    posts: Sequence[Post] | None = None,
    embedder: Embedder | None = None,
    work_dir: str | Path | None = None,
    progress: Progress | None = None,
) -> Comparison:
    """Evaluate each configuration on the same queries; one EvalReport per configuration, in order.

    Without `posts`, configurations search the table at settings.data_dir (never written to); those
    that chunk differently get a scratch table of the stored posts re-chunked. With `posts` (e.g. the
    demo blog), every configuration searches a scratch table of those posts. Scratch tables live under
    `work_dir` (default `<data_dir>/eval-tables`) and are synced (stale posts dropped, changed ones
    re-ingested) on every run. `progress(done, total, message)` follows tables and queries.
    """
    from core.embed import embedder_for_store
    from core.store import Store

    if not configs:
        raise ValueError("choose at least one configuration")
    if not queries:
        raise ValueError("the query set is empty")
    names = [c.name for c in configs]
    if len(set(names)) != len(names):
        raise ValueError(f"configuration names must differ: {', '.join(names)}")
    applied = [c.apply(settings) for c in configs]
    stored = Store(settings.data_dir)
    embedder = embedder or embedder_for_store(settings, stored.model_id())
    stored.check_model(embedder.model_id)
    work = Path(work_dir) if work_dir is not None else Path(settings.data_dir) / SCRATCH_DIR
    comparison = Comparison(k, list(queries), {q: dict(d) for q, d in qrels.items()}, [])
    comparison.baseline = baseline_name(configs, settings)

    # A table per distinct chunking (or the stored table), built before any clock starts.
    keys = [_table_key(s, settings, posts) for s in applied]
    tables = list(dict.fromkeys(keys))
    scratch = [key for key in tables if key is not None]
    if None in keys and stored.chunks is None:
        raise ValueError("nothing is stored yet: ingest posts first")
    total = len(scratch) + len(configs) * len(queries)
    step = _Steps(total, progress)
    stores: dict[tuple | None, Store] = {None: stored}
    if scratch:
        corpus = list(posts) if posts is not None else _stored_posts(stored, comparison.notes)
        caching = CachingEmbedder(embedder, [stored])
        for key, config_settings in _first_per_key(keys, applied):
            step.message(f"Building the table for chunking {_describe(config_settings)}…")
            stores[key] = _scratch_table(corpus, config_settings, work, caching)
            caching.sources.append(stores[key])
            step.tick(f"Table for chunking {_describe(config_settings)} ready")
        comparison.chunks_embedded, comparison.chunks_reused = caching.embedded, caching.reused

    if any(s.retrieval_mode != "fts" for s in applied):
        embedder.embed(["warm-up"])  # load the model before the clock starts: latency is per query
    for reranker_settings in {s.reranker: s for s in applied if s.reranker != "none"}.values():
        from core.rerank import prepare_reranker

        prepare_reranker(reranker_settings)  # one that cannot load fails here, not silently per query
    for config, config_settings, key in zip(configs, applied, keys, strict=True):
        comparison.results.append(
            _run_config(queries, qrels, config, config_settings, k, stores[key], embedder, step)
        )
    return comparison


class _Steps:
    """Progress in steps (tables built, queries run)."""

    def __init__(self, total: int, progress: Progress | None):
        self.total, self.done, self.progress = total, 0, progress

    def message(self, text: str) -> None:
        if self.progress:
            self.progress(self.done, self.total, text)

    def tick(self, text: str) -> None:
        self.done += 1
        self.message(text)


def _table_key(config_settings: Settings, settings: Settings, posts: Sequence[Post] | None) -> tuple | None:
    """None: the stored table will do; else the chunking that needs a scratch table."""
    if posts is None and _chunking(config_settings) == _chunking(settings):
        return None
    return _chunking(config_settings)


def _first_per_key(keys: Sequence[tuple | None], applied: Sequence[Settings]) -> list[tuple[tuple, Settings]]:
    first: dict[tuple, Settings] = {}
    for key, config_settings in zip(keys, applied, strict=True):
        if key is not None:
            first.setdefault(key, config_settings)
    return list(first.items())


def _describe(settings: Settings) -> str:
    if settings.chunk_strategy == "fixed":
        return f"fixed {settings.fixed_chars} chars, {settings.fixed_overlap} overlap"
    return f"paragraph {settings.chunk_tokens} tokens"


def _stored_posts(store: Store, notes: list[str]) -> list[Post]:
    """The stored posts rebuilt from their raw text, to re-chunk them in a scratch table."""
    from core.app_state import rebuild_posts  # lazily: it brings in Streamlit

    posts, skipped = rebuild_posts(store, [row["post_id"] for row in store.list_posts()])
    if not posts:
        raise ValueError("no stored post can be re-chunked: ingest posts first")
    notes.extend(f"not in the re-chunked tables: {why}" for why in skipped)
    return posts


def _scratch_table(
    posts: Sequence[Post], config_settings: Settings, work: Path, embedder: CachingEmbedder
) -> Store:
    """A scratch table of `posts` chunked as `config_settings` says, in sync with them."""
    import hashlib

    from core.ingest import ingest_posts
    from core.store import Store

    # The model is part of the folder name: a table's vectors can't be mixed with another model's.
    model = hashlib.sha256(embedder.model_id.encode()).hexdigest()[:8]
    folder = work / "-".join([*(str(v) for v in _chunking(config_settings)), model])
    store = Store(folder)
    stale = set(store.post_states()) - {post.post_id for post in posts}
    if stale:
        store.delete_posts(sorted(stale))
    report = ingest_posts(
        list(posts), config_settings.replace(data_dir=folder), store=store, embedder=embedder
    )
    failed = [f"{o.post_id}: {o.message}" for o in report.outcomes if o.status == "failed"]
    if not report.outcomes or len(failed) == len(report.outcomes):
        raise ValueError(
            f"no post could be ingested for chunking {_describe(config_settings)}: {'; '.join(failed)}"
        )
    return store


def _run_config(
    queries: Sequence[Query],
    qrels: Mapping[str, Mapping[str, int]],
    config: EvalConfig,
    config_settings: Settings,
    k: int,
    store: Store,
    embedder: Embedder,
    step: _Steps,
) -> ConfigResult:
    from core.retrieve import search

    search_settings = ranking_settings(config_settings, k)
    notes: dict[str, None] = {}
    rerank_failed = 0

    def retrieve(text: str) -> list[tuple[str, str]]:
        nonlocal rerank_failed
        result = search(text, search_settings, store=store, embedder=embedder)
        notes.update(dict.fromkeys(result.notes))
        # A failed reranker keeps the fused order (no rerank score): that row measures no reranking.
        if config_settings.reranker != "none" and result.candidates:
            rerank_failed += getattr(result.candidates[0], "rerank_score", None) is None
        return [(hit.post_id, hit.text) for hit in result.hits]

    def after_each(result: QueryResult) -> None:
        step.tick(f"{config.name}: {result.query_id}")

    report = run_eval(queries, qrels, retrieve, k=k, name=config.name, after_each=after_each)
    table = "stored" if store.data_dir == config_settings.data_dir else store.data_dir.name
    if rerank_failed:
        notes[f"reranking failed on {rerank_failed} of {len(queries)} queries (fused order kept)"] = None
    return ConfigResult(config, report, store.counts()[1], table, list(notes))


# --- query sets -----------------------------------------------------------------------------------------

DEMO_DIR = Path(__file__).resolve().parents[1] / "data" / "demo"


@dataclass
class QuerySet:
    """Queries with their judgements, and the posts to search (None: the stored table)."""

    name: str
    queries: list[Query]
    qrels: dict[str, dict[str, int]]
    posts: list[Post] | None = None
    warnings: list[str] = field(default_factory=list)


def demo_set(demo_dir: Path = DEMO_DIR) -> QuerySet:
    """The bundled demo set (data/demo/eval), searched in scratch tables of the demo blog's posts."""
    from core.parse import parse_paths

    queries = load_queries(demo_dir / "eval" / "queries.jsonl")
    qrels = load_qrels(demo_dir / "eval" / "qrels.tsv")
    posts = parse_paths([demo_dir / "posts"]).posts
    return QuerySet("demo", queries, qrels, posts, check_set(queries, qrels))


def uploaded_set(queries_file: tuple[str, bytes], qrels_file: tuple[str, bytes]) -> QuerySet:
    """A set from uploaded files (name, bytes), searched in the stored table; ValueError names file and line."""
    queries = read_queries(decode_upload(*queries_file), queries_file[0])
    qrels = read_qrels(decode_upload(*qrels_file), qrels_file[0])
    return QuerySet("uploaded", queries, qrels, None, check_set(queries, qrels))


def check_set(queries: Sequence[Query], qrels: Mapping[str, Mapping[str, int]]) -> list[str]:
    """Warnings about a set whose files don't match; ValueError when nothing in it can be scored."""
    if not queries:
        raise ValueError("the queries file holds no query")
    ids = {q.id for q in queries}
    judged = [q for q in queries if q.id in qrels]
    if not judged and not any(q.evidence for q in queries):
        raise ValueError(
            "no query has judgements in the qrels file (do the query ids match?) or evidence quotes: "
            "nothing to score"
        )
    warnings = []
    unknown = sorted(set(qrels) - ids)
    if unknown:
        shown = ", ".join(unknown[:5]) + ("…" if len(unknown) > 5 else "")
        warnings.append(f"the qrels judge {len(unknown)} query ids that are not in the queries file: {shown}")
    if len(judged) < len(queries):
        warnings.append(
            f"{len(queries) - len(judged)} of {len(queries)} queries have no judgements: only their evidence "
            "and latency count"
        )
    return warnings


# --- comparison output --------------------------------------------------------------------------------


def summary_rows(comparison: Comparison) -> list[dict[str, Any]]:
    """One row per configuration: its means, and (with a baseline) each metric over the baseline's."""
    base = next((r.report for r in comparison.results if r.config.name == comparison.baseline), None)
    keys = [*metric_names(comparison.k), "latency_p50_ms", "latency_p95_ms"]
    rows = []
    for result in comparison.results:
        report = result.report
        row: dict[str, Any] = {
            "config": report.name,
            "judged": f"{report.n_judged}/{report.n_queries}",
            "chunks": result.chunks,
            **{key: report.means.get(key) for key in keys},
        }
        if base is not None:
            for key in [*metric_names(comparison.k), "latency_p50_ms"]:
                row[f"{key} ×"] = ratio(report.means, base.means, key)
        rows.append(row)
    return rows


def per_query_rows(comparison: Comparison) -> list[dict[str, Any]]:
    """One row per query: its text and relevant posts, then nDCG@10, recall@k and the evidence quotes
    found, for each configuration side by side."""
    recall_key, _, ndcg_key, _ = metric_names(comparison.k)
    rows = []
    for i, query in enumerate(comparison.queries):
        relevant = comparison.qrels.get(query.id, {})
        row: dict[str, Any] = {
            "id": query.id,
            "query": query.text,
            "relevant": ", ".join(sorted(relevant, key=lambda d: -relevant[d])),
            "evidence": len(query.evidence),
        }
        for result in comparison.results:
            scored = result.report.per_query[i]
            name = result.config.name
            row[f"{name} · {ndcg_key}"] = scored.metrics.get(ndcg_key)
            row[f"{name} · {recall_key}"] = scored.metrics.get(recall_key)
            row[f"{name} · found"] = _found_label(query, scored)
        rows.append(row)
    return rows


def _found_label(query: Query, scored: QueryResult) -> str:
    if not query.evidence:
        return ""
    return f"{len(scored.evidence_found)}/{len(query.evidence)}: " + " | ".join(scored.evidence_found)


def long_rows(comparison: Comparison) -> list[dict[str, Any]]:
    """One row per (configuration, query) with every metric: the CSV download."""
    keys = metric_names(comparison.k)
    rows = []
    for result in comparison.results:
        for scored in result.report.per_query:
            rows.append(
                {
                    "config": result.config.name,
                    "query_id": scored.query_id,
                    "query": scored.text,
                    "judged": scored.judged,
                    **{key: scored.metrics.get(key) for key in keys},
                    "evidence_found": " | ".join(scored.evidence_found),
                    "latency_ms": round(scored.latency_ms, 3),
                    "top_posts": " ".join(scored.ranked_docs[: comparison.k]),
                }
            )
    return rows


def comparison_to_csv(comparison: Comparison) -> str:
    import csv
    import io

    rows = long_rows(comparison)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["config"])
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def comparison_to_json(comparison: Comparison) -> dict:
    """The whole comparison as a JSON-serialisable dict: summary rows and every report."""
    return {
        "k": comparison.k,
        "baseline": comparison.baseline,
        "summary": summary_rows(comparison),
        "configs": [
            {
                "name": r.config.name,
                "overrides": r.config.overrides,
                "chunks": r.chunks,
                "table": r.table,
                "notes": r.notes,
                "report": report_to_json(r.report),
            }
            for r in comparison.results
        ],
        "chunks_embedded": comparison.chunks_embedded,
        "chunks_reused": comparison.chunks_reused,
        "notes": comparison.notes,
    }
