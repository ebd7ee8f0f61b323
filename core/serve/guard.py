"""Owner password check and a per-session question rate limit: plain logic, no Streamlit.

Both keep their state in the object, and the app keeps one object per browser session (in
`st.session_state`), so one reader's wrong guesses or fast questions never slow another reader down.
Clocks are injectable (`clock=` returns seconds, monotonic) so tests don't sleep.

    gate = PasswordGate()
    result = gate.attempt(typed, expected)   # Attempt(ok, wait, message)

    limiter = RateLimiter(per_minute=10)
    decision = limiter.acquire()             # Decision(allowed, retry_after)
"""

from __future__ import annotations

import hashlib
import hmac
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

Clock = Callable[[], float]

FREE_TRIES = 3  # wrong passwords allowed before each further wrong one locks the gate
FIRST_LOCK_SECONDS = 2.0  # the lock after the FREE_TRIES-th wrong try; doubles with each later one
MAX_LOCK_SECONDS = 300.0
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


@dataclass(frozen=True)
class Attempt:
    ok: bool
    wait: float = 0.0  # seconds before the next try is looked at (0: try again now)
    message: str = ""


@dataclass
class PasswordGate:
    """One session's password attempts. Once `ok`, the session stays unlocked until `logout()`."""

    clock: Clock = time.monotonic
    failures: int = 0
    locked_until: float = 0.0
    unlocked: bool = False

    def remaining_lock(self) -> float:
        return max(0.0, self.locked_until - self.clock())

    def attempt(self, given: str | None, expected: str | None) -> Attempt:
        wait = self.remaining_lock()
        if wait > 0:
            # Refused without comparing: guessing during a lock gains nothing and extends nothing.
            return Attempt(False, wait, f"Too many wrong passwords: try again in {_seconds(wait)}.")
        if password_matches(given, expected):
            self.failures, self.locked_until, self.unlocked = 0, 0.0, True
            return Attempt(True)
        self.failures += 1
        lock = lock_seconds(self.failures)
        self.locked_until = self.clock() + lock
        if lock:
            return Attempt(False, lock, f"Wrong password. Try again in {_seconds(lock)}.")
        left = FREE_TRIES - self.failures
        return Attempt(
            False, 0.0, f"Wrong password ({left} {'try' if left == 1 else 'tries'} before a pause)."
        )

    def logout(self) -> None:
        self.unlocked = False


@dataclass(frozen=True)
class Decision:
    allowed: bool
    retry_after: float = 0.0  # seconds until the oldest question in the window expires

    @property
    def message(self) -> str:
        if self.allowed:
            return ""
        return (
            f"You have asked a lot of questions in the last minute: please wait {_seconds(self.retry_after)}."
        )


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
