"""A post's web address on the author's blog: read from the post (checked), or built from the site's
permalink pattern.

A given address is kept only when it is an absolute http(s) URL, or a path from the site's root
(`/2021/04/desk/`), which becomes absolute once a site URL is known (`resolve_url`). Anything else
(`javascript:`, `mailto:`, a relative `desk.html`, a protocol-relative `//host/x`) is no address.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

from core.config import permalink_pattern

MAX_URL_CHARS = 2000
_DATE_PREFIX = re.compile(r"^\d{4}-\d{2}-\d{2}[-_]+")  # Jekyll's file names: the slug follows the date
_UNSAFE = re.compile(r"[\x00-\x20\x7f]")  # controls and spaces never belong in an address


def checked_url(value: Any) -> tuple[str, str]:
    """(address, "") for a usable given address, ("", why not) otherwise ("" and "" for no value)."""
    if value is None or isinstance(value, bool | dict | list):
        return "", "" if value in (None, "") else "is not text"
    text = str(value).strip()
    if not text:
        return "", ""
    if len(text) > MAX_URL_CHARS:
        return "", f"is longer than {MAX_URL_CHARS} characters"
    if _UNSAFE.search(text):
        return "", "holds spaces or control characters"
    if text.startswith("/") and not text.startswith("//"):
        return text, ""
    try:
        parts = urlsplit(text)
    except ValueError:
        return "", "is not a web address"
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return "", "is not an http(s) address or a path from the site's root"
    return text, ""


def resolve_url(url: str, site_url: str) -> str:
    """`url` as an absolute address: a root path joined to `site_url`; "" when it cannot be."""
    if not url or not url.startswith("/"):
        return url
    return urljoin(site_url.rstrip("/") + "/", url) if site_url else ""


def post_slug(post_id: str) -> str:
    """The part of a post id that a blog's address uses: a Jekyll file name's date prefix left out."""
    return _DATE_PREFIX.sub("", post_id) or post_id


def permalink_url(site_url: str, pattern: str, *, post_id: str, date: str = "", collection: str = "") -> str:
    """The address `site_url` + `pattern` gives a post ("" without a site URL, or without the date the
    pattern needs). Each field is percent-encoded as one path segment."""
    if not site_url:
        return ""
    day = _day(date)
    if day is None and any(f"{{{name}}}" in pattern for name in ("year", "month", "day")):
        return ""
    values = {
        "slug": post_slug(post_id),
        "collection": collection,
        "year": f"{day.year:04d}" if day else "",
        "month": f"{day.month:02d}" if day else "",
        "day": f"{day.day:02d}" if day else "",
    }
    path = permalink_pattern(pattern).format(**{k: quote(v, safe="") for k, v in values.items()})
    return site_url.rstrip("/") + path


def _day(date: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(date[:10]) if date else None
    except ValueError:
        return None


def page_urls(page: str) -> list[str]:
    """The addresses an HTML page gives itself, best first: `<link rel="canonical">`, then `og:url`."""
    from lxml import etree, html

    try:
        tree = html.document_fromstring(re.sub(r"^\s*<\?xml[^>]*>", "", page)) if page.strip() else None
    except (etree.ParserError, ValueError):
        return []
    if tree is None:
        return []
    found = [
        el.get("href")
        for el in tree.iter("link")
        if "canonical" in (el.get("rel") or "").lower().split() and el.get("href")
    ]
    found += [
        el.get("content")
        for el in tree.iter("meta")
        if (el.get("property") or el.get("name") or "").lower() == "og:url" and el.get("content")
    ]
    return found
