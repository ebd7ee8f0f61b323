"""`make bench`: chunking and keywords of a 5 MB post that is one single line, against the same text in
paragraphs (the same-run baseline).

A long paragraph is cut at sentences, a sentence over the target between words; both used to re-count
tokens of growing slices (7.3 s for a 512 KB paragraph, 22 s at 1 MB, 45 s at 2 MB; a 5 MB one-line
file took 356 s to ingest). Prints, for each shape of the same words: chunking and keyword time, the
chunks made, and the ratio to the paragraphs baseline.

    python bench/long_text.py [--mb 5]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.chunk import add_keywords, chunk_post
from core.config import Settings
from core.parse import parse_text

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo" / "posts"


def sentences(size: int, seed: int = 0) -> list[str]:
    """Sentences of 8-24 words drawn from the demo posts' vocabulary, `size` characters in all."""
    words = sorted(
        {w.strip(".,;:!?\"'()[]") for p in DEMO.rglob("*.md") for w in p.read_text().split()} - {""}
    )
    rng = random.Random(seed)
    out, total = [], 0
    while total < size:
        sentence = " ".join(rng.choice(words) for _ in range(rng.randint(8, 24))).capitalize() + "."
        out.append(sentence)
        total += len(sentence) + 1
    return out


def measure(name: str, text: str, settings: Settings) -> tuple[str, float, float, int]:
    post = parse_text(text, "Long post", format="text")
    started = time.perf_counter()
    chunks = chunk_post(post, settings)
    chunked = time.perf_counter()
    add_keywords(chunks, post)
    return name, chunked - started, time.perf_counter() - chunked, len(chunks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=5.0, help="size of the text in MB (5)")
    args = parser.parse_args()
    settings = Settings.load(environ={})
    parts = sentences(int(args.mb * 1024 * 1024))
    measure("warm-up", " ".join(parts[:200]), settings)  # vocabularies and lemma tables load once
    shapes = [
        (
            "paragraphs of 6 sentences (baseline)",
            "\n\n".join(" ".join(parts[i : i + 6]) for i in range(0, len(parts), 6)),
        ),
        ("one line of sentences", " ".join(parts)),
        ("one line, no punctuation (one sentence)", " ".join(parts).replace(".", "")),
    ]
    rows = [measure(name, text, settings) for name, text in shapes]
    base = rows[0][1] + rows[0][2]
    print(f"Chunking and keywords of {args.mb:g} MB of text (chunk_tokens {settings.chunk_tokens}):")
    print(f"  {'shape':<42} {'chunk s':>8} {'keywords s':>11} {'chunks':>7} {'vs baseline':>12}")
    for name, chunk_s, keyword_s, count in rows:
        ratio = (chunk_s + keyword_s) / base if base else float("nan")
        print(f"  {name:<42} {chunk_s:>8.2f} {keyword_s:>11.2f} {count:>7} {ratio:>11.2f}×")


if __name__ == "__main__":
    main()
