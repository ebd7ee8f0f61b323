"""Child process that serves a GGUF model with llama.cpp (xllamacpp) on 127.0.0.1.

Run by core/llm/builtin.py as
`python llama_worker.py MODEL N_CTX THREADS ALIAS VERBOSITY N_PARALLEL N_BATCH CACHE_RAM_MIB` (N_CTX is the
whole server's: N_PARALLEL slots get N_CTX / N_PARALLEL tokens each). It prints one
JSON line, {"base_url": ...} or {"error": ...}, then serves until its stdin closes: the parent closed
it, or the parent died. It then leaves with os._exit, because xllamacpp's Server destructor can wait
forever on its own thread (seen: a 20-minute hang); a separate process can always be killed.
Kept free of project imports so it starts fast and from any working directory.
"""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    model, n_ctx, threads, alias, verbosity, n_parallel, n_batch, cache_ram_mib = sys.argv[1:9]
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before OpenMP loads: idle threads must sleep
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model
    params.n_ctx = int(n_ctx)
    params.cpuparams.n_threads = int(threads)
    params.cpuparams_batch.n_threads = int(threads)
    params.port = 0
    params.hostnames = ["127.0.0.1"]
    params.model_alias = {alias}
    params.verbosity = int(verbosity)
    # Slots: requests decoded together (continuous batching), each with its own n_ctx / n_parallel tokens.
    params.n_parallel = int(n_parallel)
    params.kv_unified = False
    params.cont_batching = True
    params.n_batch = int(n_batch)
    params.n_ubatch = int(n_batch)
    params.cache_ram_mib = int(cache_ram_mib)  # recent prompts kept in RAM (llama.cpp's default: 8 GiB)
    try:
        server = xllamacpp.Server(params)
    except RuntimeError as err:
        print(json.dumps({"error": str(err)}), flush=True)
        os._exit(1)
    print(json.dumps({"base_url": str(server.listening_address)}), flush=True)
    sys.stdin.read()
    os._exit(0)


if __name__ == "__main__":
    main()
