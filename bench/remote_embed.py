"""`make bench` (remote embeddings): the remote embedder's throughput against the local one, same run.

An OpenAI-compatible `/v1/embeddings` server runs in its own process on 127.0.0.1 with the same local
model (all-MiniLM-L6-v2), as TEI or vLLM would serve it; Inkwell's remote embedder (core/embed/remote.py)
sends it SciFact texts in batches of embed_batch_size, 1 and N batches at a time. Printed: texts/s for
the local embedder and for each concurrency, and each one's ratio to local. On one machine the server
competes with the client for the same cores, so the ratio shows the HTTP/JSON overhead; on a separate
GPU server it is the speed-up.

    python bench/remote_embed.py [--texts 256] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import socket
import struct
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.config import Settings  # noqa: E402

SCIFACT = ROOT.parent / "shared" / "eval" / "scifact" / "corpus.jsonl"
DEMO = ROOT / "data" / "demo" / "posts"


def texts(n: int) -> list[str]:
    """SciFact abstracts (the first n, ~1,000 characters each), else the demo posts' paragraphs."""
    out: list[str] = []
    if SCIFACT.exists():
        with SCIFACT.open(encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                out.append(f"{row.get('title', '')}\n{row.get('text', '')}"[:1000])
                if len(out) >= n:
                    return out
    for path in sorted(DEMO.rglob("*.md")):
        out += [p for p in path.read_text(encoding="utf-8").split("\n\n") if len(p) > 80]
    return (out * (n // max(1, len(out)) + 1))[:n]


# The server (a child process) -------------------------------------------------------------------------


def serve(port: int) -> None:
    from core.embed import get_embedder

    embedder = get_embedder(Settings.load(environ={}))
    embedder.embed(["warm-up"])

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            inputs = body.get("input") or []
            vectors = embedder.embed([inputs] if isinstance(inputs, str) else inputs)
            as_b64 = body.get("encoding_format") == "base64"
            data = [
                {
                    "object": "embedding",
                    "index": i,
                    "embedding": base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode()
                    if as_b64
                    else v.tolist(),
                }
                for i, v in enumerate(vectors)
            ]
            reply = json.dumps({"object": "list", "data": data, "model": body.get("model", ""), "usage": {}})
            raw = reply.encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print("ready", flush=True)
    httpd.serve_forever()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# The measurement ---------------------------------------------------------------------------------------


def rate(embed, sample: list[str], repeats: int) -> float:
    """Best of `repeats` texts/s (after one warm-up call)."""
    embed(sample[:8])
    best = 0.0
    for _ in range(repeats):
        started = time.perf_counter()
        embed(sample)
        best = max(best, len(sample) / (time.perf_counter() - started))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--texts", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return

    from core.embed import get_embedder
    from core.embed.remote import OpenAIEmbedder

    sample = texts(args.texts)
    local = get_embedder(Settings.load({"embed_batch_size": args.batch_size}, environ={}))
    local_rate = rate(local.embed, sample, args.repeats)

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port)], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        assert server.stdout and server.stdout.readline().strip() == "ready", (
            "the embeddings server did not start"
        )
        rows = [("local (in process)", local_rate)]
        for concurrency in sorted({1, args.concurrency}):
            settings = Settings.load(
                {
                    "embed_backend": "openai",
                    "embed_base_url": f"http://127.0.0.1:{port}/v1",
                    "embed_model": "all-MiniLM-L6-v2",
                    "embed_batch_size": args.batch_size,
                    "embed_concurrency": concurrency,
                },
                environ={},
            )
            rows.append(
                (
                    f"remote, concurrency {concurrency}",
                    rate(OpenAIEmbedder(settings).embed, sample, args.repeats),
                )
            )
    finally:
        server.terminate()
        server.wait(timeout=30)

    print(f"Remote embeddings: {len(sample)} texts, batches of {args.batch_size}, {os.cpu_count()} cores")
    print(f"{'embedder':<28}{'texts/s':>10}{'vs local':>10}")
    for name, value in rows:
        print(f"{name:<28}{value:>10.1f}{value / local_rate:>9.2f}x")


if __name__ == "__main__":
    main()
