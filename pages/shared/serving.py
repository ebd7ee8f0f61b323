"""Streamlit glue for serving many readers (the work is core/serve's): the process-wide line for
model-written answers, whether this browser session is still there, the reader's place in line, and the
conversation kept under the id in the URL.

The chat page, for a generated answer (retrieval and extractive answers skip the line):

    gate = shared.answer_gate(settings)
    with gate.enter(owner=shared.owner_key(), alive=shared.session_alive()) as ticket:
        shared.show_place_in_line(ticket)
        st.write_stream(shared.safe_answer_stream(ticket.stream(stream)))
"""

from __future__ import annotations

import atexit
import logging
from collections.abc import Callable, Iterable, Iterator
from threading import Event, Thread
from typing import Any

import streamlit as st

from core.answer.extractive import warm_up
from core.config import Settings
from core.embed import Embedder
from core.search import table_floor
from core.serve import URL_PARAM, AnswerGate, Conversations, Ticket, is_conversation_id, new_conversation_id
from core.serve.conversations import FILE_NAME
from core.serve.resources import shared_gate
from core.store import Store

LINE_ICON = ":material/hourglass_top:"
log = logging.getLogger(__name__)


# The line for model-written answers --------------------------------------------------------------------


def answer_gate(settings: Settings) -> AnswerGate:
    """One gate per process (and per capacity/limits), shared with the HTTP API: every session's and
    every API client's generated answers queue here."""
    return shared_gate(settings)


def session_alive() -> Callable[[], bool]:
    """A check, safe from any thread, that this browser session is still connected (the gate's watchdog
    stops the answer of a reader who closed the tab). Always true outside a served app (AppTest)."""
    from streamlit import runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not runtime.exists():
        return lambda: True
    instance, session_id = runtime.get_instance(), ctx.session_id
    return lambda: instance.is_active_session(session_id)


def owner_key() -> str:
    """Whose answer this is, for `gate.enter(owner=...)`: the conversation id in the URL (so a reader who
    reloads and asks again stops their old answer), else this browser session."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    cid = conversation_id()
    if cid:
        return cid
    ctx = get_script_run_ctx()
    return f"session:{ctx.session_id}" if ctx is not None else "session:-"


def place_in_line_message(place: int) -> str:
    ahead = "1 reader is" if place == 1 else f"{place} readers are"
    return (
        f"Many readers are asking right now: {ahead} ahead of you. Your answer starts when a place frees up."
    )


def show_place_in_line(ticket: Ticket) -> int:
    """While the ticket waits: its place in line, redrawn every half second (each redraw is also where
    Streamlit stops the run of a reader who asked again or left); cleared once the answer may start.
    Draws nothing when a slot is free. Returns the first place shown (0: no wait). Raises AnswerStopped
    if the ticket is stopped meanwhile."""
    box = st.empty()
    first = 0
    for place in ticket.wait():
        first = first or place
        box.info(place_in_line_message(place), icon=LINE_ICON)
    box.empty()
    return first


def clear_on_first(deltas: Iterable[str], placeholder: Any) -> Iterator[str]:
    """`deltas` unchanged, emptying `placeholder` (e.g. "Writing…") when the first one arrives."""
    first = True
    for delta in deltas:
        if first:
            placeholder.empty()
            first = False
        yield delta


# Warm answers ------------------------------------------------------------------------------------------


# Set at exit: a warm-up still embedding when the interpreter shuts down aborted the process from inside
# torch ("terminate called without an active exception"); it now stops after its current batch.
_SHUTTING_DOWN = Event()
_WARMING: list[Thread] = []
WARM_UP_EXIT_WAIT = 30.0  # s: one batch of 64 sentences takes a few seconds with e5 on 2 busy cores


@atexit.register
def _stop_warming() -> None:
    _SHUTTING_DOWN.set()
    for thread in _WARMING:
        thread.join(WARM_UP_EXIT_WAIT)


@st.cache_resource(show_spinner=False)
def _warming(data_dir: str, chunks_version: int, model_id: str, _store: Store, _embedder: Embedder) -> Thread:
    def work() -> None:
        try:
            table_floor(_store, _embedder)  # the bar's floor for this table version (core/search/floor.py)
            rows = _store.list_chunks(columns=["text", "title", "section"])
            warm_up(rows, _embedder, stop=_SHUTTING_DOWN.is_set)
        except Exception:  # a warm-up that fails only leaves answers as fast as without it
            log.exception("warming the answer sentences failed")

    thread = Thread(target=work, name="inkwell-warm-answers", daemon=True)
    _WARMING.append(thread)
    thread.start()
    return thread


def warm_answers(settings: Settings, store: Store, embedder: Embedder) -> None:
    """Once per process and table version: measure the table's floor and embed the sentences answers
    quote from, in the background (core/answer/extractive.py warm_up), so readers' answers need only
    their question's vector."""
    version = store.versions().chunks
    if version is not None:
        _warming(str(settings.data_dir), version, embedder.model_id, store, embedder)


# Conversations -----------------------------------------------------------------------------------------


@st.cache_resource(show_spinner=False)
def _conversations(path: str, hours: float, enabled: bool) -> Conversations:
    return Conversations(path, hours=hours, enabled=enabled)


def conversations(settings: Settings) -> Conversations:
    """The data dir's conversations, one object per process and settings (with `keep_conversations` off it
    reads and writes nothing, and deleted what the file held when it was made)."""
    path = settings.local_home.resolve() / FILE_NAME
    return _conversations(str(path), float(settings.conversation_hours), bool(settings.keep_conversations))


def conversation_id() -> str | None:
    """This chat's conversation id from the URL (`?c=…`), or None (missing or not an id we could have made)."""
    value = st.query_params.get(URL_PARAM)
    return value if is_conversation_id(value) else None


def start_conversation() -> str:
    """A new conversation id, put in the URL (so a reload, or the link, brings the conversation back)."""
    cid = new_conversation_id()
    st.query_params[URL_PARAM] = cid
    return cid


def forget_conversation() -> None:
    """Take the conversation id out of the URL (after "Clear chat" deleted it)."""
    if URL_PARAM in st.query_params:
        del st.query_params[URL_PARAM]
