"""A comparison as table rows (summary, per query, long form), CSV and JSON."""

from __future__ import annotations

import csv
import io
from typing import Any

from core.evaluate.compare import Comparison
from core.evaluate.metrics import Query, QueryResult, metric_names, ratio, report_to_json


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
