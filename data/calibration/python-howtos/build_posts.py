"""Rebuild posts/*.md (and SOURCE.md) from the Python HOWTOs in Debian's python3-doc package.

The HOWTOs' reST sources (``/usr/share/doc/python3-doc/html/_sources/howto/*.rst.txt``) are turned into
plain Markdown posts with YAML front matter: headings become ``#``/``##``, code becomes fenced blocks,
Sphinx roles become plain code or text, admonitions become paragraphs, and index/label/comment lines
are dropped. Run from anywhere: ``python build_posts.py`` (``--source DIR`` to read another copy).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SOURCE = Path("/usr/share/doc/python3-doc/html/_sources/howto")

# HOWTO source stem -> post file name. Varied topics; left out: the Argument Clinic, C-porting,
# instrumentation and isolating-extensions HOWTOs (C-level) and the logging cookbook (156 KB).
HOWTOS: dict[str, str] = {
    "sorting": "sorting.md",
    "logging": "logging.md",
    "functional": "functional-programming.md",
    "regex": "regular-expressions.md",
    "unicode": "unicode.md",
    "descriptor": "descriptors.md",
    "argparse": "argparse.md",
    "urllib2": "fetching-urls.md",
    "sockets": "sockets.md",
    "enum": "enum.md",
    "ipaddress": "ipaddress.md",
    "curses": "curses.md",
    "annotations": "annotations.md",
    "pyporting": "porting-to-python3.md",
}
MAX_TOTAL_BYTES = 600_000  # the whole set; the longest posts are cut at a section boundary beyond it

# Directives dropped with their content.
DROP = {
    "index",
    "currentmodule",
    "module",
    "moduleauthor",
    "sectionauthor",
    "highlight",
    "testsetup",
    "testcleanup",
    "testoutput",
    "tabularcolumns",
    "image",
    "figure",
    "toctree",
    "contents",
    "only",
    "seealso",
    "raw",
    "literalinclude",
}
CODE = {"code-block": "", "code": "", "sourcecode": "", "doctest": "pycon", "testcode": "python"}
ADMONITIONS = {
    "note": "Note: ",
    "warning": "Warning: ",
    "caution": "Caution: ",
    "important": "Important: ",
    "tip": "Tip: ",
    "hint": "Hint: ",
    "attention": "Attention: ",
    "topic": "",
    "sidebar": "",
    "admonition": "",
    "impl-detail": "",
}
SIGNATURES = {"data", "method", "function", "class", "attribute", "describe", "exception", "decorator"}
LANGUAGES = {
    "python3": "python",
    "py": "python",
    "none": "",
    "text": "",
    "sh": "shell",
    "shell-session": "console",
}
CODE_ROLES = {
    "func",
    "meth",
    "class",
    "mod",
    "const",
    "exc",
    "attr",
    "data",
    "obj",
    "file",
    "command",
    "envvar",
    "keyword",
    "source",
    "program",
    "option",
    "samp",
    "member",
    "macro",
    "type",
    "expr",
}

HEADING_UNDERLINE = re.compile(r"^([=\-`:'\"~^_*+#<>.])\1{2,}\s*$")
DIRECTIVE = re.compile(r"^\.\.\s+([\w:-]+)::\s?(.*)$")
FIELD = re.compile(r"^:(author|release|date|version):\s*(.*)$", re.IGNORECASE)
LIST_ITEM = re.compile(r"^([*+-]|\d+\.|#\.|\(?[a-z0-9]\))\s+")
OPTION = re.compile(r"^:[\w-]+:(\s|$)")
ROLE = re.compile(r":(?:[\w-]+:)?([\w-]+):`((?:[^`\\]|\\.)+)`")
LITERAL = re.compile(r"``(.+?)``(?!`)")
LINK = re.compile(r"`([^`<]*?)\s*<([^`>]+)>`__?")
NAMED_REF = re.compile(r"`([^`]+)`__?(?![\w])")
FOOTNOTE_REF = re.compile(r"\s*\[(#|\d+)\]_")


PARAGRAPH_BREAK = "\x01"


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def dedent(lines: list[str], width: int | None = None) -> list[str]:
    if width is None:
        widths = [indent_of(x) for x in lines if x.strip()]
        width = min(widths) if widths else 0
    return [x[width:] if x.strip() else "" for x in lines]


def strip_blank_edges(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def humanize(label: str) -> str:
    return label.replace("-", " ").replace("_", " ")


def collect_labels(source: Path) -> dict[str, str]:
    """Map every ``.. _label:`` that precedes a heading to the heading's text (for bare :ref: roles)."""
    labels: dict[str, str] = {}
    for path in sorted(source.glob("*.rst.txt")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"^\.\. _([^:]+):\s*$", line)
            if not m:
                continue
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or re.match(r"^\.\. _[^:]+:\s*$", lines[j])):
                j += 1
            if j + 1 < len(lines) and HEADING_UNDERLINE.match(lines[j]) and j + 2 < len(lines):
                labels[m.group(1).lower()] = lines[j + 1].strip()  # overlined heading
            elif j + 1 < len(lines) and HEADING_UNDERLINE.match(lines[j + 1]):
                labels[m.group(1).lower()] = lines[j].strip()
    return labels


@dataclass
class Converter:
    labels: dict[str, str]
    title: str = ""
    authors: list[str] = field(default_factory=list)
    styles: list[tuple[str, bool]] = field(default_factory=list)
    targets: dict[str, str] = field(default_factory=dict)
    footnote_refs: int = 0
    footnote_defs: int = 0

    # ---- inline markup -------------------------------------------------------------------------
    def role(self, name: str, content: str) -> str:
        content = content.replace("\\`", "`")
        text, target = content, content
        m = re.match(r"^(.*?)\s*<([^<>]+)>$", content, re.DOTALL)
        if m and m.group(1):
            text, target = m.group(1), m.group(2)
            if name in CODE_ROLES:
                return f"`{text}`"
            return text
        if name == "ref":
            return self.labels.get(target.lower(), humanize(target))
        if name == "pep":
            return f"PEP {content.split('#')[0]}"
        if name == "rfc":
            return f"RFC {content.split('#')[0]}"
        if name == "dfn":
            return f"*{content}*"
        if name == "strong":
            return f"**{content}**"
        if name in CODE_ROLES:
            text = content.lstrip("!")
            if text.startswith("~"):
                text = text[1:].rsplit(".", 1)[-1]
            return f"`{text}`"
        return content  # term, abbr, doc, emphasis, …

    def inline(self, text: str) -> str:
        saved: list[str] = []

        def keep(s: str) -> str:
            saved.append(s)
            return f"\x00{len(saved) - 1}\x00"

        def literal(m: re.Match[str]) -> str:
            body = m.group(1)
            return keep(f"`` {body} ``" if "`" in body else f"`{body}`")

        text = LITERAL.sub(literal, text)
        text = ROLE.sub(lambda m: keep(self.role(m.group(1), m.group(2))), text)

        def link(m: re.Match[str]) -> str:
            label, url = m.group(1).strip(), m.group(2).strip()
            if url.endswith("_"):  # `text <name_>`_ refers to a named target
                url = self.targets.get(url[:-1].lower(), "")
            if not label:
                return keep(url)
            return keep(f"[{label}]({url})" if url else label)

        text = LINK.sub(link, text)

        def named(m: re.Match[str]) -> str:
            name = m.group(1)
            url = self.targets.get(name.lower())
            return keep(f"[{name}]({url})" if url else name)

        text = NAMED_REF.sub(named, text)
        if self.targets:  # bare references to named targets: Pylint_
            names = "|".join(re.escape(t) for t in sorted(self.targets, key=len, reverse=True))
            bare = re.compile(rf"(?<![\w`/])({names})_(?![\w])", re.IGNORECASE)
            text = bare.sub(lambda m: keep(f"[{m.group(1)}]({self.targets[m.group(1).lower()]})"), text)

        def footnote(m: re.Match[str]) -> str:
            if m.group(1) == "#":
                self.footnote_refs += 1
                return f" [{self.footnote_refs}]"
            return f" [{m.group(1)}]"

        text = FOOTNOTE_REF.sub(footnote, text)
        text = text.replace("\\ ", "")
        text = re.sub(r"\\(.)", r"\1", text)
        text = re.sub(r"\x00(\d+)\x00", lambda m: saved[int(m.group(1))], text)
        return re.sub(r"[ \t]+", " ", text).strip()

    # ---- blocks --------------------------------------------------------------------------------
    def heading(self, text: str, style: tuple[str, bool]) -> list[str]:
        if style not in self.styles:
            self.styles.append(style)
        level = self.styles.index(style) + 1
        text = self.inline(text)
        if level == 1 and not self.title:
            self.title = text
            return []
        return ["#" * min(level, 6) + " " + text, ""]

    def code(self, lines: list[str], language: str) -> list[str]:
        body = strip_blank_edges(dedent(lines))
        if not body:
            return []
        if not language and body[0].lstrip().startswith(">>>"):
            language = "pycon"
        return ["```" + language, *body, "```", ""]

    def render(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        i, n = 0, len(lines)
        literal_next = False
        while i < n:
            line = lines[i]
            if not line.strip():
                i += 1
                continue
            ind = indent_of(line)
            stripped = line.strip()

            # Indented block: a literal block after "::", else a block quote.
            if ind > 0:
                j = i
                while j < n and (not lines[j].strip() or indent_of(lines[j]) > 0):
                    j += 1
                block = lines[i:j]
                out += self.code(block, "") if literal_next else self.render(dedent(block))
                literal_next = False
                i = j
                continue
            literal_next = False

            # Headings, with or without an overline.
            if (
                HEADING_UNDERLINE.match(line)
                and i + 2 < n
                and lines[i + 2].strip()
                and HEADING_UNDERLINE.match(lines[i + 2])
                and lines[i + 2].strip()[0] == stripped[0]
                and lines[i + 1].strip()
            ):
                out += self.heading(lines[i + 1].strip(), (stripped[0], True))
                i += 3
                continue
            if (
                i + 1 < n
                and HEADING_UNDERLINE.match(lines[i + 1])
                and not HEADING_UNDERLINE.match(line)
                and len(lines[i + 1].rstrip()) >= len(stripped)
            ):
                out += self.heading(stripped, (lines[i + 1].strip()[0], False))
                i += 2
                continue

            if HEADING_UNDERLINE.match(line):  # a transition (horizontal rule)
                i += 1
                continue

            # Directives.
            m = DIRECTIVE.match(line)
            if m:
                name, arg = m.group(1).lower(), m.group(2).strip()
                j = i + 1
                while j < n and (not lines[j].strip() or indent_of(lines[j]) > 0):
                    j += 1
                body = lines[i + 1 : j]
                i = j
                args = [arg] if arg else []
                k = 0
                if name in SIGNATURES:
                    while k < len(body) and body[k].strip() and not OPTION.match(body[k].strip()):
                        args.append(body[k].strip())
                        k += 1
                options = set()
                while k < len(body) and body[k].strip() and OPTION.match(body[k].strip()):
                    options.add(body[k].strip().split(":")[1])
                    k += 1
                starts_blank = k < len(body) and not body[k].strip()
                body = strip_blank_edges(dedent(body[k:]))
                name = name.split(":")[-1]
                if name in DROP or "hide" in options:  # hidden blocks only test the examples
                    continue
                if name in CODE:
                    language = LANGUAGES.get(arg, arg) if name in {"code-block", "code", "sourcecode"} else ""
                    out += self.code(body, language or CODE[name])
                elif name in ADMONITIONS:
                    if arg and name not in {"topic", "sidebar", "admonition"}:
                        # The content starts on the directive's line (a title if a blank line follows).
                        body = [arg, "", *body] if starts_blank else [arg, *body]
                    inner = self.render(body)
                    prefix = ADMONITIONS[name]
                    if name in {"topic", "sidebar", "admonition"} and arg and arg.lower() != "abstract":
                        prefix = self.inline(arg) + ": "
                    if inner and prefix and inner[0].startswith(prefix):
                        pass
                    elif inner and prefix and not inner[0].startswith(("```", "#", "* ", "- ", "|")):
                        inner[0] = prefix + inner[0]
                    elif prefix and inner:
                        inner = [prefix.rstrip(": ") + ":", "", *inner]
                    out += inner
                elif name in {"versionadded", "versionchanged", "deprecated"}:
                    version, _, rest = arg.partition(" ")
                    words = {
                        "versionadded": "Added in version",
                        "versionchanged": "Changed in version",
                        "deprecated": "Deprecated since version",
                    }
                    text = " ".join([rest, *[b.strip() for b in body]]).strip()
                    sentence = f"{words[name]} {version}" + (f": {self.inline(text)}" if text else ".")
                    out += [sentence, ""]
                elif name in SIGNATURES:
                    out += [", ".join(f"`{a}`" for a in args) + ":", ""]
                    out += self.render(body)
                else:
                    out += self.render(body)
                continue

            # Comments, link targets and footnotes.
            if stripped == ".." or stripped.startswith(".. "):
                j = i + 1
                while j < n and (not lines[j].strip() or indent_of(lines[j]) > 0):
                    j += 1
                body = [x.strip() for x in lines[i + 1 : j] if x.strip()]
                i = j
                target = re.match(r"^\.\. _([^:]+):\s*(\S*)$", stripped)
                note = re.match(r"^\.\. \[(#|\d+)\]\s*(.*)$", stripped)
                if target and target.group(2):
                    self.targets[target.group(1).lower()] = target.group(2)
                elif note:
                    self.footnote_defs += 1
                    number = str(self.footnote_defs) if note.group(1) == "#" else note.group(1)
                    out += [f"[{number}] " + self.inline(" ".join([note.group(2), *body])), ""]
                continue

            # Field list (the HOWTO's author/release header).
            fm = FIELD.match(stripped)
            if fm:
                if fm.group(1).lower() == "author":
                    name_text = re.sub(r"`([^<`]+?)\s*<[^>]*>`_", r"\1", fm.group(2))
                    name_text = re.sub(r"\s*<[^>]*>", "", name_text).strip()
                    if name_text:
                        self.authors.append(name_text)
                i += 1
                continue

            # Grid tables and simple tables.
            if stripped.startswith("+-") or stripped.startswith("+="):
                j = i
                while j < n and lines[j].strip().startswith(("+", "|")):
                    j += 1
                out += self.grid_table(lines[i:j])
                i = j
                continue
            if re.match(r"^=+( +=+)+\s*$", line):
                j = i + 1
                while j < n:
                    closing = j + 1 >= n or not lines[j + 1].strip()
                    if closing and re.match(r"^=+( +=+)+\s*$", lines[j]):
                        j += 1
                        break
                    j += 1
                out += self.simple_table(lines[i:j])
                i = j
                continue

            # List items.
            lm = LIST_ITEM.match(line)
            if lm:
                offset = lm.end()
                j = i + 1
                while j < n and (not lines[j].strip() or indent_of(lines[j]) >= offset):
                    if not lines[j].strip() and (j + 1 >= n or indent_of(lines[j + 1]) < offset):
                        break
                    j += 1
                marker = lm.group(1)
                marker = "1." if marker == "#." else ("*" if marker in {"*", "+", "-"} else marker)
                if re.match(r"^\(?[a-z]\)$", marker):
                    marker = "*"
                if marker.endswith(")"):
                    marker = marker.strip("()") + "."
                item = self.render([line[offset:], *dedent(lines[i + 1 : j], offset)])
                pad = " " * (len(marker) + 1)
                rendered = [
                    (marker + " " + x) if k == 0 else (pad + x if x else "") for k, x in enumerate(item)
                ]
                out += strip_blank_edges(rendered)
                if j >= n or not LIST_ITEM.match(lines[j] if lines[j].strip() else lines[min(j + 1, n - 1)]):
                    out.append("")
                i = j
                continue

            # Paragraph (possibly a definition-list term, or introducing a literal block).
            j = i
            while j < n and lines[j].strip() and indent_of(lines[j]) == 0:
                if j > i and (DIRECTIVE.match(lines[j]) or HEADING_UNDERLINE.match(lines[j])):
                    break
                j += 1
            para = " ".join(x.strip() for x in lines[i:j])
            if para.startswith(">>>"):  # a bare doctest block
                out += self.code(lines[i:j], "pycon")
                i = j
                continue
            i = j
            if i < n and lines[i].strip() and indent_of(lines[i]) > 0:  # definition list entry
                k = i
                while k < n and (not lines[k].strip() or indent_of(lines[k]) > 0):
                    k += 1
                definition = self.render(dedent(lines[i:k]))
                i = k
                term = self.inline(para)
                if definition and not definition[0].startswith(("```", "#", "* ", "|", "1.")):
                    definition[0] = f"{term}: {definition[0]}"
                    out += definition
                else:
                    out += [term + ":", "", *definition]
                continue
            if para.endswith("::"):
                literal_next = True
                para = para[:-2].rstrip()
                if para and not para.endswith((":", ".")) and not lines[i - 1].rstrip().endswith(" ::"):
                    para += ":"
                if not para:
                    continue
            out += [self.inline(para), ""]
        return out

    def cells_to_table(self, rows: list[list[str]], header: bool) -> list[str]:
        rows = [[self.inline(c).replace("|", "\\|") for c in row] for row in rows]
        if not rows:
            return []
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        head = rows[0] if header else [""] * width
        body = rows[1:] if header else rows
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * width]
        out += ["| " + " | ".join(r) + " |" for r in body]
        return [*out, ""]

    def grid_table(self, lines: list[str]) -> list[str]:
        lines = [x.strip() for x in lines]
        cols = [k for k, ch in enumerate(lines[0]) if ch == "+"]
        rows: list[list[str]] = []
        current: list[list[str]] | None = None
        header = False
        for line in lines:
            if line.startswith("+"):
                if current is not None:
                    rows.append([join_cell(cell) for cell in current])
                current = None
                if "=" in line:
                    header = True
                continue
            if current is None:
                current = [[] for _ in cols[:-1]]
            for c in range(len(cols) - 1):
                current[c].append(line[cols[c] + 1 : cols[c + 1]].strip() or PARAGRAPH_BREAK)
        return self.cells_to_table(rows, header)

    def simple_table(self, lines: list[str]) -> list[str]:
        spans = [(m.start(), m.end()) for m in re.finditer(r"=+", lines[0])]
        borders = [k for k, x in enumerate(lines) if re.match(r"^=+( +=+)+\s*$", x)]
        header = len(borders) >= 3
        rows: list[list[str]] = []
        for line in lines:
            if not line.strip() or re.match(r"^[=\- ]+$", line):
                continue
            starts = [start for start, _ in spans]
            ends = [*starts[1:], len(line)]
            cells = [line[a:b].strip() for a, b in zip(starts, ends, strict=True)]
            rows.append([("" if x == "\\" else x) for x in cells])
        if not header and rows and all(c.startswith("**") for c in rows[0] if c):
            header = True
        return self.cells_to_table(rows, header)


def join_cell(lines: list[str]) -> str:
    """Join a grid-table cell's lines, and its paragraphs (split by blank lines) by "; "."""
    paragraphs = " ".join(lines).split(PARAGRAPH_BREAK)
    return "; ".join(p.strip() for p in paragraphs if p.strip())


def tidy(lines: list[str]) -> str:
    text = "\n".join(x.rstrip() for x in lines)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip() + "\n"


def trim(body: str, limit: int) -> str:
    """Cut ``body`` at the last ``##`` section boundary that keeps it under ``limit`` bytes."""
    if len(body.encode()) <= limit:
        return body
    cuts = [m.start() for m in re.finditer(r"^## ", body, re.MULTILINE)]
    keep = [c for c in cuts if len(body[:c].encode()) <= limit]
    return body[: keep[-1]].rstrip() + "\n" if keep else body


def package_version(name: str) -> str:
    try:
        result = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", name], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return result.stdout.strip() or "unknown"


def build(source: Path, out_dir: Path) -> list[tuple[str, str, int, str]]:
    labels = collect_labels(source)
    posts: dict[str, tuple[str, str, str]] = {}  # file -> (title, author, body)
    sources: dict[str, Path] = {}
    for stem, name in HOWTOS.items():
        path = source / f"{stem}.rst.txt"
        conv = Converter(labels=labels)
        lines = path.read_text(encoding="utf-8").expandtabs(8).splitlines()
        for line in lines:  # named link targets are usually defined at the end
            target = re.match(r"^\.\. _`?([^:`]+)`?:\s+(\S+)\s*$", line)
            if target:
                conv.targets[target.group(1).lower()] = target.group(2)
        body = tidy(conv.render(lines))
        posts[name] = (conv.title, " and ".join(conv.authors), body)
        sources[name] = path

    # Keep the whole set under MAX_TOTAL_BYTES by trimming the longest posts first.
    def total() -> int:
        return sum(len(b.encode()) + 200 for _, _, b in posts.values())

    while total() > MAX_TOTAL_BYTES:
        name = max(posts, key=lambda k: len(posts[k][2].encode()))
        title, author, body = posts[name]
        trimmed = trim(body, len(body.encode()) - (total() - MAX_TOTAL_BYTES))
        if trimmed == body:
            break
        posts[name] = (title, author, trimmed)

    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("*.md"):
        old.unlink()
    manifest: list[tuple[str, str, int, str]] = []
    for name, (title, author, body) in posts.items():
        front = ["---", f"title: {json.dumps(title, ensure_ascii=False)}"]
        if author:
            front.append(f"author: {json.dumps(author, ensure_ascii=False)}")
        front.append(f"source: {json.dumps('Python 3.11 documentation, howto/' + sources[name].name)}")
        front.append("---")
        text = "\n".join(front) + "\n\n" + body
        (out_dir / name).write_text(text, encoding="utf-8")
        digest = hashlib.sha256(sources[name].read_bytes()).hexdigest()
        manifest.append((name, sources[name].name, len(text.encode()), digest))
    return manifest


def write_source_md(manifest: list[tuple[str, str, int, str]], source: Path) -> None:
    doc_version = package_version("python3.11-doc")
    meta_version = package_version("python3-doc")
    rows = "\n".join(
        f"| `posts/{name}` | `{source}/{src}` | {size:,} | `{digest[:16]}` |"
        for name, src, size, digest in manifest
    )
    total = sum(size for _, _, size, _ in manifest)
    text = f"""# Source

The posts are the Python HOWTOs from the Python 3.11 documentation, as shipped by Debian 12 (bookworm):

- package `python3-doc` {meta_version} (a dependency package), which installs `python3.11-doc` {doc_version};
  `/usr/share/doc/python3-doc/html` is a symlink to `/usr/share/doc/python3.11-doc/html`.
- files read: the reST sources `{source}/<name>.rst.txt` listed below (the HTML pages under
  `/usr/share/doc/python3-doc/html/howto/` are built from them).
- upstream: <https://docs.python.org/3.11/howto/index.html>, © Python Software Foundation and the authors
  named in each post's front matter.

**Licence.** The Python documentation is distributed under the PSF License Agreement (version 2), which
allows copying, modification and redistribution with the copyright notice retained; code examples in it
are also available under the Zero-Clause BSD licence. See `/usr/share/doc/python3.11-doc/copyright` and
<https://docs.python.org/3.11/license.html>. Copyright © 2001-2023 Python Software Foundation; All Rights
Reserved.

**Changes.** `build_posts.py` converts each HOWTO to Markdown: reST headings become `#`/`##`, code and
doctest blocks become fenced blocks, Sphinx roles become inline code or text, notes and topics become
paragraphs, `seealso`, index, label, image and comment directives are dropped, tables become pipe tables.
The text itself is not edited. Nothing was trimmed for size (the set is under {MAX_TOTAL_BYTES:,} bytes).

| Post | Source file | Post bytes | sha256 of source (first 16) |
|---|---|---|---|
{rows}

Total: {len(manifest)} posts, {total:,} bytes.
"""
    (HERE / "SOURCE.md").write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="directory of howto/*.rst.txt")
    parser.add_argument("--out", type=Path, default=HERE / "posts", help="where to write the posts")
    args = parser.parse_args(argv)
    missing = [s for s in HOWTOS if not (args.source / f"{s}.rst.txt").is_file()]
    if missing:
        print(
            f"missing in {args.source}: {', '.join(missing)} (apt-get install python3-doc)", file=sys.stderr
        )
        return 1
    manifest = build(args.source, args.out)
    write_source_md(manifest, args.source)
    for name, _, size, _ in manifest:
        print(f"{size:>8,}  {name}")
    print(f"{sum(s for _, _, s, _ in manifest):>8,}  total ({len(manifest)} posts)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
