"""Retrying LanceDB commits that lost a race with another writer.

LanceDB commits optimistically: a writer that finds the table moved on since it started either rebases
its change or gives up with "Retryable commit conflict … Please retry". Lance rebases and retries by
itself for appends, deletes, updates and merge_insert (merge_insert only within a 30 s timeout), but
not for compaction (`optimize()`: "This Rewrite transaction was preempted by concurrent transaction
Update"), index builds ("CreateIndex … preempted by concurrent transaction CreateIndex") or restores,
and lancedb 0.40's Python API has no retry setting for them (its `conflict_retries` is internal to
lance's own commit loop; checked in the installed package). Measured: 4 processes ingesting into one
table crashed on these in most runs. So every write path in the store goes through `retry_commit`:
the whole operation is run again (callers pass a function that re-reads what it depends on), after an
exponential backoff with jitter so writers that collided once do not collide again in lockstep, and
a `CommitConflictError` naming the operation is raised when it still cannot commit.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from core.store.schema import StoreError

T = TypeVar("T")

# What lance's messages say when another writer won (lowercased). Anything else is a real error and
# is raised at once.
_CONFLICT_MARKERS = (
    "commit conflict",
    "preempted by concurrent transaction",
    "by a concurrent transaction",
    "too many concurrent writ",
    "conflict detected",
    "creation conflict",
    # Two processes creating the same new table on object storage: the later create lands as an
    # Overwrite, and an append racing it is refused; appending again to the table as it now is works.
    "incompatible with concurrent transaction",
)


class CommitConflictError(StoreError):
    """Another writer kept changing the table: the operation could not commit after every retry."""


def is_commit_conflict(exc: BaseException) -> bool:
    """Whether `exc` is lance telling us another writer committed first (so trying again can work)."""
    if isinstance(exc, StoreError) or not isinstance(exc, RuntimeError | OSError | ValueError):
        return False
    message = str(exc).lower()
    return any(marker in message for marker in _CONFLICT_MARKERS)


@dataclass(frozen=True)
class RetryPolicy:
    """At most `attempts` tries within `deadline` seconds; waits double from `first_wait` up to `max_wait`,
    each drawn uniformly between half and all of it ("equal jitter")."""

    attempts: int = 12
    first_wait: float = 0.05
    max_wait: float = 2.0
    deadline: float = 90.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    rng: random.Random | None = None

    def wait(self, attempt: int) -> float:
        ceiling = min(self.max_wait, self.first_wait * 2**attempt)
        return ceiling * (0.5 + 0.5 * (self.rng or random).random())


DEFAULT_POLICY = RetryPolicy()


def retry_commit(what: str, operation: Callable[[], T], policy: RetryPolicy | None = None) -> T:
    """Run `operation`, running it again while it fails with a commit conflict.

    `operation` must be safe to repeat: it re-opens the table and re-reads whatever it decides on, so a
    retry acts on the table as the other writer left it. `what` names the operation in the error.
    """
    policy = policy or DEFAULT_POLICY
    started = policy.clock()
    attempt = 0
    while True:
        try:
            return operation()
        except Exception as exc:
            if not is_commit_conflict(exc):
                raise
            attempt += 1
            wait = policy.wait(attempt - 1)
            if attempt >= policy.attempts or policy.clock() - started + wait > policy.deadline:
                raise CommitConflictError(
                    f"could not {what}: other writers kept changing the table ({attempt} tries in "
                    f"{policy.clock() - started:.0f} s); run it again (what did not commit is redone)"
                ) from exc
            policy.sleep(wait)
