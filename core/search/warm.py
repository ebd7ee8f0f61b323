"""Loading a store's indexes while the embedding model loads, once per process and data directory.

    with warming(store):
        vector = embed_query(embedder, question)   # the first call imports torch and loads the model

A process's first search pays twice: the embedding model (seconds of imports) and LanceDB's vector
index, which the first vector query loads whole (≈ 1.1 s and ≈ 900 MB at a million chunks). Done one
after the other, a cold `inkwell search` at 1M chunks took ≈ 1 s more than at 2k; the index load needs
no model, so it runs in a thread beside it (`Store.warm_up`) and the search finds it loaded.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from core.store import Store

log = logging.getLogger(__name__)

_WARMED: set[str] = set()
_LOCK = threading.Lock()


@contextmanager
def warming(store: Store) -> Iterator[None]:
    """Run the block while `store` loads its indexes in a thread; the first time per data dir only.

    The thread is joined before the block's caller goes on (a process must not exit with a thread
    inside LanceDB). A failure is only logged: the search that follows meets it and reports it.
    """
    key = str(store.data_dir)
    with _LOCK:
        first = key not in _WARMED
        _WARMED.add(key)
    if not first:
        yield
        return
    thread = threading.Thread(target=_warm_up, args=(store,), name="inkwell-warm-up", daemon=True)
    thread.start()
    try:
        yield
    finally:
        thread.join()


def _warm_up(store: Store) -> None:
    try:
        store.warm_up()
    except Exception as exc:  # LanceDB raises ValueError/RuntimeError/OSError variously
        log.debug("warming %s failed: %s", store.data_dir, exc)
