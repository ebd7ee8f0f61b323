"""Stopping a model's stream from another thread (core/llm/cancel.py, core/serve/admission.py): the real
openai client against the scripted server on loopback, whose stream stalls after its first event."""

from __future__ import annotations

import threading
import time

import pytest

from core.config import Settings
from core.llm import LLMError, stream_chat
from core.llm.cancel import CancelToken, cancel_scope
from core.serve import AnswerGate, AnswerStopped
from tests.servers import Reply, ScriptedOpenAIServer


@pytest.fixture
def stalled():
    """A server whose stream stalls 30 s after its first event, like llama.cpp reading a long prompt."""
    with ScriptedOpenAIServer() as server:
        server.push(Reply(chat_text=["Hello", " there."], pause=30))
        yield server


def remote(server: ScriptedOpenAIServer) -> Settings:
    return Settings(openai_base_url=server.base_url, max_retries=0, request_timeout=60)


def test_cancelling_a_token_cuts_a_blocked_stream_at_once(stalled):
    token = CancelToken()
    deltas = stream_chat(remote(stalled), [{"role": "user", "content": "hi"}])
    threading.Timer(0.5, token.cancel, args=("Stopped for the test.",)).start()
    started = time.monotonic()
    with cancel_scope(token), pytest.raises(LLMError, match=r"Stopped for the test\.") as info:
        next(deltas)  # blocked reading: only the role chunk came
    assert info.value.kind == "cancelled"
    # Cut at once (~0.5 s, the timer): the bound only tells that from waiting out the 30 s stall.
    assert time.monotonic() - started < 20
    _wait_for(lambda: stalled.dropped == 1)  # the server saw the client go


def test_gate_stops_a_blocked_model_stream_when_the_owner_asks_again(stalled):
    g = AnswerGate(2, watch_interval=None)
    ticket = g.enter(owner="reader")
    stream = ticket.stream(stream_chat(remote(stalled), [{"role": "user", "content": "hi"}]))
    threading.Timer(0.5, g.enter, kwargs={"owner": "reader"}).start()
    started = time.monotonic()
    with pytest.raises(AnswerStopped, match="you asked a new question"):
        next(stream)
    assert time.monotonic() - started < 20  # ~0.5 s; waiting out the 30 s stall would fail
    _wait_for(lambda: stalled.dropped == 1)


def test_without_a_scope_cancelling_does_not_reach_the_stream():
    """The control for the two tests above: the token only acts on streams opened inside its scope."""
    with ScriptedOpenAIServer() as server:
        server.push(Reply(chat_text=["Hello", " there."], pause=1.0))
        token = CancelToken()
        deltas = stream_chat(remote(server), [{"role": "user", "content": "hi"}])
        threading.Timer(0.2, token.cancel).start()
        assert "".join(deltas) == "Hello there."
        assert server.dropped == 0


def _wait_for(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)
