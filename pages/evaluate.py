"""Evaluate (owner only): run a judged query set against retrieval configurations side by side.

The work is core/evaluate/compare.py's (`compare`); this page picks the set and the configurations, shows the
summary (dense-only as the baseline, with ratios), the per-query rows and the downloads.
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from core.config import FUSIONS, RERANKERS, RETRIEVAL_MODES
from core.evaluate import (
    CHUNK_SIZES,
    Comparison,
    QuerySet,
    compare,
    comparison_to_csv,
    comparison_to_json,
    config_grid,
    demo_set,
    per_query_rows,
    summary_rows,
    uploaded_set,
)
from core.evaluate.metrics import FIXED_DEPTH
from pages import shared

RESULT = "eval_result"  # session state: the last Comparison, kept across reruns
SOURCES = {"demo": "Demo set (the demo blog)", "upload": "Upload queries.jsonl + qrels.tsv"}

settings = shared.base_settings()
md = shared.md_escape

st.title("Evaluate retrieval")
if not shared.require_owner("Evaluating retrieval"):
    st.stop()
st.caption(
    f"recall@k, MRR@{FIXED_DEPTH} and nDCG@{FIXED_DEPTH} over the judged posts, evidence hit@k (a top-k chunk "
    "contains an evidence quote) and latency, for each configuration on the same queries."
)


def pick_set() -> QuerySet | None:
    """The chosen query set, or None (with the reason shown) when it is missing or unreadable."""
    source = st.radio("Query set", list(SOURCES), format_func=SOURCES.get, horizontal=True, key="eval_source")
    if source == "demo":
        st.caption(
            "15 questions about the demo blog (English, Turkish, German, French), graded judgements and "
            "evidence quotes; searched in scratch tables of data/demo/posts, not in your table."
        )
        return demo_set()
    col_queries, col_qrels = st.columns(2)
    queries = col_queries.file_uploader(
        'queries.jsonl: {"id", "text", optional "evidence"} per line',
        type=["jsonl", "json"],
        key="eval_queries",
    )
    qrels = col_qrels.file_uploader(
        "qrels.tsv: query_id, doc_id, score", type=["tsv", "txt"], key="eval_qrels"
    )
    st.caption(
        "Searched in your stored posts (doc_id = post id); other chunk sizes re-chunk them in scratch tables."
    )
    if queries is None or qrels is None:
        st.info("Upload both files to run this set.")
        return None
    try:
        return uploaded_set((queries.name, queries.getvalue()), (qrels.name, qrels.getvalue()))
    except ValueError as exc:
        st.error(f"Cannot use these files: {md(exc)}")
        return None


def pick_configs() -> tuple[list, int]:
    # Wide enough for a chosen value's chip to be read ("score", not "sco…").
    col_mode, col_fusion, col_rerank, col_size, col_k = st.columns([4, 3, 3, 3, 1])
    modes = col_mode.multiselect("Retrieval", RETRIEVAL_MODES, default=["dense", "hybrid"], key="eval_modes")
    fusions = col_fusion.multiselect(
        "Hybrid fusion",
        FUSIONS,
        default=[settings.fusion],
        key="eval_fusions",
        help="Applies to hybrid rows only.",
    )
    rerankers = col_rerank.multiselect(
        "Reranker",
        RERANKERS,
        default=["none"],
        key="eval_rerankers",
        help="llm asks the answer model to judge each candidate: slow with the built-in model.",
    )
    sizes = col_size.multiselect(
        "Chunk size (tokens)",
        sorted({*CHUNK_SIZES, settings.chunk_tokens}),
        default=[settings.chunk_tokens],
        key="eval_sizes",
        help="Each size other than the configured one gets a scratch table (vectors cached between runs).",
    )
    k = int(col_k.number_input("k", 1, 100, value=10, key="eval_k"))
    configs = config_grid(settings, modes, fusions, rerankers, sizes, with_baseline=True)
    return configs, k


def run(query_set: QuerySet, configs: list, k: int) -> None:
    bar = st.progress(0.0, text="Starting…")

    def progress(done: int, total: int, message: str) -> None:
        bar.progress(done / total if total else 1.0, text=message)

    try:
        embedder = shared.get_embedder_cached(settings)
        st.session_state[RESULT] = compare(
            query_set.queries,
            query_set.qrels,
            configs,
            settings,
            k=k,
            posts=query_set.posts,
            embedder=embedder,
            progress=progress,
        )
    except shared.KNOWN_ERRORS as exc:
        bar.empty()
        st.error(f"Evaluation failed: {md(exc)}")
        st.session_state.pop(RESULT, None)
        return
    bar.empty()


def show(comparison: Comparison) -> None:
    summary = pd.DataFrame(summary_rows(comparison))
    st.subheader("Summary")
    if comparison.baseline:
        st.caption(
            f"Baseline: {md(comparison.baseline)}; the × columns divide each row's figure by the baseline's."
        )
    st.dataframe(summary, hide_index=True, column_config=number_columns(summary))
    if comparison.chunks_embedded or comparison.chunks_reused:
        st.caption(
            f"Scratch tables: {comparison.chunks_embedded} chunks embedded, {comparison.chunks_reused} "
            "taken from the vector cache."
        )
    for note in comparison.notes:
        st.warning(md(note))
    for result in comparison.results:
        for note in result.notes:
            st.warning(f"{md(result.config.name)}: {md(note)}")
    st.subheader("Per query")
    st.caption("“found” lists the evidence quotes seen in the top-k chunks (found/quotes).")
    per_query = pd.DataFrame(per_query_rows(comparison))
    st.dataframe(per_query, hide_index=True, column_config=number_columns(per_query))
    col_json, col_csv = st.columns(2)
    col_json.download_button(
        "Download JSON",
        json.dumps(comparison_to_json(comparison), ensure_ascii=False, indent=1),
        file_name="inkwell-eval.json",
        mime="application/json",
        key="eval_download_json",
    )
    col_csv.download_button(
        "Download CSV (one row per configuration and query)",
        comparison_to_csv(comparison),
        file_name="inkwell-eval.csv",
        mime="text/csv",
        key="eval_download_csv",
    )


# The tables' keys stay as in the downloads (recall@10, latency_p50_ms, "dense · ndcg@10"); the headers
# read as the caption above them does.
HEADER_WORDS = {
    "mrr@": "MRR@",
    "ndcg@": "nDCG@",
    "evidence_hit@": "evidence hit@",
    "latency_p50_ms": "latency p50 (ms)",
    "latency_p95_ms": "latency p95 (ms)",
}
TEXT_COLUMNS = {"query": "large", "relevant": "medium"}


def header(column: str) -> str:
    """A readable header for a summary or per-query column: 'nDCG@10', 'latency p50 (ms)', 'dense · MRR@10'."""
    if column == "evidence":
        return "quotes"  # how many evidence quotes the query has
    for key, words in HEADER_WORDS.items():
        column = column.replace(key, words)
    return column


def number_columns(frame: pd.DataFrame) -> dict:
    """Readable headers, shown in full; three decimals for metrics and ratios, one for milliseconds."""
    cc = st.column_config
    config = {}
    for column in frame.columns:
        label = header(column)
        if column in TEXT_COLUMNS:
            config[column] = cc.TextColumn(label, width=TEXT_COLUMNS[column])
        elif column.endswith(" · found"):
            config[column] = cc.TextColumn(label, width="medium")
        elif column.endswith("_ms"):
            config[column] = cc.NumberColumn(label, format="%.1f", width=shared.header_width(label))
        elif pd.api.types.is_float_dtype(frame[column]):
            config[column] = cc.NumberColumn(label, format="%.3f", width=shared.header_width(label))
        else:
            config[column] = cc.Column(label, width=shared.header_width(label))
    return config


query_set = pick_set()
if query_set is not None:
    for warning in query_set.warnings:
        st.warning(md(warning))
configs, k = pick_configs()
st.caption(f"{len(configs)} configurations: " + ", ".join(md(c.name) for c in configs))
if st.button("Run evaluation", type="primary", key="eval_run", disabled=query_set is None):
    run(query_set, configs, k)
if RESULT in st.session_state:
    show(st.session_state[RESULT])
