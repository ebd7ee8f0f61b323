"""Readers (owner only): what readers asked (the question log, core/store/questions.py), how it went,
and what to write next.

Questions per day, the share answered and declined, the most cited posts, the lowest-rated answers
with their question, and "Asked but not written about": the declined and rated-down questions grouped
into topics (core/search/topics.py), each with its count, three examples, the closest post and a draft
note to copy.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pandas as pd
import streamlit as st

from core.embed import cross_lingual
from core.search.topics import Topic, find_topics, split_unread
from core.store.corpus import corpus_language
from core.store.questions import LoggedQuestion
from core.text import language_name
from pages import shared
from pages.shared import feedback

shared.through_entry()  # first: a fresh server may run this file on its own (pages/shared/entry.py)

PERIODS = {"Last 7 days": 7, "Last 30 days": 30, "Last 90 days": 90, "Everything kept": None}
DEFAULT_PERIOD = "Last 30 days"
PERIOD, CHOSEN = "readers_period", "readers_period_chosen"  # the control's key; the period last chosen
DRAFT = "readers_draft"  # session state: the name of the topic whose draft note is shown
md = shared.md_escape

settings = shared.base_settings()
st.title("Readers")
if not shared.require_owner("What readers asked"):
    st.stop()

store = shared.get_store(settings)
log = feedback.question_log(settings)
if not settings.question_log:
    st.info("The question log is off (INKWELL_QUESTION_LOG=off): new questions are not logged.")


def keep_a_period() -> None:
    """A second click on the chosen period unselects it: it stays chosen (the page went on showing 30
    days with no period marked)."""
    if st.session_state.get(PERIOD) is None:
        st.session_state[PERIOD] = st.session_state.get(CHOSEN, DEFAULT_PERIOD)
    st.session_state[CHOSEN] = st.session_state[PERIOD]


period = st.segmented_control(
    "Period", list(PERIODS), default=DEFAULT_PERIOD, key=PERIOD, on_change=keep_a_period
)
days = PERIODS.get(period or DEFAULT_PERIOD)
since = datetime.now(UTC) - timedelta(days=days) if days else None
try:
    rows = log.query(since)
except shared.KNOWN_ERRORS as exc:
    st.error(f"Cannot read the question log: {md(exc)}")
    st.stop()
if not rows:
    st.info("No questions logged in this period yet.")
    st.stop()


def per_day(rows: list[LoggedQuestion]) -> pd.DataFrame:
    """Questions per day, answered and declined, every day of the span present."""
    frame = pd.DataFrame({"day": [r.at[:10] for r in rows], "declined": [r.declined for r in rows]})
    table = frame.groupby(["day", "declined"]).size().unstack(fill_value=0)
    table = table.rename(columns={False: "answered", True: "declined"})
    for column in ("answered", "declined"):
        if column not in table:
            table[column] = 0
    days = pd.date_range(min(table.index), max(table.index), freq="D").strftime("%Y-%m-%d")
    return table.reindex(days, fill_value=0)[["answered", "declined"]]


# Overview --------------------------------------------------------------------------------------------
declined = sum(r.declined for r in rows)
rated = [r for r in rows if r.feedback is not None]
ups = sum(r.feedback == 1 for r in rated)
c1, c2, c3, c4 = st.columns(4)
c1.metric("Questions", len(rows))
c2.metric("Answered", f"{(len(rows) - declined) / len(rows):.0%}")
c3.metric("Declined", f"{declined / len(rows):.0%}")
c4.metric("Rated helpful", f"{ups}/{len(rated)}" if rated else "–")
st.subheader("Questions per day")
st.bar_chart(per_day(rows), color=["#4c78a8", "#e45756"], stack=True)
sources = Counter(r.source for r in rows)
st.caption("From " + ", ".join(f"{source} {count}" for source, count in sources.most_common()))

# Most cited posts ------------------------------------------------------------------------------------
st.subheader("Most cited posts")
cited = Counter(post for r in rows for post in r.posts)
if cited:
    titles = {p["post_id"]: p["title"] for p in store.list_posts()}
    st.dataframe(
        pd.DataFrame(
            [{"Post": titles.get(p, p), "Id": p, "Answers citing it": n} for p, n in cited.most_common(10)]
        ),
        hide_index=True,
    )
else:
    st.caption("No answer cited a post in this period.")

# Lowest-rated answers --------------------------------------------------------------------------------
st.subheader("Lowest-rated answers")
down = [r for r in rows if r.feedback == -1]
if down:
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "Asked": r.at[:16].replace("T", " "),
                    "Question": r.question,
                    "Comment": r.comment,
                    "Mode": r.mode,
                    "Posts cited": ", ".join(r.posts),
                }
                for r in down
            ]
        ),
        hide_index=True,
    )
else:
    st.caption("No answer was rated down in this period.")

# Asked but not written about -------------------------------------------------------------------------
st.subheader("Asked but not written about")
st.caption("Declined and rated-down questions, grouped by what they are about.")
try:
    posts_language = corpus_language(store, settings.local_home)
    reads_across = cross_lingual(store.model_id() or "") or settings.should_translate
except shared.KNOWN_ERRORS:
    posts_language, reads_across = None, True
about, unread = split_unread(rows, posts_language, reads_across)
if unread:
    counts = ", ".join(f"{language_name(code)} ({n})" for code, n in unread.most_common())
    st.info(
        f"Not counted here: questions the blog cannot read yet, in {counts}. Readers were told so in their "
        "language. To answer them, re-embed with a multilingual model (`inkwell reembed --embed-model "
        "multilingual-e5-small`) or configure an answer model that translates (docs/retrieval.md)."
    )
unanswered = [r.question for r in about]


@st.cache_data(show_spinner="Grouping the questions…", ttl=600, max_entries=8)
def grouped(questions: tuple[str, ...], data_dir: str, chunks_version: int | None) -> list[Topic]:
    return find_topics(list(questions), shared.get_embedder_cached(settings), store=store, log=log)


def show_draft(name: str) -> None:
    st.session_state[DRAFT] = name


if not unanswered:
    st.caption("Every question in this period was answered and none was rated down.")
else:
    try:
        topics = grouped(tuple(unanswered), str(settings.data_dir), store.versions().chunks)
    except shared.KNOWN_ERRORS as exc:
        st.error(f"Cannot group the questions: {md(exc)}")
        topics = []
    for i, topic in enumerate(topics):
        with st.container(border=True):
            st.markdown(f"**{md(topic.name)}** · asked {shared.plural(topic.count, 'time')}")
            for example in topic.examples:
                st.text(f"“{example}”")
            if topic.closest is not None:
                st.caption(
                    f"Closest post: {md(topic.closest.title)} ({md(topic.closest.post_id)}), "
                    f"relevance {topic.closest.relevance:.2f}"
                )
            else:
                st.caption("No post is close to this yet.")
            st.button(
                "Draft a note", key=f"draft_{i}", type="tertiary", on_click=show_draft, args=(topic.name,)
            )
            if st.session_state.get(DRAFT) == topic.name:
                st.code(topic.draft(), language="markdown", wrap_lines=True)
