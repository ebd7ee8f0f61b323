"""Many readers against the real built-in llama.cpp server (marked llm): parallel slots overlap, and
stopping a stream (core.llm.cancel, as the answer gate does) stops llama.cpp's generation."""

from __future__ import annotations

import json
import threading
import time
import urllib.request

import pytest

from core.config import Settings
from core.llm import get_builtin_server, stream_chat
from core.llm.builtin import LocalServer, start_builtin_server
from core.llm.cancel import CancelToken, cancel_scope
from core.serve import AnswerGate, AnswerStopped

pytestmark = pytest.mark.llm

LONG = [{"role": "user", "content": "Write a long story about a carpenter, a barn and a winter."}]


def slots(server: LocalServer) -> list[dict]:
    root = server.base_url.removesuffix("/v1")
    with urllib.request.urlopen(f"{root}/slots", timeout=10) as response:
        return json.load(response)


def busy(server: LocalServer) -> int:
    return sum(1 for slot in slots(server) if slot.get("is_processing"))


def settings_for(server: LocalServer, **changes) -> Settings:
    """Talk to this (uncached) server as to any OpenAI-compatible one."""
    return Settings(openai_base_url=server.base_url, chat_model=server.model, max_retries=0, **changes)


def timed_stream(settings: Settings, max_tokens: int, times: dict, name: str) -> None:
    """Stream an answer that never stops early (ignore_eos), noting when it started, its first and its end."""
    times[f"{name}_start"] = time.monotonic()
    for _ in _stream(settings, max_tokens):
        times.setdefault(f"{name}_first", time.monotonic())
    times[f"{name}_end"] = time.monotonic()


def _stream(settings: Settings, max_tokens: int):
    from core.llm.client import make_client

    client, model = make_client(settings)
    with client:
        stream = client.chat.completions.create(
            model=model,
            messages=LONG,
            stream=True,
            max_tokens=max_tokens,
            temperature=0.0,
            extra_body={"ignore_eos": True},
        )
        with stream:
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    yield chunk.choices[0].delta.content


def test_the_default_server_has_parallel_slots():
    server = get_builtin_server(Settings())
    assert server.slots == 4 and server.n_ctx == 8192
    assert len(slots(server)) == 4
    assert {slot["n_ctx"] for slot in slots(server)} == {8192}  # each slot gets local_context, not a quarter


@pytest.fixture(scope="module")
def two_slots():
    server = start_builtin_server(Settings(builtin_slots=2, local_context=1024))
    try:
        yield server
    finally:
        server.close()


def test_a_second_answer_starts_while_the_first_is_being_written(two_slots):
    settings = settings_for(two_slots)
    times: dict[str, float] = {}
    first = threading.Thread(target=timed_stream, args=(settings, 160, times, "a"))
    first.start()
    deadline = time.monotonic() + 120
    while "a_first" not in times:
        assert time.monotonic() < deadline and first.is_alive(), "the first answer never started"
        time.sleep(0.01)
    timed_stream(settings, 4, times, "b")  # asked while the first is being written
    first.join(timeout=300)
    # One slot would make b wait for a's last token; two slots decode both in the same batches.
    assert times["b_first"] < times["a_end"], times
    assert times["b_end"] < times["a_end"], times


def test_stopping_the_stream_stops_llama_cpp(two_slots):
    settings = settings_for(two_slots)
    gate = AnswerGate(1, watch_interval=None)
    ticket = gate.enter(owner="reader")
    stream = ticket.stream(stream_chat(settings, LONG, max_tokens=2000))  # minutes on 2 cores
    next(stream)
    time.sleep(1.0)
    assert busy(two_slots) == 1  # still writing: nobody stopped it yet
    gate.enter(owner="reader")  # the reader asks again: the old answer is stopped
    with pytest.raises(AnswerStopped):
        next(stream)
    deadline = time.monotonic() + 60  # a hang guard: writing on to 2,000 tokens takes minutes
    while busy(two_slots):
        assert time.monotonic() < deadline, f"llama.cpp is still generating: {slots(two_slots)}"
        time.sleep(0.05)


def test_a_cancelled_token_frees_the_slot_without_reading_on(two_slots):
    """The stream's reader may be blocked in a read (not iterating): cancelling from another thread
    must still free the llama.cpp slot."""
    settings = settings_for(two_slots)
    token = CancelToken()
    deltas = stream_chat(settings, LONG, max_tokens=2000)
    with cancel_scope(token):
        next(deltas)
    time.sleep(0.5)
    assert busy(two_slots) == 1
    token.cancel("gone")
    deadline = time.monotonic() + 60  # a hang guard: writing on to 2,000 tokens takes minutes
    while busy(two_slots):
        assert time.monotonic() < deadline, f"llama.cpp is still generating: {slots(two_slots)}"
        time.sleep(0.05)
    deltas.close()
