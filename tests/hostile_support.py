"""Hostile inputs for tests/integration/test_hostile_files.py: the explicit cases of issue #11 (and more), Hypothesis
strategies for generated files, and a run of the real `inkwell ingest` on a folder.

Every case is a file (or folder entry) put beside good posts; `Case.outcome` says what must become of
it: "stored" (its posts are ingested, maybe with a warning), "skipped" (reported by name with a one-line
reason) or "any" (either, as long as nothing crashes; generated inputs).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from tests.writers_support import ROOT

GOOD_POSTS = {
    "good-essay.md": "---\ntitle: A Good Essay\nid: good-essay\n---\n\n# A Good Essay\n\nThe walnut bench is "
    "oiled twice a year, in spring and in autumn.\n",
    "good-note.txt": "A Good Note\n\nCherry darkens in the sun within a month.\n",
    "notes/good-page.html": "<html><head><title>A Good Page</title></head><body><article><h1>A Good Page"
    "</h1><p>Shellac dries in minutes and repairs invisibly.</p></article></body></html>",
    "good-list.json": json.dumps(
        [{"id": "good-json", "title": "Good JSON", "text": "Oak is planed along the grain."}]
    ),
}
GOOD_IDS = {"good-essay", "good-note", "good-page", "good-json"}


@dataclass
class Case:
    name: str  # as the report shows it (relative to the folder)
    make: Callable[[Path], None]  # creates it inside the folder
    outcome: str  # "stored" | "skipped" | "any"
    reason: str = ""  # a word the one-line reason must contain ("skipped")
    post_ids: tuple[str, ...] = ()  # posts it must yield ("stored")


def _write(name: str, data: bytes | str) -> Callable[[Path], None]:
    def make(folder: Path) -> None:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)

    return make


def _symlink(name: str, target: str) -> Callable[[Path], None]:
    return lambda folder: os.symlink(target, folder / name)


def _fifo(folder: Path) -> None:
    os.mkfifo(folder / "x.md")


def _socket(folder: Path) -> None:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "sock.md"))
    sock.close()


def _loop(folder: Path) -> None:
    os.symlink("b.md", folder / "a.md")
    os.symlink("a.md", folder / "b.md")


def _sparse(folder: Path) -> None:
    with open(folder / "huge.md", "wb") as out:  # 51 MB that take no disk
        out.truncate(51 * 1024 * 1024)


def one_line(size: int, punctuation: bool = True) -> str:
    words = (
        "the",
        "oak",
        "board",
        "was",
        "planed",
        "by",
        "hand",
        "and",
        "the",
        "walnut",
        "top",
        "was",
        "oiled",
    )
    line = " ".join(
        words[i % len(words)] + ("." if punctuation and i % 13 == 12 else "") for i in range(size // 5)
    )
    return line[:size]


_BOMB = (
    "---\n"
    + "".join(
        f"{n}: &{n} [{', '.join(['*' + p] * 9 if p else ['x'] * 9)}]\n"
        for p, n in zip("-abcdef", "abcdefg", strict=True)
    ).replace("*-", "x")
    + "tags: *g\ntitle: *g\n---\n\nA body under a YAML bomb.\n"
)


def explicit_cases() -> list[Case]:
    """The inputs issue #11 found breaking a batch, and their neighbours."""
    return [
        # The six from the issue.
        Case(
            "big-one-line.md",
            _write("big-one-line.md", one_line(5 * 1024 * 1024)),
            "stored",
            post_ids=("big-one-line",),
        ),
        Case("x.md", _fifo, "skipped", "FIFO"),
        Case("deep.json", _write("deep.json", "[" * 100_000 + "]" * 100_000), "skipped", "nested"),
        Case("a.md", _loop, "skipped", "loop"),
        Case("b.md", lambda folder: None, "skipped", "loop"),
        Case(
            "caf\\xe9.md",
            _write(os.fsdecode(b"caf\xe9.md"), "# Cafe\n\nNotes on coffee.\n"),
            "skipped",
            "UTF-8",
        ),
        # Encodings.
        Case(
            "utf32.txt",
            _write("utf32.txt", "UTF-32 Post\n\nWritten in UTF-32 with a BOM.".encode("utf-32")),
            "stored",
            post_ids=("utf32",),
        ),
        Case(
            "utf16.txt",
            _write("utf16.txt", "UTF-16 Post\n\nWritten in UTF-16 with a BOM.".encode("utf-16")),
            "stored",
            post_ids=("utf16",),
        ),
        Case(
            "overlong.txt",
            _write("overlong.txt", b"An overlong slash \xc0\xaf in the middle of this text."),
            "skipped",
            "overlong",
        ),
        Case(
            "surrogate.txt",
            _write("surrogate.txt", b"An encoded surrogate \xed\xa0\x80 in this text."),
            "skipped",
            "surrogate",
        ),
        Case(
            "latin.txt",
            _write("latin.txt", "Un café à Paris, très bien.".encode("cp1252")),
            "stored",
            post_ids=("latin",),
        ),
        Case("binary.md", _write("binary.md", bytes(range(256)) * 64), "skipped", "binary"),
        Case("empty.md", _write("empty.md", "  \n\n"), "skipped", "empty"),
        # Files that are not regular files, or not inside the folder.
        Case("passwd.txt", _symlink("passwd.txt", "/etc/passwd"), "skipped", "outside"),
        Case("up", _symlink("up", ".."), "skipped", "outside"),
        Case("self", _symlink("self", "."), "skipped", "loop"),
        Case("sock.md", _socket, "skipped", "socket"),
        Case("huge.md", _sparse, "skipped", "limit"),
        # Structure.
        Case(
            "deep-quote.md",
            _write("deep-quote.md", "> " * 100_000 + "deep\n\nA paragraph after it.\n"),
            "any",
        ),
        Case(
            "deep-div.html", _write("deep-div.html", "<div>" * 100_000 + "deep" + "</div>" * 100_000), "any"
        ),
        Case(
            "deep-yaml.md",
            _write("deep-yaml.md", "---\ntitle: " + "[" * 50_000 + "]" * 50_000 + "\n---\n\nBody.\n"),
            "skipped",
            "YAML",
        ),
        Case("bomb.md", _write("bomb.md", _BOMB), "any"),
        Case(
            "surrogates.json",
            _write(
                "surrogates.json",
                '{"id": "lone", "title": "Lone \\ud800 title", "text": "Text \\udfff with lone surrogates and \\u0000 a NUL."}',
            ),
            "stored",
            post_ids=("lone",),
        ),
        Case("tags.txt", _write("tags.txt", "[REF: never closed " * 50_000), "stored", post_ids=("tags",)),
        Case(
            "bundle.txt",
            _write(
                "bundle.txt",
                "=== POST START: Kept ===\nA kept post.\n=== POST END ===\n=== POST START: Open ===\nNever closed.\n",
            ),
            "skipped",
            "END",
        ),
        Case(
            "quotes.md",
            _write(
                "quotes.md",
                '---\nid: "it\'s a \\"quoted\\" id"\ncollection: "it\'s"\n---\n\nQuotes in the id.\n',
            ),
            "stored",
            post_ids=('it\'s a "quoted" id',),
        ),
    ]


def make_folder(folder: Path, cases: list[Case]) -> None:
    for name, text in GOOD_POSTS.items():
        _write(name, text)(folder)
    for case in cases:
        case.make(folder)


# Running the command line ----------------------------------------------------------------------------


@dataclass
class CliRun:
    code: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def report(self) -> dict:
        return json.loads(self.stdout)


def run_cli(args: list[str], env: Mapping[str, str], timeout: float = 600) -> CliRun:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "core.cli", *args],
        cwd=ROOT,
        env=dict(env),
        capture_output=True,
        text=True,
        errors="backslashreplace",
        timeout=timeout,
        check=False,
    )
    return CliRun(proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - started)


# Generated inputs (Hypothesis) -----------------------------------------------------------------------

_MARKERS = ["=== POST START: {} ===", "=== POST END ===", "===POST START:{}===", "=== post end ==="]
_MARKUP = [
    "# ",
    "## ",
    "> ",
    "- ",
    "1. ",
    "```",
    "~~~",
    "**",
    "_",
    "[link](http://x)",
    "![img](x.png)",
    "<div>",
    "</div>",
    "<script>",
    "|a|b|\n|-|-|",
    "---",
    "***",
    "\\",
    "&amp;",
    "&#0;",
]
_TAGS = ["[REF: Smith 2019]", "[IMAGE: a bench]", "[REF:", "[IMAGE: unclosed", "]"]
_FRONT_VALUES = st.one_of(
    st.text(max_size=30),
    st.integers(),
    st.sampled_from(
        [
            "[a, b]",
            "{x: 1}",
            "*alias",
            "&anchor x",
            "!!python/object:os.system",
            "null",
            "2021-13-45",
            "'quoted'",
            '"dq"',
            "|",
            ">",
        ]
    ),
)
_FRONT = st.dictionaries(
    st.sampled_from(["title", "id", "slug", "date", "tags", "collection", "format", "x"]),
    _FRONT_VALUES,
    max_size=5,
).map(lambda d: "---\n" + "".join(f"{k}: {v}\n" for k, v in d.items()) + "---\n")
_PROSE = st.lists(
    st.sampled_from(["oak", "bench", "The", "walnut", "grain", "planed", "Mara", "Vermont", "2019", "12.5"]),
    min_size=1,
    max_size=60,
).map(lambda words: " ".join(words) + ".")
_PIECES = st.one_of(
    _PROSE,
    _PROSE,
    st.text(st.characters(codec="utf-8", exclude_categories=["Cc", "Cs"]), max_size=60),
    st.text(max_size=20),  # anything, control characters included
    st.sampled_from(_MARKUP + _TAGS),
    st.sampled_from(_MARKERS).flatmap(lambda m: st.text(max_size=12).map(lambda t: m.format(t))),
    st.sampled_from(["\n", "\n\n", "\n\n", "\r\n", "\r", " ", "\t", "\x00", "\ufeff", "\u2028"]),
)
_BODY = st.lists(_PIECES, max_size=30).map("".join)
_SUFFIX = st.sampled_from([".md", ".md", ".txt", ".txt", ".html", ".json", ".jsonl", ".markdown", ".bin", ""])


def _encode(text: str, how: str) -> bytes:
    if how == "utf-8":
        return text.encode("utf-8", "surrogatepass")
    if how in ("utf-16", "utf-32"):
        return text.encode(how, "surrogatepass")
    return text.encode("cp1252", "replace")


_JSON_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20), _PROSE),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["id", "title", "text", "body", "posts", "source", "format"]), inner, max_size=4
        )
    ),
    max_leaves=12,
)


@st.composite
def hostile_file(draw) -> tuple[str, bytes]:
    """(name, bytes) of one generated file: front matter, markup, bundle markers and tags in any order, in
    any encoding; or JSON of any shape; or raw bytes."""
    kind = draw(st.sampled_from(["text", "text", "text", "json", "bytes"]))
    stem = (
        draw(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_ ", min_size=1, max_size=12)).strip()
        or "f"
    )
    if kind == "json":
        return stem + draw(st.sampled_from([".json", ".jsonl"])), json.dumps(draw(_JSON_VALUE)).encode(
            "utf-8"
        )
    if kind == "bytes":
        return stem + draw(_SUFFIX), draw(st.binary(max_size=300))
    text = draw(st.one_of(st.just(""), _FRONT)) + draw(_BODY)
    return stem + draw(_SUFFIX), _encode(
        text, draw(st.sampled_from(["utf-8", "utf-8", "utf-16", "utf-32", "cp1252"]))
    )


def hostile_folder(max_files: int = 4):
    return st.lists(hostile_file(), min_size=1, max_size=max_files, unique_by=lambda f: f[0].lower())
