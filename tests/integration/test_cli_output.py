"""What `inkwell` prints: control characters in stored or typed text are shown, never obeyed, by the
terminal (core/cli/output.py); numeric options have ranges (core/cli/main.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from core import cli
from core.cli import main
from core.cli.output import echo_row, safe
from tests.conftest import write

# Stored as the title: clear screen, set the window title, C1 CSI, right-to-left override, backspace.
TITLE = "Tomatoes \x1b[2J\x1b]0;owned\x07 \x9b31m \u202eevil end\x08"
SHOWN = "Tomatoes \\x1b[2J\\x1b]0;owned\\x07 \\x9b31m \\u202eevil end\\x08"
COLLECTION = "gar\x1b[2Jden"
# What may not reach the terminal raw (click's own colours, ESC[…m, are removed before looking).
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
STYLE = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding a post whose title, collection, section and text carry terminal escapes, and a
    plain post in a second collection (so routing has collections to name)."""
    root = tmp_path_factory.mktemp("hostile")
    title = TITLE.replace("\x1b", "\\e").replace("\x07", "\\a").replace("\x08", "\\b")
    title = title.replace("\x9b", "\\u009b").replace("\u202e", "\\u202e")
    write(
        root / "posts" / "evil.md",
        f'---\ntitle: "{title}"\ncollection: "gar\\e[2Jden"\n---\n\n## Sec\x1b[2Jtion \x1b]0;x\x07\n\n'
        "I grow six kinds of tomatoes \x1b[2J against the south wall\x07. The Brandywines split.\n",
    )
    write(
        root / "posts" / "tea.md", "---\ntitle: Tea\ncollection: kitchen\n---\n\nGreen tea at 80 degrees.\n"
    )
    write(root / "q.jsonl", '{"id": "q\\u001b[2J1", "text": "tomatoes \\u001b]0;x\\u0007 wall"}\n')
    write(root / "r.tsv", "q\x1b[2J1\tevil\t1\n")
    result = invoke("ingest", str(root / "posts"), data_dir=root / "db")
    assert result.exit_code == 0, result.output
    return root


def invoke(*args: str, data_dir: Path):
    """The real CLI, its output as a terminal would get it (colours kept, nothing stripped)."""
    return CliRunner().invoke(main, [*args, "--data-dir", str(data_dir)], color=True, catch_exceptions=False)


def raw_controls(text: str) -> list[str]:
    return RAW.findall(STYLE.sub("", text))


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["posts", "list"], SHOWN),
        (["posts", "--about", "tomatoes"], SHOWN),
        (["posts", "show", "evil", "--raw"], "tomatoes \\x1b[2J against the south wall\\x07."),
        (["chunks", "list"], "Sec\\x1b[2Jtion \\x1b]0;x\\x07"),
        (["search", "Brandywines tomatoes"], f"{SHOWN} — Sec\\x1b[2Jtion"),
        (["search", "--queries", "{root}/q.jsonl"], "# q\\x1b[2J1: tomatoes \\x1b]0;x\\x07 wall"),
        (["route", "tomatoes Brandywines"], "gar\\x1b[2Jden"),
        (["ask", "Which tomatoes do you grow?", "--answer-mode", "extractive"], f"  - {SHOWN} (evil)"),
        (["eval", "--queries", "{root}/q.jsonl", "--qrels", "{root}/r.tsv", "--per-query"], "q\\x1b[2J1"),
    ],
)
def test_stored_and_typed_text_reaches_the_terminal_escaped(hostile, args, shown):
    result = invoke(*[a.replace("{root}", str(hostile)) for a in args], data_dir=hostile / "db")
    assert result.exit_code == 0, result.output
    assert raw_controls(result.stdout) == [] and raw_controls(result.stderr) == []
    assert b"\x1b]" not in result.stdout_bytes + result.stderr_bytes
    assert shown in result.stdout  # shown, not lost


def test_tab_separated_fields_keep_their_columns(hostile):
    lines = invoke("posts", "list", data_dir=hostile / "db").stdout.splitlines()
    rows = {line.split("\t")[0]: line.split("\t") for line in lines}
    assert rows["evil"] == ["evil", "gar\\x1b[2Jden", "-", "1", SHOWN]
    assert rows["tea"] == ["tea", "kitchen", "-", "1", "Tea"]


def test_json_escapes_c1_controls_and_line_separators_and_keeps_the_value(hostile):
    listed = invoke("posts", "list", "--json", data_dir=hostile / "db")
    assert raw_controls(listed.stdout) == []
    assert "\\u009b31m \\u202eevil" in listed.stdout
    titles = {json.loads(line)["post_id"]: json.loads(line)["title"] for line in listed.stdout.splitlines()}
    assert titles["evil"] == TITLE  # the same value, only written escaped
    asked = invoke("search", "tomatoes\u2028wall\x85south", "--json", data_dir=hostile / "db")
    assert raw_controls(asked.stdout) == [] and '"query": "tomatoes\\u2028wall\\u0085south"' in asked.stdout
    assert json.loads(asked.stdout)["query"] == "tomatoes\u2028wall\x85south"


def test_errors_quoting_typed_text_are_escaped(hostile):
    queries = write(hostile / "bad\x1b]0;t\x07.jsonl", "not json\n")
    result = invoke("search", "--queries", str(queries), data_dir=hostile / "db")
    assert result.exit_code == 1
    assert raw_controls(result.output) == []
    assert "bad\\x1b]0;t\\x07.jsonl:1: invalid JSON" in result.stderr


def test_a_usage_error_under_json_keeps_the_text_it_quotes(tmp_path):
    """A usage error quoting typed text is escaped for the terminal on stderr and, under --json, also
    printed on stdout with the text as typed, which JSON escapes (not the terminal's escaped display)."""
    typed = "ftp://example.com/\x1b]0;owned\x07feed.xml"
    result = invoke("ingest", typed, "--json", data_dir=tmp_path / "db")
    assert result.exit_code == 2
    assert raw_controls(result.stdout) == [] and raw_controls(result.stderr) == []
    assert json.loads(result.stdout)["error"].startswith(f"Invalid value for PATHS: {typed} is a ftp://")
    assert "ftp://example.com/\\x1b]0;owned\\x07feed.xml is a ftp://" in result.stderr


def test_safe_escapes_controls_visibly_and_leaves_other_text_alone():
    assert safe("a\rb\x08c\x00d\x7fe\x9bf\u2028g\u2066h\ud800") == (
        "a\\rb\\x08c\\x00d\\x7fe\\x9bf\\u2028g\\u2066h\\ud800"
    )
    assert safe("line\n\ttab") == "line\\n\\ttab"  # one line stays one line
    assert safe("line\r\n\ttab\x1b", keep="\n\t") == "line\n\ttab\\x1b"  # multi-line text keeps its lines
    text = "Çay, naïve 👨‍👩‍👧 مرحبا e\u0301 \u200d\u200f"  # letters, emoji (ZWJ), RTL mark: unchanged
    assert safe(text) == text
    assert safe(safe("\x1b[2J")) == safe("\x1b[2J") == "\\x1b[2J"
    assert safe(42) == "42"


def test_echo_row_escapes_a_tab_inside_a_field(capsys):
    echo_row(["id", "a\tb", 3])
    assert capsys.readouterr().out == "id\ta\\tb\t3\n"


def test_every_command_prints_through_the_output_module():
    """One place escapes everything: no other CLI module prints or dumps JSON itself."""
    for path in Path(cli.__file__).parent.glob("*.py"):
        if path.name != "output.py":
            source = path.read_text(encoding="utf-8")
            assert not re.search(r"click\.s?echo\(|json\.dumps\(", source), path


HUGE = "99999999999999999999"


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["search", "tea", "--k", HUGE], "--k"),
        (["search", "tea", "--k", "-5"], "--k"),
        (["posts", "--about", "tea", "--k", HUGE], "--k"),
        (["eval", "--k", HUGE, "--queries", "{q}", "--qrels", "{r}"], "--k"),
        (["eval", "--chunk-tokens", HUGE, "--queries", "{q}", "--qrels", "{r}"], "--chunk-tokens"),
        (["ingest", "{q}", "--chunk-tokens", HUGE], "--chunk-tokens"),
        (["ingest", "{q}", "--llm-concurrency", HUGE], "--llm-concurrency"),
        (["reembed", "--embed-dimensions", HUGE], "--embed-dimensions"),
        (["reembed", "--embed-dimensions", "-1"], "--embed-dimensions"),
        (["search", "tea", "--threshold", "nan"], "--threshold"),
        (["clean", "--older-than", "1e400"], "--older-than"),
        (["clean", "--older-than", "1e12", "--dry-run"], "--older-than"),
    ],
)
def test_numeric_options_out_of_range_are_usage_errors(tmp_path, args, option):
    files = {"{q}": str(write(tmp_path / "q.jsonl", "")), "{r}": str(write(tmp_path / "r.tsv", ""))}
    args = [files.get(a, a) for a in args]
    db = tmp_path / "db"
    result = CliRunner().invoke(main, [*args, "--data-dir", str(db)])
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{option}'" in result.output
    assert "Python int" not in result.output and isinstance(result.exception, SystemExit)
    assert not db.exists()  # refused before anything was opened
