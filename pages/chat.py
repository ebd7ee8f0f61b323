"""Chat: readers ask, the author answers from the posts, with the posts cited.

Flow per question: rate limit → the turn (core/answer/turn.py: follow-up rewrite when it refers back,
translation into the writings' language, shown as "Searched for: …"; collections routing when the reader
picked none, shown under the answer with one-click overrides that ask again; retrieval) → the reply
(core/answer/reply.py): the author's quoted sentences, a streamed generated answer, or "I haven't
written about that" with the closest posts.
The reply's drawing lives in pages/shared/replies.py. The reader's fixed words ("Searched for:", "Writing…",
the comment box) are in the language the reader is answered in, the blog's before a question
(core/text/labels.py); each assistant message keeps its "language".
"""

from __future__ import annotations

import contextlib
import time

import streamlit as st

from core.answer import resolve_mode, search_turn, skipped_note
from core.llm import LLMError, describe_llm
from core.search import Route
from core.serve import AnswerRefused, AnswerStopped
from core.store.corpus import corpus_language
from core.text import QuestionError, check_question
from core.text.labels import ask_placeholder, label_language, labels, voice_caption
from pages import shared
from pages.shared import feedback, replies, starters
from pages.shared.details import details_toggle

shared.through_entry()  # first: a fresh server may run this file on its own (pages/shared/entry.py)

MESSAGES = "chat_messages"
STOPPED = "This answer was stopped: you asked another question before it was finished."
OVERRIDE = "chat_route_override"  # the last question's collections chosen by an override button
# The sidebar's answer modes, as readers see them.
ANSWER_MODES = {
    "auto": "Automatic",
    "extractive": "The author's own sentences",
    "generative": "A generated answer",
}

settings = shared.base_settings()
store = shared.get_store(settings)
md = shared.md_escape
blog_language = corpus_language(store, settings.local_home)  # the labels' language before a question

owner = starters.saved_owner(settings)  # the greeting, title and starter questions from Settings
st.set_page_config(page_title=owner.title(settings))  # the browser tab says whom the reader asks
st.title(md(owner.title(settings)))
st.caption(voice_caption(labels(blog_language), md(settings.named_author)))  # the unnamed: no "the author"

# Sidebar: filters and controls ----------------------------------------------------------------------
try:
    collections = store.collections()
except shared.KNOWN_ERRORS as exc:
    st.error(f"Cannot read the posts: {md(exc)}")
    collections = []
chosen = st.sidebar.multiselect(
    "Collections", collections, placeholder="All collections", key="chat_collections"
)
# The built-in 135M model writes poor answers: readers are offered no generated answer unless a real model
# (key or server) is configured. The owner's own INKWELL_ANSWER_MODE=generative still holds.
if settings.uses_builtin_llm:
    answer_mode = "generative" if settings.answer_mode == "generative" else "extractive"
    if answer_mode == "extractive":
        st.sidebar.caption("Answers quote the author's own sentences from the posts: no model writes a word.")
else:
    answer_mode = st.sidebar.radio(
        "Answers",
        list(ANSWER_MODES),
        index=list(ANSWER_MODES).index(settings.answer_mode),
        format_func=ANSWER_MODES.get,
        key="chat_answer_mode",
        help="The author's own sentences are quoted from the posts, unchanged: no model writes a word. "
        "A generated answer is written by the answer model from the same excerpts. Automatic quotes with "
        "the small built-in model and generates with an OpenAI key or server.",
    )
details = details_toggle()  # the owner's diagnostics (pages/shared/details.py)
settings = shared.advanced_controls(settings.replace(answer_mode=answer_mode), shown=details)
if answer_mode == "auto":
    st.sidebar.caption(f"Now: {ANSWER_MODES[resolve_mode(settings)].lower()}.")
kept = shared.conversations(settings)  # the turns under the conversation id in the URL (?c=…)
if MESSAGES not in st.session_state:  # a new session (or a reload): bring the conversation back
    st.session_state[MESSAGES] = kept.load(shared.conversation_id())
if st.sidebar.button("Clear chat", icon=":material/delete_sweep:"):
    st.session_state[MESSAGES] = []
    if shared.conversation_id():
        kept.delete(shared.conversation_id())
        shared.forget_conversation()
messages: list[dict] = st.session_state[MESSAGES]


def choose(override: list[str]) -> None:
    st.session_state[OVERRIDE] = override


def show_route(message: dict, last: bool) -> None:
    """Where the question was searched, why, and (under the last answer) buttons to search elsewhere."""
    data = message.get("route")
    if not data or not message.get("override_ok") or not details:
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
    """Under a reply: the route (with override buttons under the last one), then the reply's notes."""
    show_route(message, last)
    replies.show_notes(message)
    feedback.show(message, settings)


def show_message(message: dict, last: bool = False) -> None:
    with st.chat_message(message["role"]):
        if message["role"] == "user":
            st.text(message["content"])
            return
        if message.get("searched"):
            st.caption(f"{labels(message.get('language'))['searched_for']} {md(message['searched'])}")
        replies.show_body(message)
        if message.get("error"):
            st.error(message["error"])
        show_details(message, last)


def history() -> list[dict]:
    """Earlier turns for the model: answered ones only (a failed answer has no content), without the
    question being answered now (kept on the page with its pending answer)."""
    earlier = messages[:-2] if messages and messages[-1].get("pending") else messages
    return [
        {"role": m["role"], "content": m["content"]}
        for m in earlier
        if m.get("content") and not m.get("error")
    ]


def ask(question: str, override: list[str] | None = None, replacing: str | None = None) -> dict:
    """Answer one question, drawing as it goes; returns the assistant message to keep.

    `override` is the collections the reader chose with a button under the last answer ([] = all);
    `replacing` the logged question id of the answer this one replaces (it is revised, not logged again).
    """
    started = time.perf_counter()
    language = label_language(question, blog_language)
    words = labels(language)
    message: dict = {"role": "assistant", "content": "", "question": question, "language": language}
    turns = history()
    gate = shared.answer_gate(settings)
    try:
        embedder = shared.get_embedder_cached(settings)
        # The reader's own choice (sidebar or override button) wins; otherwise the router decides.
        reader_choice = override if override is not None else (chosen or None)
        with st.spinner(words["searching"]):
            searched = search_turn(
                question,
                settings,
                store=store,
                embedder=embedder,
                history=turns,
                collections=reader_choice,
                # With every answer slot taken, rewriting would wait for the model: join instead.
                use_model=gate.status().running < gate.capacity,
            )
        for step, exc in searched.skipped.items():
            st.caption(skipped_note(step, replies.model_detail(exc)))
        if searched.rewritten:
            message["searched"] = searched.query
            st.caption(f"{words['searched_for']} {md(searched.query)}")
        message["route"] = searched.route.to_json()
        # Overrides only when the router ran or an override did (not for a sidebar choice).
        message["override_ok"] = override is not None or searched.route.status in ("routed", "unsure")
        for note in searched.route.notes if details else ():
            st.caption(md(note))
        answered = searched.answer(settings, embedder)
        try:
            if answered.mode == "generative":
                # Model-written answers queue for a slot; quotes and fixed replies never wait.
                with gate.enter(owner=shared.owner_key(), alive=shared.session_alive()) as ticket:
                    shared.show_place_in_line(ticket)
                    writing = st.empty()
                    writing.caption(words["writing"])  # until the first words come: never an empty bubble
                    streamed = st.empty()
                    with streamed.container():
                        # A reply that falls back to quoting is drawn below as quotes, not as a stream.
                        deltas = (d for d in ticket.stream(answered) if answered.fallback is None)
                        st.write_stream(shared.safe_answer_stream(shared.clear_on_first(deltas, writing)))
                    writing.empty()
                if answered.fallback is not None:
                    streamed.empty()
            else:
                for _ in answered:  # quoted or fixed: the whole text at once
                    pass
        finally:
            # Named only when a model wrote the answer; where an own server runs is for the owner only.
            label = describe_llm(settings, endpoint=False) if answered.mode == "generative" else None
            message.update(
                replies.reply_message(answered, label, settings.uses_builtin_llm, describe_llm(settings))
            )
        if answered.mode != "generative":
            replies.show_body(message)
        message["question_id"] = feedback.record_reply(settings, answered, question, started, replacing)
    except AnswerRefused as exc:
        message["error"] = md(exc)
    except AnswerStopped as exc:
        message["error"] = f"The answer was stopped: {md(exc)}"
    except LLMError as exc:
        message["error"] = replies.model_failed(exc)
    except shared.KNOWN_ERRORS as exc:
        message["error"] = f"Could not answer: {md(exc)}"
    if message.get("error"):
        st.error(message["error"])
    show_details(message, last=True)
    return message


# Page ------------------------------------------------------------------------------------------------
try:
    empty = store.counts()[1] == 0
except shared.KNOWN_ERRORS:
    empty = False
if empty:
    st.info("There are no posts yet. The owner can add some on the Ingest page.")
else:
    with contextlib.suppress(*shared.KNOWN_ERRORS):  # a table that cannot be read says so below
        shared.warm_answers(settings, store, shared.get_embedder_cached(settings))

# The input's words: the last answer's language, the blog's before any.
page_language = next((m["language"] for m in reversed(messages) if m.get("language")), blog_language)
page_words = labels(page_language)
picked = starters.take_starter()  # a starter question clicked: asked like a typed one
if not messages and picked is None:
    starters.show_welcome(owner, page_words["try_asking"])  # each starter asked in one click
# Keyed: the placeholder follows the answer's language, and without a key a new placeholder is a new
# widget, which drops the question the reader typed into the old one (it was never asked, without a word).
question = st.chat_input(ask_placeholder(page_words, settings.named_author), key="chat_question")
if question is None:
    question = picked
asked = None
# Why a question typed just now was not asked: drawn under the conversation, beside the input the reader
# is looking at. Above it, a long conversation would scroll it out of view, and the question would seem
# to vanish without a word.
refusal = ""
# A refusal is in the question's language, else the conversation's (a German reader's "ok?" is too short
# to tell), else the blog's.
refusal_language = label_language(question, page_language)
if question is not None:
    try:  # before any work: an empty or over-long question is refused with a clear message
        asked = check_question(question, settings.max_question_chars)
    except QuestionError as exc:
        refusal = exc.in_language(refusal_language)
override = st.session_state.pop(OVERRIDE, None)
replaced = False  # an override re-asked the last question: its answer replaces the old one
replacing = None  # and the old answer's logged question id, revised rather than logged again
if asked or (override is not None and len(messages) >= 2 and messages[-2]["role"] == "user"):
    # A new question, or an override button: the last question again, in the chosen collections.
    allowed = shared.limiter().acquire()
    if not allowed.allowed:
        refusal = allowed.in_language(refusal_language)
        asked = None
    elif not asked:
        asked = messages[-2]["content"]
        replacing = messages[-1].get("question_id")
        del messages[-2:]  # the new answer takes the old one's place
        replaced = True
    else:
        override = None

for i, message in enumerate(messages):
    show_message(message, last=i == len(messages) - 1 and not asked)
if refusal:
    st.warning(refusal)

if asked:
    user = {"role": "user", "content": asked}
    # Kept before answering: a reader who asks again while this answer is written starts a new run,
    # which stops this one; the question stays on the page, its answer marked as stopped.
    pending = {"role": "assistant", "content": "", "question": asked, "error": STOPPED, "pending": True}
    messages.extend([user, pending])
    show_message(user)
    with st.chat_message("assistant"):
        answer_message = ask(user["content"], override, replacing)
    messages[-2:] = [user, answer_message]
    if kept.enabled:
        cid = shared.conversation_id()
        # A new id while the page shows earlier turns (Back took ?c= out of the URL): it keeps them all,
        # or a reload would bring back this question alone.
        fresh = cid is None
        cid = cid or shared.start_conversation()
        if replaced or fresh:
            kept.replace(cid, messages)
        else:
            kept.append(cid, user, answer_message)
feedback.footer(settings)
