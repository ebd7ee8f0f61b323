"""The owner password gate and the per-session question limit, with a fake clock (no sleeping)."""

from __future__ import annotations

import itertools

import pytest

from core.serve import PasswordGate, RateLimiter
from core.serve.guard import FREE_TRIES, MAX_LOCK_SECONDS, lock_seconds, password_matches


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.mark.parametrize(
    ("given", "expected", "ok"),
    [
        ("secret", "secret", True),
        ("secret ", "secret", False),
        ("Secret", "secret", False),
        ("", "secret", False),
        (None, "secret", False),
        ("anything", None, False),  # no password configured: nothing matches
        ("", "", False),
        ("päss", "päss", True),  # non-ASCII works (compare_digest needs bytes for that)
    ],
)
def test_password_matches(given, expected, ok):
    assert password_matches(given, expected) is ok


def test_lock_grows_after_the_free_tries_and_is_capped():
    assert [lock_seconds(n) for n in range(1, FREE_TRIES)] == [0.0] * (FREE_TRIES - 1)
    delays = [lock_seconds(n) for n in range(FREE_TRIES, FREE_TRIES + 5)]
    assert delays == sorted(delays) and delays[0] > 0
    assert all(later == 2 * earlier for earlier, later in itertools.pairwise(delays))
    assert lock_seconds(100) == MAX_LOCK_SECONDS


def test_right_password_unlocks():
    gate = PasswordGate(clock=Clock())
    result = gate.attempt("pw", "pw")
    assert result.ok and gate.unlocked and result.wait == 0
    gate.logout()
    assert not gate.unlocked


def test_wrong_tries_lock_the_gate_with_growing_delays():
    clock = Clock()
    gate = PasswordGate(clock=clock)
    for _ in range(FREE_TRIES - 1):
        result = gate.attempt("nope", "pw")
        assert not result.ok and result.wait == 0 and "Wrong password" in result.message

    third = gate.attempt("nope", "pw")
    assert not third.ok and third.wait == lock_seconds(FREE_TRIES) and "Try again in" in third.message

    # During the lock even the right password is refused, and the refusal doesn't extend the lock.
    clock.advance(third.wait / 2)
    refused = gate.attempt("pw", "pw")
    assert not refused.ok and not gate.unlocked
    assert refused.wait == pytest.approx(third.wait / 2)
    assert "Too many wrong passwords" in refused.message

    clock.advance(third.wait)
    fourth = gate.attempt("nope", "pw")
    assert fourth.wait == 2 * third.wait  # the next wrong one waits longer

    clock.advance(fourth.wait)
    assert gate.attempt("pw", "pw").ok
    assert gate.failures == 0 and gate.remaining_lock() == 0


def test_gates_are_independent_per_session():
    clock = Clock()
    attacker, owner = PasswordGate(clock=clock), PasswordGate(clock=clock)
    for _ in range(FREE_TRIES + 2):
        attacker.attempt("guess", "pw")
    assert attacker.remaining_lock() > 0
    assert owner.attempt("pw", "pw").ok


def test_rate_limiter_sliding_window():
    clock = Clock()
    limiter = RateLimiter(per_minute=3, clock=clock)
    assert all(limiter.acquire().allowed for _ in range(3))
    assert limiter.used == 3

    clock.advance(20)
    refused = limiter.acquire()
    assert not refused.allowed
    assert refused.retry_after == pytest.approx(40)
    assert "40 s" in refused.message
    assert limiter.used == 3  # a refused question is not counted

    clock.advance(40)  # the first three expire together
    assert limiter.acquire().allowed
    assert limiter.used == 1


def test_rate_limiter_spreads_over_the_window():
    clock = Clock()
    limiter = RateLimiter(per_minute=2, clock=clock)
    assert limiter.acquire().allowed
    clock.advance(30)
    assert limiter.acquire().allowed
    clock.advance(29)
    assert not limiter.check().allowed
    clock.advance(1)  # the first question is now 60 s old
    assert limiter.acquire().allowed
    assert not limiter.acquire().allowed


def test_rate_limiter_zero_means_unlimited():
    limiter = RateLimiter(per_minute=0, clock=Clock())
    assert all(limiter.acquire().allowed for _ in range(1000))
    assert limiter.check().message == ""
