"""Titles in the answer's Markdown render as text, not HTML or links (the real CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from core.answer.extractive import markdown_literal
from tests.conftest import write
from tests.e2e_support import free_port
from tests.test_cli import run

QUESTION = "Which tomatoes split in wet Augusts?"
HOSTILE_TITLE = "<img src=x onerror=alert(1)> [home](javascript:alert(1)) *loud*"
CLI_HANG_GUARD = 180  # s: only against a hang; an import of torch on a busy 2-core machine takes ~25 s


GARDEN = "I grow six kinds of tomatoes against the south wall. The Brandywines split in wet Augusts."


@pytest.fixture
def posts(tmp_path: Path) -> Path:
    """A folder of two posts for the CLI."""
    root = tmp_path / "posts"
    write(root / "garden.md", f"---\ntitle: The Garden\nslug: garden\n---\n\n## Tomatoes\n\n{GARDEN}\n")
    write(root / "trains.txt", "Night Trains\n\nI took the sleeper from Vienna to Rome in 2019.\n")
    return root


def dead_model_url() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"


# Titles in the answer's Markdown ------------------------------------------------------------------------


def test_titles_in_the_markdown_answer_are_text_but_plain_in_the_json_fields(tmp_path):
    root = tmp_path / "posts"
    write(root / "garden.md", f"---\ntitle: '{HOSTILE_TITLE}'\nslug: garden\n---\n\n{GARDEN}\n")
    db = tmp_path / "db"
    assert run("ingest", str(root), data_dir=db).exit_code == 0
    out = json.loads(run("ask", QUESTION, "--answer-mode", "extractive", "--json", data_dir=db).stdout)
    assert out["answer_mode"] == "extractive"
    assert "<img" not in out["answer"] and "[home](" not in out["answer"]
    assert out["sources"][0]["title"] == HOSTILE_TITLE  # plain values stay plain
    assert {s["title"] for s in out["sentences"]} == {HOSTILE_TITLE}
    html = MarkdownIt().render(out["answer"])
    assert "<img" not in html and "<a " not in html and "&lt;img src=x" in html
    assert "[home](javascript:alert(1)) *loud*" in html  # shown as written, no link, no emphasis


def test_markdown_literal_renders_as_the_text_itself():
    for text in (HOSTILE_TITLE, "Fish & Chips <3", "`code` ~~gone~~ $x$ _under_ back\\slash"):
        html = MarkdownIt().render(markdown_literal(text)).strip()
        assert html == f"<p>{text.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;')}</p>"
