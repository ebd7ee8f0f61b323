"""What one server process opens once and shares between the chat pages and the HTTP API: the store
(one LanceDB connection per data directory), the embedder (a local model loads once), the line for
model-written answers (so the chat and the API together never run more answers than there are slots)
and the question log (whose retention runs at most every ten minutes per process).

Each is keyed by the settings it depends on, so a changed setting opens a new one; the old one stays
for requests that still hold it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable
from threading import RLock
from typing import Any, TypeVar

from core.config import Settings, data_dir_key
from core.embed import Embedder, embedder_for_store
from core.serve.admission import AnswerGate
from core.store import Store
from core.store.questions import QuestionLog

T = TypeVar("T")
_LOCK = RLock()  # re-entrant: making one object may open another (the log opens the store)
_OPENED: dict[tuple[str, Hashable], Any] = {}


def _shared(kind: str, key: Hashable, make: Callable[[], T]) -> T:
    """The one `kind` object for `key` in this process, made by `make` the first time (under a lock, so
    two requests at once never load a model twice)."""
    with _LOCK:
        if (kind, key) not in _OPENED:
            _OPENED[kind, key] = make()
        return _OPENED[kind, key]


def shared_store(settings: Settings) -> Store:
    """The store of `settings.data_dir`; reads see other processes' commits within
    `read_consistency_seconds` (0: at once)."""
    seconds = float(settings.read_consistency_seconds)
    key = (data_dir_key(settings.data_dir), seconds)
    return _shared("store", key, lambda: Store(settings.data_dir, seconds))


def embedder_key(settings: Settings) -> tuple:
    """What the embedder depends on (never the API key itself: its digest)."""
    secret = settings.openai_api_key or ""
    return (
        settings.embed_backend,
        settings.embed_model,
        settings.embed_batch_size,
        settings.embed_dimensions,
        settings.embed_base_url or settings.openai_base_url or "",
        hashlib.sha256(secret.encode()).hexdigest() if secret else "",
    )


def shared_embedder(settings: Settings) -> Embedder:
    """The configured embedder, else the one the table was made with (local models load on first use)."""
    table_model = shared_store(settings).model_id()
    key = (embedder_key(settings), table_model)
    return _shared("embedder", key, lambda: embedder_for_store(settings, table_model))


def shared_gate(settings: Settings) -> AnswerGate:
    """The process's line for model-written answers (per capacity and limits)."""
    capacity = settings.effective_answer_concurrency
    key = (capacity, settings.answer_queue_limit, float(settings.answer_time_limit))
    return _shared(
        "gate",
        key,
        lambda: AnswerGate(
            capacity, queue_limit=settings.answer_queue_limit, time_limit=float(settings.answer_time_limit)
        ),
    )


def shared_question_log(settings: Settings) -> QuestionLog:
    """The question log of `settings.data_dir` (a no-op when `question_log` is off)."""
    key = (data_dir_key(settings.data_dir), settings.question_log, settings.question_retention_days)
    return _shared(
        "questions",
        key,
        lambda: QuestionLog(
            shared_store(settings),
            enabled=settings.question_log,
            retention_days=settings.question_retention_days,
        ),
    )
