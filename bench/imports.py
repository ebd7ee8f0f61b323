"""`make bench`: importing a 500-post WordPress export (WXR) against a folder of the same 500 posts as
Markdown files, in the same run, as a ratio.

The posts are generated varied text (bench/huge_inputs.py: sentences from the demo posts' vocabulary,
paragraphs of 2-9 sentences, a heading now and then), each with a title, a date, two categories and a
tag. The WXR holds them as a classic-editor export (blank-line paragraphs, CDATA, a `[caption]` shortcode
in every tenth post); the folder as `<slug>.md` files with front matter. Each is ingested by the real
command line into a fresh data dir with vectors from the hash embedding server of
tests/writers_support.py, so the figures are Inkwell's own work (reading, chunking, keywords, storing),
not the model's; `--model` uses the configured embedder instead. One file of 500 posts is parsed in one
reader job, 500 files in 500; prints wall and CPU seconds (this process's children: the CLI and its
reader) and WXR ÷ Markdown.

    python bench/imports.py [--posts 500] [--model]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from contextlib import nullcontext
from html import escape
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from huge_inputs import ingest, varied_text, vocabulary  # noqa: E402  (bench/, this script's folder)

from core.parse import parse_paths  # noqa: E402
from tests.writers_support import embedding_server, environ  # noqa: E402

_HEAD = """<?xml version="1.0" encoding="UTF-8" ?>
<rss version="2.0" xmlns:excerpt="http://wordpress.org/export/1.2/excerpt/"
 xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:dc="http://purl.org/dc/elements/1.1/"
 xmlns:wp="http://wordpress.org/export/1.2/">
<channel><title>Bench blog</title><link>https://bench.example</link><wp:wxr_version>1.2</wp:wxr_version>
"""
_ITEM = """<item><title><![CDATA[{title}]]></title><link>https://bench.example/{slug}/</link>
<dc:creator><![CDATA[author]]></dc:creator><content:encoded><![CDATA[{html}]]></content:encoded>
<wp:post_id>{number}</wp:post_id><wp:post_date><![CDATA[{date} 09:00:00]]></wp:post_date>
<wp:post_name><![CDATA[{slug}]]></wp:post_name><wp:status><![CDATA[publish]]></wp:status>
<wp:post_type><![CDATA[post]]></wp:post_type><wp:post_password><![CDATA[]]></wp:post_password>
<category domain="category" nicename="{a}"><![CDATA[{a}]]></category>
<category domain="category" nicename="{b}"><![CDATA[{b}]]></category>
<category domain="post_tag" nicename="{tag}"><![CDATA[{tag}]]></category></item>
"""


def posts(count: int, words: list[str]) -> list[dict[str, str]]:
    rng = random.Random(7)
    found = []
    for number in range(1, count + 1):
        title = " ".join(rng.choice(words) for _ in range(rng.randint(3, 7))).capitalize()
        found.append(
            {
                "number": str(number),
                "title": title,
                "slug": f"post-{number}",
                "date": f"20{rng.randint(10, 24)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                "a": rng.choice(words),
                "b": rng.choice(words),
                "tag": rng.choice(words),
                "markdown": varied_text(rng.randint(800, 2500), words, seed=number),
            }
        )
    return found


def wordpress_html(post: dict[str, str]) -> str:
    """The post as WordPress's classic editor stores it: blank-line paragraphs, headings as <h2>."""
    parts = []
    for paragraph in post["markdown"].split("\n\n"):
        if paragraph.startswith("## "):
            parts.append(f"<h2>{escape(paragraph[3:])}</h2>")
        else:
            parts.append(escape(paragraph))
    if int(post["number"]) % 10 == 0:
        parts.insert(1, '[caption id="attachment_1" width="300"]<img src="a.jpg" /> A caption.[/caption]')
    return "\n\n".join(parts)


def write_wxr(path: Path, items: list[dict[str, str]]) -> Path:
    body = "".join(_ITEM.format(html=wordpress_html(p), **p) for p in items)
    path.write_text(_HEAD + body + "</channel></rss>\n", encoding="utf-8")
    return path


def write_markdown(folder: Path, items: list[dict[str, str]]) -> Path:
    folder.mkdir()
    for p in items:
        front = (
            f'---\ntitle: "{p["title"]}"\ndate: {p["date"]}\ntags: [{p["a"]}, {p["b"]}, {p["tag"]}]\n---\n\n'
        )
        (folder / f"{p['slug']}.md").write_text(front + p["markdown"] + "\n", encoding="utf-8")
    return folder


def parse_time(path: Path) -> tuple[float, int]:
    parse_paths(Path(__file__))  # the reader process started before the clock, as in a running app
    started = time.perf_counter()
    result = parse_paths(path)
    return time.perf_counter() - started, len(result.posts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--posts", type=int, default=500, help="posts in the export and the folder (500)")
    parser.add_argument("--model", action="store_true", help="embed with the configured model")
    args = parser.parse_args()
    items = posts(args.posts, vocabulary())
    with (
        tempfile.TemporaryDirectory(prefix="inkwell-imports-") as scratch,
        nullcontext() if args.model else embedding_server() as server,
    ):
        folder = Path(scratch)
        base = {k: v for k, v in os.environ.items() if not k.startswith("INKWELL_")}
        env = environ(server, folder / "unused", chunk_tokens="300") if server else base
        wxr = write_wxr(folder / "export.xml", items)
        markdown = write_markdown(folder / "posts", items)
        parsed = [("WXR", *parse_time(wxr)), ("Markdown", *parse_time(markdown))]
        rows = [
            ("WXR", *ingest(wxr, env), f"{wxr.stat().st_size / 2**20:.1f} MB, 1 file"),
            ("Markdown", *ingest(markdown, env), f"{len(items)} files"),
        ]
    embedder = "the configured embedder" if args.model else "the hash embedding server"
    print(f"Importing {len(items)} posts ({embedder}):")
    print(f"  {'input':<10} {'wall s':>8} {'CPU s':>8}  {'what':<18} summary")
    for name, wall, cpu, summary, what in rows:
        print(f"  {name:<10} {wall:>8.1f} {cpu:>8.1f}  {what:<18} {summary}")
    (_, wall_x, cpu_x, *_), (_, wall_m, cpu_m, *_) = rows
    print(f"  WXR ÷ Markdown: wall {wall_x / wall_m:.2f}×, CPU {cpu_x / cpu_m:.2f}×")
    print("Reading alone (parse_paths, in the reader process as an ingest does):")
    for name, seconds, count in parsed:
        print(f"  {name:<10} {seconds:>8.2f} s  {count} posts")
    print(f"  WXR ÷ Markdown: {parsed[0][1] / parsed[1][1]:.2f}×")


if __name__ == "__main__":
    main()
