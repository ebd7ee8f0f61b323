"""Parsers that read a file's bytes themselves (archives, PDF, Word, XML that declares its encoding),
by file suffix; the text formats are in core/parse/formats.py."""

from __future__ import annotations

from collections.abc import Callable

from core.models import Post
from core.parse.archives import parse_zip
from core.parse.fields import Context
from core.parse.pdf import parse_pdf
from core.parse.word import parse_docx
from core.parse.wxr import parse_wxr

BYTE_PARSERS: dict[str, Callable[[Context, bytes], list[Post]]] = {
    ".xml": parse_wxr,
    ".zip": parse_zip,
    ".pdf": parse_pdf,
    ".docx": parse_docx,
}
