"""Substack exports (Settings → Export your data, a `.zip`): `posts.csv` lists each post (`post_id` is
"<number>.<slug>", `is_published`, `post_date`, `type`, `audience`, `title`) and `posts/<post_id>.html`
holds its body. The export names no site, so a post's address is the import's site URL
(INKWELL_SITE_URL) + `/p/<slug>`, or "" without one; Substack has no tags. A post whose `audience` is
not "everyone" (only_paid, founding, only_free) is for subscribers only: read with `include_members`.
Subscriber lists in the zip are never read."""

from __future__ import annotations

import csv
import io
from posixpath import dirname, join

from lxml import etree, html

from core.models import Post
from core.parse.exported import (
    MEMBERS_ONLY,
    SUBSTACK,
    ExportPosts,
    LeftOut,
    html_post,
    site_address,
    warn_no_site,
)
from core.parse.fields import BadInput, Context
from core.parse.safezip import SafeZip

# Substack's own furniture inside a post's body: subscribe and share buttons, sign-up forms, and a
# button's call to action ("Thanks for reading …! This post is public so feel free to share it.").
_WIDGETS = (
    "//*[contains(concat(' ', @class, ' '), ' button-wrapper ')"
    " or contains(concat(' ', @class, ' '), ' captioned-button-wrap ')"
    " or contains(@class, 'subscription-widget') or contains(@class, 'subscribe-widget')]"
)


def substack_index(archive: SafeZip) -> str | None:
    """The path of the export's posts.csv (at the top or one folder down), or None."""
    found = [n for n in archive.names if n.rsplit("/", 1)[-1] == "posts.csv" and n.count("/") <= 1]
    return min(found, key=len) if found else None


def parse_substack(ctx: Context, archive: SafeZip, index: str) -> list[Post]:
    rows = _rows(archive.read(index))
    base = dirname(index)
    left_out = LeftOut()
    posts = ExportPosts()
    addressless = 0  # published posts without an address: no site known
    for number, row in enumerate(rows, 2):  # line 1 is the header
        post_id = (row.get("post_id") or "").strip()
        where = f"posts.csv line {number} ({post_id or 'no post_id'}): "
        published = (row.get("is_published") or "").strip().lower() == "true"
        if (row.get("type") or "").strip().lower() == "page" and not ctx.options.include_pages:
            left_out.add("page")
            continue
        if not published and not ctx.options.include_drafts:
            left_out.add("draft")
            continue
        # An export without the column predates audiences: every post was for everyone.
        audience = (row.get("audience") or "everyone").strip().lower()
        if audience != "everyone" and not ctx.options.include_members:
            left_out.add(MEMBERS_ONLY)
            continue
        member = join(base, "posts", f"{post_id}.html")
        if not post_id or member not in archive.names:
            ctx.error(f"{where}has no posts/{post_id or '…'}.html in the export; skipped")
            continue
        slug = post_id.split(".", 1)[1] if "." in post_id else ""
        post = html_post(
            ctx,
            body=_without_widgets(_text(archive.read(member), member)),
            title=row.get("title") or "",
            slug=slug,
            date=row.get("post_date") or "",
            tags=[],
            url=site_address(ctx.options.site_url, slug, "{site}/p/{slug}") if published else "",
            where=where,
            export=SUBSTACK,
            into=posts,
        )
        if post is not None:
            addressless += published and not ctx.options.site_url
    left_out.report(ctx)
    warn_no_site(ctx, addressless, "the export names no site")
    return posts.settled(ctx)


def _rows(data: bytes) -> list[dict[str, str]]:
    reader = csv.DictReader(io.StringIO(_text(data, "posts.csv")))
    if not reader.fieldnames or "post_id" not in reader.fieldnames:
        raise BadInput("is a zip with a posts.csv that has no post_id column: not a Substack export")
    try:
        return list(reader)
    except csv.Error as exc:
        raise BadInput(f"has a posts.csv that cannot be read ({exc})") from None


def _text(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput(f"member {name} is not UTF-8 (byte at offset {exc.start})") from None


def _without_widgets(body: str) -> str:
    try:
        root = html.fragment_fromstring(body, create_parent="div")
    except (etree.ParserError, ValueError):
        return body
    for widget in root.xpath(_WIDGETS):
        widget.drop_tree()
    return html.tostring(root, encoding="unicode")
