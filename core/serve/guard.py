"""Owner password check and a per-session question rate limit: plain logic, no Streamlit.

Wrong passwords are counted by a `LoginThrottle` that lives in the server process (the app keeps one
for all sessions), per client address and for all clients together, so reloading the page (a new
session), opening new tabs or switching browsers does not reset the count. A session's `PasswordGate`
only remembers whether that session is unlocked. The question limit stays per session. Clocks are
injectable (`clock=` returns seconds, monotonic) so tests don't sleep.

    throttle = LoginThrottle()                         # one per server process
    gate = PasswordGate(throttle=throttle, client=ip)  # one per browser session
    result = gate.attempt(typed, expected)             # Attempt(ok, wait, message)

    limiter = RateLimiter(per_minute=10)
    decision = limiter.acquire()                       # Decision(allowed, retry_after)
"""

from __future__ import annotations

import hashlib
import hmac
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from core.text.labels import rate_refusal

Clock = Callable[[], float]

FREE_TRIES = 3  # wrong passwords allowed before each further wrong one locks the gate
FIRST_LOCK_SECONDS = 2.0  # the lock after the FREE_TRIES-th wrong try; doubles with each later one
MAX_LOCK_SECONDS = 300.0
# All clients together: past this many wrong passwords within GLOBAL_WINDOW_SECONDS (someone guessing
# from many addresses, or behind one proxy), every attempt waits, 1 s doubling up to MAX_GLOBAL_LOCK.
# The owner waits too, so the cap is short; a guesser still gets at most one try a minute.
GLOBAL_FREE_TRIES = 20
GLOBAL_WINDOW_SECONDS = 3600.0
MAX_GLOBAL_LOCK_SECONDS = 60.0
MAX_CLIENTS = 10_000  # addresses remembered; the oldest quiet ones are forgotten first
LOCAL_CLIENT = "local"  # the key of connections without an address (the same machine)
WINDOW_SECONDS = 60.0
DEFAULT_QUESTIONS_PER_MINUTE = 10


def password_matches(given: str | None, expected: str | None) -> bool:
    """Constant-time comparison: the time depends neither on where the strings differ nor on their
    lengths (both are hashed to 32 bytes first). No expected password → False."""
    if not expected or given is None:
        return False
    digest = [hashlib.sha256(value.encode("utf-8")).digest() for value in (given, expected)]
    return hmac.compare_digest(digest[0], digest[1])


def lock_seconds(failures: int) -> float:
    """How long the gate stays shut after `failures` wrong passwords in a row.

    0 for the first FREE_TRIES - 1 failures, then 2 s, 4 s, 8 s, … capped at MAX_LOCK_SECONDS.
    """
    if failures < FREE_TRIES:
        return 0.0
    return min(MAX_LOCK_SECONDS, FIRST_LOCK_SECONDS * 2 ** (failures - FREE_TRIES))


def global_lock_seconds(failures: int) -> float:
    """How long every client waits after `failures` wrong passwords from all of them in the window."""
    if failures < GLOBAL_FREE_TRIES:
        return 0.0
    return min(MAX_GLOBAL_LOCK_SECONDS, 2.0 ** (failures - GLOBAL_FREE_TRIES))


@dataclass(frozen=True)
class Attempt:
    ok: bool
    wait: float = 0.0  # seconds before the next try is looked at (0: try again now)
    message: str = ""


@dataclass
class _Count:
    failures: int = 0
    locked_until: float = 0.0
    last: float = 0.0  # when the last wrong password came


class LoginThrottle:
    """Wrong owner passwords, counted in the server process per client address and for all clients.

    A client's first FREE_TRIES - 1 wrong passwords cost nothing, then it waits 2 s, 4 s, 8 s … up to
    MAX_LOCK_SECONDS before its next try is looked at; a right password clears its count. All clients'
    wrong passwords also add up (GLOBAL_FREE_TRIES within GLOBAL_WINDOW_SECONDS), so guessing from many
    addresses is slowed too. Attempts during a lock are refused without being compared or counted.
    Thread-safe: the app's sessions share one.
    """

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self.clock = clock
        self._clients: dict[str, _Count] = {}
        self._all = _Count()
        self._lock = threading.Lock()

    def remaining_lock(self, client: str | None = None) -> float:
        with self._lock:
            return self._wait(self._clients.get(client or LOCAL_CLIENT), self.clock())

    def failures(self, client: str | None = None) -> int:
        with self._lock:
            count = self._clients.get(client or LOCAL_CLIENT)
            return count.failures if count else 0

    def attempt(self, client: str | None, given: str | None, expected: str | None) -> Attempt:
        key = client or LOCAL_CLIENT
        with self._lock:
            now = self.clock()
            count = self._clients.get(key)
            wait = self._wait(count, now)
            if wait > 0:
                # Refused without comparing: guessing during a lock gains nothing and extends nothing.
                return Attempt(False, wait, f"Too many wrong passwords: try again in {_seconds(wait)}.")
            if password_matches(given, expected):
                self._clients.pop(key, None)
                return Attempt(True)
            if count is None:
                count = self._clients[key] = _Count()
                self._forget_some(now)
            count.failures += 1
            count.last = now
            count.locked_until = now + lock_seconds(count.failures)
            if now - self._all.last > GLOBAL_WINDOW_SECONDS:
                self._all.failures = 0
            self._all.failures += 1
            self._all.last = now
            self._all.locked_until = now + global_lock_seconds(self._all.failures)
            lock = self._wait(count, now)
        if lock:
            return Attempt(False, lock, f"Wrong password. Try again in {_seconds(lock)}.")
        left = FREE_TRIES - count.failures
        return Attempt(
            False, 0.0, f"Wrong password ({left} {'try' if left == 1 else 'tries'} before a pause)."
        )

    def _wait(self, count: _Count | None, now: float) -> float:
        until = max(count.locked_until if count else 0.0, self._all.locked_until)
        return max(0.0, until - now)

    def _forget_some(self, now: float) -> None:
        """Keep at most MAX_CLIENTS addresses: drop the unlocked ones quiet for longest."""
        if len(self._clients) <= MAX_CLIENTS:
            return
        quiet = sorted((c.last, key) for key, c in self._clients.items() if c.locked_until <= now)
        for _, key in quiet[: len(self._clients) - MAX_CLIENTS]:
            del self._clients[key]


@dataclass
class PasswordGate:
    """One session's view of the owner gate: whether it is unlocked (until `logout()`), and its client
    address for the shared `throttle` (a gate made without one gets its own: tests, a single session)."""

    clock: Clock = time.monotonic
    throttle: LoginThrottle | None = None
    client: str | None = None
    unlocked: bool = False

    def __post_init__(self) -> None:
        if self.throttle is None:
            self.throttle = LoginThrottle(self.clock)

    @property
    def failures(self) -> int:
        assert self.throttle is not None
        return self.throttle.failures(self.client)

    def remaining_lock(self) -> float:
        assert self.throttle is not None
        return self.throttle.remaining_lock(self.client)

    def attempt(self, given: str | None, expected: str | None) -> Attempt:
        assert self.throttle is not None
        result = self.throttle.attempt(self.client, given, expected)
        if result.ok:
            self.unlocked = True
        return result

    def logout(self) -> None:
        self.unlocked = False


@dataclass(frozen=True)
class Decision:
    allowed: bool
    retry_after: float = 0.0  # seconds until the oldest question in the window expires

    @property
    def wait(self) -> int:
        """Whole seconds to wait, rounded up: waiting the time said must be enough (at least 1)."""
        return max(1, math.ceil(self.retry_after))

    @property
    def message(self) -> str:
        """The refusal in English ("" when allowed); `in_language` gives it in a reader's language."""
        return self.in_language("en")

    def in_language(self, code: str | None) -> str:
        """The refusal in language `code`'s words (core/text/labels.py), "" when allowed."""
        return "" if self.allowed else rate_refusal(self.wait, code)


@dataclass
class RateLimiter:
    """At most `per_minute` acquisitions in any sliding 60-second window. `per_minute <= 0`: no limit."""

    per_minute: int = DEFAULT_QUESTIONS_PER_MINUTE
    clock: Clock = time.monotonic
    window: float = WINDOW_SECONDS
    _stamps: deque[float] = field(default_factory=deque, repr=False)

    def _expire(self, now: float) -> None:
        while self._stamps and now - self._stamps[0] >= self.window:
            self._stamps.popleft()

    def check(self) -> Decision:
        """Would a question be allowed now? (Does not count one.)"""
        if self.per_minute <= 0:
            return Decision(True)
        now = self.clock()
        self._expire(now)
        if len(self._stamps) < self.per_minute:
            return Decision(True)
        return Decision(False, max(0.0, self._stamps[0] + self.window - now))

    def acquire(self) -> Decision:
        """Count one question if allowed; a refused question is not counted."""
        decision = self.check()
        if decision.allowed and self.per_minute > 0:
            self._stamps.append(self.clock())
        return decision

    @property
    def used(self) -> int:
        self._expire(self.clock())
        return len(self._stamps)


def _seconds(value: float) -> str:
    n = max(1, math.ceil(value))  # round up: waiting the time said must be enough
    return f"{n} s"


class ClientLimits:
    """A RateLimiter per client (e.g. per address on the HTTP API), safe across threads. Clients idle
    for a window are forgotten at most once a window (not on every question), so the table holds at
    most the last two windows' clients."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._limiters: dict[str, RateLimiter] = {}
        self._swept = clock()

    def acquire(self, client: str, per_minute: int) -> Decision:
        """Count one question of `client` if it is allowed at `per_minute` (0: no limit)."""
        if per_minute <= 0:
            return Decision(True)
        with self._lock:
            if self.clock() - self._swept >= WINDOW_SECONDS:
                self._forget_idle()
            limiter = self._limiters.get(client)
            if limiter is None or limiter.per_minute != per_minute:
                limiter = self._limiters[client] = RateLimiter(per_minute, clock=self.clock)
            return limiter.acquire()

    def __len__(self) -> int:
        return len(self._limiters)

    def _forget_idle(self) -> None:
        self._swept = self.clock()
        idle = [c for c, limiter in self._limiters.items() if limiter.used == 0]
        for client in idle:
            del self._limiters[client]
