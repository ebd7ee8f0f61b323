"""Chat: readers ask, the author's voice answers from the posts, with the posts cited.

Flow per question: rate limit → follow-up rewrite (with history) → translation into the writings'
main language (if configured; shown as "Searched for: …") →
retrieval → streamed answer → cited posts and the excerpts that went into the context.
"""

from __future__ import annotations

import streamlit as st

from core import app_state
from core.answer import answer, rewrite_followup, translate_for_corpus
from core.grounding import check_grounding
from core.llm import LLMError
from core.retrieve import search

MESSAGES = "chat_messages"
BUILTIN_NOTE = "Answered by the small offline model: rough. Set an OpenAI key or server for better answers."

settings = app_state.base_settings()
store = app_state.get_store(settings)
md = app_state.md_escape

st.title(f"Ask {md(settings.author_name)}")
st.caption(f"Questions are answered in the voice of {md(settings.author_name)}, from their posts only.")

# Sidebar: filters and controls ----------------------------------------------------------------------
try:
    collections = store.collections()
except app_state.KNOWN_ERRORS as exc:
    st.error(f"Cannot read the posts: {md(exc)}")
    collections = []
chosen = st.sidebar.multiselect(
    "Collections", collections, placeholder="All collections", key="chat_collections"
)
settings = app_state.advanced_controls(settings)
if st.sidebar.button("Clear chat", icon=":material/delete_sweep:"):
    st.session_state[MESSAGES] = []
messages: list[dict] = st.session_state.setdefault(MESSAGES, [])


def source_line(source: dict) -> str:
    where = ", ".join(md(v) for v in (source.get("collection"), source.get("date")) if v)
    return (
        f"{md(source['title'])}"
        + (f" ({where})" if where else "")
        + f" · relevance {source['relevance']:.2f}"
    )


def show_details(message: dict) -> None:
    """Under an answer: notes, cited posts, the excerpts used, and a copyable copy of the text."""
    if message.get("builtin"):
        st.caption(BUILTIN_NOTE)
    elif message.get("model"):
        st.caption(f"Answered by {md(message['model'])}.")
    if message.get("truncated"):
        st.caption("The answer reached the length limit (max tokens) and stops mid-way.")
    sources = message.get("sources") or []
    if sources:
        lines = [f"{i}. {source_line(s)}" for i, s in enumerate(sources, start=1)]
        st.markdown("**Sources**\n\n" + "\n".join(lines))
    grounding = message.get("grounding")
    if grounding and grounding["supported_fraction"] is not None:
        judged = [g for g in grounding["sentences"] if g["judged"]]
        unsupported = [g["sentence"] for g in judged if not g["supported"]]
        st.caption(
            f"Grounding: {len(judged) - len(unsupported)} of {len(judged)} sentences are supported by the "
            "excerpts below."
        )
        if unsupported:
            with st.expander(f"{len(unsupported)} sentence(s) not found in the excerpts: treat with care"):
                for sentence in unsupported:
                    st.text(sentence)
    hits = message.get("hits") or []
    if hits:
        with st.expander(f"{len(hits)} excerpts went into the answer's context"):
            st.dataframe(
                app_state.hits_frame(hits).drop(columns=["rank"]),
                hide_index=True,
                column_config=app_state.column_config(),
            )
    if message.get("content"):
        with st.expander("Copy the answer"):
            st.code(message["content"], language=None, wrap_lines=True)


def show_message(message: dict) -> None:
    with st.chat_message(message["role"]):
        if message["role"] == "user":
            st.text(message["content"])
            return
        if message.get("searched"):
            st.caption(f"Searched for: {md(message['searched'])}")
        if message.get("content"):
            st.markdown(app_state.safe_answer(message["content"]))
        if message.get("error"):
            st.error(message["error"])
        show_details(message)


def history() -> list[dict]:
    """Earlier turns for the model: answered ones only (a failed answer has no content)."""
    return [
        {"role": m["role"], "content": m["content"]}
        for m in messages
        if m.get("content") and not m.get("error")
    ]


def ask(question: str) -> dict:
    """Answer one question, drawing as it goes; returns the assistant message to keep."""
    reply: dict = {"role": "assistant", "content": ""}
    turns = history()
    query = question
    try:
        embedder = app_state.get_embedder_cached(settings)
        if turns:
            try:
                query = rewrite_followup(question, turns, settings)
            except LLMError as exc:
                st.caption(f"Could not rewrite the follow-up ({md(exc)}); searching for it as asked.")
        if settings.should_translate:
            try:
                query = translate_for_corpus(query, settings)  # into the writings' language
            except LLMError as exc:
                st.caption(f"Could not translate the question ({md(exc)}); searching for it as asked.")
        if query.strip() != question.strip():
            reply["searched"] = query
            st.caption(f"Searched for: {md(query)}")
        with st.spinner("Searching the posts…"):
            retrieval = search(query, settings, store=store, embedder=embedder, collections=chosen or None)
        stream = answer(question, retrieval.hits, settings, history=turns)
        reply["model"] = stream.model_label
        reply["sources"] = [s.to_json() for s in stream.sources]
        reply["hits"] = [h.to_json() for h in stream.used_hits]
        try:
            st.write_stream(app_state.safe_answer_stream(stream))
        finally:
            reply["content"] = stream.text
            reply["builtin"] = stream.builtin and stream.called_model
            reply["truncated"] = stream.truncated
        if stream.called_model and stream.text.strip():
            reply["grounding"] = check_grounding(stream.text, stream.used_hits, embedder).to_json()
    except LLMError as exc:
        reply["error"] = f"The answer model failed: {md(exc)}"
    except app_state.KNOWN_ERRORS as exc:
        reply["error"] = f"Could not answer: {md(exc)}"
    if reply.get("error"):
        st.error(reply["error"])
    show_details(reply)
    return reply


# Page ------------------------------------------------------------------------------------------------
try:
    empty = store.counts()[1] == 0
except app_state.KNOWN_ERRORS:
    empty = False
if empty:
    st.info("There are no posts yet. The owner can add some on the Ingest page.")

for message in messages:
    show_message(message)

question = st.chat_input(f"Ask {settings.author_name} something")
if question and question.strip():
    decision = app_state.limiter().acquire()
    if not decision.allowed:
        st.warning(decision.message)
    else:
        user = {"role": "user", "content": question.strip()}
        show_message(user)
        with st.chat_message("assistant"):
            reply = ask(user["content"])
        messages.extend([user, reply])
