"""The reader child process (see core/parse/isolate.py): reads jobs from a socket, answers each with
("ok", result) or ("error", exception). Run as `python -m core.parse.worker FD`."""

from __future__ import annotations

import contextlib
import logging
import resource
import sys
from multiprocessing.connection import Connection

# Address space for one input's parse: far above what a 50 MB file needs, far below taking the machine.
MEMORY_LIMIT = 4 * 1024**3


def main(fd: int) -> None:
    logging.disable(logging.CRITICAL)  # nobody reads the child's logs
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard > MEMORY_LIMIT:
        with contextlib.suppress(ValueError, OSError):  # not every system limits address space
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, hard))
    from core.parse import reader  # the parsers: imported once, before saying ready

    conn = Connection(fd)
    conn.send("ready")
    while True:
        try:
            name, args = conn.recv()
        except EOFError:  # the parent is gone
            return
        try:
            reply = ("ok", reader.JOBS[name](*args))
        except Exception as exc:
            reply = ("error", exc)
        try:
            conn.send(reply)
        except Exception as exc:  # an unpicklable result or exception
            conn.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))


if __name__ == "__main__":
    main(int(sys.argv[1]))
