"""Stopping a streamed answer from any thread, so the model stops writing it too.

A reader who leaves or asks again, or an answer over its time limit, must free the model at once. The
thread reading the stream may be blocked in a socket read (llama.cpp reads a long prompt before the first
token), so flags alone do not work: the token shuts the stream's socket down, which wakes the reader at
once, and the server sees the connection gone and drops the request (llama.cpp does so between batches;
checked with the built-in server in tests/integration/test_serve_llm.py).

    token = CancelToken()
    with cancel_scope(token):
        first = next(deltas)      # a stream_chat started inside the scope registers itself on the token
    token.cancel("Stopped: you asked a new question.")   # any thread; idempotent

`stream_chat` (core/llm/client.py) then raises LLMError(kind="cancelled") with that reason. The scope is a
context variable, so code between the caller and `stream_chat` (core/answer) needs no parameter for it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

_current: ContextVar[CancelToken | None] = ContextVar("inkwell_cancel_token", default=None)


class CancelToken:
    """Cancelled once, by anyone, with a reason; callbacks registered before or after run exactly once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reason: str | None = None
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._next = 0

    @property
    def cancelled(self) -> bool:
        return self._reason is not None

    @property
    def reason(self) -> str:
        return self._reason or ""

    def cancel(self, reason: str = "The answer was stopped.") -> bool:
        """Cancel (the first reason wins) and run the callbacks; False if it already was cancelled."""
        with self._lock:
            if self._reason is not None:
                return False
            self._reason = reason
            callbacks, self._callbacks = list(self._callbacks.values()), {}
        for callback in callbacks:
            with contextlib.suppress(Exception):  # one failing abort must not keep the others from running
                callback()
        return True

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run `callback` when cancelled (at once if it already is); returns a function that unregisters it."""
        with self._lock:
            if self._reason is None:
                key = self._next
                self._next += 1
                self._callbacks[key] = callback
                return lambda: self._forget(key)
        callback()
        return lambda: None

    def _forget(self, key: int) -> None:
        with self._lock:
            self._callbacks.pop(key, None)


@contextlib.contextmanager
def cancel_scope(token: CancelToken | None) -> Iterator[CancelToken | None]:
    """Model calls started inside this block (in this thread or context) can be cancelled by `token`."""
    reset = _current.set(token)
    try:
        yield token
    finally:
        _current.reset(reset)


def current_token() -> CancelToken | None:
    return _current.get()


def abort_response(response: Any) -> None:
    """Shut down an httpx response's socket, from any thread: a read blocked on it returns at once (closing
    the response from another thread does not wake it: measured, the read waited for the next token)."""
    network = getattr(response, "extensions", {}).get("network_stream")
    sock = network.get_extra_info("socket") if network is not None else None
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
