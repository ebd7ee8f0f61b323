"""Reading inputs in a child process under a deadline, so that no file can hang or crash an ingest.

The parsers are third-party code run on whatever files an author has (markdown-it, PyYAML, lxml,
trafilatura), and some inputs make one far slower than its size suggests (deep nesting, quadratic
corners) or exhaust memory. A running parser cannot be stopped from another thread, so inputs are
parsed in one long-lived child process, `python -m core.parse.worker`, fed one input at a time over a
socket. An input that takes longer than its time limit gets the child killed and is reported ("took
longer than 60 s to read"); one that kills the child is reported too; either way a fresh child reads
the next input. The child starts once per process (a second or two of imports, not counted against any
input) and is shared under a lock by threads (the app's sessions). If no child can be started at all,
inputs are parsed in this process, as before.
"""

from __future__ import annotations

import atexit
import logging
import os
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

FILE_TIME_LIMIT = 60.0  # seconds one input may take to read and parse
STARTUP_LIMIT = 120.0  # seconds the child may take to import the parsers (a loaded 2-core machine)
_CORE_PARENT = str(Path(__file__).resolve().parents[2])  # the folder holding this `core` package


class InputTimeout(Exception):
    """The input took longer than its time limit to parse (the child was stopped)."""


class InputCrash(Exception):
    """The child process died while parsing the input (e.g. out of memory)."""


class _Child:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_CORE_PARENT, env.get("PYTHONPATH", "")) if p)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "core.parse.worker", str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,  # parsers' own warnings are no use to the author
                env=env,
            )
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())
        if not self.conn.poll(STARTUP_LIMIT) or self.conn.recv() != "ready":
            self.close()
            raise OSError("the reader process did not start")

    def call(self, job: tuple, limit: float) -> Any:
        self.conn.send(job)
        if not self.conn.poll(limit):
            raise InputTimeout
        return self.conn.recv()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.conn.close()


_lock = threading.Lock()
_child: _Child | None = None
_unavailable = False  # no child could be started here: parse in this process


def run(job: tuple, limit: float, here: Any) -> Any:
    """`job` (a function name in core/parse/worker.py and its arguments) run in the child within `limit`
    seconds; its result, or the exception it raised, re-raised here. `here(job)` runs it in this
    process when no child can be started."""
    global _child, _unavailable
    with _lock:
        if _unavailable:
            return here(job)
        try:
            if _child is None:
                _child = _Child()
        except OSError as exc:
            log.warning("parsing in this process: cannot start a reader process (%s)", exc)
            _unavailable = True
            return here(job)
        try:
            status, value = _child.call(job, limit)
        except InputTimeout:
            _stop()
            raise
        except (EOFError, OSError) as exc:
            code = _child.proc.poll()
            _stop()
            raise InputCrash(f"exit code {code}" if code is not None else str(exc)) from None
    if status == "error":
        raise value
    return value


def _stop() -> None:
    global _child
    if _child is not None:
        _child.close()
        _child = None


atexit.register(_stop)
