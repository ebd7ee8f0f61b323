"""The owner password gate and the per-session question limit, with a fake clock (no sleeping)."""

from __future__ import annotations

import itertools

import pytest

from core.serve import PasswordGate, RateLimiter
from core.serve.guard import FREE_TRIES, MAX_LOCK_SECONDS, ClientLimits, lock_seconds, password_matches


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


# Server-side throttle: a reload (new session) or another tab keeps the count ------------------------------


def test_a_new_session_of_the_same_client_keeps_the_lock():
    from core.serve import LoginThrottle

    clock = Clock()
    throttle = LoginThrottle(clock)
    first = PasswordGate(throttle=throttle, client="203.0.113.9")
    for _ in range(FREE_TRIES):
        first.attempt("nope", "pw")
    reloaded = PasswordGate(throttle=throttle, client="203.0.113.9")  # the same browser, after a reload
    refused = reloaded.attempt("pw", "pw")
    assert not refused.ok and not reloaded.unlocked and "Too many wrong passwords" in refused.message
    assert PasswordGate(throttle=throttle, client="198.51.100.7").attempt("pw", "pw").ok  # someone else
    clock.advance(refused.wait)
    assert reloaded.attempt("pw", "pw").ok and reloaded.unlocked
    assert throttle.failures("203.0.113.9") == 0  # the right password clears that client's count


def test_wrong_passwords_from_many_addresses_slow_everyone_down():
    from core.serve import LoginThrottle
    from core.serve.guard import GLOBAL_FREE_TRIES, MAX_GLOBAL_LOCK_SECONDS, global_lock_seconds

    clock = Clock()
    throttle = LoginThrottle(clock)
    for n in range(GLOBAL_FREE_TRIES - 1):  # one wrong password each: no client is locked by itself
        assert throttle.attempt(f"10.0.0.{n}", "guess", "pw").wait == 0
    last = throttle.attempt("10.0.1.1", "guess", "pw")
    assert last.wait == global_lock_seconds(GLOBAL_FREE_TRIES) == 1.0
    owner = throttle.attempt("192.0.2.1", "pw", "pw")  # the owner waits too, briefly
    assert not owner.ok and owner.wait == 1.0
    for _ in range(20):  # a guesser that waits out each lock doubles it, up to the cap
        clock.advance(throttle.remaining_lock("10.0.1.2"))
        throttle.attempt("10.0.1.2", "guess", "pw")
    assert throttle.remaining_lock("192.0.2.1") == MAX_GLOBAL_LOCK_SECONDS
    clock.advance(MAX_GLOBAL_LOCK_SECONDS)
    assert throttle.attempt("192.0.2.1", "pw", "pw").ok


def test_the_overall_count_restarts_after_a_quiet_hour():
    from core.serve import LoginThrottle
    from core.serve.guard import GLOBAL_FREE_TRIES, GLOBAL_WINDOW_SECONDS

    clock = Clock()
    throttle = LoginThrottle(clock)
    for n in range(GLOBAL_FREE_TRIES - 1):
        throttle.attempt(f"10.0.0.{n}", "guess", "pw")
    clock.advance(GLOBAL_WINDOW_SECONDS + 1)
    assert throttle.attempt("10.0.9.9", "guess", "pw").wait == 0


def test_the_throttle_remembers_a_bounded_number_of_addresses(monkeypatch):
    from core.serve import LoginThrottle, guard

    monkeypatch.setattr(guard, "MAX_CLIENTS", 5)
    monkeypatch.setattr(guard, "GLOBAL_FREE_TRIES", 1000)
    clock = Clock()
    throttle = LoginThrottle(clock)
    for n in range(50):
        throttle.attempt(f"10.0.0.{n}", "guess", "pw")
        clock.advance(1)
    assert len(throttle._clients) <= 6


def test_client_limits_count_each_client_apart_and_forget_idle_ones():
    now = [0.0]
    limits = ClientLimits(clock=lambda: now[0])
    assert [limits.acquire("a", 2).allowed for _ in range(3)] == [True, True, False]
    assert limits.acquire("b", 2).allowed  # another client has its own count
    assert limits.acquire("c", 0).allowed and len(limits) == 2  # no limit: nothing kept
    now[0] = 61.0  # a window later: a's and b's questions have expired
    assert limits.acquire("a", 2).allowed
    assert len(limits) == 1  # b, idle for a window, is forgotten
