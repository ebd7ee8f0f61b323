"""`make bench`: the speed figures the tests no longer assert (they keep only wide hang guards).

Prints, best of `--repeat` runs (the first, cold run apart):
- keywords for 400 chunks of one post (tests/unit/test_keywords.py);
- chunking three pathological one-line texts that used to be quadratic: an unclosed "[REF:" tag
  repeated, one 300 KB word, 200 KB of "[" (tests/unit/test_chunk.py);
- reading an RSS feed of 10,000 items from a loopback server, capped at 1,000
  (tests/integration/test_web_sync.py).

    python bench/speed.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.chunk import extract_keywords, paragraph_chunks
from core.config import Settings
from core.ingest.web import Fetcher
from core.ingest.web.read import read_source
from core.models import Block, Chunk, Post
from core.store.sources import Source
from tests.site_server import SiteServer

CONTENT_NS = "http://purl.org/rss/1.0/modules/content/"
SENTENCES = [
    "The garden was overgrown when we bought the house, and brambles covered the wall.",
    "My neighbour lent me a telescope; on clear nights I watched Jupiter rise over the shed.",
    "Children from the street borrowed the library's books about planets.",
    "By autumn the garden was tidy again, and the sourdough starter had survived.",
]
PATHOLOGICAL = {
    "unclosed-tags": "[REF: an unclosed tag " * 20_000,
    "one-long-word": "x" * 300_000 + ".",
    "brackets": "[" * 200_000,
}


def timed(work: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(the first run's seconds, the best of the next `repeat`)."""
    times = []
    for _ in range(repeat + 1):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return times[0], min(times[1:])


def keywords_work() -> Callable[[], object]:
    texts = [f"{SENTENCES[i % 4]} Entry {i} mentions quasar{i % 50} and nebula{i % 7}." for i in range(400)]
    post = Post("p1", "Notes", [Block(t) for t in texts], raw="", source="t.md")
    chunks = [Chunk(f"p1#{i:04d}", "p1", i, t) for i, t in enumerate(texts)]
    return lambda: extract_keywords(chunks, post)


def feed_work(site: SiteServer) -> Callable[[], object]:
    items = "".join(
        f"<item><title>Post {i}</title><link>{site.base}/p/{i}</link>"
        f"<content:encoded><![CDATA[<p>Entry number {i}.</p>]]></content:encoded></item>"
        for i in range(10_000)
    )
    feed = (
        f'<?xml version="1.0"?><rss version="2.0" xmlns:content="{CONTENT_NS}"><channel>'
        f"<title>My Blog</title>{items}</channel></rss>"
    )
    site.add("/big.xml", feed, "application/rss+xml")
    fetcher = Fetcher("127.0.0.1", timeout=5, deadline=60, max_page_bytes=16 * 1024 * 1024)
    return lambda: read_source(Source(site.url("/big.xml"), "auto"), fetcher)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    repeat = parser.parse_args().repeat
    target = Settings().chunk_tokens
    rows = [("keywords, 400 chunks", *timed(keywords_work(), repeat))]
    for name, text in PATHOLOGICAL.items():
        rows.append(
            (f"chunk one line: {name}", *timed(lambda t=text: paragraph_chunks([Block(t)], target), repeat))
        )
    with SiteServer() as site:
        rows.append(("RSS feed, 10,000 items", *timed(feed_work(site), repeat)))
    print(f"{'work':34} {'first s':>8} {'best s':>8}")
    for name, first, best in rows:
        print(f"{name:34} {first:8.3f} {best:8.3f}")


if __name__ == "__main__":
    main()
