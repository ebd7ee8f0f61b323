"""Chat: readers ask, the author's voice answers from the posts, with the posts cited.

Flow per question: rate limit → follow-up rewrite (with history) → translation into the writings'
main language (if configured; shown as "Searched for: …") → collections routing (core/search/route.py, when
the reader picked no collection; shown under the answer with one-click overrides that ask again) →
retrieval → streamed answer → cited posts and the excerpts that went into the context.
"""

from __future__ import annotations

import streamlit as st

from core.answer import answer, rewrite_followup, translate_for_corpus
from core.llm import LLMError
from core.search import Route, route_and_search
from pages import shared

MESSAGES = "chat_messages"
OVERRIDE = "chat_route_override"  # the last question's collections chosen by an override button
BUILTIN_NOTE = "Answered by the small offline model: rough. Set an OpenAI key or server for better answers."

settings = shared.base_settings()
store = shared.get_store(settings)
md = shared.md_escape

st.title(f"Ask {md(settings.author_name)}")
st.caption(f"Questions are answered in the voice of {md(settings.author_name)}, from their posts only.")

# Sidebar: filters and controls ----------------------------------------------------------------------
try:
    collections = store.collections()
except shared.KNOWN_ERRORS as exc:
    st.error(f"Cannot read the posts: {md(exc)}")
    collections = []
chosen = st.sidebar.multiselect(
    "Collections", collections, placeholder="All collections", key="chat_collections"
)
settings = shared.advanced_controls(settings)
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


def choose(override: list[str]) -> None:
    st.session_state[OVERRIDE] = override


def show_route(message: dict, last: bool) -> None:
    """Where the question was searched, why, and (under the last answer) buttons to search elsewhere."""
    data = message.get("route")
    if not data or not message.get("override_ok"):
        return
    decision = Route.from_json(data)
    st.caption(md(decision.summary()))
    if decision.reasons and decision.status != "chosen":
        with st.expander("How the collection was chosen"):
            for reason in decision.reasons:
                st.text(reason)
    if not last:
        return
    with st.container(horizontal=True):
        for i, (label, override) in enumerate(decision.alternatives(collections)):
            st.button(
                md(label), key=f"route_override_{i}", type="tertiary", on_click=choose, args=(override,)
            )


def show_details(message: dict, last: bool = False) -> None:
    """Under an answer: the route, notes, cited posts, the excerpts used, and a copyable copy of the text."""
    show_route(message, last)
    if message.get("builtin"):
        st.caption(BUILTIN_NOTE)
    elif message.get("model"):
        st.caption(f"Answered by {md(message['model'])}.")
    if message.get("truncated"):
        st.caption("The answer reached the length limit (max tokens): it ends at its last complete sentence.")
    dropped = message.get("dropped") or []
    if dropped:
        st.caption(f"Strict grounding: {len(dropped)} sentence(s) not found in the excerpts were left out.")
    sources = message.get("sources") or []
    if sources:
        lines = [f"{i}. {source_line(s)}" for i, s in enumerate(sources, start=1)]
        st.markdown("**Sources**\n\n" + "\n".join(lines))
    grounding = message.get("grounding")
    if grounding and grounding.get("skipped"):
        st.caption(f"Grounding not checked: {md(grounding['skipped'])}.")
    elif grounding and grounding["supported_fraction"] is not None:
        judged = [g for g in grounding["sentences"] if g["judged"]]
        unsupported = [g for g in judged if not g["supported"]]
        st.caption(
            f"Grounding: {len(judged) - len(unsupported)} of {len(judged)} sentences are supported by the "
            "excerpts below."
        )
        listed = dropped or unsupported
        if listed:
            label = "left out of the answer" if dropped else "not found in the excerpts: treat with care"
            with st.expander(f"{len(listed)} sentence(s) {label}"):
                for item in listed:
                    st.text(item["sentence"])
                    if item.get("unknown_details"):
                        st.caption("No excerpt mentions: " + ", ".join(item["unknown_details"]))
    hits = message.get("hits") or []
    if hits:
        with st.expander(f"{len(hits)} excerpts went into the answer's context"):
            st.dataframe(
                shared.hits_frame(hits).drop(columns=["rank"]),
                hide_index=True,
                column_config=shared.column_config(),
            )
    if message.get("content"):
        with st.expander("Copy the answer"):
            st.code(message["content"], language=None, wrap_lines=True)


def show_message(message: dict, last: bool = False) -> None:
    with st.chat_message(message["role"]):
        if message["role"] == "user":
            st.text(message["content"])
            return
        if message.get("searched"):
            st.caption(f"Searched for: {md(message['searched'])}")
        if message.get("content"):
            st.markdown(shared.safe_answer(message["content"]))
        if message.get("error"):
            st.error(message["error"])
        show_details(message, last)


def history() -> list[dict]:
    """Earlier turns for the model: answered ones only (a failed answer has no content)."""
    return [
        {"role": m["role"], "content": m["content"]}
        for m in messages
        if m.get("content") and not m.get("error")
    ]


def ask(question: str, override: list[str] | None = None) -> dict:
    """Answer one question, drawing as it goes; returns the assistant message to keep.

    `override` is the collections the reader chose with a button under the last answer ([] = all).
    """
    reply: dict = {"role": "assistant", "content": ""}
    turns = history()
    query = question
    try:
        embedder = shared.get_embedder_cached(settings)
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
        # The reader's own choice (sidebar or override button) wins; otherwise the router decides.
        reader_choice = override if override is not None else (chosen or None)
        with st.spinner("Searching the posts…"):
            decision, retrieval = route_and_search(
                query, settings, store=store, embedder=embedder, chosen=reader_choice
            )
        reply["route"] = decision.to_json()
        # Overrides only when the router ran or an override did (not for a sidebar choice).
        reply["override_ok"] = override is not None or decision.status in ("routed", "unsure")
        for note in decision.notes:
            st.caption(md(note))
        stream = answer(question, retrieval.hits, settings, history=turns, embedder=embedder)
        reply["model"] = stream.model_label
        reply["sources"] = [s.to_json() for s in stream.sources]
        reply["hits"] = [h.to_json() for h in stream.used_hits]
        try:
            st.write_stream(shared.safe_answer_stream(stream))
        finally:
            reply["content"] = stream.text
            reply["builtin"] = stream.builtin and stream.called_model
            reply["truncated"] = stream.truncated
            reply["dropped"] = [s.to_json() for s in stream.dropped]
        if stream.grounding is not None:
            reply["grounding"] = stream.grounding.to_json()
    except LLMError as exc:
        reply["error"] = f"The answer model failed: {md(exc)}"
    except shared.KNOWN_ERRORS as exc:
        reply["error"] = f"Could not answer: {md(exc)}"
    if reply.get("error"):
        st.error(reply["error"])
    show_details(reply, last=True)
    return reply


# Page ------------------------------------------------------------------------------------------------
try:
    empty = store.counts()[1] == 0
except shared.KNOWN_ERRORS:
    empty = False
if empty:
    st.info("There are no posts yet. The owner can add some on the Ingest page.")

question = st.chat_input(f"Ask {settings.author_name} something")
asked = question.strip() if question and question.strip() else None
override = st.session_state.pop(OVERRIDE, None)
if asked or (override is not None and len(messages) >= 2 and messages[-2]["role"] == "user"):
    # A new question, or an override button: the last question again, in the chosen collections.
    allowed = shared.limiter().acquire()
    if not allowed.allowed:
        st.warning(allowed.message)
        asked = None
    elif not asked:
        asked = messages[-2]["content"]
        del messages[-2:]  # the new answer takes the old one's place
    else:
        override = None

for i, message in enumerate(messages):
    show_message(message, last=i == len(messages) - 1 and not asked)

if asked:
    user = {"role": "user", "content": asked}
    show_message(user)
    with st.chat_message("assistant"):
        reply = ask(user["content"], override)
    messages.extend([user, reply])
