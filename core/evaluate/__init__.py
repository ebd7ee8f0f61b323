"""Measuring retrieval and answers: metrics (metrics), query-set files (loaders), configurations side by
side (compare), answers per answer mode (answers), the query sets (querysets), the comparison as
tables (tables) and the scratch tables comparisons leave behind (scratch).
"""

from __future__ import annotations

from core.evaluate.answers import AnswerReport, answer_table, run_answer_eval
from core.evaluate.compare import CHUNK_SIZES, Comparison, EvalConfig, compare, config_grid, posts_table
from core.evaluate.loaders import load_qrels, load_queries
from core.evaluate.metrics import (
    EvalReport,
    Query,
    evidence_found,
    format_table,
    percentile,
    report_to_json,
    run_eval,
)
from core.evaluate.querysets import QuerySet, demo_set, uploaded_set
from core.evaluate.tables import comparison_to_csv, comparison_to_json, per_query_rows, summary_rows

__all__ = [
    "CHUNK_SIZES",
    "AnswerReport",
    "Comparison",
    "EvalConfig",
    "EvalReport",
    "Query",
    "QuerySet",
    "answer_table",
    "compare",
    "comparison_to_csv",
    "comparison_to_json",
    "config_grid",
    "demo_set",
    "evidence_found",
    "format_table",
    "load_qrels",
    "load_queries",
    "per_query_rows",
    "percentile",
    "posts_table",
    "report_to_json",
    "run_answer_eval",
    "run_eval",
    "summary_rows",
    "uploaded_set",
]
