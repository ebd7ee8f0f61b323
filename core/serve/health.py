"""What `GET /api/health` reports: whether this process can answer readers, and if not, why, in words
fit for the public (no paths, addresses or keys: the details go to the server's log for the owner).

The checks are cheap, as health is polled: two row counts, then the embedding model, which loads once
per process (the first question would load it anyway) and, when it cannot, is tried again at most every
`MODEL_RETRY_SECONDS` rather than on every poll.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from threading import Lock

from core.config import Settings
from core.embed import EmbedError
from core.serve.resources import embedder_key, shared_embedder, shared_store
from core.store import StoreError

log = logging.getLogger(__name__)

MODEL_RETRY_SECONDS = 60.0
DATA_UNREADABLE = "Inkwell cannot read its data folder."
NO_POSTS = "No posts have been ingested yet, so there is nothing to answer from."
NO_CHUNKS = "The posts' search table is missing or empty: the posts need ingesting again."
MODEL_UNAVAILABLE = "The embedding model cannot be loaded, so questions cannot be searched."

_ready: set[tuple] = set()  # embedder keys whose model loaded in this process
_failed: dict[tuple, float] = {}  # embedder key → when its model last failed to load
_lock = Lock()


@dataclass(frozen=True)
class Health:
    """`problem` is None when readers can be answered; else a short code ("data", "no_posts",
    "no_chunks", "model") and `message`, a sentence saying what is wrong."""

    posts: int = 0
    chunks: int = 0
    problem: str | None = None
    message: str = ""

    def json(self) -> dict:
        """The health endpoint's body: {"status": "ok", "posts", "chunks"}, or {"status": "unavailable",
        "problem", "error", ...}."""
        if self.problem is None:
            return {"status": "ok", "posts": self.posts, "chunks": self.chunks}
        return {"status": "unavailable", "problem": self.problem, "error": self.message,
                "posts": self.posts, "chunks": self.chunks}  # fmt: skip


def check_health(settings: Settings) -> Health:
    """The first thing that keeps this process from answering readers: the data folder unreadable, no
    posts, no searchable chunks, or an embedding model that cannot load; else the counts."""
    try:
        posts, chunks = shared_store(settings).counts()
    except (StoreError, OSError, ValueError, RuntimeError) as exc:
        log.warning("health: the data folder cannot be read: %s", exc)
        return Health(problem="data", message=DATA_UNREADABLE)
    if posts == 0:
        return Health(problem="no_posts", message=NO_POSTS)
    if chunks == 0:
        return Health(posts, chunks, "no_chunks", NO_CHUNKS)
    if not _model_loads(settings):
        return Health(posts, chunks, "model", MODEL_UNAVAILABLE)
    return Health(posts, chunks)


def _model_loads(settings: Settings) -> bool:
    """Whether the embedding model for `settings` loads (a remote one: whether it is configured; it is not
    called, a poll must not cost an embedding). A failure is remembered for MODEL_RETRY_SECONDS."""
    try:
        embedder = shared_embedder(settings)
        key = (embedder_key(settings), embedder.model_id)
    except (EmbedError, StoreError, OSError, ValueError) as exc:
        log.warning("health: no embedding model: %s", exc)
        return False
    with _lock:
        if key in _ready:
            return True
        if time.monotonic() - _failed.get(key, -MODEL_RETRY_SECONDS) < MODEL_RETRY_SECONDS:
            return False
        try:
            getattr(embedder, "loaded", None)  # local models load here, once per process
        except (EmbedError, OSError, ValueError, RuntimeError) as exc:
            log.warning("health: the embedding model cannot be loaded: %s", exc)
            _failed[key] = time.monotonic()
            return False
        _failed.pop(key, None)
        _ready.add(key)
        return True
