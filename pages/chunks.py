"""Inspect chunks: browse and search every chunk, see one in context, test what a question retrieves,
and see which posts are about a topic (document-level view, core/search/posts.py).

Browsing and queries are open to readers, with the chat's limits (question length, questions a
minute); editing a chunk and the LLM reranker (it spends the owner's model budget) are the owner's.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from core.chunk import MAX_KEYWORD_CHARS, MAX_KEYWORD_WORDS, MAX_KEYWORDS, KeywordError
from core.config import MODEL_RERANKERS, RERANKERS, RETRIEVAL_MODES
from core.embed import embedded_text
from core.ingest import edit_chunk
from core.search import posts_about, search
from core.search.posts import DEFAULT_SCORING, SCORINGS
from core.text import QuestionError, check_question
from pages import shared

shared.through_entry()  # first: a fresh server may run this file on its own (pages/shared/entry.py)

COLUMNS = ["chunk_id", "post_id", "idx", "title", "collection", "section", "tokens", "keywords", "text"]
SHOWN = ["title", "collection", "section", "tokens", "keywords", "text"]
# Why each candidate was found: its place and score in each search (empty where a search missed it).
WHY_COLUMNS = {
    "dense_rank": "dense rank",
    "dense_relevance": "dense relevance",
    "keyword_rank": "keyword rank",
    "keyword_score": "keyword BM25",
}
MODE_LABELS = {"dense": "Dense (embeddings)", "fts": "Keywords (BM25)", "hybrid": "Hybrid (both, fused)"}
SCORING_LABELS = {
    "combined": "Combined (search + post vector)",
    "retrieval": "Best chunk in the search",
    "post": "Post vector only",
    "chunk": "Nearest chunk only",
}
PAGES = ["Browse chunks", "Test a query", "Posts about…"]
COUNTED = "inspect_counted"  # the last query (with its choices) counted against the question limit

settings = shared.base_settings()
store = shared.get_store(settings)
md = shared.md_escape

st.title("Inspect chunks")
shared.show_flash()
# A reader's queries here never call the chat model: a configured LLM reranker is the owner's only.
settings = shared.without_model_spending(shared.advanced_controls(settings))
mode = st.radio("Mode", PAGES, horizontal=True, key="inspect_mode")


def load_chunks() -> pd.DataFrame:
    try:
        return pd.DataFrame(store.list_chunks(columns=COLUMNS), columns=COLUMNS)
    except shared.KNOWN_ERRORS as exc:
        st.error(f"Cannot read the chunks: {md(exc)}")
        return pd.DataFrame(columns=COLUMNS)


def filter_chunks(chunks: pd.DataFrame) -> pd.DataFrame:
    search_col, collection_col, post_col = st.columns([2, 1, 2])
    needle = search_col.text_input("Search text, titles, sections, keywords", key="inspect_search")
    collections = sorted({c for c in chunks["collection"] if c})
    chosen = collection_col.multiselect("Collection", collections, key="inspect_collections")
    titles = dict(zip(chunks["post_id"], chunks["title"], strict=False))
    linked = st.query_params.get("post")  # a chat reply's link to its post: ?post=<id>
    if linked in titles and "inspect_posts" not in st.session_state:
        st.session_state["inspect_posts"] = [linked]
    posts = post_col.multiselect(
        "Post",
        sorted(titles, key=lambda p: titles[p] or p),
        key="inspect_posts",
        format_func=lambda p: titles.get(p) or p,
    )
    keep = pd.Series(True, index=chunks.index)
    if chosen:
        keep &= chunks["collection"].isin(chosen)
    if posts:
        keep &= chunks["post_id"].isin(posts)
    if needle.strip():
        haystack = (
            chunks["text"].fillna("")
            + "\n"
            + chunks["title"].fillna("")
            + "\n"
            + chunks["section"].fillna("")
            + "\n"
            + chunks["keywords"].map(lambda k: " ".join(k if k is not None else []))
        )
        keep &= haystack.str.contains(needle.strip(), case=False, regex=False)
    return chunks[keep].reset_index(drop=True)


def show_chunk(chunk_id: str) -> None:
    """The full chunk, its neighbours in the same post, its embedded text, and (owner) an editor."""
    row = store.get_chunk(chunk_id)
    if row is None:
        st.warning("That chunk is gone (deleted or re-ingested). Pick another.")
        return
    siblings = store.list_chunks(post_id=row["post_id"], columns=["chunk_id", "idx", "section", "text"])
    position = next((i for i, s in enumerate(siblings) if s["chunk_id"] == chunk_id), 0)
    st.subheader(md(row["title"] or row["post_id"]))
    facts = [
        row["collection"],
        row["section"],
        f"chunk {position + 1} of {len(siblings)}",
        shared.plural(row["tokens"], "token"),
        f"id {row['chunk_id']}",
    ]
    st.caption(" · ".join(md(f) for f in facts if f))
    st.text(row["text"])
    if row["keywords"]:
        st.caption("Keywords: " + md(", ".join(row["keywords"])))
    with st.expander("Embedded text (what the vector was made from)"):
        st.code(
            embedded_text(row["section"] or "", row["text"], row["keywords"] or [], row["title"] or ""),
            language=None,
            wrap_lines=True,
        )
    before, after = st.columns(2)
    for col, index, label in ((before, position - 1, "Previous chunk"), (after, position + 1, "Next chunk")):
        with col:
            st.markdown(f"**{label}**")
            if 0 <= index < len(siblings):
                if siblings[index]["section"]:
                    st.caption(md(siblings[index]["section"]))
                st.text(siblings[index]["text"])
            else:
                st.caption("None: this is the " + ("first" if index < 0 else "last") + " chunk of the post.")
    st.markdown("**Edit this chunk**")
    if not shared.require_owner("Editing chunks"):
        return
    with st.form(f"edit_{chunk_id}"):
        text = st.text_area("Text", value=row["text"], height=200)
        keywords = st.text_input(
            "Keywords (comma-separated)",
            value=", ".join(row["keywords"] or []),
            help=f"At most {MAX_KEYWORDS} keywords, each at most {MAX_KEYWORD_WORDS} words and "
            f"{MAX_KEYWORD_CHARS} characters.",
        )
        st.caption("Only this chunk is re-embedded. A later re-ingest of a changed post rebuilds its chunks.")
        if st.form_submit_button("Save and re-embed"):
            try:
                edit_chunk(
                    chunk_id,
                    settings,
                    text=text,
                    keywords=keywords.split(","),
                    store=store,
                    embedder=shared.get_embedder_cached(settings),
                )
            except KeywordError as exc:  # nothing was saved; the text and keywords typed stay in the form
                st.error(f"Not saved: {md(exc)}.")
            except shared.KNOWN_ERRORS as exc:
                st.error(f"Could not save: {md(exc)}")
            else:
                shared.flash("Saved and re-embedded the chunk.")
                st.rerun()


def browse() -> None:
    chunks = load_chunks()
    if chunks.empty:
        st.info("There are no chunks yet: ingest some posts first.")
        return
    shown = filter_chunks(chunks)
    st.caption(f"{len(shown)} of {shared.plural(len(chunks), 'chunk')}. Select a row to see the whole chunk.")
    event = st.dataframe(
        shown[SHOWN],
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        key=shared.table_key("chunk_table", shown["chunk_id"]),
        column_config=shared.column_config(),
    )
    rows = [i for i in event.selection.rows if i < len(shown)]
    if rows:
        st.divider()
        show_chunk(shown.loc[rows[0], "chunk_id"])


def score_chart(frame: pd.DataFrame, threshold: float) -> alt.LayerChart:
    bars = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("rank:O", title="rank"),
            y=alt.Y("relevance:Q", title="relevance", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color(
                "passed:N", title="used", scale=alt.Scale(domain=[True, False], range=["#3b4a8c", "#c9c4b8"])
            ),
            tooltip=[
                "rank",
                alt.Tooltip("relevance:Q", format=".3f"),
                "title",
                "section",
                "why",
                alt.Tooltip("dense relevance:Q", format=".3f"),
                alt.Tooltip("keyword BM25:Q", format=".2f"),
            ],
        )
    )
    rule = (
        alt.Chart(pd.DataFrame({"threshold": [threshold]}))
        .mark_rule(color="#c0392b", strokeDash=[4, 3])
        .encode(y="threshold:Q")
    )
    return bars + rule


def stored_collections() -> list[str]:
    """The table's collections for the pickers (none when the table cannot be read: the pages say why)."""
    try:
        return store.collections()
    except shared.KNOWN_ERRORS:
        return []


def admitted(question: str, max_chars: int, choices: tuple) -> str | None:
    """The question to search for, or None (with the reason shown): checked like the chat's (length
    cap, then the session's questions a minute). A rerun of the same query with the same choices is
    not counted again."""
    if not question.strip():
        return None
    try:
        asked = check_question(question, max_chars)
    except QuestionError as exc:
        st.warning(str(exc))
        return None
    signature = (asked, *choices)
    if st.session_state.get(COUNTED) == signature:
        return asked
    decision = shared.limiter().acquire()
    if not decision.allowed:
        st.warning(decision.message)
        return None
    st.session_state[COUNTED] = signature
    return asked


def reranker_choice(rerank_col) -> str:
    """The reranker picker: every reranker for the owner; for a reader only those that don't call the
    chat model. The choice is checked again here, not only by the picker's options."""
    owner = shared.may_spend_model()
    options = [r for r in RERANKERS if owner or r not in MODEL_RERANKERS]
    default = settings.reranker if settings.reranker in options else "none"
    chosen = rerank_col.selectbox(
        "Reranker",
        options,
        index=options.index(default),
        help="Re-judge the best candidates with the chat model (llm, for the site owner) or a "
        "cross-encoder (INKWELL_RERANK_MODEL). Slow with the built-in model.",
        key="inspect_reranker",
    )
    if chosen in MODEL_RERANKERS and not shared.may_spend_model():
        return "none"
    return chosen


def query() -> None:
    question = st.text_input("Question", key="inspect_query", placeholder="What would a reader ask?")
    collections = stored_collections()
    coll_col, mode_col, rerank_col = st.columns([3, 1, 1])
    chosen = coll_col.multiselect(
        "Collections", collections, placeholder="All collections", key="inspect_query_coll"
    )
    retrieval_mode = mode_col.selectbox(
        "Retrieval",
        RETRIEVAL_MODES,
        index=RETRIEVAL_MODES.index(settings.retrieval_mode),
        format_func=MODE_LABELS.get,
        key="inspect_retrieval_mode",
    )
    reranker = reranker_choice(rerank_col)
    if not question.strip():
        st.caption(
            "Type a question to see every candidate chunk, its relevance, and which ones would be used."
        )
        return
    asked = admitted(
        question, settings.max_question_chars, ("query", tuple(chosen), retrieval_mode, reranker)
    )
    if asked is None:
        return
    try:
        result = search(
            asked,
            settings.replace(reranker=reranker),
            store=store,
            embedder=shared.get_embedder_cached(settings),
            collections=chosen or None,
            mode=retrieval_mode,
        )
    except shared.KNOWN_ERRORS as exc:
        st.error(f"Search failed: {md(exc)}")
        return
    for note in result.notes:
        st.warning(md(note))
    if not result.candidates:
        st.info("No candidates: the table is empty or no chunk is in these collections.")
        return
    cols = st.columns(4)
    cols[0].metric("Candidates", len(result.candidates))
    cols[1].metric("Used", len(result.hits))
    cols[2].metric("Threshold", f"{settings.threshold:.2f}")
    cols[3].metric("Search time", f"{result.seconds * 1000:.0f} ms")
    nearest = shared.plural(settings.top_k, "nearest chunk")
    matches = shared.plural(settings.top_k, "best keyword match", "best keyword matches")
    found_by = {
        "dense": f"the {nearest}",
        "fts": f"the {matches} (BM25)",
        "hybrid": f"the {nearest} and the {matches}, "
        + (
            f"fused by reciprocal rank (k = {settings.rrf_k})"
            if settings.fusion == "rrf"
            else "relevance = ½ cosine ÷ best cosine + ½ BM25 ÷ best BM25"
        ),
    }[result.mode]
    st.caption(
        f"Rules: {found_by}; keep relevance ≥ {settings.threshold:.2f}, "
        f"but at least {settings.min_chunks} and at most {settings.max_chunks}."
    )
    if result.feedback:
        st.caption(
            "Asked in another language than the posts: the keyword search also used the nearest "
            f"passages' keywords ({md(', '.join(result.feedback))})."
        )
    frame = with_scores(shared.hits_frame(result.candidates, settings.threshold), result.candidates)
    st.altair_chart(score_chart(frame, settings.threshold), width="stretch")
    st.dataframe(frame, hide_index=True, column_config=query_columns(), key="query_table")


def with_scores(frame: pd.DataFrame, candidates: list) -> pd.DataFrame:
    """The hits table plus each candidate's dense and keyword contributions, after relevance."""
    why = dict(WHY_COLUMNS)
    if any(h.rerank_score is not None for h in candidates):  # only when a reranker judged them
        why["rerank_score"] = "rerank"
    scores = pd.DataFrame([h.scores() for h in candidates], columns=list(why)).rename(columns=why)
    for column in ("dense rank", "keyword rank"):
        scores[column] = scores[column].astype("Int64")  # empty where that search missed the chunk
    at = frame.columns.get_loc("relevance") + 1
    return pd.concat([frame.iloc[:, :at], scores, frame.iloc[:, at:]], axis=1)


def query_columns() -> dict:
    cc = st.column_config
    fit = shared.header_width
    return {
        **shared.column_config(),
        "dense rank": cc.NumberColumn(
            "dense rank", width=fit("dense rank"), help="Rank in the dense (embedding) search"
        ),
        "dense relevance": cc.NumberColumn(
            "dense relevance",
            format="%.3f",
            width=fit("dense relevance"),
            help="1 − cosine distance to the question",
        ),
        "keyword rank": cc.NumberColumn(
            "keyword rank", width=fit("keyword rank"), help="Rank in the keyword search"
        ),
        "keyword BM25": cc.NumberColumn(
            "keyword BM25", format="%.2f", width=fit("keyword BM25"), help="BM25 score of the keyword match"
        ),
        "rerank": cc.NumberColumn(
            "rerank",
            format="%.3f",
            width=fit("rerank"),
            help="The reranker's 0..1 judgement (INKWELL_RERANKER)",
        ),
    }


def posts_view() -> None:
    """Which posts are about a topic: every post ranked, with its relevance and best passage."""
    question = st.text_input("Topic or question", key="posts_about_query", placeholder="e.g. choosing wood")
    collections = stored_collections()
    coll_col, scoring_col, k_col = st.columns([3, 2, 1])
    chosen = coll_col.multiselect(
        "Collections", collections, placeholder="All collections", key="posts_about_coll"
    )
    scoring = scoring_col.selectbox(
        "Ranking",
        SCORINGS,
        index=SCORINGS.index(DEFAULT_SCORING),
        format_func=SCORING_LABELS.get,
        key="posts_about_scoring",
    )
    k = k_col.number_input("Posts", min_value=1, max_value=100, value=10, key="posts_about_k")
    if not question.strip():
        st.caption("Type a topic to rank the posts by how much they are about it.")
        return
    asked = admitted(question, settings.max_question_chars, ("posts", tuple(chosen), scoring, int(k)))
    if asked is None:
        return
    try:
        matches = posts_about(
            asked,
            settings,
            store=store,
            embedder=shared.get_embedder_cached(settings),
            k=int(k),
            collections=chosen or None,
            scoring=scoring,
        )
    except shared.KNOWN_ERRORS as exc:
        st.error(f"Ranking failed: {md(exc)}")
        return
    if not matches:
        st.info("No posts: the table is empty or no post is in these collections.")
        return
    st.caption(
        "Relevance 0..1. Post vector = the mean of the post's chunk vectors; combined = ½ best chunk "
        "relevance in the search + ½ post similarity ÷ the best post's."
    )
    st.dataframe(posts_frame(matches), hide_index=True, column_config=posts_columns(), key="posts_table")


def posts_frame(matches: list) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "rank": m.rank,
                "relevance": m.relevance,
                "title": m.title,
                "collection": m.collection,
                "date": m.date,
                "post similarity": m.post_similarity,
                "best chunk": m.retrieval_relevance or m.chunk_similarity,
                "chunks": m.n_chunks,
                "section": m.best_section,
                "text": m.best_text,
            }
            for m in matches
        ]
    )


def posts_columns() -> dict:
    cc = st.column_config
    fit = shared.header_width
    return {
        **shared.column_config(),
        "date": cc.TextColumn("date", width=fit("2024-07-14")),  # the values are the widest here
        "post similarity": cc.NumberColumn(
            "post similarity",
            format="%.3f",
            width=fit("post similarity"),
            help="Cosine of the post vector and the question",
        ),
        "best chunk": cc.NumberColumn(
            "best chunk", format="%.3f", width=fit("best chunk"), help="Relevance of the post's best chunk"
        ),
        "chunks": cc.NumberColumn("chunks", width=fit("chunks")),
        "text": cc.TextColumn("best passage", width="large"),
    }


if mode == "Browse chunks":
    browse()
elif mode == "Test a query":
    query()
else:
    posts_view()
st.divider()
shared.undo_button(settings)
