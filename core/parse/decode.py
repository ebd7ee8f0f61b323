"""Bytes to text, honestly: a file's encoding from its byte-order mark, UTF-8, the charset an HTML file
declares (`<meta charset>`), or Windows-1252 with a warning; binary data and damaged or crafted UTF-8
refused with a reason (core/parse/reader.py reads)."""

from __future__ import annotations

import re

from core.parse.clean import visible
from core.parse.fields import BadInput, Context

# UTF-8-shaped sequences that UTF-8 forbids: overlong forms (C0/C1 xx, E0 80-9F xx, F0 80-8F xx xx),
# encoded surrogates (ED A0-BF xx) and code points past U+10FFFF. Windows-1252 text almost never has
# them; damaged or crafted UTF-8 does (C0 AF is an overlong "/").
_BAD_UTF8 = re.compile(
    rb"[\xc0\xc1][\x80-\xbf]|\xe0[\x80-\x9f][\x80-\xbf]|\xed[\xa0-\xbf][\x80-\xbf]"
    rb"|\xf0[\x80-\x8f][\x80-\xbf]{2}|\xf4[\x90-\xbf][\x80-\xbf]{2}|[\xf5-\xf7][\x80-\xbf]{3}"
)
# An HTML page's declared charset: `<meta charset="windows-1252">` or the http-equiv Content-Type form.
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([\w-]+)""", re.IGNORECASE)
_HTML_SUFFIXES = (".html", ".htm")
_BOMS = [  # longest first: the UTF-32 LE mark begins with the UTF-16 LE one
    (b"\xff\xfe\x00\x00", "utf-32", "UTF-32"),
    (b"\x00\x00\xfe\xff", "utf-32", "UTF-32"),
    (b"\xff\xfe", "utf-16", "UTF-16"),
    (b"\xfe\xff", "utf-16", "UTF-16"),
]


def decode(data: bytes, ctx: Context) -> str:
    """The file's text: UTF-8 (BOM or not), UTF-16/32 by BOM, an HTML file's declared charset when it is
    not UTF-8 and decodes with it (no warning: the file says what it is), or Windows-1252 with a warning
    naming the file; binary, crafted or undecodable bytes, and text with nothing visible in it, raise
    BadInput with a one-line reason."""
    if not data.strip():
        raise BadInput("is empty")
    for bom, codec, name in _BOMS:  # Windows "Unicode" files
        if data.startswith(bom):
            try:
                return _nonempty(data.decode(codec))
            except UnicodeDecodeError:
                raise BadInput(f"looks binary (a {name} byte-order mark, then invalid {name})") from None
    if b"\x00" in data[:8192] or _control_share(data[:8192]) > 0.1:
        raise BadInput("looks binary (not a text file)")
    try:
        return _nonempty(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        utf8_error = exc
    if ctx.path.suffix.lower() in _HTML_SUFFIXES and (declared := _declared(data)) is not None:
        return _nonempty(declared)
    if crafted := _BAD_UTF8.search(data):
        raise BadInput(
            f"is not valid UTF-8 (an overlong or surrogate sequence, bytes "
            f"{crafted.group().hex(' ').upper()} at offset {crafted.start()}): damaged or crafted text; "
            "re-save it as UTF-8"
        )
    # Old Western-European exports are often cp1252: accept them when the result is mostly ASCII,
    # which rules out other legacy encodings (Cyrillic, Greek…) that would decode to gibberish, and
    # when no valid UTF-8 sequence appears (then it is damaged UTF-8, and cp1252 would garble it).
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        text = ""
    letters = [c for c in text if not c.isspace()]
    mostly_ascii = bool(letters) and sum(not c.isascii() for c in letters) / len(letters) <= 0.2
    some_utf8 = any(ord(c) > 127 and c != "\ufffd" for c in data.decode("utf-8", "replace"))
    if mostly_ascii and not some_utf8:
        bad = data[utf8_error.start]
        ctx.warn(
            f"is not UTF-8 (byte 0x{bad:02X} at offset {utf8_error.start}): read as Windows-1252 "
            "(cp1252); check its accented letters, or re-save it as UTF-8"
        )
        return _nonempty(text)
    bad = data[utf8_error.start]
    raise BadInput(f"is not UTF-8 (byte 0x{bad:02X} at offset {utf8_error.start}); re-save it as UTF-8")


def _declared(data: bytes) -> str | None:
    """The page decoded with the charset its head declares; None when it declares none, one Python does
    not know, or one its bytes are not valid in (then the usual guess and warning apply)."""
    found = _META_CHARSET.search(data[:4096])
    if not found:
        return None
    try:
        return data.decode(found.group(1).decode("ascii"))
    except (LookupError, ValueError):  # UnicodeError is a ValueError (punycode raises the bare one)
        return None


def _nonempty(text: str) -> str:
    if not text.strip():
        raise BadInput("is empty")
    if not visible(text):
        raise BadInput("has no visible text (only zero-width or other invisible characters)")
    return text


def _control_share(sample: bytes) -> float:
    # Text has tabs and newlines but hardly any other control bytes; binary formats are full of them.
    controls = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13))
    return controls / max(len(sample), 1)
