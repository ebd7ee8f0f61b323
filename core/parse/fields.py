"""What every input format shares: the per-file context, post construction and field cleanup.

Helpers for core/parse/formats.py and core/parse/reader.py; `BadInput` carries a message shown to the
user as is.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import re
import tomllib
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import frontmatter
import yaml

from core.models import Block, LeftOutDraft, ParseError, Post
from core.parse.addresses import checked_url
from core.parse.clean import (
    html_article,
    html_fragment_to_blocks,
    markdown_to_blocks,
    shown,
    text_to_blocks,
    visible,
)
from core.parse.options import ImportOptions

DEFAULT_COLLECTION = "writings"
FORMATS = ("text", "markdown", "html")
MAX_ID_CHARS = 200
DATE_PREFIX_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})[-_ ]+(.+)$")  # Jekyll-style 2021-05-04-title.md
WHOLE_PAGE_RE = re.compile(r"<(?:!doctype|html|body)\b", re.IGNORECASE)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_NUMERIC_DATE = re.compile(r"^(\d{1,4})([/.-])(\d{1,2})\2(\d{1,4})$")  # 2020/03/05, 13.04.2021
_MAX_DATE_CHARS = 80  # "Wednesday, September 30, 2020, 11:59:59 PM +0000" is 48
_DEFAULTS = (dt.datetime(2000, 1, 1), dt.datetime(2001, 2, 2))  # what a worded date lacks: differs


class BadInput(Exception):
    """A problem with one input (or one post of it); the message is shown to the user as is."""


@dataclass
class Context:
    """Where a file came from and the collection rules that apply to its posts."""

    source: str
    path: Path
    forced_collection: str | None
    folder_collection: str
    errors: list[ParseError] = field(default_factory=list)
    warnings: list[ParseError] = field(default_factory=list)
    options: ImportOptions = field(default_factory=ImportOptions)
    drafts: list[LeftOutDraft] = field(default_factory=list)  # posts left out as unpublished

    def collection(self, own: Any = None) -> str:
        for choice in (self.forced_collection, own, self.folder_collection):
            if isinstance(choice, str) and choice.strip():
                return choice.strip()
        return DEFAULT_COLLECTION

    def error(self, message: str) -> None:
        self.errors.append(ParseError(self.source, message))

    def warn(self, message: str) -> None:
        self.warnings.append(ParseError(self.source, message))

    @property
    def stem(self) -> str:
        # Hugo page bundles are `my-post/index.md`: the folder is the post's name.
        stem = self.path.stem
        if stem.lower() in ("index", "readme", "_index") and self.path.parent.name:
            return self.path.parent.name
        return stem


def make_post(
    ctx: Context,
    blocks: list[Block],
    *,
    raw: str,
    title: str,
    post_id: str,
    fmt: str,
    date: str = "",
    tags: list[str] | None = None,
    collection: Any = None,
    where: str = "",
    url: str = "",
    textless_warns: bool = False,
) -> Post | None:
    """The post, or None (reported as an error naming it, or a warning with `textless_warns`) when its
    blocks hold no text: its raw shows nothing at all, or only markup, code or images did."""
    if not any(not b.heading for b in blocks):
        if raw.strip() and not visible(raw):
            problem = "has no visible text (only zero-width or other invisible characters)"
        else:  # markup, code, images; or nothing left once a caller removed media (an export's embeds)
            problem = "has no text after cleaning (only markup, code or images?)"
        if textless_warns:
            ctx.warn(f"{where}{problem}; left out")
        else:
            ctx.error(f"{where}{problem}")
        return None
    return Post(
        post_id=post_id,
        title=" ".join(title.split()),
        blocks=blocks,
        raw=raw,
        source=ctx.source,
        collection=ctx.collection(collection),
        date=date,
        tags=tags or [],
        format=fmt,
        url=url,
    )


# Where posts give their own address: front matter (Jekyll, Hugo, Eleventy), JSON exports.
URL_KEYS = ("url", "permalink", "canonical_url", "link")


def given_url(ctx: Context, values: Any, where: str = "") -> str:
    """The first usable address among `values` (core/parse/addresses.py); each unusable one is
    reported as a warning and skipped."""
    for value in values:
        url, problem = checked_url(value)
        if url:
            return url
        if problem:
            shown_value = " ".join(str(value).split())[:80]
            ctx.warn(f"{where}address {shown_value!r} {problem}; ignored")
    return ""


def to_blocks(text: str, fmt: str) -> list[Block]:
    if fmt == "markdown":
        return markdown_to_blocks(text)
    if fmt == "html":
        # A whole page (a stored .html file's raw) needs the article extraction, a snippet does not.
        if WHOLE_PAGE_RE.search(text[:4096]):
            return html_article(text)[2]
        return html_fragment_to_blocks(text)
    return text_to_blocks(text)


class _TomlFrontMatter(frontmatter.default_handlers.BaseHandler):
    """Hugo's TOML front matter between `+++` lines, read with the standard library's tomllib
    (python-frontmatter reads it only with the `toml` package, which is not installed: without this the
    block was kept as the post's first paragraph, and answers quoted `+++ title = …` to readers)."""

    FM_BOUNDARY = re.compile(r"^\+{3,}[ \t]*$", re.MULTILINE)
    START_DELIMITER = END_DELIMITER = "+++"

    def load(self, fm: str, **kwargs: object) -> Any:
        try:
            return tomllib.loads(fm)
        except tomllib.TOMLDecodeError as exc:
            raise BadInput(f"front matter is not valid TOML: {' '.join(str(exc).split())[:120]}") from None


_TOML = _TomlFrontMatter()


def front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(metadata, body) of a Markdown post: YAML front matter between `---` lines, TOML between `+++`
    lines (Hugo), or JSON; a text without any is all body. Unreadable front matter is a BadInput."""
    try:
        handler = _TOML if _TOML.detect(text.strip()) else None
        post = frontmatter.loads(text, handler=handler)
    except RecursionError:
        raise BadInput("front matter is nested too deeply") from None
    except (ValueError, TypeError) as exc:  # YAML that parses into an impossible value (2021-13-45)
        raise BadInput(
            f"front matter has a value that cannot be read: {' '.join(str(exc).split())[:120]}"
        ) from None
    except yaml.YAMLError as exc:
        raise BadInput(_yaml_problem(text, exc)) from None
    return dict(post.metadata), post.content


# `key: value` whose value has ": " in it, unquoted: YAML reads a second mapping inside the first.
_UNQUOTED_COLON = re.compile(r"^(?P<key>[\w-]+):[ \t]+(?P<value>[^\s'\"\[{|>&*!#][^#]*?:\s.*?)\s*$")


def _yaml_problem(text: str, exc: yaml.YAMLError) -> str:
    """The error for front matter PyYAML refused: the file's line (PyYAML counts from after any blank
    lines the front matter reader stripped) and, for the common `title: Melting Wax: A Solar Extractor`,
    the quoted value to write instead, since "mapping values are not allowed in this context" says
    nothing a blogger can act on."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).split("\n", 1)[0]
    if mark is None:
        return f"front matter is not valid YAML: {problem}"
    blank = text[: len(text) - len(text.lstrip())].count("\n")
    number = mark.line + 1 + blank
    lines = text.split("\n")
    line = lines[number - 1] if 0 < number <= len(lines) else ""
    unquoted = _UNQUOTED_COLON.match(line) if "mapping values" in problem else None
    if unquoted is None:  # PyYAML may notice a problem lines after its cause (an unclosed bracket)
        return f"front matter is not valid YAML near line {number}: {problem}"
    value = unquoted["value"]
    quoted = f'"{value}"' if '"' not in value else "'" + value.replace("'", "''") + "'"
    return (
        f"front matter is not valid YAML at line {number} ({line.strip()}): {problem}; a value with a "
        f"colon in it must be quoted: {unquoted['key']}: {quoted}"
    )


def slugify(text: str, max_length: int = 80) -> str:
    """Lowercase words joined by "-": "Café, Tea & Me!" → "cafe-tea-me". Keeps non-Latin letters."""
    kept: list[str] = []
    for ch in unicodedata.normalize("NFKD", text):
        # Drop accents on Latin letters only; marks on other scripts (e.g. kana voicing) are letters.
        if unicodedata.combining(ch) and kept and kept[-1].isascii():
            continue
        kept.append(ch)
    slug = re.sub(r"[\W_]+", "-", unicodedata.normalize("NFC", "".join(kept)).lower()).strip("-")
    return slug[:max_length].rstrip("-")


def name_parts(stem: str) -> tuple[str, str]:
    """(date, human title) from a file name: "2021-05-04-my_first-post" → ("2021-05-04", "My first post")."""
    date = ""
    match = DATE_PREFIX_RE.match(stem)
    if match and iso_day(match.group(1)):
        date, stem = match.group(1), match.group(2)
    words = " ".join(re.sub(r"[-_]+", " ", stem).split())
    return date, (words[:1].upper() + words[1:]) if words else stem


def slug_id(text: str) -> str:
    # Titles of only punctuation or emoji slug to nothing; a short hash keeps them distinct and stable.
    return slugify(text) or "post-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]


def given_id(value: Any) -> str:
    """An author-given id, kept as written (BEIR ids are numbers as strings), but usable as a key."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise BadInput(f"id must be a string or a number, not {type(value).__name__}")
    text = str(value).strip()
    if not text or len(text) > MAX_ID_CHARS or any(unicodedata.category(c)[0] == "C" for c in text):
        raise BadInput(f"id {text[:40]!r} must be 1-{MAX_ID_CHARS} printable characters")
    return text


def first_heading(blocks: list[Block]) -> str:
    return next((b.text for b in blocks if b.heading), "")


def title_from_text(blocks: list[Block], words: int = 8) -> str:
    first = next((b.text for b in blocks if not b.heading), "").split()
    return " ".join(first[:words]) + ("…" if len(first) > words else "")


def looks_like_title(line: str) -> bool:
    """A short first line without closing punctuation is the title of a scraped or pasted essay."""
    return (
        len(line) <= 100 and "\n" not in line and not line.rstrip().endswith((".", "!", "?", ":", ";", ","))
    )


def as_text(value: Any, *, strip: bool = True) -> str:
    if isinstance(value, dict) and "rendered" in value:  # WordPress REST API
        value = value["rendered"]
    if value is None or isinstance(value, dict | list):
        return ""
    # JSON may escape lone surrogates ("\\ud800"), which no table or terminal can store or print.
    text = _LONE_SURROGATE.sub("\ufffd", str(value))
    return text.strip() if strip else text


def plain_title(title: str) -> str:
    """Titles may carry HTML (WordPress): keep the words only; "" when none is visible."""
    if "<" not in title and "&" not in title:
        return shown(title)
    return " ".join(b.text for b in html_fragment_to_blocks(title))


def as_tags(value: Any) -> list[str]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list | tuple):
        return []
    return [t for t in (as_text(v) for v in value) if t]


def as_date(ctx: Context, value: Any, where: str = "") -> str:
    """An author-given date (front matter's, a JSON post's) in ISO form: a YAML date or an ISO 8601
    string as it is, a common unambiguous form ("March 5, 2020", "5 March 2020", "2020/03/05", an RFC
    2822 date) as its day. One that cannot be read for sure ("03/04/2021": March or April?) is ""
    with a warning naming it and the value: stored as written it would break permalinks by date."""
    if isinstance(value, dt.date):  # datetimes too
        return value.isoformat()
    text = " ".join(as_text(value).split())
    if not text:
        return ""
    day, problem = read_date(text)
    if problem:
        ctx.warn(f"{where}date {text[:60]!r} {problem}: left out (write it as YYYY-MM-DD)")
    return day


def read_date(text: str) -> tuple[str, str]:
    """(the ISO date `text` states, "") or ("", why it cannot be read for sure); see as_date."""
    with contextlib.suppress(ValueError):
        dt.datetime.fromisoformat(text)
        return text, ""
    numeric = _NUMERIC_DATE.match(text)
    if numeric:
        return _numeric_date(*numeric.group(1, 3, 4), dotted=numeric.group(2) == ".")
    if len(text) > _MAX_DATE_CHARS or not any(ch.isalpha() for ch in text):
        return "", "is not a date"
    from dateutil import parser  # imported here: most posts give an ISO date or none

    read = []
    # Parsed twice with different defaults for what it lacks, and with either order of day and month:
    # a date without its year or day ("March 2020") reads two ways, and so does "Thu 03/04/2021".
    for dayfirst, default in ((False, _DEFAULTS[0]), (True, _DEFAULTS[1])):
        try:
            read.append(parser.parse(text, default=default, dayfirst=dayfirst, ignoretz=True).date())
        except (ValueError, OverflowError):
            return "", "is not a date"
    if read[0] != read[1]:
        return "", "is incomplete or ambiguous"
    return read[0].isoformat(), ""


def _numeric_date(first: str, second: str, third: str, *, dotted: bool) -> tuple[str, str]:
    """A date of three numbers: year first (2020/03/05); or year last, day first when dotted (05.03.2020,
    as every locale writing dots does), else the day told from the month only when it is over 12
    (13/04/2021) or the two are the same."""
    if len(first) == 4 and len(third) <= 2:
        year, month, day = int(first), int(second), int(third)
    elif len(third) == 4 and len(first) <= 2:
        year, a, b = int(third), int(first), int(second)
        if not dotted and a != b and a <= 12 and b <= 12:
            return "", "is ambiguous (day/month or month/day?)"
        month, day = (b, a) if dotted or a > 12 else (a, b)
    else:
        return "", "has no four-digit year"
    try:
        return dt.date(year, month, day).isoformat(), ""
    except ValueError:
        return "", "is not a date"


def iso_day(text: str) -> str:
    try:
        return dt.date.fromisoformat(text[:10]).isoformat() if text else ""
    except ValueError:
        return ""
