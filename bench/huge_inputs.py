"""Huge inputs (issue #31): how `inkwell ingest` time grows with a post's size and a JSON file's posts.

Generated varied text (sentences of 6-28 words from the demo posts' vocabulary, paragraphs of 2-9
sentences, a heading now and then) as one Markdown post of 1, 2 and 4 MB, and as JSON lists of 2,500,
5,000 and 10,000 small posts (300-1,500 characters each). Each is ingested by the real command line
into a fresh data dir, with vectors from the hash embedding server of tests/writers_support.py, so the
figures are Inkwell's own work (reading, chunking, keywords, storing), not the model's; `--model` uses
the configured embedder instead (the built-in one embeds some 20 chunks a second on two cores, which is
what a 19 MB post's 16,500 chunks spend their time on). Prints wall and CPU seconds (the child
process's user + system time: steadier than wall time on a shared machine) and the ratio per doubling;
linear work doubles.

    python bench/huge_inputs.py [--mb 1,2,4] [--posts 2500,5000,10000] [--model]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.writers_support import embedding_server, environ  # noqa: E402

DEMO = ROOT / "data" / "demo" / "posts"


def vocabulary() -> list[str]:
    """The demo posts' words, markup characters left out (a stray ``` would make code of the rest)."""
    words = {re.sub(r"[^\w'-]", "", w) for p in DEMO.rglob("*.md") for w in p.read_text().split()}
    return sorted(w for w in words if w.strip("-'"))


def varied_text(size: int, words: list[str], seed: int) -> str:
    rng = random.Random(seed)
    paragraphs: list[str] = []
    sentences: list[str] = []
    total = 0
    while total < size:
        sentence = " ".join(rng.choice(words) for _ in range(rng.randint(6, 28))).capitalize()
        sentences.append(sentence + rng.choice(".?!."))
        total += len(sentences[-1]) + 1
        if len(sentences) >= rng.randint(2, 9):
            paragraph = " ".join(sentences)
            if rng.random() < 0.1:
                paragraph = "## " + " ".join(rng.choice(words) for _ in range(4)) + "\n\n" + paragraph
            paragraphs.append(paragraph)
            sentences = []
    paragraphs.append(" ".join(sentences))
    return "\n\n".join(p for p in paragraphs if p)


def write_post(path: Path, mb: float, words: list[str]) -> Path:
    text = varied_text(int(mb * 1024 * 1024), words, seed=0)
    path.write_text(f"---\ntitle: A huge post\nid: huge\n---\n\n{text}\n", encoding="utf-8")
    return path


def write_posts(path: Path, count: int, words: list[str]) -> Path:
    rng = random.Random(1)
    posts = [
        {"id": f"p{i}", "title": f"Post {i}", "text": varied_text(rng.randint(300, 1500), words, seed=i)}
        for i in range(count)
    ]
    path.write_text(json.dumps(posts), encoding="utf-8")
    return path


def ingest(path: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """(wall s, CPU s, summary line) of `inkwell ingest path` in a fresh data dir."""
    with tempfile.TemporaryDirectory(prefix="inkwell-huge-") as data:
        run_env = {**env, "INKWELL_DATA_DIR": data}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "core.cli", "ingest", str(path)],
            cwd=ROOT,
            env=run_env,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"ingest of {path} failed:\n{proc.stderr[-2000:]}")
    return wall, cpu, proc.stdout.strip().splitlines()[-1]


def report(title: str, rows: list[tuple[str, float, float, str]]) -> None:
    print(title)
    print(f"  {'input':<16} {'wall s':>8} {'CPU s':>8} {'CPU ×':>7}  summary")
    for i, (name, wall, cpu, summary) in enumerate(rows):
        ratio = f"{cpu / rows[i - 1][2]:.2f}" if i else "-"
        print(f"  {name:<16} {wall:>8.1f} {cpu:>8.1f} {ratio:>7}  {summary}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", default="1,2,4", help="sizes of the one-post files, in MB (1,2,4)")
    parser.add_argument("--posts", default="2500,5000,10000", help="posts per JSON file (2500,5000,10000)")
    parser.add_argument("--model", action="store_true", help="embed with the configured model")
    args = parser.parse_args()
    words = vocabulary()
    with (
        tempfile.TemporaryDirectory(prefix="inkwell-huge-inputs-") as scratch,
        nullcontext() if args.model else embedding_server() as server,
    ):
        folder = Path(scratch)
        base = {k: v for k, v in os.environ.items() if not k.startswith("INKWELL_")}
        env = environ(server, folder / "unused", chunk_tokens="300") if server else base
        posts = []
        for mb in (float(x) for x in args.mb.split(",") if x):
            wall, cpu, summary = ingest(write_post(folder / f"huge-{mb:g}mb.md", mb, words), env)
            posts.append((f"{mb:g} MB post", wall, cpu, summary))
        lists = []
        for count in (int(x) for x in args.posts.split(",") if x):
            wall, cpu, summary = ingest(write_posts(folder / f"posts-{count}.json", count, words), env)
            lists.append((f"{count:,} posts", wall, cpu, summary))
    embedder = "the configured embedder" if args.model else "the hash embedding server"
    report(f"One Markdown post of varied text ({embedder}):", posts)
    report(f"A JSON list of small posts ({embedder}):", lists)


if __name__ == "__main__":
    main()
