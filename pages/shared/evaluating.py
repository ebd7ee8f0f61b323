"""The Evaluate page's tables and charts for people: each column's header in words with a one-line
explanation (its `help`, shown on hover), widths that show every header and cell in full, and the
figures a comparison is about as bar charts. The tables' keys stay as in the downloads (`ndcg@10`,
`latency_p50_ms`, `dense · ndcg@10`); only what is shown changes."""

from __future__ import annotations

import math
import re
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from pages.shared.tables import header_width
from pages.shared.text import md_escape, safe_answer

# key (with "@k" for any cut-off) → (header, one-line explanation).
WORDS: dict[str, tuple[str, str]] = {
    "config": ("Configuration", "Retrieval mode, fusion, reranker and chunk size of this row."),
    "judged": ("Judged queries", "Queries with at least one judged post, of all queries."),
    "chunks": ("Chunks", "Chunks in the table searched."),
    "recall@k": ("Posts found (recall@k)", "Share of each query's relevant posts among the top k results."),
    "mrr@k": ("First right post (MRR@k)", "1 ÷ the rank of the first relevant post in the top k (1: it came first)."),
    "ndcg@k": ("Ranking quality (nDCG@k)", "Relevant posts near the top, better ones higher (1: the ideal order)."),
    "evidence_hit@k": ("Evidence found (hit@k)", "Share of queries where a top-k chunk holds an evidence quote."),
    "latency_p50_ms": ("Typical search (ms)", "Median time to search one query (p50)."),
    "latency_p95_ms": ("Slow search (ms)", "95 of 100 searches took at most this long (p95)."),
    "id": ("Query", "The query's id in the set."),
    "query": ("Question", "The question as asked."),
    "relevant": ("Relevant posts", "The judged posts, most relevant first."),
    "evidence": ("Quotes", "How many evidence quotes the question has."),
    "found": ("quotes found", "Evidence quotes seen in the top-k chunks (found/quotes: the quotes)."),
    "mode": ("Answer mode", "How the answers were made: the author's sentences, or generated."),
    "on_topic": ("On-topic questions", "Questions the posts answer."),
    "off_topic": ("Off-topic questions", "Questions the posts do not answer (a decline is right)."),
    "token_f1": ("Words shared with the reference (F1)", "Token F1 of the answer against the reference answer."),
    "evidence_in_answer": ("Holds an evidence quote", "Share of answers that contain an evidence quote."),
    "invented_words": ("Invented words", "Share of the answer's content words found in no excerpt (lower is better)."),
    "grounded": ("Grounded", "Share of the answer's sentences the excerpts support."),
    "no_answer_on_topic": ("Declined on topic", "Share of on-topic questions told “I haven't written about that” (lower is better)."),
    "no_answer_off_topic": ("Declined off topic", "Share of off-topic questions told so (higher is better)."),
    "seconds_p50": ("Typical answer (s)", "Median seconds per answer (p50)."),
    "seconds_p95": ("Slow answer (s)", "95 of 100 answers took at most this long (p95)."),
    "query_id": ("Query", "The question's id in the set."),
    "question": ("Question", "The question as asked."),
    "kind": ("Kind", "What sort of question it is in the set."),
    "replied": ("Replied as", "How it was answered: extractive, generative, or none (declined)."),
    "answer": ("Answer", "What the reader was told."),
    "f1": ("Words shared (F1)", "Token F1 against the reference answer."),
    "invented": ("Invented words", "Share of content words in no excerpt."),
    "seconds": ("Seconds", "Time to answer."),
    "sources": ("Sources", "The posts the answer cites."),
    "declined": ("Declined by the check", "Generated, but the grounding check left nothing to show."),
    "no_answer": ("No answer", "The reader was told the posts do not answer it."),
}  # fmt: skip
RATIO = (" vs baseline", "This row's figure ÷ the baseline's: above 1 is better (for times: slower).")
# Columns of free text: wide, with rows tall enough for the longest cell.
TEXT = {"query", "question", "answer", "relevant", "found", "sources"}
CHARS_PER_LINE = 58  # a "large" column (~400 px) in the app's font
LINE_PX, ROW_PADDING_PX, MAX_LINES = 21, 14, 8
MAX_CELL = CHARS_PER_LINE * MAX_LINES  # characters a text cell shows whole at most
SHORTENED = " … (in full below the table)"


# The answer rows (one per question and mode) share some keys with the summaries, meaning something
# else: there `evidence` counts a question's quotes and `on_topic` counts questions; here each is yes/no.
ANSWER_ROW_WORDS: dict[str, tuple[str, str]] = {
    "on_topic": ("On topic", "Whether the posts answer this question (if not, declining is right)."),
    "evidence": ("Holds a quote", "Whether the answer contains one of the question's evidence quotes (empty: it has none)."),
}  # fmt: skip


def words(column: str, own: dict[str, tuple[str, str]] | None = None) -> tuple[str, str]:
    """(header, explanation) of a column: 'ndcg@10' → ('Ranking quality (nDCG@10)', …),
    'dense · found' → ('dense: quotes found', …), 'mrr@10 ×' → ('First right post (MRR@10) vs baseline', …).
    `own`: a table's own words for keys that mean something else in it (they win over WORDS)."""
    if column.endswith(" ×"):
        label, _ = words(column[:-2], own)
        return label + RATIO[0], RATIO[1]
    if " · " in column:
        config, _, key = column.partition(" · ")
        label, help_text = words(key, own)
        return f"{config}: {label[0].lower() + label[1:]}", help_text
    cut = re.search(r"@(\d+)$", column)
    key = re.sub(r"@\d+$", "@k", column)
    label, help_text = (own or {}).get(key) or WORDS.get(key, (column, ""))
    if cut:
        label = label.replace("@k", "@" + cut.group(1))
        help_text = help_text.replace("top k", f"top {cut.group(1)}").replace("top-k", f"top-{cut.group(1)}")
    return label, help_text


def _is_text(column: str) -> bool:
    return column.partition(" · ")[2] in TEXT or column in TEXT


def column_config(frame: pd.DataFrame, own: dict[str, tuple[str, str]] | None = None) -> dict[str, Any]:
    """Headers in words with their explanation, each column wide enough for its header; free text wide;
    three decimals for scores and ratios, one for milliseconds and seconds. `own`: as for `words`."""
    cc = st.column_config
    config: dict[str, Any] = {}
    for column in frame.columns:
        label, help_text = words(column, own)
        width = header_width(label)
        if _is_text(column):
            config[column] = cc.TextColumn(label, help=help_text, width="large")
        elif column.endswith(("_ms", "seconds", "_p50", "_p95")):
            config[column] = cc.NumberColumn(label, help=help_text, format="%.1f", width=width)
        elif pd.api.types.is_float_dtype(frame[column]):
            config[column] = cc.NumberColumn(label, help=help_text, format="%.3f", width=width)
        else:
            config[column] = cc.Column(label, help=help_text, width=width)
    return config


def row_height(frame: pd.DataFrame) -> int | None:
    """Pixels per row that show the longest free-text cell in full (None: one line is enough)."""
    longest = 0
    for column in frame.columns:
        if _is_text(column):
            longest = max(longest, int(frame[column].astype(str).str.len().max() or 0))
    lines = min(MAX_LINES, math.ceil(longest / CHARS_PER_LINE)) if longest else 1
    return LINE_PX * lines + ROW_PADDING_PX if lines > 1 else None


def table(frame: pd.DataFrame, own: dict[str, tuple[str, str]] | None = None) -> None:
    """A table as people read it (see the module docstring); `own`: as for `words`."""
    st.dataframe(
        frame, hide_index=True, column_config=column_config(frame, own), row_height=row_height(frame)
    )


def shortened(text: str, limit: int = MAX_CELL) -> str:
    """`text` if it fits in a cell's MAX_LINES, else its start, cut at a word, saying where the rest is."""
    if len(text) <= limit:
        return text
    room = limit - len(SHORTENED)
    cut = text.rfind(" ", 0, room)
    return text[: cut if cut > 0 else room].rstrip() + SHORTENED


def answer_rows(rows: pd.DataFrame) -> None:
    """The answer rows: a table whose longest answers (up to ~1,200 characters, more than a row of
    MAX_LINES shows) are shortened, saying so, then each such answer in full below, as the reader sees it,
    so no answer is cut without a way to read it all."""
    shown = rows.assign(answer=rows["answer"].astype(str).map(shortened)) if "answer" in rows else rows
    table(shown, ANSWER_ROW_WORDS)
    long = rows[rows["answer"].astype(str).str.len() > MAX_CELL] if "answer" in rows else rows.iloc[:0]
    if long.empty:
        return
    st.caption(f"Answers longer than a row shows, in full ({len(long)}):")
    for row in long.itertuples(index=False):
        with st.expander(md_escape(f"{row.query_id} · {row.mode}: {row.question}")):
            st.markdown(safe_answer(str(row.answer)))


def bar_chart(frame: pd.DataFrame, index: str, columns: list[str], *, title: str) -> None:
    """Grouped bars: one group per measure in `columns` (named in words, in full, in that order), one
    colour per row of `frame` (named by its `index` column, in the frame's order), so rows compare at a
    glance."""
    present = [c for c in columns if c in frame.columns and frame[c].notna().any()]
    if frame.empty or not present:
        return
    long = frame.melt(id_vars=index, value_vars=present, var_name="measure", value_name="value")
    long["measure"] = long["measure"].map(lambda c: words(c)[0])
    st.markdown(f"**{title}**")
    st.altair_chart(grouped_bars(long, "measure", index, horizontal=True), width="stretch")


def grouped_bars(long: pd.DataFrame, group: str, colour: str, *, horizontal: bool) -> alt.Chart:
    """Bars of `long`'s "value", one group per `group`, one colour per `colour`, both in the order they
    first appear in `long` (not sorted as text, which puts q10 before q2), every label in full."""
    groups, colours = list(pd.unique(long[group])), list(pd.unique(long[colour]))
    # labelLimit 0: no limit (Streamlit's theme cuts labels at 100 px: "Evidence foun…").
    axis = alt.Axis(labelLimit=0, labelAngle=0, title=None, grid=False)
    value = alt.X if horizontal else alt.Y
    across, offset = (alt.Y, alt.YOffset) if horizontal else (alt.X, alt.XOffset)
    return (
        alt.Chart(long)
        .mark_bar()
        .encode(
            across(f"{group}:N", sort=groups, axis=axis),
            offset(f"{colour}:N", sort=colours),
            value("value:Q", title=None, axis=alt.Axis(grid=True)),
            alt.Color(
                f"{colour}:N", sort=colours, legend=alt.Legend(title=None, orient="bottom", labelLimit=0)
            ),
            tooltip=[f"{group}:N", f"{colour}:N", alt.Tooltip("value:Q", format=".3~f")],
        )
    )
