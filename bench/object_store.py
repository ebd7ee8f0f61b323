"""The table on object storage against a local folder, same run: `python bench/object_store.py`.

S3 here is moto's server on 127.0.0.1 (tests/s3_server.py): it shows what Inkwell and lance do over the
S3 protocol (requests per search, commit protocol, how fast a second process sees a write), not a real
bucket's latency, which adds a network round trip (~10–30 ms within a region) to every request counted.

The demo posts are ingested into a local folder and into s3:// with the same vectors (MiniLM, embedded
once before any clock starts, so the figures are storage and pipeline only). Printed:
- ingest and unchanged re-ingest, local vs s3;
- hybrid search p50 / p95 over the posts' titles as questions, with the store kept open as the app keeps
  it, at read_consistency_seconds 0 (every access checks for a newer commit) and 5, and the S3 requests
  each search made;
- a replica: how long until a second, already open store (its own connection) sees a post another
  writer just ingested, at read_consistency_seconds 0 and 2.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from core.config import Settings  # noqa: E402

DEMO = ROOT / "data" / "demo" / "posts"


class Memo:
    """The real embedder, each text embedded once (the first call), so timed runs do no model work."""

    def __init__(self, inner):
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.memo: dict[str, np.ndarray] = {}

    def embed(self, texts):
        missing = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if missing:
            self.memo.update(zip(missing, self.inner.embed(missing), strict=True))
        return np.array([self.memo[t] for t in texts], dtype=np.float32).reshape(len(texts), self.dim)

    def query(self, texts):
        return self.embed(texts)


def p(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def main() -> None:
    from core.embed import get_embedder
    from core.ingest import ingest_paths
    from core.parse import parse_paths
    from core.search import search
    from core.store import Store
    from tests.s3_server import S3Server

    embedder = Memo(get_embedder(Settings.load(environ={})))
    titles = [post.title for post in parse_paths([DEMO]).posts]
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="inkwell-objstore-") as tmp, S3Server() as s3:
        os.environ.update(s3.env)
        os.environ["INKWELL_LOCAL_DIR"] = str(Path(tmp) / "local")
        # Warm the memo (and the model) on a throwaway table: every chunk and question embedded once.
        warm = Settings.load({"data_dir": Path(tmp) / "warm"}, environ={})
        ingest_paths([DEMO], warm, embedder=embedder)
        embedder.embed(titles)

        places = {"local": Path(tmp) / "db", "s3": s3.uri("bench")}
        for name, where in places.items():
            settings = Settings.load({"data_dir": where}, environ={})
            started = time.perf_counter()
            report = ingest_paths([DEMO], settings, embedder=embedder)
            first = time.perf_counter() - started
            started = time.perf_counter()
            again = ingest_paths([DEMO], settings, embedder=embedder)
            second = time.perf_counter() - started
            assert report.ok and again.count("unchanged") == len(again.outcomes), again.summary()
            rows.append((f"ingest {report.count('new')} posts ({name})", f"{first:.2f} s", ""))
            rows.append((f"re-ingest, nothing changed ({name})", f"{second:.2f} s", ""))

        for name, where in places.items():
            for consistency in (0.0, 5.0):
                if name == "local" and consistency:
                    continue
                settings = Settings.load({"data_dir": where}, environ={})
                store = Store(where, read_consistency_seconds=consistency)
                search(titles[0], settings, store=store, embedder=embedder)  # open the tables
                before = s3.stats()
                times = []
                for title in titles * 2:
                    started = time.perf_counter()
                    search(title, settings, store=store, embedder=embedder)
                    times.append((time.perf_counter() - started) * 1000)
                after = s3.stats()
                requests = sum(v for k, v in after.items() if k.startswith("requests_")) - sum(
                    v for k, v in before.items() if k.startswith("requests_")
                )
                per_search = f"{requests / len(times):.1f} S3 requests/search" if name == "s3" else ""
                rows.append(
                    (
                        f"hybrid search p50 / p95 ({name}, consistency {consistency:g} s)",
                        f"{p(times, 50):.0f} / {p(times, 95):.0f} ms",
                        per_search,
                    )
                )

        for consistency in (0.0, 2.0):
            uri = s3.uri(f"replica-{consistency:g}")
            settings = Settings.load({"data_dir": uri}, environ={})
            ingest_paths([DEMO / "books"], settings, embedder=embedder)
            replica = Store(uri, read_consistency_seconds=consistency)
            n_before = replica.counts()[0]
            writer_settings = settings.replace()
            ingest_paths([DEMO / "projects"], writer_settings, embedder=embedder)
            written = time.monotonic()
            while replica.counts()[0] == n_before:
                time.sleep(0.01)
            rows.append(
                (
                    f"an open store sees another writer's ingest (consistency {consistency:g} s)",
                    f"{time.monotonic() - written:.2f} s",
                    "",
                )
            )
        stats = s3.stats()

    print(f"Object storage (moto S3 on 127.0.0.1) vs a local folder; demo posts; {os.cpu_count()} cores")
    width = max(len(r[0]) for r in rows) + 2
    for name, value, note in rows:
        print(f"{name:<{width}}{value:>14}  {note}")
    print(
        f"commits: {stats.get('manifest_puts_conditional', 0)} manifest PUTs with If-None-Match, "
        f"{stats.get('manifest_puts_unconditional', 0)} without"
    )


if __name__ == "__main__":
    main()
