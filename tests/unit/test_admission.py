"""The line for model-written answers (core/serve/admission.py) and the cancel token (core/llm/cancel.py),
with a fake clock where time matters. Cutting a real stream: tests/integration/test_admission_streams.py."""

from __future__ import annotations

import threading
import time

import pytest

from core.config import REMOTE_ANSWER_CONCURRENCY, ConfigError, Settings
from core.llm.cancel import CancelToken
from core.serve import AnswerGate, AnswerRefused, AnswerStopped


class Clock:
    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def gate(capacity: int = 2, **kwargs) -> AnswerGate:
    kwargs.setdefault("watch_interval", None)  # tests call check() themselves
    return AnswerGate(capacity, **kwargs)


def words(n: int = 3):
    yield from (f"w{i} " for i in range(n))


# The line ------------------------------------------------------------------------------------------------


def test_first_come_first_served_with_places_in_line():
    g = gate(2)
    a, b, c, d = (g.enter() for _ in range(4))
    assert (a.place, b.place, c.place, d.place) == (0, 0, 1, 2)
    assert a.admitted and b.admitted and not c.admitted
    assert g.status().running == 2 and g.status().waiting == 2
    a.close()
    assert c.admitted and c.place == 0 and d.place == 1
    d.close()  # leaving the line frees the place
    assert g.status().waiting == 0
    b.close()
    c.close()
    assert g.status().running == 0


def test_wait_yields_the_place_until_admitted():
    g = gate(1)
    first = g.enter()
    second = g.enter()
    seen = []

    def release_later():
        time.sleep(0.3)
        first.close()

    threading.Thread(target=release_later).start()
    started = time.monotonic()
    for place in second.wait(poll=0.05):
        seen.append(place)
    assert second.admitted
    assert seen and set(seen) == {1}
    assert len(seen) >= 3  # re-yielded while waiting: the page redraws "number 1 in line"
    assert time.monotonic() - started < 30  # a hang guard only: the release comes after 0.3 s
    second.close()
    assert list(g.enter().wait()) == []  # a free slot: nothing to show


def test_a_full_line_refuses_at_once_with_a_message():
    g = gate(1, queue_limit=2)
    tickets = [g.enter() for _ in range(3)]
    with pytest.raises(AnswerRefused, match="3 readers are waiting for an answer: please ask again") as info:
        g.enter()
    assert info.value.kind == "busy"
    tickets[1].close()
    g.enter()  # a place is free again


def test_a_full_line_of_one_says_one_reader_is_waiting():
    g = gate(1, queue_limit=0)
    g.enter()
    with pytest.raises(AnswerRefused, match=r"^1 reader is waiting for an answer: please ask again"):
        g.enter()


def test_asking_again_stops_the_owners_previous_answer():
    g = gate(1)
    running = g.enter(owner="conv-1")
    waiting = g.enter(owner="conv-2")
    replacement = g.enter(owner="conv-1")  # the reader of conv-1 asked again (or reloaded and asked)
    assert running.stopped and running.stop_kind == "replaced"
    assert waiting.admitted and replacement.place == 1
    with pytest.raises(AnswerStopped, match="you asked a new question") as info:
        list(running.stream(words()))
    assert info.value.kind == "replaced"
    again = g.enter(owner="conv-2")  # replaces a waiting one too
    assert waiting.stopped and replacement.admitted and again.place == 1


def test_time_limit_stops_the_answer_and_frees_the_slot():
    clock = Clock()
    g = gate(1, time_limit=30, clock=clock)
    slow = g.enter()
    next_one = g.enter()
    stream = slow.stream(words(100))
    assert next(stream) == "w0 "
    clock.now += 29
    g.check()
    assert next(stream) == "w1 "
    clock.now += 2
    g.check()
    assert next_one.admitted  # freed at once, not when the old stream is next read
    with pytest.raises(AnswerStopped, match=r"longer than 30 s and was stopped") as info:
        next(stream)
    assert info.value.kind == "time_limit"
    assert next_one.deadline == clock.now + 30


def test_a_reader_who_left_is_stopped_waiting_or_running():
    g = gate(1)
    present = {"a": True, "b": True}
    a = g.enter(alive=lambda: present["a"])
    b = g.enter(alive=lambda: present["b"])
    present["b"] = False
    g.check()
    assert b.stopped and b.stop_kind == "left" and g.status().waiting == 0
    present["a"] = False
    g.check()
    assert a.stopped and g.status().running == 0
    c = g.enter(alive=lambda: 1 / 0)  # a broken check does not stop answers
    g.check()
    assert not c.stopped


def test_stream_frees_the_slot_when_done_or_abandoned():
    g = gate(1)
    with g.enter() as ticket:
        assert "".join(ticket.stream(words(3))) == "w0 w1 w2 "
    assert g.status().running == 0

    closed = []

    def source():
        try:
            yield from words(10)
        finally:
            closed.append(True)

    ticket = g.enter()
    stream = ticket.stream(source())
    next(stream)
    stream.close()  # the page's run was stopped between two deltas
    assert closed == [True] and ticket.done and g.status().running == 0


def test_watchdog_thread_enforces_the_time_limit_with_a_real_clock():
    g = AnswerGate(1, time_limit=0.3, watch_interval=0.05)
    ticket = g.enter()
    time.sleep(1.0)
    assert ticket.stopped and ticket.stop_kind == "time_limit"
    assert g.status().running == 0


def test_capacity_follows_the_model():
    assert AnswerGate.for_settings(Settings()).capacity == 4  # the built-in model's slots
    assert AnswerGate.for_settings(Settings(builtin_slots=2)).capacity == 2
    remote = Settings(openai_base_url="http://127.0.0.1:9/v1")
    assert AnswerGate.for_settings(remote).capacity == REMOTE_ANSWER_CONCURRENCY
    assert AnswerGate.for_settings(remote.replace(answer_concurrency=3)).capacity == 3
    limited = AnswerGate.for_settings(Settings(answer_queue_limit=5, answer_time_limit=9))
    assert (limited.queue_limit, limited.time_limit) == (5, 9)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"builtin_slots": 0}, "builtin_slots must be between 1 and 64"),
        ({"answer_concurrency": -1}, "answer_concurrency must be >= 0"),
        ({"answer_queue_limit": -1}, "answer_queue_limit must be >= 0"),
        ({"answer_time_limit": 0}, "answer_time_limit must be > 0"),
        ({"max_question_chars": -5}, "max_question_chars must be >= 0"),
        ({"conversation_hours": 0}, "conversation_hours must be > 0"),
    ],
)
def test_serving_settings_are_validated(changes, message):
    with pytest.raises(ConfigError, match=message):
        Settings().replace(**changes)
    env = {f"INKWELL_{k.upper()}": str(v) for k, v in changes.items()}
    with pytest.raises(ConfigError, match=message):
        Settings.load(environ=env)


# Cancelling a real stream ---------------------------------------------------------------------------------


def test_cancel_token_runs_each_callback_once():
    token = CancelToken()
    calls = []
    forget = token.on_cancel(lambda: calls.append("a"))
    token.on_cancel(lambda: calls.append("b"))
    forget()
    assert token.cancel("first") and not token.cancel("second")
    assert calls == ["b"] and token.reason == "first"
    token.on_cancel(lambda: calls.append("late"))  # after the fact: runs at once
    assert calls == ["b", "late"]
