"""Rebuild data/calibration/kjv-john/posts/ from Debian's bible-kjv-text (`apt-get install bible-kjv`).

Each post is one chapter of the Gospel of John, Ecclesiastes or the Epistle of James, verbatim
from the King James Version as the `bible` program prints it, one verse a paragraph, verse
numbers left out.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

# (spec for `bible`, title, file stem, chapters, collection, author)
BOOKS: list[tuple[str, str, str, int, str, str]] = [
    ("John", "John", "john", 21, "john", "John"),
    ("Eccl", "Ecclesiastes", "ecclesiastes", 12, "ecclesiastes", "the Preacher"),
    ("Jas", "James", "james", 5, "james", "James"),
]
VERSE_RE = re.compile(r"^(\S+?)(\d+):(\d+) (.*)$")
OUT = Path(__file__).resolve().parent / "posts"


def chapter_verses(spec: str, chapter: int) -> list[str]:
    """The chapter's verses in order, each once (the program repeats the last past the end)."""
    printed = subprocess.run(
        ["bible", "-f", f"{spec}{chapter}:1-200"], capture_output=True, text=True, check=True
    ).stdout
    verses: dict[int, str] = {}
    for line in printed.splitlines():
        match = VERSE_RE.match(line)
        if match and int(match.group(2)) == chapter:
            verses.setdefault(int(match.group(3)), match.group(4).strip())
    numbers = sorted(verses)
    if not numbers or numbers != list(range(1, len(numbers) + 1)):
        raise SystemExit(f"{spec} {chapter}: verses missing or not contiguous")
    return [verses[n] for n in numbers]


def post_text(title: str, collection: str, author: str, verses: list[str]) -> str:
    """A Markdown post: front matter, then one verse a paragraph."""
    front = f'---\ntitle: "{title}"\ncollection: {collection}\nauthor: {author}\n---\n\n'
    return front + "\n\n".join(verses) + "\n"


def main() -> None:
    for spec, name, stem, chapters, collection, author in BOOKS:
        folder = OUT / collection
        folder.mkdir(parents=True, exist_ok=True)
        for chapter in range(1, chapters + 1):
            verses = chapter_verses(spec, chapter)
            text = post_text(f"{name}, chapter {chapter}", collection, author, verses)
            (folder / f"{stem}-{chapter:02d}.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
