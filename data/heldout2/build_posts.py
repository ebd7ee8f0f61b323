"""Rebuild data/heldout2/posts/ from Debian's bible-kjv-text (needs `apt-get install bible-kjv`).

Each post is one chapter of a letter of Paul, verbatim from the King James Version as the
`bible` program prints it, one verse a paragraph, verse numbers left out.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

# (spec for `bible`, title, file stem, chapters, collection)
LETTERS: list[tuple[str, str, str, int, str]] = [
    ("Rom", "Romans", "romans", 16, "churches"),
    ("1Cor", "1 Corinthians", "1-corinthians", 16, "churches"),
    ("Gal", "Galatians", "galatians", 6, "churches"),
    ("Phil", "Philippians", "philippians", 4, "churches"),
    ("1Tim", "1 Timothy", "1-timothy", 6, "companions"),
    ("2Tim", "2 Timothy", "2-timothy", 4, "companions"),
    ("Titus", "Titus", "titus", 3, "companions"),
    ("Phmn", "Philemon", "philemon", 1, "companions"),
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
    if numbers != list(range(1, len(numbers) + 1)):
        raise SystemExit(f"{spec} {chapter}: verses not contiguous")
    return [verses[n] for n in numbers]


def post_text(title: str, collection: str, verses: list[str]) -> str:
    """A Markdown post: front matter, then one verse a paragraph."""
    front = f'---\ntitle: "{title}"\ncollection: {collection}\nauthor: Paul\n---\n\n'
    return front + "\n\n".join(verses) + "\n"


def main() -> None:
    for spec, name, stem, chapters, collection in LETTERS:
        folder = OUT / collection
        folder.mkdir(parents=True, exist_ok=True)
        for chapter in range(1, chapters + 1):
            title = f"{name}, chapter {chapter}" if chapters > 1 else name
            file_stem = f"{stem}-{chapter:02d}" if chapters > 1 else stem
            text = post_text(title, collection, chapter_verses(spec, chapter))
            (folder / f"{file_stem}.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
