"""Counts worded for people, the same in the CLI and the app: "0 chunks", "1 chunk", "2 chunks"."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """'1 post', '2 posts', '0 problems', '1,200 chunks' (`many`: an irregular plural, e.g. 'replies')."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"
