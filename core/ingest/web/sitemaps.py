"""Sitemaps (`<urlset>`) and sitemap indexes (`<sitemapindex>`), parsed with the hardened parser; a
gzipped sitemap is unpacked under the same size cap (a gzip bomb stops at the cap)."""

from __future__ import annotations

import gzip
import io
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element

from core.parse.safexml import BadXML, child_text, local_name, parse_xml

MAX_SITEMAPS = 50  # sitemaps read through indexes, for one source


@dataclass
class Sitemap:
    pages: dict[str, str] = field(default_factory=dict)  # page address → lastmod ("" if none), in order
    children: list[str] = field(default_factory=list)  # further sitemaps (an index)


def is_sitemap_root(root: Element) -> bool:
    return local_name(root) in ("urlset", "sitemapindex")


def unpacked(data: bytes, limit: int) -> bytes:
    """`data`, gunzipped if it is gzip; BadXML when the unpacked size passes `limit`."""
    if not data.startswith(b"\x1f\x8b"):
        return data
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as packed:
        try:
            out = packed.read(limit + 1)
        except (OSError, EOFError) as exc:
            raise BadXML(f"a damaged gzip file ({exc})") from None
    if len(out) > limit:
        raise BadXML(f"unpacks to more than {limit // (1024 * 1024)} MB (a gzip bomb?): refused")
    return out


def read_sitemap(data: bytes, root: Element | None = None) -> Sitemap:
    """The page addresses (with lastmod) or child sitemaps a sitemap lists; BadXML if refused."""
    root = root if root is not None else parse_xml(data)
    if not is_sitemap_root(root):
        raise BadXML(f"not a sitemap (its root element is <{local_name(root)}>)")
    found = Sitemap()
    for item in root:
        name, loc = local_name(item), child_text(item, "loc")
        if not loc:
            continue
        if name == "url":
            found.pages.setdefault(loc, child_text(item, "lastmod")[:10])
        elif name == "sitemap":
            found.children.append(loc)
    return found
