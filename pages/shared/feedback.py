"""The question log in the chat (core/store/questions.py): each reply logged once it is known, a thumbs
up/down with an optional short comment under each answer, and the footer note saying what is kept.

    message["question_id"] = feedback.record_reply(settings, answered, question, started)
    feedback.show(message, settings)    # under the answer; nothing without a question id
    feedback.footer(settings)           # once per page, while the log is on
"""

from __future__ import annotations

import time

import streamlit as st

from core.answer import Reply
from core.answer.record import record
from core.config import Settings
from core.serve.resources import shared_question_log
from core.store.questions import MAX_COMMENT_CHARS, PRIVACY_NOTE, QuestionLog
from core.text.labels import labels

FOOTER = PRIVACY_NOTE  # the widget shows the same sentence (core/store/questions.py)


def question_log(settings: Settings) -> QuestionLog:
    """One log object per process and data directory, shared with the HTTP API (its retention runs at
    most every ten minutes)."""
    return shared_question_log(settings)


def record_reply(
    settings: Settings, answered: Reply, question: str, started: float, replacing: str | None = None
) -> str | None:
    """Log a chat reply whose text is known; `started` is the perf_counter when the question came in.
    `replacing`: the id of the logged question this reply answers again (re-asked in other collections),
    whose row it revises instead of logging the question twice."""
    seconds = time.perf_counter() - started
    return record(question_log(settings), answered, question, "chat", seconds, replacing=replacing)


def _rated(question_id: str, settings: Settings) -> None:
    value = st.session_state.get(f"thumbs_{question_id}")
    if value is None:  # the thumb clicked again: taken back, so the Readers page no longer counts it
        question_log(settings).unrate(question_id)
    else:
        question_log(settings).feedback(question_id, up=value == 1)


def show(message: dict, settings: Settings) -> None:
    """Thumbs up/down under an answer, then (once rated) a short comment box; each recorded against the
    message's question id. Its words are in the message's "language" (English without one)."""
    question_id = message.get("question_id")
    if not question_id or not settings.question_log:
        return
    rating = st.feedback(
        "thumbs", key=f"thumbs_{question_id}", on_change=_rated, args=(question_id, settings)
    )
    if rating is None:
        return
    words = labels(message.get("language"))
    sent = f"commented_{question_id}"
    if st.session_state.get(sent):
        st.caption(words["thanks"])
        return
    with st.form(f"comment_{question_id}", clear_on_submit=True, border=False):
        comment = st.text_input(
            words["comment"], max_chars=MAX_COMMENT_CHARS, key=f"comment_text_{question_id}"
        )
        if st.form_submit_button(words["send"]) and comment.strip():
            question_log(settings).feedback(question_id, up=rating == 1, comment=comment)
            st.session_state[sent] = True
            st.caption(words["thanks"])


def footer(settings: Settings) -> None:
    """The note on what is kept, while the log is on."""
    if settings.question_log:
        st.caption(FOOTER)
