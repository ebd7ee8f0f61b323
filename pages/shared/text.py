"""Showing text from posts, readers and models safely in Streamlit's Markdown."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from core.text import plural

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~=$:&\"'^])")

# plural is core's, so the CLI and the pages word counts alike.
__all__ = ["md_escape", "plural", "safe_answer", "safe_answer_stream"]


def md_escape(text: Any) -> str:
    """Text that Streamlit's Markdown shows literally: no links, images, emphasis, directives or HTML."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def safe_answer(text: str) -> str:
    """The model's Markdown with images turned into plain text (an image URL could leak data)."""
    return text.replace("![", "!\\[")


def safe_answer_stream(deltas: Iterable[str]) -> Iterator[str]:
    """`safe_answer` over a stream, also when `!` and `[` arrive in different deltas."""
    held = ""
    for delta in deltas:
        text = safe_answer(held + delta)
        held = "!" if text.endswith("!") else ""
        if held:
            text = text[:-1]
        if text:
            yield text
    if held:
        yield held
