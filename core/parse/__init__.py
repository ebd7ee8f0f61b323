"""Reading the author's files, uploads and pasted text into `Post`s: one parser per format (formats),
markup cleaned to paragraphs (clean), bytes decoded honestly (decode), each file parsed in a child
process under a time limit (isolate, worker), problems reported per file, never fatal (reader).
"""

from __future__ import annotations

from core.parse.fields import FORMATS, slugify
from core.parse.options import ImportOptions, post_types
from core.parse.reader import (
    MAX_FILE_BYTES,
    SUPPORTED_SUFFIXES,
    parse_bytes,
    parse_paths,
    parse_piped,
    parse_text,
)

__all__ = [
    "FORMATS",
    "MAX_FILE_BYTES",
    "SUPPORTED_SUFFIXES",
    "ImportOptions",
    "parse_bytes",
    "parse_paths",
    "parse_piped",
    "parse_text",
    "post_types",
    "slugify",
]
