"""A model server that is down, in the real CLI (a subprocess, and click's runner): the reader gets the
author's own sentences with a note saying why, and `--json` says it fell back and why; when even
retrieval fails, `--json` prints an error object. Also: titles in the answer's Markdown render as text,
not HTML or links. Nothing listens on the port these tests point the model at (bound, then closed).
The chat's side of it is in tests/integration/test_chat_answers.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from core.answer.extractive import markdown_literal
from core.answer.reply import UNREACHABLE_NOTE
from tests.cli_support import run
from tests.conftest import ROOT, write
from tests.e2e_support import app_environ, free_port

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


# The CLI --------------------------------------------------------------------------------------------------


def test_ask_quotes_the_author_when_the_model_server_is_down(posts, tmp_path):
    db = tmp_path / "db"
    assert run("ingest", str(posts), data_dir=db).exit_code == 0
    url = dead_model_url()
    done = subprocess.run(
        [sys.executable, "-m", "core.cli", "ask", QUESTION, "--answer-mode", "generative", "--json"],
        env=app_environ(OPENAI_BASE_URL=url, INKWELL_DATA_DIR=str(db), INKWELL_ROUTING="off"),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=CLI_HANG_GUARD,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["answer_mode"] == "extractive" and out["model"] is None
    assert "The Brandywines split in wet Augusts." in out["answer"]
    assert [s["post_id"] for s in out["sources"]] == ["garden"]
    assert all(s["text"] in out["answer"] for s in out["sentences"])
    fallback = out["fallback"]
    assert fallback["from"] == "generative" and fallback["kind"] == "connection"
    assert fallback["note"] == UNREACHABLE_NOTE
    assert url in fallback["error"] and "refused" in fallback["error"].lower()  # the owner's tool says where


def test_ask_prints_the_quotes_and_the_note_without_json(posts, tmp_path, monkeypatch):
    db = tmp_path / "db"
    run("ingest", str(posts), data_dir=db)
    monkeypatch.setenv("OPENAI_BASE_URL", dead_model_url())
    monkeypatch.setenv("INKWELL_ROUTING", "off")
    result = run("ask", QUESTION, "--answer-mode", "generative", data_dir=db)
    assert result.exit_code == 0, result.output
    assert "The Brandywines split in wet Augusts." in result.stdout
    assert UNREACHABLE_NOTE in result.stderr
    assert f"\n{UNREACHABLE_NOTE}" in result.stderr and "\\n" not in result.stderr  # a line, not "\n"


def test_ask_json_prints_an_error_object_when_retrieval_fails(posts, tmp_path, monkeypatch):
    db = tmp_path / "db"
    run("ingest", str(posts), data_dir=db)
    monkeypatch.setenv("OPENAI_BASE_URL", dead_model_url())
    monkeypatch.setenv("INKWELL_EMBED_BACKEND", "openai")  # the question's vector comes from the dead server
    result = run("ask", QUESTION, "--json", data_dir=db)
    assert result.exit_code == 1
    error = json.loads(result.stdout)
    assert error["kind"] == "EmbedError" and "could not connect" in error["error"].lower()
    assert "Traceback" not in result.output


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
