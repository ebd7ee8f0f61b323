"""Admission of model-written answers: a few at once per process, the other readers in line with a visible
place, a time limit per answer, and stopping an answer nobody is waiting for any more.

Only what calls the model comes here. Retrieval and extractive answers never wait in this line.

    gate = AnswerGate.for_settings(settings)          # one per process (the app caches it)
    with gate.enter(owner=conversation_id, alive=session_is_open) as ticket:   # AnswerRefused: line full
        for place in ticket.wait():                   # 1, 2, …: only while in line, and every `poll` s
            show(f"You are number {place} in line.")
        for delta in ticket.stream(answer_stream):    # AnswerStopped: time limit, replaced or left
            ...

- At most `capacity` tickets run at once (settings.effective_answer_concurrency: the built-in model's
  slots), first come first served; at most `queue_limit` wait, and a further reader is refused at once
  with a message instead of a frozen page.
- `enter(owner=...)` stops the owner's previous answer (a reader who asks again, e.g. after a reload).
- `alive` (optional, any thread): checked every `watch_interval` seconds; False stops the answer (the
  reader left). The Streamlit glue passes "is this browser session still connected".
- An answer running longer than `time_limit` seconds is stopped.
- Stopping cancels the ticket's core.llm.cancel token: the model's HTTP stream is shut down, so the model
  stops writing (llama.cpp frees its slot within one batch), and the slot here is freed at once.
Clocks are injectable; `check()` does what the watchdog thread does, for tests.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from core.config import Settings
from core.llm import LLMError
from core.llm.cancel import CancelToken, cancel_scope
from core.text import plural

Clock = Callable[[], float]

DEFAULT_POLL = 0.5  # seconds between `wait()` yields while the place in line stays the same
WATCH_INTERVAL = 1.0  # seconds between the watchdog's checks of time limits and `alive`

REPLACED = "Stopped: you asked a new question."
LEFT = "Stopped: the reader left."
CLOSED = "Stopped."


def time_limit_message(seconds: float) -> str:
    return f"The answer took longer than {seconds:g} s and was stopped."


class AnswerRefused(LLMError):
    """Too many readers are waiting already: nothing was started. `str()` is for the reader."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="busy")


class AnswerStopped(LLMError):
    """The answer was stopped: `kind` is "time_limit", "replaced" (the owner asked again), "left" (not
    `alive` any more) or "closed"; `str()` is for the reader. What arrived before stays with the stream."""


@dataclass(frozen=True)
class GateStatus:
    capacity: int
    running: int
    waiting: int


class Ticket:
    """One answer's way through the gate: waiting → running → done (or stopped on the way)."""

    def __init__(self, gate: AnswerGate, owner: str | None, alive: Callable[[], bool] | None) -> None:
        self._gate = gate
        self.owner = owner
        self.alive = alive
        self.token = CancelToken()
        self.stop_kind: str | None = None
        self.started: float | None = None  # gate clock when admitted
        self.deadline: float | None = None
        self.done = False

    # Where it stands -----------------------------------------------------------------------------------

    @property
    def place(self) -> int:
        """1, 2, … while in line (1: next), 0 once admitted (and after)."""
        with self._gate._cond:
            return self._gate._place(self)

    @property
    def admitted(self) -> bool:
        return self.started is not None

    @property
    def stopped(self) -> bool:
        return self.stop_kind is not None

    def wait(self, poll: float = DEFAULT_POLL) -> Iterator[int]:
        """Yield the place in line (1 = next) while waiting: at once, when it changes, and at least every
        `poll` seconds (a Streamlit page redraws it, which is also where Streamlit can stop a run whose
        reader left). Returns once admitted; yields nothing when a slot is free at once.
        Raises AnswerStopped if the ticket is stopped meanwhile."""
        cond = self._gate._cond
        while True:
            with cond:
                self._raise_if_stopped()
                place = self._gate._place(self)
            if place == 0:
                return
            yield place
            with cond:
                cond.wait_for(lambda p=place: self.stopped or self._gate._place(self) != p, timeout=poll)

    def stream(self, deltas: Iterable[str]) -> Iterator[str]:
        """Iterate `deltas` (e.g. core.answer's AnswerStream) as this ticket's answer: waits silently for a
        slot first if still in line, raises AnswerStopped when stopped, closes `deltas` and frees the slot
        at the end (also when the consumer stops early)."""
        for _ in self.wait():
            pass
        iterator = iter(deltas)
        try:
            while True:
                with cancel_scope(self.token):  # a model stream opened by next() is stopped with the token
                    try:
                        delta = next(iterator)
                    except StopIteration:
                        return
                    except LLMError:
                        self._raise_if_stopped()
                        raise
                self._raise_if_stopped()
                yield delta
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()
            self.close()

    # Ending -----------------------------------------------------------------------------------------

    def stop(self, reason: str, kind: str) -> bool:
        """Stop this answer (any thread): shut its model stream, free its place. False if already over."""
        with self._gate._cond:
            if self.done:
                return False
            self.stop_kind = kind
            self._gate._release(self)
        self.token.cancel(reason)
        return True

    def close(self) -> None:
        """Free the slot or the place in line (idempotent). A stream still open is shut."""
        with self._gate._cond:
            if self.done:
                return
            self._gate._release(self)
        self.token.cancel(CLOSED)

    def __enter__(self) -> Ticket:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _raise_if_stopped(self) -> None:
        if self.stop_kind is not None:
            raise AnswerStopped(self.token.reason or CLOSED, kind=self.stop_kind)


class AnswerGate:
    """A per-process line for model-written answers (see the module docstring)."""

    def __init__(
        self,
        capacity: int,
        *,
        queue_limit: int = 64,
        time_limit: float = 120.0,
        clock: Clock = time.monotonic,
        watch_interval: float | None = WATCH_INTERVAL,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, not {capacity}")
        self.capacity = capacity
        self.queue_limit = queue_limit
        self.time_limit = time_limit
        self.clock = clock
        self.watch_interval = watch_interval  # None: no watchdog thread (tests call check())
        self._cond = threading.Condition()
        self._running: list[Ticket] = []
        self._waiting: deque[Ticket] = deque()
        self._owners: dict[str, Ticket] = {}
        self._watchdog: threading.Thread | None = None

    @classmethod
    def for_settings(cls, settings: Settings, **kwargs) -> AnswerGate:
        return cls(
            settings.effective_answer_concurrency,
            queue_limit=settings.answer_queue_limit,
            time_limit=settings.answer_time_limit,
            **kwargs,
        )

    def enter(self, owner: str | None = None, *, alive: Callable[[], bool] | None = None) -> Ticket:
        """A ticket for one answer: admitted now if a slot is free, else in line. The owner's previous
        ticket (if still waiting or running) is stopped. Raises AnswerRefused when the line is full."""
        with self._cond:
            previous = self._owners.get(owner) if owner is not None else None
        if previous is not None:
            previous.stop(REPLACED, "replaced")
        with self._cond:
            if len(self._running) >= self.capacity and len(self._waiting) >= self.queue_limit:
                ahead = len(self._running) + len(self._waiting)
                raise AnswerRefused(
                    f"{plural(ahead, 'reader')} {'is' if ahead == 1 else 'are'} waiting for an answer: please "
                    "ask again in a minute."
                )
            ticket = Ticket(self, owner, alive)
            self._waiting.append(ticket)
            if owner is not None:
                self._owners[owner] = ticket
            self._admit()
            self._start_watchdog()
        return ticket

    def status(self) -> GateStatus:
        with self._cond:
            return GateStatus(self.capacity, len(self._running), len(self._waiting))

    def check(self) -> None:
        """Stop answers over their time limit and those whose reader is gone (the watchdog's round)."""
        now = self.clock()
        with self._cond:
            tickets = [*self._running, *self._waiting]
        for ticket in tickets:
            if ticket.deadline is not None and now >= ticket.deadline:
                ticket.stop(time_limit_message(self.time_limit), "time_limit")
            elif ticket.alive is not None and not _safe_alive(ticket.alive):
                ticket.stop(LEFT, "left")

    # Internals (called with self._cond held) --------------------------------------------------------

    def _place(self, ticket: Ticket) -> int:
        if ticket.admitted or ticket.done:
            return 0
        return self._waiting.index(ticket) + 1

    def _admit(self) -> None:
        while self._waiting and len(self._running) < self.capacity:
            ticket = self._waiting.popleft()
            ticket.started = self.clock()
            ticket.deadline = ticket.started + self.time_limit
            self._running.append(ticket)
        self._cond.notify_all()

    def _release(self, ticket: Ticket) -> None:
        ticket.done = True
        if ticket in self._running:
            self._running.remove(ticket)
        elif ticket in self._waiting:
            self._waiting.remove(ticket)
        if ticket.owner is not None and self._owners.get(ticket.owner) is ticket:
            del self._owners[ticket.owner]
        self._admit()

    def _start_watchdog(self) -> None:
        if self.watch_interval is None or (self._watchdog is not None and self._watchdog.is_alive()):
            return
        self._watchdog = threading.Thread(target=self._watch, name="inkwell-answer-gate", daemon=True)
        self._watchdog.start()

    def _watch(self) -> None:
        """Runs while there are tickets; a new ticket starts it again."""
        assert self.watch_interval is not None
        while True:
            with self._cond:
                if not self._running and not self._waiting:
                    self._watchdog = None
                    return
                self._cond.wait(timeout=self.watch_interval)
            self.check()


def _safe_alive(alive: Callable[[], bool]) -> bool:
    try:
        return bool(alive())
    except Exception:  # a broken check must not stop answers
        return True
