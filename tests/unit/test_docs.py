"""The README and docs/*.md link only to files and headings that exist, and the README stays short.

Links are read with markdown-it-py (the parser the app already uses), so links inside code blocks are
not links. Anchors follow GitHub's rule for heading ids: the heading's text, lower case, punctuation
other than `-` and `_` removed, spaces turned into `-`, a repeated id suffixed `-1`, `-2`, ….
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 300
_PARSER = MarkdownIt("commonmark").enable("table")
_DROP = re.compile(r"[^\w\- ]", re.UNICODE)


def _inline_text(token: Token) -> str:
    return "".join(child.content for child in token.children or [] if child.type in ("text", "code_inline"))


def heading_ids(text: str) -> set[str]:
    """The anchors GitHub gives the document's headings."""
    tokens = _PARSER.parse(text)
    seen: Counter[str] = Counter()
    ids: set[str] = set()
    for i, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        slug = _DROP.sub("", _inline_text(tokens[i + 1]).strip().lower()).replace(" ", "-")
        ids.add(slug if not seen[slug] else f"{slug}-{seen[slug]}")
        seen[slug] += 1
    return ids


def links(text: str) -> list[str]:
    """Every link and image target in the document, in order."""
    found: list[str] = []
    for token in _PARSER.parse(text):
        for child in token.children or []:
            if child.type == "link_open":
                found.append(str(child.attrs.get("href", "")))
            elif child.type == "image":
                found.append(str(child.attrs.get("src", "")))
    return found


def _has_heading(file: Path, anchor: str) -> bool:
    return anchor in heading_ids(file.read_text(encoding="utf-8"))


def broken_links(path: Path) -> list[str]:
    """The targets in `path` that name a missing file or a heading its file does not have."""
    problems = []
    for target in links(path.read_text(encoding="utf-8")):
        parts = urlsplit(target)
        if parts.scheme or parts.netloc:
            continue  # the web: not checked offline
        file = (path.parent / unquote(parts.path)).resolve() if parts.path else path
        if not file.exists():
            shown = file.relative_to(ROOT) if file.is_relative_to(ROOT) else file
            problems.append(f"{target}: no file {shown}")
        elif parts.fragment and file.suffix == ".md" and not _has_heading(file, unquote(parts.fragment)):
            problems.append(f"{target}: no heading #{parts.fragment} in {file.name}")
    return problems


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves(path: Path) -> None:
    assert broken_links(path) == []


def test_the_readme_stays_a_short_guide() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move details into docs/"


# What an example line in the README's input table ingests: each source has a line of its own.
INPUT_EXAMPLES = {
    "Markdown and other files": "essay.html",
    "WordPress": "wordpress.xml",
    "Ghost": "ghost.json",
    "Substack": "substack-export.zip",
    "Medium": "medium-export.zip",
    "a feed": "/feed.xml",
    "a sitemap": "/sitemap.xml",
    "a site root": "https://blog.example/`",
    "PDF and Word": ".pdf",
}


@pytest.mark.parametrize(
    "path", [ROOT / "README.md", ROOT / "docs" / "configuration.md"], ids=lambda p: p.name
)
@pytest.mark.parametrize("field", ["author_name", "author_description"])
def test_the_settings_tables_give_the_authors_real_defaults(path: Path, field: str) -> None:
    """The README said the author description's default was "the author" (the name's); the Settings
    page, rightly, "a writer who blogs about their life and work"."""
    from core.config import Settings

    default = getattr(Settings.load(environ={}), field)
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = [line for line in lines if line.startswith("|") and f"`INKWELL_{field.upper()}`" in line]
    assert rows, f"{path.name} has no row for INKWELL_{field.upper()}"
    assert all(f'"{default}"' in row.split("|")[2] for row in rows), rows


def test_the_readme_input_table_gives_each_source_its_own_example_line() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Your writings\n", 1)[1].split("\n### ", 1)[0]
    examples = [row.rsplit("|", 2)[-2] for row in section.splitlines() if row.startswith("|")]  # last cell
    for source, needle in INPUT_EXAMPLES.items():
        lines = [e for e in examples if needle in e]
        assert len(lines) == 1, (source, lines)
        others = [s for s, n in INPUT_EXAMPLES.items() if s != source and n in lines[0]]
        assert not others, f"{source} shares its example line with {others}"


def test_the_check_finds_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## Same\n\n## Same\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[ok](other.md#same-1) [ok](#page) [web](https://example.org/#x)\n\n"
        "[gone](missing.md) [bad](other.md#nowhere) [self](#nowhere-here)\n\n"
        "```\n[in code](absent.md)\n```\n",
        encoding="utf-8",
    )
    problems = broken_links(page)
    assert [p.split(":")[0] for p in problems] == ["missing.md", "other.md#nowhere", "#nowhere-here"]


def test_heading_ids_follow_github() -> None:
    text = "# Calibration (`inkwell calibrate`, core/evaluate/calibrate.py)\n\n## Reranking (optional, off by default)\n"
    assert heading_ids(text) == {
        "calibration-inkwell-calibrate-coreevaluatecalibratepy",
        "reranking-optional-off-by-default",
    }


def test_the_secrets_example_copied_as_is_sets_nothing_made_up() -> None:
    """The README says to copy .streamlit/secrets.toml.example; copied as it was, it switched on a
    placeholder OpenAI key ("sk-...": every answer tried OpenAI and fell back with "the answer model
    could not be reached"), the well-known admin password "change-me", and the author "Jane Doe" whose
    voice the chat then claimed. Placeholders are comments to fill in; what is set must be real."""
    import tomllib

    from core.config import Settings

    example = tomllib.loads((ROOT / ".streamlit" / "secrets.toml.example").read_text(encoding="utf-8"))
    settings = Settings.load(secrets=example, environ={})
    defaults = Settings.load(environ={})
    for name in ("openai_api_key", "author_name", "author_description"):
        assert getattr(settings, name) == getattr(defaults, name), name
    assert "admin_password" not in example  # read by the pages from the secrets themselves
