"""PDF files, read with pypdf (pure Python): the pages' text joined into paragraphs, the header and
footer lines that repeat on most pages (and bare page numbers) dropped, the title from the document's
metadata, else its first line when that reads as a title (short, no sentence's end, text after it),
else the file name.

A PDF that needs a password, or whose pages hold no text (a scan), is refused with that reason; an
owner-only password (opens in every viewer without asking) does not stop it being read.
"""

from __future__ import annotations

import io
import math
import re
from collections import Counter

from core.models import Post
from core.parse.clean import text_to_blocks
from core.parse.fields import (
    BadInput,
    Context,
    as_tags,
    iso_day,
    looks_like_title,
    make_post,
    name_parts,
    slug_id,
)

_EDGE_LINES = 2  # lines at the top and at the bottom of a page that may be a header or footer
_REPEATS = 0.6  # share of pages a line must appear on to count as a header or footer
_PAGE_NUMBER = re.compile(r"^\W*(?:page\s*)?\d+(?:\s*(?:/|of)\s*\d+)?\W*$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?:;\"”’)]$")
_HEADING_WIDTH = 0.6  # share of the line width a heading stays under (wrapped lines come near it)
_JUNK_TITLE = re.compile(r"^(?:untitled|microsoft word\b.*|.*\.(?:docx?|pdf|odt|rtf|tex))$", re.IGNORECASE)


def parse_pdf(ctx: Context, data: bytes) -> list[Post]:
    reader = _open(data)
    pages = [_page_lines(reader, number) for number in range(len(reader.pages))]
    if not any(line for lines in pages for line in lines):
        raise BadInput(
            f"has no text: scanned? ({len(pages)} page{'s' * (len(pages) != 1)} of images only; "
            "run it through OCR first)"
        )
    paragraphs = _paragraphs(_without_repeats(pages))
    meta = reader.metadata or {}
    date, name_title = name_parts(ctx.stem)
    title = _meta_text(meta, "/Title")
    if _JUNK_TITLE.match(title):
        title = ""
    if not title and paragraphs and looks_like_title(paragraphs[0]) and len(paragraphs) > 1:
        title = paragraphs[0]
    if title and len(paragraphs) > 1 and paragraphs[0].casefold() == title.casefold():
        paragraphs = paragraphs[1:]  # the title is not the body's first paragraph too
    raw = "\n\n".join(paragraphs)
    post = make_post(
        ctx,
        text_to_blocks(raw),
        raw=raw,
        title=title or name_title,
        post_id=slug_id(ctx.stem),
        date=_meta_date(meta) or date,
        tags=as_tags(re.split(r"[;,]", _meta_text(meta, "/Keywords"))),
        fmt="text",
    )
    return [post] if post else []


def _open(data: bytes):  # -> pypdf.PdfReader (imported here: most ingests read no PDF)
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise BadInput("is encrypted (it needs a password to open): save a copy without one")
        pages = len(reader.pages)  # reading the page tree: a damaged one fails here, by name
    except BadInput:
        raise
    except DependencyError:
        raise BadInput(
            "is encrypted with AES, which needs a decryption library: save a copy without a password"
        ) from None
    except (PdfReadError, ValueError, KeyError, TypeError, OSError, IndexError) as exc:
        reason = " ".join(str(exc).split())[:120] or type(exc).__name__
        raise BadInput(f"is not a readable PDF ({reason}): damaged or not a PDF") from None
    if not pages:
        raise BadInput("is a PDF without pages")
    return reader


def _page_lines(reader, number: int) -> list[str]:
    try:
        text = reader.pages[number].extract_text() or ""
    except Exception:  # one damaged page costs that page, not the document
        return []
    return [" ".join(line.split()) for line in text.split("\n")]


def _without_repeats(pages: list[list[str]]) -> list[str]:
    """All pages' lines in order, without the running headers/footers and bare page numbers."""

    def key(line: str) -> str:
        return re.sub(r"\d+", "#", line.lower())

    def edges(lines: list[str]) -> list[int]:
        filled = [i for i, line in enumerate(lines) if line]
        return sorted(set(filled[:_EDGE_LINES] + filled[-_EDGE_LINES:]))

    counts: Counter[str] = Counter()
    for lines in pages:
        counts.update({key(lines[i]) for i in edges(lines)})
    needed = max(2, math.ceil(_REPEATS * len(pages)))
    kept: list[str] = []
    for lines in pages:
        drop = {
            i
            for i in edges(lines)
            if (len(pages) > 1 and counts[key(lines[i])] >= needed) or _PAGE_NUMBER.match(lines[i])
        }
        kept.extend(line for i, line in enumerate(lines) if i not in drop)
    return kept


def _paragraphs(lines: list[str]) -> list[str]:
    """Wrapped lines joined into paragraphs: one ends at a blank line, or at a line that ends a sentence
    well short of the full line width; a word hyphenated across lines is joined again. A short line
    without a sentence's end that starts a paragraph and has text after it is a heading (a title), a
    paragraph of its own: pypdf gives no blank line after one."""
    filled = sorted(len(line) for line in lines if line)
    width = filled[int(0.9 * (len(filled) - 1))] if filled else 0
    last = max((i for i, line in enumerate(lines) if line), default=-1)
    paragraphs: list[str] = []
    current = ""
    for number, line in enumerate(lines):
        if not line:
            if current:
                paragraphs.append(current)
            current = ""
            continue
        if not current and number < last and len(line) < _HEADING_WIDTH * width and looks_like_title(line):
            paragraphs.append(line)
            continue
        if current.endswith("-") and current[-2:-1].isalpha() and line[:1].islower():
            current = current[:-1] + line
        else:
            current = f"{current} {line}" if current else line
        if _SENTENCE_END.search(line) and len(line) < 0.8 * width:
            paragraphs.append(current)
            current = ""
    if current:
        paragraphs.append(current)
    return paragraphs


def _meta_text(meta, key: str) -> str:
    value = meta.get(key) if hasattr(meta, "get") else None
    return " ".join(str(value).split()) if value else ""


def _meta_date(meta) -> str:
    try:
        created = meta.creation_date if hasattr(meta, "creation_date") else None
    except (ValueError, TypeError):  # a malformed date string
        return ""
    return iso_day(created.isoformat()) if created else ""
